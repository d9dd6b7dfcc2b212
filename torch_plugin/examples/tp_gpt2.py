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
Each rank builds the model once on the CPU and copies it to its card for
the one-card run and again for the split one.

References from files, for runs where computing them is slow (fp16 on a
VM's emulated CPU takes many minutes; the same seed gives the same model
anywhere):

    tp_gpt2.py --gpt2-small --steps 4 --write-cpu-ref FILE [--write-weights W]

computes the CPU reference alone (no cards, no torchrun) and writes it to
FILE (and the model's weights to W); --cpu-ref FILE then has rank 0 take
the CPU reference from FILE, and --weights W has every rank load the
weights instead of initialising them from the seed (which takes minutes
under TCG). --write-one-card FILE has rank 0 keep its one-card tokens and
logits in FILE; --one-card-ref FILE has every rank take them from FILE
instead of running the whole model on its card. Such a file records the
model's shape and dtype, the seed, prompt, step count, torch version and
the SHA-256 of the weights; rank 0 hashes the weights it has and every
rank stops with an error if a field it checks differs or the file is
missing, so the comparison stays one of the same model, with the same
tolerance.
"""
import argparse
import copy
import hashlib
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


SEED = 0
PROMPT = [[5, 17, 42, 8, 63, 2]]


def weights_hash(model):
    """SHA-256 of the model's parameters and buffers, names and bytes."""
    h = hashlib.sha256()
    for name, t in model.state_dict().items():
        h.update(f"{name} {t.dtype} {tuple(t.shape)};".encode())
        h.update(t.detach().contiguous().view(torch.uint8).numpy())
    return h.hexdigest()


def load_weights(path, shape, dtype):
    """The model with the weights FILE holds (from --write-weights), not built from the seed."""
    if not os.path.exists(path):
        raise SystemExit(f"tp_gpt2: weights {path}: no such file (write them with --write-weights)")
    with torch.device("meta"):  # no initialisation: every tensor comes from the file
        model = TinyGPT(**(shape or {}))
    model.load_state_dict(torch.load(path, weights_only=True), assign=True)  # strict
    return model.to(dtype).eval()


def ref_config(args, model):
    """What a reference file must match: the run's model, prompt and steps.

    The weights' hash only where @model is not None: hashing 250 MB under
    TCG is not free, and rank 0's check covers the others (the split
    model's shards come from rank 0; a rank whose replicated weights
    differed would not give rank 0's logits).
    """
    cfg = {"model": "GPT-2-small shape fp16" if args.gpt2_small else "tiny fp32",
           "seed": SEED, "prompt": PROMPT, "steps": args.steps, "torch": str(torch.__version__)}
    if model is not None:
        cfg["weights sha256"] = weights_hash(model)
    return cfg


def write_ref(path, kind, cfg, ids, logits):
    tmp = f"{path}.tmp{os.getpid()}"
    torch.save({"kind": kind, "config": cfg, "ids": ids, "logits": logits}, tmp)
    os.replace(tmp, path)  # a reader never sees half a file


def read_ref(path, kind, cfg, written_by):
    """The tokens and logits of FILE, if it was written for this very run."""
    where = f"tp_gpt2: {kind} reference {path}"
    if not os.path.exists(path):
        raise SystemExit(f"{where}: no such file (write it with {written_by})")
    rec = torch.load(path, weights_only=True)
    if not isinstance(rec, dict) or rec.get("kind") != kind:
        raise SystemExit(f"{where}: not a {kind} reference (kind {rec.get('kind')!r})")
    keys = set(cfg) | set(rec["config"])
    if "weights sha256" not in cfg:
        keys.discard("weights sha256")  # not hashed on this rank: see ref_config()
    for key in sorted(keys):
        if rec["config"].get(key) != cfg.get(key):
            raise SystemExit(f"{where} is stale: {key} {rec['config'].get(key)!r} there, "
                             f"{cfg.get(key)!r} here")
    return rec["ids"], rec["logits"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--gpt2-small", action="store_true",
                    help="GPT-2-small shape in fp16 (compared with one card)")
    ap.add_argument("--cpu", action="store_true", help="with --gpt2-small: also the CPU")
    ap.add_argument("--atol", type=float, default=None,
                    help="logits tolerance (default 1e-4, 5e-2 with --gpt2-small)")
    ap.add_argument("--write-cpu-ref", metavar="FILE",
                    help="only compute the CPU reference (no cards, no torchrun) into FILE")
    ap.add_argument("--write-weights", metavar="FILE",
                    help="with --write-cpu-ref: also write the model's weights to FILE")
    ap.add_argument("--weights", metavar="FILE",
                    help="take the weights from FILE (from --write-weights) instead of "
                         "initialising them from the seed (slow on an emulated CPU)")
    ap.add_argument("--cpu-ref", metavar="FILE",
                    help="rank 0 takes the CPU reference from FILE (from --write-cpu-ref)")
    ap.add_argument("--write-one-card", metavar="FILE",
                    help="rank 0 also writes its one-card tokens and logits to FILE")
    ap.add_argument("--one-card-ref", metavar="FILE",
                    help="take one card's tokens and logits from FILE (from "
                         "--write-one-card) instead of running the whole model on a card")
    args = ap.parse_args(argv)
    if args.write_one_card and args.one_card_ref:
        ap.error("--write-one-card and --one-card-ref exclude each other")
    if args.write_cpu_ref and (args.cpu_ref or args.write_one_card or args.one_card_ref
                               or args.weights):
        ap.error("--write-cpu-ref runs nothing else")
    if args.write_weights and not args.write_cpu_ref:
        ap.error("--write-weights goes with --write-cpu-ref")
    shape, dtype = (GPT2_SMALL, torch.float16) if args.gpt2_small else (None, torch.float32)
    atol = args.atol if args.atol is not None else 5e-2 if args.gpt2_small else 1e-4
    what = "GPT-2-small shape fp16" if args.gpt2_small else "tiny fp32"
    prompt = torch.tensor(PROMPT)

    t0 = time.perf_counter()
    # once: copies go to the card(s)
    model = load_weights(args.weights, shape, dtype) if args.weights else build(SEED, shape, dtype)
    t_built = time.perf_counter()
    if args.write_cpu_ref:
        cfg = ref_config(args, model)
        if args.write_weights:
            tmp = f"{args.write_weights}.tmp{os.getpid()}"
            torch.save(model.state_dict(), tmp)
            os.replace(tmp, args.write_weights)
        ids, logits = greedy(model, prompt, args.steps)
        write_ref(args.write_cpu_ref, "CPU", cfg, ids, logits)
        print(f"tp_gpt2: CPU reference, {what} (weights sha256 "
              f"{cfg['weights sha256'][:16]}...), {args.steps} greedy steps in "
              f"{time.perf_counter() - t0:.1f} s: tokens {ids[0].tolist()}")
        return 0

    world = int(os.environ.get("WORLD_SIZE", "1"))
    mesh = init_device_mesh("spyre", (world,))  # init_process_group(); LOCAL_RANK's card
    rank, dev = dist.get_rank(), torch.device("spyre", torch.spyre.current_device())
    with_cpu = bool(args.cpu or args.cpu_ref or not args.gpt2_small) and rank == 0
    t1 = time.perf_counter()
    files = args.cpu_ref or args.write_one_card or args.one_card_ref
    cfg = ref_config(args, model if rank == 0 else None) if files else None
    # the files first: a missing or stale one stops the run before any work
    cpu_ref = (read_ref(args.cpu_ref, "CPU", cfg, "--write-cpu-ref")
               if args.cpu_ref and rank == 0 else None)
    one_ref = (read_ref(args.one_card_ref, "one card", cfg, "--write-one-card")
               if args.one_card_ref else None)

    t1h = time.perf_counter()
    if one_ref:
        one_ids, one_logits = one_ref
    else:
        one = copy.deepcopy(model).to(dev)
        one_ids, one_logits = greedy(one, prompt.to(dev), args.steps)
        del one  # the card and the guest's RAM hold one GPT-2-small at a time
        if args.write_one_card and rank == 0:
            write_ref(args.write_one_card, "one card", cfg, one_ids, one_logits)
    t2 = time.perf_counter()
    keep_cpu = with_cpu and not cpu_ref  # the CPU run below needs the model
    tp = tensor_parallel((copy.deepcopy(model) if keep_cpu else model).to(dev), mesh)
    t3 = time.perf_counter()
    tp_ids, tp_logits = greedy(tp, prompt.to(dev), args.steps)
    t4 = time.perf_counter()
    del tp
    if cpu_ref:
        cpu_ids, cpu_logits = cpu_ref
    elif with_cpu:
        cpu_ids, cpu_logits = greedy(model, prompt, args.steps)
    else:
        cpu_ids, cpu_logits = one_ids, one_logits
    t5 = time.perf_counter()

    ok = (torch.equal(tp_ids, one_ids) and torch.equal(tp_ids, cpu_ids)
          and torch.allclose(tp_logits, one_logits, atol=atol, rtol=atol)
          and torch.allclose(tp_logits, cpu_logits, atol=atol, rtol=atol))
    if rank == 0:
        print(f"tp_gpt2: {what}, {world} cards, card {dev}: tokens {tp_ids[0].tolist()}")
        print(f"tp_gpt2: max |logits| difference: tensor-parallel vs one card "
              f"{(tp_logits - one_logits).abs().max().item():.2e}" +
              (f", vs CPU {(tp_logits - cpu_logits).abs().max().item():.2e}" if with_cpu
               else "") + f" (tolerance {atol:g})")
        print(f"tp_gpt2: " + (f"weights from {args.weights} " if args.weights else "build ") +
              f"{t_built - t0:.1f} s" + (f", hash {t1h - t1:.1f} s" if files else "") +
              f"; {args.steps} greedy steps (no KV cache): " +
              (f"one card from {args.one_card_ref}" if one_ref else
               f"one card {t2 - t1h:.1f} s") +
              f", tensor parallel {t4 - t3:.1f} s (split {t3 - t2:.1f} s)" +
              (f", CPU from {args.cpu_ref}" if cpu_ref else
               f", CPU {t5 - t4:.1f} s" if with_cpu else ""))
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
