# SPDX-License-Identifier: MIT
"""torch.distributed on spyre: the "spyre" c10d backend (csrc/distributed.cpp).

Each test starts two processes (dist_worker.py), rank R on the sim card
spyre:R, joined through a FileStore in the test's tmp dir; the worker
checks and prints CASE-OK, the test checks both ranks' exit and output.
"""
import importlib
import os
import re
import socket
import subprocess
import sys

import pytest
import torch
from conftest import child_env

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")
WORLD = 2


def run_ranks(case, tmp_path, timeout=240, **env):
    """Runs @case on WORLD ranks; returns [(returncode, output)] per rank."""
    store = str(tmp_path / "store")
    procs = []
    for r in range(WORLD):
        e = child_env(SPYRE_SIM_CARDS=WORLD, LOCAL_RANK=r, OMP_NUM_THREADS=1, **env)
        procs.append(subprocess.Popen(
            [sys.executable, os.path.join(HERE, "dist_worker.py"), case, str(r), str(WORLD), store],
            env=e, cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    results = []
    try:
        for p in procs:
            out, _ = p.communicate(timeout=timeout)
            results.append((p.returncode, out))
    finally:
        for p in procs:  # a hung rank is a failure, not a hung test run
            if p.poll() is None:
                p.kill()
                p.wait()
    return results


def check_ok(case, results):
    for r, (rc, out) in enumerate(results):
        assert rc == 0 and f"{case}-OK rank {r}" in out, f"rank {r} (exit {rc}):\n{out[-6000:]}"


def test_collectives_match_gloo_on_the_cpu(tmp_path):
    """all_reduce (sum avg max min product), broadcast, all_gather (list and
    into a tensor), reduce_scatter (list and tensor), all_to_all (single,
    uneven splits, list), send/recv, reduce, gather, scatter, coalesced
    all_reduce: float32/16, bfloat16, int64/32 and bool, empty and 1-3 dim
    shapes, contiguous and strided views; results equal to gloo's on CPU
    tensors, or refused by both (e.g. AVG of integers)."""
    res = run_ranks("collectives", tmp_path)
    check_ok("collectives", res)
    print(res[0][1].strip().splitlines()[-1])


def test_chunked_collectives_match_gloo_on_the_cpu(tmp_path):
    """Messages of many 4 KiB cells, three per pair (so pipelined chunks,
    cells reused, pairs of different lengths), card to card."""
    check_ok("chunked", run_ranks("chunked", tmp_path, SPYRE_C10D_PEER_SLOT=12288,
                                  SPYRE_C10D_PEER_DEPTH=3))


def test_default_backend_async_work_functional_collectives_and_bad_input(tmp_path):
    check_ok("semantics", run_ranks("semantics", tmp_path))


def test_a_killed_rank_makes_the_survivor_raise(tmp_path):
    """The survivor's collectives raise within a few times the group's 10 s
    timeout of the peer's death, as the survivor measures it (the ranks'
    interpreter start, 30-60 s each under TCG and load, is not part of it)."""
    (rc0, out0), (rc1, out1) = run_ranks("killed", tmp_path, timeout=240)
    assert rc1 == 17, out1
    assert rc0 == 0 and "killed-OK rank 0 raised" in out0, out0
    took = float(re.search(r"killed-OK rank 0 raised \w+ after ([0-9.]+) s", out0).group(1))
    assert took < 40, out0


def test_dtensor_tensor_parallel_matches_one_card_and_the_cpu(tmp_path):
    check_ok("dtensor", run_ranks("dtensor", tmp_path))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _torchrun(example, *args):
    """torchrun of examples/@example on WORLD sim cards: (returncode, output)."""
    p = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(WORLD),
         "--master-addr", "127.0.0.1", "--master-port", str(_free_port()),
         os.path.join(EXAMPLES, example), *args],
        env=child_env(SPYRE_SIM_CARDS=WORLD, OMP_NUM_THREADS=1), capture_output=True, text=True,
        timeout=480, cwd=HERE)  # a hang guard: under TCG and load the TP run took 180-350 s
    return p.returncode, p.stdout + p.stderr


def _example(name):
    """The module examples/@name.py."""
    sys.path.insert(0, EXAMPLES)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(EXAMPLES)


def test_torchrun_tp_gpt2_example_gives_one_cards_tokens():
    rc, out = _torchrun("tp_gpt2.py", "--steps", "6")
    assert rc == 0, out[-6000:]
    assert "tp_gpt2: tensor parallel agrees with one card and with the CPU" in out, out


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_hf_llama_tp_plan_on_two_cards_gives_the_cpus_tokens(dtype):
    """transformers' own plan (from_pretrained(tp_plan="auto")) and generate()
    on a Llama-3.2-style checkpoint (GQA, llama3 RoPE, tied embeddings); in
    float32 also torch.compile(model) of the split model."""
    rc, out = _torchrun("tp_hf_llama.py", "--dtype", dtype, "--steps", "6",
                        *(["--compile"] if dtype == "float32" else []))
    assert rc == 0, out[-6000:]
    assert f"2 cards vs the CPU ({dtype}): same tokens" in out, out[-6000:]
    assert "tensor-parallel plan on the cards gives the CPU's tokens" in out, out[-6000:]
    if dtype == "float32":  # Inductor, the default backend: one graph on each rank
        for r in range(WORLD):
            assert f"rank {r}: torch.compile(model) vs eager" in out, out[-6000:]
        assert out.count("1 graph(s), 0 graph break(s)") == WORLD, out[-6000:]


def test_hf_from_pretrained_loads_straight_onto_the_card(tmp_path):
    """device_map="spyre" (with use_kernels=False: the hub-kernels package
    refuses device types it does not list) puts every weight on the card."""
    import transformers
    tp_hf_llama = _example("tp_hf_llama")
    tp_hf_llama.write_checkpoint(str(tmp_path), torch.float32)
    with pytest.raises(ValueError, match="Unsupported device type 'spyre'"):
        transformers.AutoModelForCausalLM.from_pretrained(str(tmp_path), device_map="spyre")
    card = transformers.AutoModelForCausalLM.from_pretrained(str(tmp_path), device_map="spyre",
                                                             use_kernels=False)
    assert {p.device.type for p in card.parameters()} == {"spyre"}
    cpu = transformers.AutoModelForCausalLM.from_pretrained(str(tmp_path), use_kernels=False)
    ids = torch.tensor(tp_hf_llama.PROMPT)
    got, got_logits = tp_hf_llama.greedy(card, ids.to(card.device), 4)
    want, want_logits = tp_hf_llama.greedy(cpu, ids, 4)
    assert torch.equal(got, want)
    assert (got_logits - want_logits).abs().max() <= 1e-5 * want_logits.abs().max()


def tp_gpt2_build(**kw):
    return _example("tp_gpt2").build(**kw)


def _torchrun_tp_gpt2(*args):
    return _torchrun("tp_gpt2.py", *args)


def test_tp_gpt2_references_from_files_are_checked(tmp_path):
    """multi-vm's way: the CPU reference written apart, one card's kept for a later run."""
    cpu, one, w = (str(tmp_path / f) for f in ("cpu.pt", "one.pt", "weights.pt"))
    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, "tp_gpt2.py"), "--steps", "3",
                        "--write-cpu-ref", cpu, "--write-weights", w],
                       env=child_env(OMP_NUM_THREADS=1),
                       capture_output=True, text=True, timeout=120, cwd=HERE)
    out = p.stdout + p.stderr
    assert p.returncode == 0 and "tp_gpt2: CPU reference, tiny fp32" in p.stdout, out
    rc, out = _torchrun_tp_gpt2("--steps", "3", "--cpu-ref", cpu, "--write-one-card", one)
    assert rc == 0 and "agrees with one card and with the CPU" in out, out[-6000:]
    rc, out = _torchrun_tp_gpt2("--steps", "3", "--weights", w, "--cpu-ref", cpu,
                                "--one-card-ref", one)
    assert rc == 0 and "agrees with one card and with the CPU" in out, out[-6000:]
    assert f"one card from {one}" in out and f"CPU from {cpu}" in out, out
    # other weights than the reference's are refused by their hash
    other = tp_gpt2_build(seed=1).state_dict()
    torch.save(other, w)
    rc, out = _torchrun_tp_gpt2("--steps", "3", "--weights", w, "--cpu-ref", cpu)
    assert rc != 0 and f"CPU reference {cpu} is stale: weights sha256" in out, out
    # another run's file (4 steps) is refused, as is a missing one
    rc, out = _torchrun_tp_gpt2("--steps", "4", "--one-card-ref", one)
    assert rc != 0 and f"one card reference {one} is stale: steps 3 there, 4 here" in out, out
    rc, out = _torchrun_tp_gpt2("--steps", "3", "--cpu-ref", one + ".missing")
    assert rc != 0 and "no such file (write it with --write-cpu-ref)" in out, out
    # the one card's logits are compared, not just loaded: a changed one fails
    rec = torch.load(one, weights_only=True)
    rec["logits"][1, 0, 0] += 1.0
    torch.save(rec, one)
    rc, out = _torchrun_tp_gpt2("--steps", "3", "--cpu-ref", cpu, "--one-card-ref", one)
    assert rc != 0 and "tensor parallel DISAGREES" in out, out
