"""An in-memory cache of arrays bounded by their total number of rows (tokens, feature
rows), dropping the least recently used entries first."""

from collections import OrderedDict
from typing import Optional

import numpy


class RowCache:
    """Arrays by key, at most ``max_rows`` rows in all.

    max_rows (int): rows kept; an array longer than this is never stored (0: none).
    """

    def __init__(self, max_rows: int) -> None:
        self.max_rows = max_rows
        self.rows = 0
        self.entries: OrderedDict[str, numpy.ndarray] = OrderedDict()

    def get(self, key: str) -> Optional[numpy.ndarray]:
        """RETURNS (Optional[numpy.ndarray]): the array stored under key (now the most
        recently used), or None."""
        found = self.entries.get(key)
        if found is not None:
            self.entries.move_to_end(key)
        return found

    def put(self, key: str, rows: numpy.ndarray) -> None:
        """Store an array, dropping the least recently used ones beyond ``max_rows``."""
        if len(rows) > self.max_rows or key in self.entries:
            return
        self.entries[key] = rows
        self.rows += len(rows)
        while self.rows > self.max_rows:
            _, old = self.entries.popitem(last=False)
            self.rows -= len(old)
