"""The class room's tables as its first release wrote them: a store opened on them must add what it has gained since."""

ROOM = (
    "CREATE TABLE room (code VARCHAR(16) PRIMARY KEY, key_hash VARCHAR(64) NOT NULL, quiz_seed INTEGER NOT NULL, "
    "created_at DATETIME NOT NULL, expires_at DATETIME NOT NULL, closed_at DATETIME)"
)
ROUND = (
    "CREATE TABLE room_round (id INTEGER PRIMARY KEY AUTOINCREMENT, room_code VARCHAR(16) NOT NULL REFERENCES "
    "room(code) ON DELETE CASCADE, number INTEGER NOT NULL, question TEXT NOT NULL, phase VARCHAR(16) NOT NULL, "
    "transfer_of INTEGER, opened_at DATETIME NOT NULL)"
)


def first_release_database(tmp_path, *tables: str) -> str:
    """A SQLite file under tmp_path holding these tables (ROOM, ROUND), empty: its URL."""
    from sqlalchemy import create_engine, text

    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    engine = create_engine(url)
    with engine.begin() as conn:
        for table in tables:
            conn.execute(text(table))
    engine.dispose()
    return url
