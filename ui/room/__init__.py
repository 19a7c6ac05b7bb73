"""The class room's UI: a room as a session sees it (session.py), the lecturer's rounds (rounds.py), a phone's
vote (phone.py), the QR code and room code shown large (join.py), and where a round's question comes from
(sources.py: the quiz through quiz.py, the lessons' predictions through registry.py, where each lesson
registers its own). The store is classroom/ (no streamlit, no torch there); the page is pages/room.py, the
view ui/views/room.py."""
