# SPDX-License-Identifier: MIT
"""The compile path's caches behind one interface, counted in one record.

Every cache the backend keeps is a ``Cache``: ``get(key)`` returns the
value or None, ``put(key, value)`` keeps one, and each counts what it did
into ``STATS`` under the counter names it was given, so no caller counts a
hit or a miss itself. Two kinds:

- ``Memory``: an LRU in this process (compiled recipes by part; a
  ``PerSize`` graph's compiled specializations by call signature);
- ``Disk``: the on-disk compile cache (``disk_cache``: part entries and
  whole-graph entries, the same file format and versioned keys, so an entry
  of another build or format is never found). An entry that is corrupt or
  unreadable counts as an error and reads as absent.

``STATS`` is what ``torch.spyre.compile_stats()`` (``compiler.stats()``)
returns.
"""
import collections
import threading

from . import disk_cache

_ZERO = {"graphs": 0, "recipes": 0, "graph_breaks": [], "eager_nodes": 0,
         "recipe_cache_hits": 0, "recipe_cache_misses": 0, "disk_cache_hits": 0,
         "disk_cache_misses": 0, "disk_cache_writes": 0, "disk_cache_errors": 0,
         "disk_cache_graph_hits": 0, "host_inputs": 0, "dynamic_graphs": 0,
         "size_specializations": 0}


class Stats:
    """The compile path's counters (thread-safe): one record for all."""

    def __init__(self):
        self._lock = threading.Lock()
        self._d = {**_ZERO, "graph_breaks": []}

    def add(self, **counts):
        """Adds each count to its counter (unknown names are a bug: KeyError)."""
        with self._lock:
            for name, n in counts.items():
                if name == "graph_breaks" or name not in self._d:
                    raise KeyError(f"spyre compile stats: no counter {name!r}")
                self._d[name] += n

    def breaks(self, reasons):
        with self._lock:
            self._d["graph_breaks"].extend(reasons)

    def snapshot(self):
        with self._lock:
            return {**self._d, "graph_breaks": list(self._d["graph_breaks"])}

    def reset(self):
        with self._lock:
            self._d = {**_ZERO, "graph_breaks": []}


STATS = Stats()


class Cache:
    """get(key) -> value or None; put(key, value). Counting is the cache's."""

    def get(self, key):
        raise NotImplementedError

    def put(self, key, value):
        raise NotImplementedError


class Memory(Cache):
    """An LRU of at most @kept values in this process. A get that finds its
    key counts @hit; a put (the value was not there: it was made) counts
    @miss."""

    def __init__(self, kept, hit=None, miss=None):
        self.kept, self.hit, self.miss = kept, hit, miss
        self._lock = threading.Lock()
        self._d = collections.OrderedDict()

    def _found(self, key):
        self._d.move_to_end(key)
        if self.hit:
            STATS.add(**{self.hit: 1})
        return self._d[key]

    def get(self, key):
        with self._lock:
            return self._found(key) if key in self._d else None

    def find(self, match):
        """The first value for which match(key, value) holds (a get by
        content rather than by key), or None."""
        with self._lock:
            for k, v in self._d.items():
                if match(k, v):
                    return self._found(k)
        return None

    def put(self, key, value):
        with self._lock:
            if self.miss:
                STATS.add(**{self.miss: 1})
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.kept:
                self._d.popitem(last=False)

    def clear(self):
        with self._lock:
            self._d.clear()


class Disk(Cache):
    """The on-disk compile cache. get(key) -> (header, blob) or None, a
    corrupt or unreadable entry counted as an error (and reported once with
    a warning when @warn); put(key, (header, blob)) writes the entry and
    counts the write, False when it could not (disk_cache warned)."""

    @staticmethod
    def enabled():
        return disk_cache.directory() is not None

    def get(self, key, warn=True):
        entry = disk_cache.load(key, warn=warn)
        if entry == "corrupt":
            if warn:
                STATS.add(disk_cache_errors=1)
            return None
        return entry

    def put(self, key, value):
        header, blob = value
        if not disk_cache.store(key, header, blob):
            return False
        STATS.add(disk_cache_writes=1)
        return True

    @staticmethod
    def hit(graph=False):
        """An entry served the compile (a whole graph when @graph)."""
        STATS.add(disk_cache_hits=1, disk_cache_graph_hits=int(graph))

    @staticmethod
    def miss():
        STATS.add(disk_cache_misses=1)

    @staticmethod
    def unusable():
        """An entry was read but could not be used (libspyre would not load it)."""
        STATS.add(disk_cache_errors=1)
