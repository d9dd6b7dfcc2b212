# SPDX-License-Identifier: MIT
"""`vllm serve` on the spyre platform: the OpenAI-compatible endpoints,
concurrent requests batched, over-long and cancelled requests."""

import json
import re
import threading
import time
import urllib.request

import pytest

from serve_util import post as _post
from serve_util import serve
from test_offline import hf_greedy


@pytest.fixture(scope="module")
def server(tiny_model, tmp_path_factory):
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with serve(tiny_model, log, ["--max-num-seqs", "16",
                                 "--kv-cache-memory-bytes", str(8 << 20)]) as base:
        yield base


def test_completions_greedy_equals_hf(server, tiny_model):
    prompt = "The card sits in"
    st, r = _post(server + "/v1/completions",
                  {"model": "tiny", "prompt": prompt, "max_tokens": 12,
                   "temperature": 0, "ignore_eos": True, "return_token_ids": True})
    assert st == 200, r
    choice = r["choices"][0]
    want = hf_greedy(tiny_model, [prompt], 12)[0]
    assert choice["token_ids"] == want
    assert r["usage"]["completion_tokens"] == 12


def test_chat_completions(server):
    st, r = _post(server + "/v1/chat/completions",
                  {"model": "tiny", "max_tokens": 8, "temperature": 0,
                   "messages": [{"role": "user", "content": "Hello, how are you?"}]})
    assert st == 200, r
    assert r["choices"][0]["message"]["role"] == "assistant"
    assert r["usage"]["completion_tokens"] >= 1


def test_too_long_prompt_is_a_400_and_server_keeps_serving(server):
    st, r = _post(server + "/v1/completions",
                  {"model": "tiny", "prompt": "count " * 200, "max_tokens": 4})
    assert st == 400, r
    assert "maximum context length" in json.dumps(r)
    st, r = _post(server + "/v1/completions",
                  {"model": "tiny", "prompt": "Hello", "max_tokens": 2, "temperature": 0})
    assert st == 200, r


def _metric(server, name):
    with urllib.request.urlopen(server + "/metrics", timeout=10) as r:
        text = r.read().decode()
    vals = {}
    for line in text.splitlines():
        m = re.match(rf"^{name}(\{{[^}}]*\}})? ([0-9.e+-]+)$", line)
        if m:
            vals[m.group(1) or ""] = float(m.group(2))
    return vals


def test_16_concurrent_requests_batched(server, tiny_model):
    words = "one two three four five six seven eight nine ten".split()
    prompts = [" ".join(words[: 1 + i % 10]) + " and" for i in range(16)]
    want = hf_greedy(tiny_model, prompts, 16)
    results = [None] * 16
    # the most requests seen running at once, polled from /metrics
    peak = [0.0]
    stop = threading.Event()

    def poll():
        while not stop.is_set():
            v = _metric(server, "vllm:num_requests_running")
            if v:
                peak[0] = max(peak[0], max(v.values()))
            time.sleep(0.05)

    def one(i):
        results[i] = _post(server + "/v1/completions",
                           {"model": "tiny", "prompt": prompts[i], "max_tokens": 16,
                            "temperature": 0, "ignore_eos": True, "return_token_ids": True})

    poller = threading.Thread(target=poll)
    poller.start()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    stop.set()
    poller.join()
    for i, (st, r) in enumerate(results):
        assert st == 200, r
        assert r["choices"][0]["token_ids"] == want[i], i
    assert peak[0] > 1, f"requests never ran batched (peak running {peak[0]})"


def test_cancelled_stream_and_server_keeps_serving(server):
    body = json.dumps({"model": "tiny", "prompt": "Once upon a time", "max_tokens": 100,
                       "ignore_eos": True, "stream": True}).encode()
    req = urllib.request.Request(server + "/v1/completions", body,
                                 {"Content-Type": "application/json"})
    r = urllib.request.urlopen(req, timeout=60)
    first = r.readline()
    assert first.startswith(b"data: ")
    r.close()  # client goes away mid-stream: vLLM aborts the request
    deadline = time.time() + 60
    while time.time() < deadline:
        running = _metric(server, "vllm:num_requests_running")
        if not running or max(running.values()) == 0:
            break
        time.sleep(0.5)
    else:
        pytest.fail("the cancelled request kept running")
    st, r = _post(server + "/v1/completions",
                  {"model": "tiny", "prompt": "Hello", "max_tokens": 2, "temperature": 0})
    assert st == 200, r
