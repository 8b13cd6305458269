"""From disk to token streams: walking, reading, lexers, one file to its shingles."""
