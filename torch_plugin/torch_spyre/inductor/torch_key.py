# SPDX-License-Identifier: MIT
"""PyTorch's source hash for Inductor's cache keys, kept from one process
to the next.

Inductor's FX graph cache and AOTAutogradCache put
``torch._inductor.codecache.torch_key()`` in every key: a SHA-256 of the
source of every torch module, which each process computes again the first
time it compiles (about 0.25 s of CPU reading and hashing some 2300 files,
seconds of wall time when the files are not in the page cache). It is the
same in every process until torch's files change, so the first process
that computes it stores it in Inductor's cache directory, under a
signature of the files it read (their paths, sizes and modification times,
PyTorch's version and install path: one ``stat`` each, about 40 ms), and a
later process with the same signature gives PyTorch the stored value
through ``torch_key.set`` (the way PyTorch's own compile workers receive
it) instead of hashing the files again. PyTorch's key computation itself is
unchanged, and any change to a file it reads (an edit, a reinstall, another
torch) changes the signature, so the stored value is not used.

``TORCH_SPYRE_TORCH_KEY_MEMO=0`` turns this off. Installed by
``_lazy_hooks`` when ``torch._inductor.codecache`` is imported.
"""
import hashlib
import importlib.machinery
import os
import tempfile
import threading

import torch

_lock = threading.Lock()
_state = {"primed": False, "stored": False, "path": None, "hit": None}


def signature(root):
    """A digest of what ``torch_key`` reads under @root: every module file
    of the packages ``pkgutil`` walks from it (directories with an
    ``__init__``), by relative path, size and modification time."""
    suffixes = tuple(importlib.machinery.all_suffixes())
    inits = tuple("__init__" + s for s in suffixes)
    h = hashlib.sha256(f"{torch.__version__}\0{os.path.abspath(root)}\n".encode())
    for here, dirs, files in os.walk(root):
        if here != root and not any(i in files for i in inits):
            dirs[:] = []  # not a package: torch_key does not read it
            continue
        dirs.sort()
        for name in sorted(files):
            if name.endswith(suffixes):
                path = os.path.join(here, name)
                st = os.stat(path)
                h.update(f"{os.path.relpath(path, root)}\0{st.st_size}\0"
                         f"{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _extra_files(codecache):
    inductor = os.path.dirname(codecache.__file__)
    return [os.path.join(inductor, p) for p in ("codegen/aoti_runtime/interface.cpp",
                                                 "script.ld")]


def _memo_path(codecache):
    from torch._inductor.runtime.cache_dir_utils import cache_dir
    h = hashlib.sha256(signature(os.path.dirname(torch.__file__)).encode())
    for path in _extra_files(codecache):
        if os.path.exists(path):
            st = os.stat(path)
            h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return os.path.join(cache_dir(), "spyre", "torch_key", h.hexdigest())


def _load(path):
    try:
        with open(path, "rb") as f:
            value = bytes.fromhex(f.read().decode("ascii").strip())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return value if len(value) == hashlib.sha256().digest_size else None


def _store(path, value):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        with os.fdopen(fd, "w") as f:
            f.write(value.hex())
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache directory: every process hashes, as without this


def stats():
    """Whether this process's torch_key came from the stored value (hit:
    True), was computed (False) or was not needed yet (None)."""
    return {"hit": _state["hit"], "path": _state["path"]}


def install(codecache):
    """Wraps @codecache's ``torch_key`` (a module global, looked up at each
    call by the cache-key code) so that its first call looks for the stored
    value and a computed value is stored."""
    if os.environ.get("TORCH_SPYRE_TORCH_KEY_MEMO", "1") == "0":
        return
    original = codecache.torch_key
    if getattr(original, "_spyre_memo", False) or not hasattr(original, "set"):
        return

    def torch_key():
        with _lock:
            if not _state["primed"]:
                _state["primed"] = True
                _state["path"] = _memo_path(codecache)
                value = _load(_state["path"])
                if value is not None:
                    try:
                        original.set(value)
                        _state["hit"] = _state["stored"] = True
                    except RuntimeError:  # already computed in this process
                        pass
        value = original()
        with _lock:
            if not _state["stored"]:
                _state["stored"] = True
                _state["hit"] = False
                _store(_state["path"], value)
        return value

    for name in ("set", "clear", "prefetch"):
        setattr(torch_key, name, getattr(original, name))
    torch_key._spyre_memo = True
    torch_key.__doc__ = original.__doc__
    codecache.torch_key = torch_key
