# SPDX-License-Identifier: MIT
"""`vllm serve` in the VM on /dev/accel: the kernel driver and libspyre's
drm backend under the engine, one VM boot (scripts/spyre-vm, TCG). The
expected tokens are Hugging Face generate() on the host's CPU; the VM runs
vm_serve.py. Needs `make module` and QEMU (build/qemu)."""

import json
import os
import shutil
import subprocess
import sys

from test_offline import hf_greedy

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROMPTS = ["The card sits in", "Hello, how are you today? I am fine"]
NEW = 8


def test_serve_in_vm_on_dev_accel(tiny_model):
    build = os.environ.get("SPYRE_BUILD", os.path.join(TOP, "build"))
    # the guest sees the host tree read-only, but not the host's /tmp:
    # model and expectations go under build/
    work = os.path.join(build, "vllm-vm")
    shutil.rmtree(work, ignore_errors=True)
    model = shutil.copytree(tiny_model, os.path.join(work, "tinygpt"))
    want = os.path.join(work, "want.json")
    with open(want, "w") as f:
        json.dump({"prompts": PROMPTS, "new": NEW,
                   "tokens": hf_greedy(model, PROMPTS, NEW)}, f)
    timeout = int(os.environ.get("VM_SERVE_TIMEOUT", "2400"))
    p = subprocess.run(
        [os.path.join(TOP, "scripts", "spyre-vm"), "run", "--mem", "6G",
         "--timeout", str(timeout), "--",
         sys.executable, os.path.join(TOP, "vllm_spyre_plugin", "tests", "vm_serve.py"),
         model, want],
        cwd=TOP, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("vm_serve:")]
    print("\n".join(lines))
    assert p.returncode == 0 and lines and lines[-1] == "vm_serve: ok", p.stdout[-4000:]
