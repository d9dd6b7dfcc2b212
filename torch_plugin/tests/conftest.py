# SPDX-License-Identifier: MIT
"""Shared fixtures. The tests import the installed torch_spyre (build/venv),
never the source directory: run them from this directory (pytest puts only
it on sys.path, so ../torch_spyre cannot shadow the installed package)."""
import os
import subprocess
import sys
import tempfile

import pytest
import torch

assert hasattr(torch, "spyre"), "torch_spyre was not autoloaded by `import torch`"

# compiled tests write the on-disk compile cache here, not into ~/.cache,
# and never load what an earlier run left; each test gets its own below
_CACHE = tempfile.TemporaryDirectory(prefix="spyre-compile-cache-")
os.environ["SPYRE_COMPILE_CACHE"] = _CACHE.name


@pytest.fixture(autouse=True)
def _own_compile_cache(tmp_path, monkeypatch):
    """An empty on-disk compile cache per test: what one test compiled is
    never loaded by another (the recipe cache stats stay per test)."""
    monkeypatch.setenv("SPYRE_COMPILE_CACHE", str(tmp_path / "spyre-compile-cache"))


@pytest.fixture(autouse=True)
def _sync_and_reset():
    """Each test starts in warn mode on spyre:0 with an idle device."""
    torch.spyre.set_fallback_mode("warn")
    torch.spyre.set_device(0)
    yield
    for i in range(torch.spyre.device_count()):
        torch.spyre.synchronize(i)
    torch.spyre.set_fallback_mode("warn")
    torch.spyre.set_device(0)


@pytest.fixture
def two_devices():
    if torch.spyre.device_count() < 2:
        pytest.fail("this test needs two spyre devices (SPYRE_SIM_CARDS=2 or --cards 2)")
    return torch.device("spyre:0"), torch.device("spyre:1")


def run_python(code, **env):
    """Runs @code in a fresh interpreter of this venv; returns (rc, stdout+stderr)."""
    e = dict(os.environ)
    e.update(env)
    p = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                       timeout=300, cwd=os.path.dirname(os.path.abspath(__file__)))
    return p.returncode, p.stdout + p.stderr
