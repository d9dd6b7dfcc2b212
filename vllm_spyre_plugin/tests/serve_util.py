# SPDX-License-Identifier: MIT
"""`vllm serve` as a subprocess and JSON requests to it: shared by the
serve tests on the host (test_serve.py) and in the VM (vm_serve.py)."""

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url, body, timeout=120):
    """(HTTP status, decoded JSON body) of a JSON POST."""
    req = urllib.request.Request(url, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


class ServeError(RuntimeError):
    pass


@contextlib.contextmanager
def serve(model, log_path, extra_args=(), start_timeout=300):
    """Runs `vllm serve MODEL` (served as "tiny", float32, max-model-len
    128, block size 8) until /health answers; yields its base URL and stops
    it afterwards. Raises ServeError with the log's tail when it exits or
    does not come up in start_timeout seconds."""
    port = free_port()
    vllm = os.path.join(os.path.dirname(sys.executable), "vllm")
    with open(log_path, "w") as f:
        p = subprocess.Popen(
            [vllm, "serve", model, "--host", "127.0.0.1", "--port", str(port),
             "--dtype", "float32", "--max-model-len", "128", "--block-size", "8",
             "--served-model-name", "tiny", "--seed", "0", *extra_args],
            stdout=f, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"

    def tail():
        with open(log_path) as f:
            return f.read()[-3000:]

    try:
        deadline = time.time() + start_timeout
        while True:
            if p.poll() is not None:
                raise ServeError(f"vllm serve exited ({p.returncode}): {tail()}")
            try:
                with urllib.request.urlopen(base + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.time() > deadline:
                raise ServeError(f"vllm serve did not come up in {start_timeout} s: {tail()}")
            time.sleep(1)
        yield base
    finally:
        p.terminate()
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
