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

# Compiled tests write the on-disk caches (the backend's recipes and
# PyTorch's own: Inductor, AOTAutograd, Dynamo) here, never into the user's
# ~/.cache or /tmp/torchinductor_$USER, and never load what an earlier run or
# another program left; each test gets its own below.
_CACHE = tempfile.TemporaryDirectory(prefix="spyre-test-caches-")
os.environ["SPYRE_COMPILE_CACHE"] = os.path.join(_CACHE.name, "spyre-compile-cache")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(_CACHE.name, "torchinductor")


@pytest.fixture(autouse=True)
def _own_compile_cache(tmp_path, monkeypatch):
    """Empty on-disk compile caches per test: what one test compiled is never
    loaded by another (the recipe cache stats stay per test)."""
    monkeypatch.setenv("SPYRE_COMPILE_CACHE", str(tmp_path / "spyre-compile-cache"))
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "torchinductor"))


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
def card_only():
    """The test's ops must all run on the card: the fallback raises, and no
    fallback call may be counted by the end of the test."""
    torch.spyre.set_fallback_mode("error")
    torch.spyre.reset_fallback_counts()
    yield
    assert torch.spyre.fallback_counts() == {}


@pytest.fixture
def two_devices():
    if torch.spyre.device_count() < 2:
        pytest.fail("this test needs two spyre devices (SPYRE_SIM_CARDS=2 or --cards 2)")
    return torch.device("spyre:0"), torch.device("spyre:1")


# What a child process inherits from the test run: what a shell and Python
# need to start, and the suite's choice of card (scripts/tests/plugin-*.sh).
# Nothing else: a variable a user or an earlier test left in os.environ
# (SPYRE_SIM_*, TORCH_SPYRE_FALLBACK, OMP_NUM_THREADS...) would change what
# the child computes.
_INHERITED = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SPYRE_BACKEND", "SPYRE_SIM_CARDS")


def child_env(**env):
    """The explicit environment of a child process: the inherited variables,
    this test's own compile caches, then @env (values made strings)."""
    e = {k: os.environ[k] for k in _INHERITED if k in os.environ}
    for k in ("SPYRE_COMPILE_CACHE", "TORCHINDUCTOR_CACHE_DIR"):
        e[k] = os.environ[k]
    e.update({k: str(v) for k, v in env.items()})
    return e


def run_python(code, **env):
    """Runs @code in a fresh interpreter of this venv, in child_env(**env);
    returns (rc, stdout+stderr)."""
    p = subprocess.run([sys.executable, "-c", code], env=child_env(**env), capture_output=True,
                       text=True, timeout=300, cwd=os.path.dirname(os.path.abspath(__file__)))
    return p.returncode, p.stdout + p.stderr
