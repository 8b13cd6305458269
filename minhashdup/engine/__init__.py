"""How the stages run: the local process pool, the SQLite cache around extraction."""
