"""LRU cache, patched locally to support deletion and resizing."""

_MISSING = object()


class LRUCache:
    def __init__(self, maxsize=128):
        self.maxsize = maxsize
        self.data = {}
        self.hits = 0
        self.misses = 0

    def get(self, key, default=None):
        value = self.data.pop(key, _MISSING)
        if value is _MISSING:
            self.misses += 1
            return default
        self.data[key] = value
        self.hits += 1
        return value

    def put(self, key, value):
        self.data.pop(key, None)
        self.data[key] = value
        while len(self.data) > self.maxsize:
            oldest = next(iter(self.data))
            del self.data[oldest]

    def delete(self, key):
        return self.data.pop(key, _MISSING) is not _MISSING

    def resize(self, maxsize):
        self.maxsize = maxsize
        while len(self.data) > self.maxsize:
            del self.data[next(iter(self.data))]

    def __contains__(self, key):
        return key in self.data

    def __len__(self):
        return len(self.data)

    def stats(self):
        total = self.hits + self.misses
        ratio = self.hits / total if total else 0.0
        return {"hits": self.hits, "misses": self.misses, "ratio": ratio}
