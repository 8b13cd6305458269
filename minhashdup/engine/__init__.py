"""How the stages run: the scan (``pipeline``), the seam for an engine (``base``), the local
process-pool engine (``local``, ``workers``, ``parallel``), and the SQLite cache around
extraction and the scan (``cached``) with its store (``cache``), its bounds (``prune``) and the
stored form of a result (``codec``)."""
