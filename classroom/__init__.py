"""The class room: a lecturer's room of students answering one quiz, stored in a database.

No streamlit here: codes.py makes and checks room codes and lecturer keys, store.py keeps rooms and
answers (SQLite by default, PostgreSQL when ENCODER_LAB_DATABASE_URL is set), limits.py slows down
anyone guessing room codes. The pages reach it through ui/room/session.py.
"""
