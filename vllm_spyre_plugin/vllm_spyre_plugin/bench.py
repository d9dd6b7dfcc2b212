# SPDX-License-Identifier: MIT
"""Offline throughput of vLLM on the spyre platform: batch 1 vs batch N.

Runs the engine in this process (VLLM_ENABLE_V1_MULTIPROCESSING=0) so that
the card's modelled device clock (torch.spyre.device_time_ns) can be read
around each run. Prints host tokens/s and modelled device time per
generated token, greedy, fixed-length outputs (ignore_eos), after one
warm-up run of each batch size (the compiled forward builds a graph per
token count; VLLM_SPYRE_COMPILE=0 for the eager model).

    SPYRE_BACKEND=sim python -m vllm_spyre_plugin.bench [--batch 16] [--tokens 32]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--model", help="model dir (default: the tiny GPT-2, built)")
    a = ap.parse_args()
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    import torch
    from vllm import LLM, SamplingParams

    from vllm_spyre_plugin.tiny_model import build

    model = a.model or build(tempfile.mkdtemp(prefix="tinygpt-"))
    llm = LLM(model=model, dtype="float32", max_model_len=256, max_num_seqs=a.batch,
              kv_cache_memory_bytes=16 << 20, enforce_eager=True, seed=0)
    sp = SamplingParams(temperature=0.0, max_tokens=a.tokens, ignore_eos=True)
    words = "the card reads the descriptors and moves tensors into its memory".split()
    prompts = [" ".join(words[: 3 + i % 8]) for i in range(a.batch)]
    for n in (1, a.batch):  # warm-up: the compiled forward's graphs for these sizes
        llm.generate(prompts[:n], sp, use_tqdm=False)
    for n in (1, a.batch):
        torch.spyre.synchronize()
        d0, t0 = torch.spyre.device_time_ns(), time.perf_counter()
        outs = llm.generate(prompts[:n], sp, use_tqdm=False)
        torch.spyre.synchronize()
        dt, dd = time.perf_counter() - t0, torch.spyre.device_time_ns() - d0
        ntok = sum(len(o.outputs[0].token_ids) for o in outs)
        print(f"batch {n:3d}: {ntok} tokens in {dt:.2f} s host = {ntok / dt:.1f} tokens/s, "
              f"{dt / ntok * 1e3:.2f} ms host per token; modelled device time "
              f"{dd / 1e6:.2f} ms = {dd / ntok / 1e3:.1f} us/token")
    print("model forward:", llm.collective_rpc("spyre_stats")[0]["compile"])


if __name__ == "__main__":
    main()
