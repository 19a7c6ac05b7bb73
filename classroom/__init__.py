"""The class room's and the learner records' database layer: plain Python and SQLAlchemy, no UI, no model.

store.py keeps rooms, joins, quiz answers, peer-instruction rounds and their votes (rounds.py) and the
learners' records (learners.py), in SQLite by default or PostgreSQL when ENCODER_LAB_DATABASE_URL is set;
questions.py is a round's question as stored; results.py and peer.py turn answers and votes into what
the lecturer sees; codes.py, limits.py and links.py make room codes, slow down guessing and find the
address phones open; schedule.py says which idea is due again. Nothing here imports torch or
encoder_core (tests/classroom/test_no_torch.py): the quiz's questions become room questions in
ui/room/quiz.py, and the pages reach the store through ui/room/ and ui/frame/learner.py.
"""
