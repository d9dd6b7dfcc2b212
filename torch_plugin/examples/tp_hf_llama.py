# SPDX-License-Identifier: MIT
"""A Hugging Face Llama split across spyre cards by transformers' own
tensor-parallel plan.

    torchrun --nproc-per-node 2 torch_plugin/examples/tp_hf_llama.py [--checkpoint DIR]

(with SPYRE_BACKEND=sim SPYRE_SIM_CARDS=2 on a machine without cards).
Nothing here splits the model by hand: ``from_pretrained(..., tp_plan="auto")``
applies the plan the Llama model ships with (q/k/v, gate and up projections
by output columns, o and down projections by input rows: DTensor's
ColwiseParallel/RowwiseParallel), on a DeviceMesh of "spyre" cards, with
the "spyre" c10d backend adding up the row-split partial sums.
``generate()`` then greedy-decodes a prompt with its KV cache; rank 0 checks
the tokens against the same checkpoint on the CPU: the same tokens, and
logits within --rtol times the largest CPU logit (the op library's decoder
criterion: 1e-5 in float32, 4e-3 in float16, and 8 times that in bfloat16,
whose rounding unit is 8 times float16's).

Without --checkpoint, rank 0 writes a randomly initialised checkpoint with
the features of a Llama 3.2 checkpoint (grouped-query attention, llama3 RoPE
scaling with theta 500000, tied embeddings, SiLU MLP, RMSNorm) at a reduced
size, so nothing is downloaded; any local Llama-family checkpoint works with
--checkpoint (its heads and KV heads must divide by the number of ranks).

What the script does beyond the plan:
- it chooses its card from LOCAL_RANK before its first collective, as a
  CUDA script does;
- it initialises torch.distributed itself (``init_process_group()`` picks
  "spyre" for spyre tensors and gloo for CPU ones): transformers starts a
  process group by itself only for the device types it has a backend for;
- it passes ``use_kernels=False``: transformers 5 swaps layers for Hugging
  Face hub kernels on the device in its device map by default, and the
  ``kernels`` package refuses device types outside its own list.
"""
import argparse
import os
import shutil
import tempfile
import time

import torch
import torch.distributed as dist
import transformers

import torch_spyre  # noqa: F401  (registers the "spyre" device and c10d backend)

SEED = 0
PROMPT = [[1, 306, 4658, 278, 6593, 310, 2834, 338]]

# Llama 3.2's features at a reduced size (Llama 3.2 1B: 2048 wide, 16
# layers, 32 heads over 8 KV heads, MLP 8192, vocabulary 128256).
LLAMA32_STYLE = dict(
    vocab_size=8192, hidden_size=256, intermediate_size=768, num_hidden_layers=4,
    num_attention_heads=8, num_key_value_heads=2, head_dim=32,
    max_position_embeddings=131072, rms_norm_eps=1e-5, tie_word_embeddings=True,
    rope_parameters=dict(rope_type="llama3", rope_theta=500000.0, factor=32.0,
                         low_freq_factor=1.0, high_freq_factor=4.0,
                         original_max_position_embeddings=8192),
    bos_token_id=1, eos_token_id=2, pad_token_id=0,
    # with the default 0.02 a random model's greedy decoding repeats one
    # token; at 0.1 it moves from token to token, so each step is checked
    initializer_range=0.1)

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
RTOL = {torch.float32: 1e-5, torch.float16: 4e-3, torch.bfloat16: 3.2e-2}


def write_checkpoint(path, dtype):
    torch.manual_seed(SEED)
    cfg = transformers.LlamaConfig(**LLAMA32_STYLE)
    model = transformers.LlamaForCausalLM(cfg).to(dtype).eval()
    model.save_pretrained(path)


@torch.no_grad()
def greedy(model, ids, steps):
    """Greedy tokens and the logits of every generated step (KV cache on)."""
    out = model.generate(ids, max_new_tokens=steps, min_new_tokens=steps, do_sample=False,
                         output_logits=True, return_dict_in_generate=True)
    return out.sequences.cpu(), torch.stack([lg.float().cpu() for lg in out.logits], 1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--checkpoint", metavar="DIR",
                    help="a local Llama-family checkpoint (default: write a random one)")
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--compile", action="store_true",
                    help="also run the prompt through torch.compile(model) (Inductor, the "
                         "default backend) and compare with the eager split model")
    ap.add_argument("--rtol", type=float, default=None,
                    help="logits tolerance relative to the largest CPU logit "
                         "(default by dtype: see the module's doc)")
    args = ap.parse_args(argv)
    dtype = DTYPES[args.dtype]
    rtol = args.rtol if args.rtol is not None else RTOL[dtype]

    # this rank's card first, as with CUDA: the group's first collective
    # (the broadcast below) binds the card its bytes move from
    torch.accelerator.set_device_index(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    t0 = time.perf_counter()
    # rank 0 writes the checkpoint and tells the others where
    where = [args.checkpoint]
    if not args.checkpoint:
        if rank == 0:
            where[0] = tempfile.mkdtemp(prefix="tp_hf_llama.")
            write_checkpoint(where[0], dtype)
        dist.broadcast_object_list(where, src=0)
    ckpt = where[0]

    model = transformers.AutoModelForCausalLM.from_pretrained(
        ckpt, tp_plan="auto", dtype=dtype, use_kernels=False)
    dev = model.device
    assert dev == torch.device("spyre", torch.spyre.current_device()), dev
    q = model.model.layers[0].self_attn.q_proj.weight
    assert isinstance(q, torch.distributed.tensor.DTensor), type(q)
    assert q.to_local().shape[0] * world == q.shape[0], (q.to_local().shape, q.shape)
    t_load = time.perf_counter()

    ids = torch.tensor(PROMPT)
    tokens, logits = greedy(model, ids.to(dev), args.steps)
    t_tp = time.perf_counter()
    print(f"tp_hf_llama rank {rank}/{world} on {dev}: tokens {tokens[0].tolist()} "
          f"(load {t_load - t0:.1f} s, generate {t_tp - t_load:.1f} s)", flush=True)

    compiled_err = None
    if args.compile:
        with torch.no_grad():
            eager = model(ids.to(dev)).logits.float().cpu()
            compiled = torch.compile(model)(ids.to(dev)).logits.float().cpu()
        compiled_err = (compiled - eager).abs().max().item() / eager.abs().max().item()
        from torch._dynamo.utils import counters
        graphs = counters["stats"]["unique_graphs"]
        breaks = sum(counters["graph_break"].values())
        print(f"tp_hf_llama rank {rank}: torch.compile(model) vs eager: logits "
              f"{compiled_err:.1e} of the largest apart; {graphs} graph(s), "
              f"{breaks} graph break(s)", flush=True)

    ok = compiled_err is None or compiled_err <= RTOL[dtype]
    if rank == 0:
        cpu = transformers.AutoModelForCausalLM.from_pretrained(ckpt, dtype=dtype,
                                                                use_kernels=False)
        cpu_tokens, cpu_logits = greedy(cpu.eval(), ids, args.steps)
        err = (logits - cpu_logits).abs().max().item()
        scale = cpu_logits.abs().max().item()
        same = torch.equal(tokens, cpu_tokens)
        ok = ok and same and err <= rtol * scale
        print(f"tp_hf_llama: {world} cards vs the CPU ({args.dtype}): "
              f"{'same tokens' if same else 'different tokens ' + str(cpu_tokens[0].tolist())}, "
              f"|logits - cpu| max {err:.2e} = {err / scale:.1e} of the largest logit "
              f"(rtol {rtol:g})", flush=True)
    oks = [None] * world
    dist.all_gather_object(oks, ok)  # every rank's own checks, rank 0's CPU comparison
    dist.barrier()
    if rank == 0 and not args.checkpoint:
        shutil.rmtree(ckpt, ignore_errors=True)
    dist.destroy_process_group()
    if all(oks) and rank == 0:
        print("tp_hf_llama: transformers' tensor-parallel plan on the cards gives the CPU's "
              "tokens")
    return 0 if all(oks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
