"""A fixed-size ring buffer that overwrites its oldest items."""


class RingBuffer:
    """Keeps the last ``capacity`` items appended."""

    def __init__(self, capacity):
        if capacity <= 0:
            raise ValueError("capacity must be positive")
        self._items = [None] * capacity
        self._start = 0
        self._count = 0

    @property
    def capacity(self):
        return len(self._items)

    def __len__(self):
        return self._count

    def append(self, item):
        end = (self._start + self._count) % self.capacity
        self._items[end] = item
        if self._count == self.capacity:
            self._start = (self._start + 1) % self.capacity
        else:
            self._count += 1

    def extend(self, items):
        for item in items:
            self.append(item)

    def popleft(self):
        if not self._count:
            raise IndexError("pop from an empty ring buffer")
        item = self._items[self._start]
        self._items[self._start] = None
        self._start = (self._start + 1) % self.capacity
        self._count -= 1
        return item

    def __getitem__(self, index):
        if not -self._count <= index < self._count:
            raise IndexError("ring buffer index out of range")
        return self._items[(self._start + index % self._count) % self.capacity]

    def __iter__(self):
        for offset in range(self._count):
            yield self._items[(self._start + offset) % self.capacity]

    def clear(self):
        self._items = [None] * self.capacity
        self._start = 0
        self._count = 0
