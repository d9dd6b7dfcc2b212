# SPDX-License-Identifier: MIT
"""torch.spyre device module, torch.accelerator, registration and autoload."""
import os
import subprocess
import sys

import pytest
import torch

import torch_spyre
from conftest import child_env, run_python


def test_installed_package_is_imported():
    assert "site-packages" in torch_spyre.__file__, torch_spyre.__file__


def test_privateuse1_renamed():
    assert torch._C._get_privateuse1_backend_name() == "spyre"
    assert torch.device("spyre").type == "spyre"


def test_availability_and_count():
    assert torch.spyre.is_available()
    assert torch.spyre.device_count() == int(os.environ.get("SPYRE_SIM_CARDS", "1")) \
        if os.environ.get("SPYRE_BACKEND") == "sim" else torch.spyre.device_count() >= 1


def test_properties():
    p = torch.spyre.get_device_properties(0)
    assert p.cores == 32
    assert p.total_memory > 0
    assert p.backend in ("drm", "sim")
    if os.environ.get("SPYRE_BACKEND"):
        assert p.backend == os.environ["SPYRE_BACKEND"]
    assert torch.spyre.get_device_name(0) == p.name and "Spyre" in p.name
    assert torch.spyre.get_device_properties("spyre:0") == p


def test_set_device_and_context(two_devices):
    assert torch.spyre.current_device() == 0
    with torch.spyre.device(1):
        assert torch.spyre.current_device() == 1
        t = torch.empty(3, device="spyre")
        assert t.device == torch.device("spyre:1")
    assert torch.spyre.current_device() == 0
    torch.spyre.set_device(1)
    assert torch.accelerator.current_device_index() == 1
    torch.accelerator.set_device_index(0)
    assert torch.spyre.current_device() == 0


def test_bad_device_index_names_count():
    n = torch.spyre.device_count()
    with pytest.raises(IndexError, match=f"invalid device index {n}.*{n} Spyre device"):
        torch.empty(2, device=f"spyre:{n}")
    with pytest.raises(IndexError, match="invalid device index"):
        torch.spyre.set_device(n + 3)
    with pytest.raises(IndexError, match="invalid device index"):
        torch.spyre.get_device_properties(n)


def test_generated_methods():
    t = torch.ones(3)
    s = t.spyre()
    assert s.is_spyre and not t.is_spyre
    assert s.device.type == "spyre"
    m = torch.nn.Linear(2, 2).spyre()
    assert all(p.is_spyre for p in m.parameters())
    st = torch.UntypedStorage(8).spyre()
    assert st.is_spyre


def test_accelerator_api():
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator() == torch.device("spyre")
    assert torch.accelerator.device_count() == torch.spyre.device_count()
    s = torch.accelerator.current_stream()
    assert s.device_type == torch.device("spyre").type or s.device.type == "spyre"
    torch.accelerator.synchronize()


def test_synchronize_waits_for_work():
    x = torch.ones(1 << 20, device="spyre")
    torch.spyre.synchronize()
    assert torch.accelerator.current_stream().query()
    assert x.cpu().sum().item() == 1 << 20


def test_manual_seed_sets_generator():
    torch.spyre.manual_seed(1234)
    assert torch.spyre.initial_seed() == 1234
    st = torch.spyre.get_rng_state()
    torch.spyre.manual_seed(99)
    assert not torch.equal(st, torch.spyre.get_rng_state())
    torch.spyre.set_rng_state(st)
    assert torch.equal(st, torch.spyre.get_rng_state())


def test_autoload_on_plain_import_torch():
    rc, out = run_python("import torch; print(torch.spyre.is_available(), torch.device('spyre'))")
    assert rc == 0 and "True spyre" in out, out


def _fresh_shell_env():
    """The environment of a new shell: this venv neither active nor in PATH."""
    venv_bin = os.path.dirname(sys.executable)
    e = child_env()
    e["PATH"] = os.pathsep.join(d for d in e.get("PATH", "").split(os.pathsep)
                                if d and os.path.realpath(d) != os.path.realpath(venv_bin))
    return e


@pytest.mark.parametrize("how", ["interpreter", "activate"])
def test_plain_import_torch_from_another_directory(how):
    # README's two ways, each in a shell of its own started in /tmp: the
    # venv's interpreter by its path, and activating by the absolute path
    venv = os.path.dirname(os.path.dirname(sys.executable))
    code = "import torch; print(torch.ones(2, device='spyre').cpu().tolist(), torch.__file__)"
    if how == "interpreter":
        cmd = f"cd /tmp && {venv}/bin/python -c \"{code}\""
    else:
        cmd = f". {venv}/bin/activate && cd /tmp && python -c \"{code}\""
    p = subprocess.run(["sh", "-c", cmd], env=_fresh_shell_env(), capture_output=True,
                       text=True, timeout=300, cwd="/")
    out = p.stdout + p.stderr
    assert p.returncode == 0 and "[1.0, 1.0]" in out, out
    assert os.path.realpath(venv) in os.path.realpath(out.split()[-1]), out


def test_autoload_can_be_disabled():
    rc, out = run_python("import torch; print(hasattr(torch, 'spyre'))",
                         TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    assert rc == 0 and out.strip().endswith("False"), out


def test_no_card_and_no_sim_is_a_python_error():
    # drm backend with no /dev/accel card on the host (in the VM: no module)
    if os.path.exists("/dev/accel"):
        pytest.skip("a card is present: the no-card path is tested on the host")
    code = """
import torch
print("avail", torch.spyre.is_available(), torch.spyre.device_count())
try:
    torch.empty(2, device="spyre")
except RuntimeError as e:
    print("error:", e)
"""
    rc, out = run_python(code, SPYRE_BACKEND="drm")
    assert rc == 0, out
    assert "avail False 0" in out, out
    assert "error:" in out and "no Spyre device is available" in out, out


def test_save_load_roundtrip(tmp_path):
    x = torch.arange(12, dtype=torch.float16).reshape(3, 4).to("spyre")
    f = tmp_path / "t.pt"
    torch.save({"x": x, "v": x[:, 1]}, f)
    back = torch.load(f)
    assert back["x"].is_spyre and torch.equal(back["x"].cpu(), x.cpu())
    assert torch.equal(back["v"].cpu(), x.cpu()[:, 1])
    cpu = torch.load(f, map_location="cpu")
    assert cpu["x"].device.type == "cpu" and torch.equal(cpu["x"], x.cpu())


def test_manual_seed_makes_random_ops_reproducible():
    torch.spyre.manual_seed(7)
    a = torch.randn(64, device="spyre")
    b = torch.randn(64, device="spyre")
    assert not torch.equal(a.cpu(), b.cpu())  # the state advances
    torch.manual_seed(123)  # the CPU generator is another one
    torch.spyre.manual_seed(7)
    assert torch.equal(torch.randn(64, device="spyre").cpu(), a.cpu())
    g = torch.Generator(device="spyre")
    g.manual_seed(5)
    c = torch.rand(8, device="spyre", generator=g)
    g.manual_seed(5)
    assert torch.equal(torch.rand(8, device="spyre", generator=g).cpu(), c.cpu())


def test_torch_manual_seed_seeds_spyre_too():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch.random warns if it cannot seed spyre
        torch.manual_seed(11)
        a = torch.randn(16, device="spyre")
        torch.manual_seed(11)
        b = torch.randn(16, device="spyre")
    assert torch.equal(a.cpu(), b.cpu())


def test_forked_child_cannot_use_the_parents_device():
    torch.ones(1, device="spyre").cpu()  # this process has opened the device
    assert not torch.spyre._is_in_bad_fork()
    pid = os.fork()
    if pid == 0:  # child: report through the exit code only
        code = 3
        try:
            code = 1 if torch.spyre._is_in_bad_fork() else 2
            torch.ones(1, device="spyre")
        except RuntimeError as e:
            code = 0 if code == 1 and "spawn" in str(e) else 4
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_autoload_failure_leaves_torch_usable():
    # a backend that fails to load must not break `import torch`
    code = """
import sys, warnings
warnings.simplefilter("always")
sys.modules["torch_spyre"] = None  # makes `import torch_spyre` fail
import torch
print("ok", hasattr(torch, "spyre"), torch.ones(2).sum().item())
"""
    rc, out = run_python(code)
    assert rc == 0, out
    assert "ok False 2.0" in out, out
    assert "spyre backend failed to load" in out, out


def test_complex_tensors_are_refused_with_a_clear_error():
    # the card has no complex arithmetic; a complex spyre tensor used to send
    # the conjugate fallback's copies into endless recursion (a crash)
    with pytest.raises(NotImplementedError, match=r"spyre: ComplexFloat tensors .*\[3\]"):
        torch.zeros(3, dtype=torch.complex64, device="spyre")
    with pytest.raises(NotImplementedError, match="ComplexDouble"):
        torch.ones(2, dtype=torch.complex128).to("spyre")
    x = torch.randn(5).to("spyre")
    with pytest.raises(NotImplementedError, match="complex"):
        torch.fft.hfft(x)
    assert torch.equal(x.cpu(), x.cpu())    # the device still works
