# SPDX-License-Identifier: MIT
"""A GPT-2-like model split across spyre cards by tensor parallelism.

    torchrun --nproc-per-node 2 torch_plugin/examples/tp_gpt2.py

(with SPYRE_BACKEND=sim SPYRE_SIM_CARDS=2 on a machine without cards).
Each process takes the card named by LOCAL_RANK (DeviceMesh sets it), builds
the same model from one seed, and splits every block Megatron-style with
DTensor's parallelize_module: the attention's q/k/v projections and the
MLP's first linear by output columns (each card holds half of the heads and
half of the hidden units), the attention's output projection and the MLP's
second linear by input rows, whose partial sums one all_reduce per block
adds up (the "spyre" c10d backend). Rank 0 then greedy-decodes a prompt with
the split model and with the whole model on one card, and checks the two
against each other and against the CPU: same tokens, logits within 1e-4.

    torchrun --nproc-per-node 2 torch_plugin/examples/tp_gpt2.py --gpt2-small

runs a GPT-2-small-shaped model instead (12 layers, 768 wide, 12 heads,
50257-token vocabulary, 1024 positions; fp16, random weights): the split
model against the whole model on one card (same greedy tokens, logits
within --atol), without the CPU comparison unless --cpu (slow in a VM).

Every rank compares the split model with the whole model on its own card;
the CPU reference runs on rank 0 only: the split model's logits are the
same on every rank (the all_reduce leaves each rank the full sum and the
head is replicated), and ranks sharing a machine's cores (or two VMs
sharing a host's) would otherwise each pay for the slowest part of the run.
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                               parallelize_module)


class Attention(nn.Module):
    def __init__(self, d, n_head):
        super().__init__()
        self.head_dim = d // n_head
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x):
        b, t, _ = x.shape
        # -1 heads: after a column split each card has its own share of them
        q, k, v = (p(x).view(b, t, -1, self.head_dim).transpose(1, 2)
                   for p in (self.q, self.k, self.v))
        s = q @ k.transpose(-2, -1) / self.head_dim ** 0.5
        causal = torch.full((t, t), float("-inf"), dtype=x.dtype).triu(1).to(x.device)  # on the host
        s = (s + causal).softmax(-1)
        return self.o((s @ v).transpose(1, 2).reshape(b, t, -1))


class Block(nn.Module):
    def __init__(self, d, n_head):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = Attention(d, n_head)
        self.fc, self.proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.proj(nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class TinyGPT(nn.Module):
    def __init__(self, vocab=96, d=64, n_head=4, n_layer=2, ctx=32):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, n_head) for _ in range(n_layer))
        self.ln_f, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.wte(ids) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


def tensor_parallel(model, mesh):
    """Megatron-style split of every block over the 1-D mesh."""
    for blk in model.blocks:
        parallelize_module(blk, mesh, {
            "attn.q": ColwiseParallel(), "attn.k": ColwiseParallel(),
            "attn.v": ColwiseParallel(), "attn.o": RowwiseParallel(),
            "fc": ColwiseParallel(), "proj": RowwiseParallel(),
        })
    return model


GPT2_SMALL = dict(vocab=50257, d=768, n_head=12, n_layer=12, ctx=1024)


def build(seed=0, shape=None, dtype=torch.float32):
    torch.manual_seed(seed)
    return TinyGPT(**(shape or {})).to(dtype).eval()


@torch.no_grad()
def greedy(model, ids, steps):
    """Greedy tokens and the logits of every step (no KV cache: short)."""
    logits = []
    for _ in range(steps):
        out = model(ids)[:, -1]
        logits.append(out.float().cpu())
        ids = torch.cat([ids, out.argmax(-1, keepdim=True)], dim=1)
    return ids.cpu(), torch.stack(logits)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--gpt2-small", action="store_true",
                    help="GPT-2-small shape in fp16 (compared with one card)")
    ap.add_argument("--cpu", action="store_true", help="with --gpt2-small: also the CPU")
    ap.add_argument("--atol", type=float, default=None,
                    help="logits tolerance (default 1e-4, 5e-2 with --gpt2-small)")
    args = ap.parse_args(argv)
    shape, dtype = (GPT2_SMALL, torch.float16) if args.gpt2_small else (None, torch.float32)
    atol = args.atol if args.atol is not None else 5e-2 if args.gpt2_small else 1e-4
    with_cpu = args.cpu or not args.gpt2_small

    world = int(os.environ.get("WORLD_SIZE", "1"))
    mesh = init_device_mesh("spyre", (world,))  # init_process_group(); LOCAL_RANK's card
    rank, dev = dist.get_rank(), torch.device("spyre", torch.spyre.current_device())
    prompt = torch.tensor([[5, 17, 42, 8, 63, 2]])

    t0 = time.perf_counter()
    one = build(0, shape, dtype).to(dev)
    one_ids, one_logits = greedy(one, prompt.to(dev), args.steps)
    del one  # the card and the guest's RAM hold one GPT-2-small at a time
    t1 = time.perf_counter()
    tp = tensor_parallel(build(0, shape, dtype).to(dev), mesh)
    t2 = time.perf_counter()
    tp_ids, tp_logits = greedy(tp, prompt.to(dev), args.steps)
    t3 = time.perf_counter()
    del tp
    with_cpu = with_cpu and rank == 0
    cpu_ids, cpu_logits = (greedy(build(0, shape, dtype), prompt, args.steps) if with_cpu
                           else (one_ids, one_logits))
    t4 = time.perf_counter()

    ok = (torch.equal(tp_ids, one_ids) and torch.equal(tp_ids, cpu_ids)
          and torch.allclose(tp_logits, one_logits, atol=atol, rtol=atol)
          and torch.allclose(tp_logits, cpu_logits, atol=atol, rtol=atol))
    if rank == 0:
        what = "GPT-2-small shape fp16" if args.gpt2_small else "tiny fp32"
        print(f"tp_gpt2: {what}, {world} cards, card {dev}: tokens {tp_ids[0].tolist()}")
        print(f"tp_gpt2: max |logits| difference: tensor-parallel vs one card "
              f"{(tp_logits - one_logits).abs().max().item():.2e}" +
              (f", vs CPU {(tp_logits - cpu_logits).abs().max().item():.2e}" if with_cpu
               else "") + f" (tolerance {atol:g})")
        print(f"tp_gpt2: {args.steps} greedy steps (no KV cache): one card {t1 - t0:.1f} s, "
              f"tensor parallel {t3 - t2:.1f} s" +
              (f", CPU {t4 - t3:.1f} s" if with_cpu else ""))
    verdict = torch.tensor([int(ok)], device=dev)
    dist.all_reduce(verdict, op=dist.ReduceOp.MIN)
    dist.destroy_process_group()
    if verdict.item() != 1:
        print(f"tp_gpt2: rank {rank}: tensor parallel DISAGREES "
              f"(tokens {tp_ids[0].tolist()} vs one card {one_ids[0].tolist()}, "
              f"CPU {cpu_ids[0].tolist()})", file=sys.stderr)
        return 1
    if rank == 0:
        print("tp_gpt2: tensor parallel agrees with one card" +
              (" and with the CPU" if with_cpu else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
