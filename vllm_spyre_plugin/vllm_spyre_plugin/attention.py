# SPDX-License-Identifier: MIT
"""Paged attention on the Spyre card: the op library's paged-attention op.

KV cache of one layer: [num_blocks, num_kv_heads, block_size, 2 * head_size]
on the card (vLLM's LBHNC layout), K in the first head_size columns, V in
the rest. One step

1. writes the new tokens' K/V rows into their slots on the card: one strided
   card-to-card copy per run of consecutive slots in one block (one per
   request in a decode step, one per block a prefill fills). The card has
   no scatter store, and index_copy_ would rewrite the whole cache;
2. runs torch.ops.spyre.paged_attention (libspyre's spyre_op_paged_attention)
   once for the whole batch: the card turns the block table into cache rows,
   gathers them into its scratchpad and runs a causal attention over each
   request's context. Prefill, decode and mixed batches are the same op:
   queries are padded right aligned to [requests, heads, max_query_len,
   head_size] (query row i of request r sits at position
   seq_len[r] - max_query_len + i), so a decode-only step is the op's
   one-query case and needs no padding at all.

The index arithmetic (write runs, the block table cut to the step's longest
context, the padded query rows) is done once per step on the host (build())
from the scheduler's host copies, and uploaded as a few small int tensors
shared by every layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch
from vllm.v1.attention.backend import (
    AttentionBackend,
    AttentionImpl,
    AttentionLayer,
    AttentionMetadataBuilder,
    AttentionType,
    CommonAttentionMetadata,
)
from vllm.v1.kv_cache_layout import KVCacheLayout


class SpyreAttentionBackend(AttentionBackend):
    forward_includes_kv_cache_update: bool = True
    supported_dtypes: ClassVar[list[torch.dtype]] = [torch.float32, torch.bfloat16, torch.float16]
    supported_kv_cache_dtypes: ClassVar[list] = ["auto"]

    @staticmethod
    def get_name() -> str:
        # vLLM's registry has no entry for an out-of-tree backend; CUSTOM is
        # the name it reserves for one
        return "CUSTOM"

    @staticmethod
    def get_impl_cls() -> type[SpyreAttentionImpl]:
        return SpyreAttentionImpl

    @staticmethod
    def get_builder_cls() -> type[SpyreAttentionMetadataBuilder]:
        return SpyreAttentionMetadataBuilder

    @staticmethod
    def get_supported_kernel_block_sizes(kv_cache_spec=None) -> list:
        return [8, 16, 32, 64, 128]

    @classmethod
    def get_supported_head_sizes(cls) -> list[int]:
        return []  # any

    @classmethod
    def supported_kv_cache_layouts(cls) -> tuple[KVCacheLayout, ...]:
        return (KVCacheLayout.LBHNC,)

    @classmethod
    def supports_attn_type(cls, attn_type: str) -> bool:
        return attn_type == AttentionType.DECODER


@dataclass
class SpyreAttentionMetadata:
    num_actual_tokens: int
    num_reqs: int
    max_query_len: int
    max_seq_len: int
    # host copies, for error messages and tests
    query_start_loc_cpu: torch.Tensor
    seq_lens_cpu: torch.Tensor
    # (block, first row, first token, count): runs of new tokens that go
    # to consecutive rows of one block
    write_runs: list[tuple[int, int, int, int]]
    # card tensors, shared by all layers of the step
    block_table: torch.Tensor  # [R, blocks of the longest context] int32
    seq_lens: torch.Tensor  # [R] int32
    # None when the step's tokens already are the padded query rows (every
    # request has max_query_len tokens: decode-only steps, one prefill)
    query_rows: torch.Tensor | None  # [R * Qmax] token in each padded query row
    out_rows: torch.Tensor | None  # [T] padded row of each token


def plan_write_runs(slots: np.ndarray, block_size: int) -> list[tuple[int, int, int, int]]:
    """Runs (block, first row, first token, count) of tokens whose slots are
    consecutive rows of one block: each run is one card copy."""
    runs: list[tuple[int, int, int, int]] = []
    for t, slot in enumerate(slots.tolist()):
        b, o = divmod(slot, block_size)
        if runs and runs[-1][0] == b and runs[-1][1] + runs[-1][3] == o \
                and runs[-1][2] + runs[-1][3] == t:
            runs[-1] = (b, runs[-1][1], runs[-1][2], runs[-1][3] + 1)
        else:
            runs.append((b, o, t, 1))
    return runs


def plan_query_rows(qsl: np.ndarray, qmax: int) -> tuple[np.ndarray, np.ndarray]:
    """Right-aligned padding of the step's tokens to [R, Qmax]: the token
    each padded row reads (rows above a short request's queries read token
    0; their result is dropped) and the padded row each token's result
    comes back from."""
    R = len(qsl) - 1
    qlens = qsl[1:] - qsl[:-1]
    qi = np.arange(qmax, dtype=np.int64)
    first = qmax - qlens  # first real row of each request
    real = qi[None, :] >= first[:, None]
    rows = np.where(real, qsl[:-1, None] + qi[None, :] - first[:, None], 0)
    out = np.concatenate([r * qmax + np.arange(first[r], qmax, dtype=np.int64)
                          for r in range(R)]) if R else np.zeros(0, np.int64)
    return rows.reshape(-1), out


class SpyreAttentionMetadataBuilder(AttentionMetadataBuilder[SpyreAttentionMetadata]):
    def __init__(self, kv_cache_spec, layer_names, vllm_config, device) -> None:
        super().__init__(kv_cache_spec, layer_names, vllm_config, device)
        self.block_size = kv_cache_spec.block_size
        self.device = device

    def build(
        self,
        common_prefix_len: int,
        common_attn_metadata: CommonAttentionMetadata,
        fast_build: bool = False,
    ) -> SpyreAttentionMetadata:
        m = common_attn_metadata
        if isinstance(m.causal, torch.Tensor) or not m.causal:
            raise NotImplementedError("spyre attention: only causal decoder attention")
        R = m.num_reqs
        T = m.num_actual_tokens
        bs = self.block_size
        qsl = m.query_start_loc_cpu[: R + 1].numpy().astype(np.int64)
        seq_lens = m.seq_lens[:R].cpu().numpy().astype(np.int64)
        qlens = qsl[1:] - qsl[:-1]
        Qmax = int(qlens.max()) if R else 0
        Lmax = int(seq_lens.max()) if R else 0
        # the slot mapping and block table of this step only: its T tokens
        # and the blocks its longest context spans
        nblk = -(-Lmax // bs)
        block_table = m.block_table_tensor[:R, :nblk].cpu().numpy()
        slots = m.slot_mapping[:T].cpu().numpy().astype(np.int64)
        if (slots < 0).any():
            raise NotImplementedError("spyre attention: padded slot mapping")

        def dev(a: np.ndarray, dtype=torch.int64) -> torch.Tensor:
            return torch.from_numpy(np.ascontiguousarray(a)).to(dtype).to(self.device)

        query_rows = out_rows = None
        if T != R * Qmax:
            rows, out = plan_query_rows(qsl, Qmax)
            query_rows, out_rows = dev(rows), dev(out)
        return SpyreAttentionMetadata(
            num_actual_tokens=T,
            num_reqs=R,
            max_query_len=Qmax,
            max_seq_len=Lmax,
            query_start_loc_cpu=torch.from_numpy(qsl),
            seq_lens_cpu=torch.from_numpy(seq_lens),
            write_runs=plan_write_runs(slots, bs),
            block_table=dev(block_table, torch.int32),
            seq_lens=dev(seq_lens, torch.int32),
            query_rows=query_rows,
            out_rows=out_rows,
        )


class SpyreAttentionImpl(AttentionImpl):
    def __init__(
        self,
        num_heads: int,
        head_size: int,
        scale: float,
        num_kv_heads: int,
        alibi_slopes: list[float] | None,
        sliding_window: int | None,
        kv_cache_dtype: str,
        logits_soft_cap: float | None = None,
        attn_type: str = AttentionType.DECODER,
        kv_sharing_target_layer_name: str | None = None,
        sinks: torch.Tensor | None = None,
    ) -> None:
        unsupported = []
        if alibi_slopes is not None:
            unsupported.append("ALiBi")
        if sliding_window is not None:
            unsupported.append("sliding window")
        if logits_soft_cap:
            unsupported.append("logits soft cap")
        if sinks is not None:
            unsupported.append("attention sinks")
        if kv_sharing_target_layer_name is not None:
            unsupported.append("KV sharing")
        if kv_cache_dtype != "auto":
            unsupported.append(f"kv_cache_dtype={kv_cache_dtype}")
        if attn_type != AttentionType.DECODER:
            unsupported.append(f"attention type {attn_type}")
        if unsupported:
            raise NotImplementedError("spyre attention: " + ", ".join(unsupported))
        self.num_heads = num_heads
        self.head_size = head_size
        self.scale = float(scale)
        self.num_kv_heads = num_kv_heads
        self.kv_sharing_target_layer_name = None
        self.attn_type = attn_type

    def forward(
        self,
        layer: AttentionLayer,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        kv_cache: torch.Tensor,
        attn_metadata: SpyreAttentionMetadata | None,
        output: torch.Tensor,
        output_scale: torch.Tensor | None = None,
        output_block_scale: torch.Tensor | None = None,
    ) -> torch.Tensor:
        if output_scale is not None or output_block_scale is not None:
            raise NotImplementedError("spyre attention: fused output quantization")
        if attn_metadata is None:  # profiling run without a cache
            return output.zero_()
        md = attn_metadata
        T, H, D = md.num_actual_tokens, self.num_heads, self.head_size
        R, Qmax = md.num_reqs, md.max_query_len

        # 1. the new tokens' K and V into their slots (card-to-card copies)
        kv_new = torch.cat([key[:T], value[:T]], dim=-1)  # [T, Hkv, 2D]
        for b, o, t, n in md.write_runs:
            kv_cache[b, :, o:o + n, :].copy_(kv_new[t:t + n].transpose(0, 1))

        # 2. queries as [R, H, Qmax, D], right aligned
        q = query[:T].reshape(T, H * D)
        if md.query_rows is not None:
            q = q.index_select(0, md.query_rows)
        q = q.view(R, Qmax, H, D).transpose(1, 2)

        # 3. one op library launch: block table -> cache rows -> attention
        out = torch.ops.spyre.paged_attention(q, kv_cache, md.block_table, md.seq_lens,
                                              self.scale)

        # 4. back to token order, [T, H, D]
        out = out.transpose(1, 2).reshape(R * Qmax, H * D)
        if md.out_rows is not None:
            out = out.index_select(0, md.out_rows)
        output[:T].copy_(out.view(T, H, D))
        return output
