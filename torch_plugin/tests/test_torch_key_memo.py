# SPDX-License-Identifier: MIT
"""PyTorch's source hash for Inductor's cache keys, kept across processes
(torch_spyre/inductor/torch_key.py): the first process computes and stores
it, the next one uses the stored value, which is PyTorch's own; a change to
a file it hashes changes the signature; a damaged entry is recomputed."""
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from torch_spyre.inductor import torch_key

CHILD = textwrap.dedent("""
    import json, torch
    from torch._inductor import codecache
    from torch_spyre.inductor import torch_key
    key = codecache.torch_key()
    print("RESULT " + json.dumps({"key": key.hex(), **torch_key.stats()}))
""")


def child(cache, **env):
    e = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache), **env)
    p = subprocess.run([sys.executable, "-c", CHILD], env=e, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    line = [s for s in p.stdout.splitlines() if s.startswith("RESULT ")]
    return json.loads(line[-1][7:])


def test_second_process_uses_the_stored_key(tmp_path):
    first = child(tmp_path)
    assert first["hit"] is False and os.path.exists(first["path"])
    assert first["path"].startswith(str(tmp_path))
    second = child(tmp_path)
    assert second["hit"] is True and second["key"] == first["key"]
    # the stored value is PyTorch's own computation
    off = child(tmp_path / "off", TORCH_SPYRE_TORCH_KEY_MEMO="0")
    assert off["hit"] is None and off["key"] == first["key"]
    assert not (tmp_path / "off" / "spyre").exists()


def test_a_damaged_entry_is_computed_again(tmp_path):
    first = child(tmp_path)
    with open(first["path"], "w") as f:
        f.write("not a key")
    again = child(tmp_path)
    assert again["hit"] is False and again["key"] == first["key"]
    with open(first["path"]) as f:
        assert f.read() == first["key"]


@pytest.fixture
def tree(tmp_path):
    """A package tree as torch_key walks it, and a directory it skips."""
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "data").mkdir()
    for p in ("pkg/__init__.py", "pkg/a.py", "pkg/sub/__init__.py", "pkg/sub/b.py",
              "pkg/data/c.py"):
        (tmp_path / p).write_text("x = 1\n")
    return tmp_path / "pkg"


def test_signature_follows_the_hashed_files(tree):
    base = torch_key.signature(str(tree))
    assert torch_key.signature(str(tree)) == base
    # a directory without __init__ is not hashed by PyTorch: not in the signature
    (tree / "data" / "c.py").write_text("x = 2\n")
    assert torch_key.signature(str(tree)) == base
    # an edit of the same size, a new modification time
    st = os.stat(tree / "sub" / "b.py")
    (tree / "sub" / "b.py").write_text("x = 2\n")
    os.utime(tree / "sub" / "b.py", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    changed = torch_key.signature(str(tree))
    assert changed != base
    # a size change with the modification time put back
    st = os.stat(tree / "a.py")
    (tree / "a.py").write_text("x = 10\n")
    os.utime(tree / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert torch_key.signature(str(tree)) != changed
    # a new module
    before = torch_key.signature(str(tree))
    time.sleep(0.01)
    (tree / "sub" / "new.py").write_text("")
    assert torch_key.signature(str(tree)) != before
