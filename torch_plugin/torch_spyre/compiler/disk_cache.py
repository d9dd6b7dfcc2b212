# SPDX-License-Identifier: MIT
"""The on-disk compile cache: a compiled part's recipe, kept across processes.

A part entry is the op library's serialised compiled graph
(``spyre_compiled_serialize``: program images, recipe steps, workspace plan,
argument bindings; no weights, those are arguments bound at launch) or a
refusal (the node the library would not lower and why); a graph entry
says that a whole ATen graph lowered to one part (which entry, which graph
inputs feed it, which of its outputs the graph returns), so a second
process skips partitioning too. An entry's name is a
SHA-256 over everything the recipe depends on: the part's ATen code, its
inputs' dtypes, shapes and layouts, the device's card interface version
and core count, the op library version (``SPYRE_OPS_VERSION``), the
plugin's version and the identity of the built plugin and libspyre files
(a rebuilt library or lowering is a new key, so an entry never outlives the
code that made it).

Where: ``$SPYRE_COMPILE_CACHE`` if set (``off`` disables the cache), else
``$XDG_CACHE_HOME/torch_spyre/compile``, else
``~/.cache/torch_spyre/compile``.

Two processes may write the same entry at once: each writes a private
temporary file in the directory and renames it over the entry (atomic on
POSIX), so a reader sees a whole entry or none. Every entry carries a
SHA-256 of its contents; a truncated or corrupt one is reported with a
warning and compiled again (and rewritten), never trusted.
"""
import hashlib
import json
import os
import tempfile
import warnings

import torch

from .. import _C

ENV = "SPYRE_COMPILE_CACHE"
_MAGIC = b"SPYRECC1"
# 2: host inputs (signatures carry a host flag); 3: libspyre's serialised
# graphs of format 3 (any number of inputs and outputs)
_FORMAT = 3
_identity = None


def directory():
    """The cache directory, or None when ``SPYRE_COMPILE_CACHE=off``."""
    d = os.environ.get(ENV)
    if d is not None and d.strip():
        return None if d.strip().lower() == "off" else d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "torch_spyre", "compile")


def _file_id(path):
    try:
        st = os.stat(path)
        return [os.path.realpath(path), st.st_size, st.st_mtime_ns]
    except OSError:
        return [path]


def _build_identity():
    """The plugin's version and the built files a recipe comes from: the
    extension module (the graph API) and libspyre (the kernel generators,
    which change without SPYRE_OPS_VERSION changing during development)."""
    global _identity
    if _identity is None:
        from importlib import metadata
        try:
            version = metadata.version("torch_spyre")
        except metadata.PackageNotFoundError:
            version = "unknown"
        here = os.path.dirname(__file__)
        files = [_C.__file__, os.path.join(here, "backend.py")] + [
            os.path.join(here, f) for f in sorted(os.listdir(here))
            if f.startswith("lower") and f.endswith(".py")]
        try:
            with open("/proc/self/maps") as f:
                files += sorted({line.split()[-1] for line in f if "libspyre.so" in line})
        except OSError:
            pass
        _identity = [version, torch.__version__, _C._OPS_VERSION] + [_file_id(p) for p in files]
    return _identity


def key(index, code, metas):
    """The entry name of a part: @code on inputs @metas on spyre:@index."""
    props = torch.spyre.get_device_properties(index)
    desc = [_FORMAT, _build_identity(), props.hw_version, props.cores, code,
            [[str(m.dtype), list(m.shape), str(m.layout), m.device.type] for m in metas]]
    return hashlib.sha256(json.dumps(desc).encode()).hexdigest()


def _path(d, k):
    return os.path.join(d, k[:2], k + ".spyrecc")


def load(k, warn=True):
    """The entry @k as (header dict, blob bytes), or None when there is none.
    A corrupt entry warns (when @warn) and returns "corrupt"."""
    d = directory()
    if d is None:
        return None
    try:
        with open(_path(d, k), "rb") as f:
            data = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        if warn:
            warnings.warn(f"spyre compile cache: cannot read {_path(d, k)}: {e}; "
                          "compiling again")
        return "corrupt"
    try:
        if data[:8] != _MAGIC or len(data) < 44:
            raise ValueError("not a cache entry or truncated")
        payload = data[40:]
        if hashlib.sha256(payload).digest() != data[8:40]:
            raise ValueError("checksum mismatch (corrupt or truncated)")
        hlen = int.from_bytes(payload[:4], "little")
        header = json.loads(payload[4:4 + hlen].decode())
        if header.get("key") != k:
            raise ValueError("the entry belongs to another key")
        return header, payload[4 + hlen:]
    except (ValueError, UnicodeDecodeError) as e:
        if warn:
            warnings.warn(f"spyre compile cache: {_path(d, k)}: {e}; compiling again")
        return "corrupt"


def store(k, header, blob=b""):
    """Writes entry @k atomically; False (with a warning) when it cannot."""
    d = directory()
    if d is None:
        return False
    h = json.dumps(dict(header, key=k)).encode()
    payload = len(h).to_bytes(4, "little") + h + blob
    data = _MAGIC + hashlib.sha256(payload).digest() + payload
    path = _path(d, k)
    tmp = None
    try:
        # private: what is loaded from here runs on the card
        os.makedirs(d, mode=0o700, exist_ok=True)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(path))
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return True
    except OSError as e:
        # one warning per directory and reason, not one per entry
        warnings.warn(f"spyre compile cache: cannot write into {d}: {e.strerror}")
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False
