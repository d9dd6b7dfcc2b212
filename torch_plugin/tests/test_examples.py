# SPDX-License-Identifier: MIT
"""The examples users run (make demo runs gpt_demo.py in the VM) keep
working: each runs in a fresh interpreter on the sim card."""
import os
import subprocess
import sys

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")


def test_gpt_demo_agrees_with_the_cpu():
    env = dict(os.environ, SPYRE_BACKEND="sim")
    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, "gpt_demo.py")], env=env,
                       capture_output=True, text=True, timeout=600)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "spyre agrees with the CPU" in out and "1 SUBMIT," in out, out
    assert "CPU fallbacks          0" in out, out
