# SPDX-License-Identifier: MIT
"""Run inside the VM (test_vm_serve.py boots it): `vllm serve` on the
card behind /dev/accel (libspyre's drm backend), /v1/completions greedy for
each prompt of WANT_JSON ({"prompts": [...], "tokens": [[...]], "new": N}),
the token ids compared with the expected ones (Hugging Face generate() on
the host's CPU). Prints the time each phase took under TCG and one
"vm_serve: ok" or "vm_serve: FAIL ..." line; exit status 0 only on ok.

    python vm_serve.py MODEL_DIR WANT_JSON
"""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import post, serve  # noqa: E402


def main() -> int:
    model, want_path = sys.argv[1], sys.argv[2]
    with open(want_path) as f:
        want = json.load(f)
    if not os.path.exists("/dev/accel/accel0"):
        print("vm_serve: FAIL no /dev/accel/accel0 (spyre module not loaded?)")
        return 1
    # the card through the kernel driver, never the in-process sim
    os.environ["SPYRE_BACKEND"] = "drm"
    os.environ["TORCH_SPYRE_FALLBACK"] = "error"
    os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    run = os.environ.get("SPYRE_VM_RUN", "/tmp")

    t0 = time.time()
    subprocess.run([sys.executable, "-c", "import vllm"], check=True)
    print(f"vm_serve: import vllm {time.time() - t0:.0f} s", flush=True)
    t0 = time.time()
    with serve(model, os.path.join(run, "vllm-serve.log"),
               ["--max-num-seqs", "4", "--kv-cache-memory-bytes", str(4 << 20)],
               start_timeout=int(os.environ.get("VM_SERVE_START_TIMEOUT", "1500"))) as base:
        print(f"vm_serve: vllm serve up in {time.time() - t0:.0f} s", flush=True)
        for prompt, tokens in zip(want["prompts"], want["tokens"]):
            t0 = time.time()
            st, r = post(base + "/v1/completions",
                         {"model": "tiny", "prompt": prompt, "max_tokens": want["new"],
                          "temperature": 0, "ignore_eos": True, "return_token_ids": True},
                         timeout=600)
            if st != 200:
                print(f"vm_serve: FAIL {prompt!r}: HTTP {st} {r}")
                return 1
            got = r["choices"][0]["token_ids"]
            print(f"vm_serve: {prompt!r} {time.time() - t0:.1f} s, {len(got)} tokens",
                  flush=True)
            if got != tokens:
                print(f"vm_serve: FAIL {prompt!r}: tokens {got}, HF generate {tokens}")
                return 1
    print("vm_serve: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
