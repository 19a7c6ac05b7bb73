"""The class room's UI: a room as a session sees it, the lecturer's rounds, a phone's vote, and where a
round's question comes from. The store is classroom/ (no streamlit there); the page is pages/room.py."""
