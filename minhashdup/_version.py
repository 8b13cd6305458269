"""The version, in one place (the package, the cache key and pyproject read it)."""

__version__ = "0.1.0"
