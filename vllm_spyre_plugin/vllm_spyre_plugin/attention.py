# SPDX-License-Identifier: MIT
"""Paged attention on the Spyre card, from torch ops the plugin runs on the card.

KV cache of one layer: [num_blocks, num_kv_heads, block_size, 2 * head_size]
on the card (vLLM's LBHNC layout), K in the first head_size columns, V in
the rest. One step writes the new tokens' K/V rows into their slots (one
strided card copy per run of consecutive slots in one block: one per
request in a decode step, one per block a prefill fills; the card has no
scatter, and index_copy_ would rewrite the whole cache), then, for the whole batch at once,
gathers each request's K/V rows through its block table (index_select),
pads the queries to [requests, heads, max_query_len, head_size] and runs one
batched scaled-dot-product attention with an additive mask that hides
padding and future positions. All the index arithmetic is done once per step
on the host (build()) and uploaded as a few int64 index tensors shared by
every layer.
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
    gather_block: torch.Tensor  # [R * Lmax] block of each context position
    gather_offset: torch.Tensor  # [R * Lmax]
    query_rows: torch.Tensor  # [R * Qmax] token gathered into each padded query row
    out_rows: torch.Tensor  # [T] padded row of each token
    mask: torch.Tensor  # [R, 1, Qmax, Lmax] additive: 0 or -inf


class SpyreAttentionMetadataBuilder(AttentionMetadataBuilder[SpyreAttentionMetadata]):
    def __init__(self, kv_cache_spec, layer_names, vllm_config, device) -> None:
        super().__init__(kv_cache_spec, layer_names, vllm_config, device)
        self.block_size = kv_cache_spec.block_size
        self.device = device
        self.dtype = vllm_config.model_config.dtype

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
        block_table = m.block_table_tensor[:R].cpu().numpy().astype(np.int64)
        slots = m.slot_mapping[:T].cpu().numpy().astype(np.int64)
        if (slots < 0).any():
            raise NotImplementedError("spyre attention: padded slot mapping")

        # positions 0..Lmax-1 of each request -> (block, offset); past the
        # request's length they point at its first slot and are masked
        pos = np.arange(Lmax, dtype=np.int64)
        valid_k = pos[None, :] < seq_lens[:, None]  # [R, Lmax]
        posc = np.where(valid_k, pos[None, :], 0)
        gblock = np.take_along_axis(block_table, posc // bs, axis=1)
        goff = posc % bs

        # padded query row (r, i) holds token qsl[r] + i; query i of request
        # r sits at position seq_len - qlen + i and sees keys 0..that position
        qi = np.arange(Qmax, dtype=np.int64)
        valid_q = qi[None, :] < qlens[:, None]  # [R, Qmax]
        qrows = np.where(valid_q, qsl[:-1, None] + qi[None, :], 0)
        qpos = seq_lens[:, None] - qlens[:, None] + qi[None, :]  # [R, Qmax]
        see = (pos[None, None, :] <= qpos[:, :, None]) & valid_k[:, None, :]
        # a padding query row sees key 0 only, so its softmax stays finite
        see[:, :, 0] |= ~valid_q
        mask = np.where(see, 0.0, -np.inf).astype(np.float32)[:, None]  # [R,1,Qmax,Lmax]
        out_rows = np.concatenate(
            [r * Qmax + np.arange(qlens[r], dtype=np.int64) for r in range(R)]
        ) if R else np.zeros(0, np.int64)

        runs: list[tuple[int, int, int, int]] = []
        for t, slot in enumerate(slots.tolist()):
            b, o = divmod(slot, bs)
            if runs and runs[-1][0] == b and runs[-1][1] + runs[-1][3] == o \
                    and runs[-1][2] + runs[-1][3] == t:
                runs[-1] = (b, runs[-1][1], runs[-1][2], runs[-1][3] + 1)
            else:
                runs.append((b, o, t, 1))

        def dev(a: np.ndarray, dtype=torch.int64) -> torch.Tensor:
            return torch.from_numpy(np.ascontiguousarray(a)).to(dtype).to(self.device)

        return SpyreAttentionMetadata(
            num_actual_tokens=T,
            num_reqs=R,
            max_query_len=Qmax,
            max_seq_len=Lmax,
            query_start_loc_cpu=torch.from_numpy(qsl),
            seq_lens_cpu=torch.from_numpy(seq_lens),
            write_runs=runs,
            gather_block=dev(gblock.reshape(-1)),
            gather_offset=dev(goff.reshape(-1)),
            query_rows=dev(qrows.reshape(-1)),
            out_rows=dev(out_rows),
            mask=dev(mask, self.dtype),
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
        self.group = num_heads // num_kv_heads
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
        T, H, Hkv, D = md.num_actual_tokens, self.num_heads, self.num_kv_heads, self.head_size
        R, Qmax, Lmax = md.num_reqs, md.max_query_len, md.max_seq_len
        nblk, _, bs, _ = kv_cache.shape

        # 1. the new tokens' K and V into their slots
        kv_new = torch.cat([key[:T], value[:T]], dim=-1)  # [T, Hkv, 2D]
        for b, o, t, n in md.write_runs:
            kv_cache[b, :, o:o + n, :].copy_(kv_new[t:t + n].transpose(0, 1))

        # 2. every request's context, [R, Hkv, Lmax, 2D]: row (b, h, n) of
        #    the cache viewed as [nblk * Hkv * bs, 2D] is (b * Hkv + h) * bs + n
        heads = torch.arange(Hkv, device=kv_cache.device, dtype=torch.int64)
        cache_rows = kv_cache.view(nblk * Hkv * bs, 2 * D)
        grows = (md.gather_block[:, None] * Hkv + heads[None, :]) * bs + md.gather_offset[:, None]
        ctx = cache_rows.index_select(0, grows.reshape(-1)).view(R, Lmax, Hkv, 2 * D)
        ctx = ctx.permute(0, 2, 1, 3)
        k = ctx[..., :D]
        v = ctx[..., D:]

        # 3. queries padded to [R, Hkv, group * Qmax, D] (query heads of one
        #    KV head side by side), scaled
        q = query[:T].reshape(T, H * D).index_select(0, md.query_rows)
        q = q.view(R, Qmax, Hkv, self.group, D).permute(0, 2, 3, 1, 4)
        q = q.reshape(R, Hkv, self.group * Qmax, D) * self.scale
        mask = md.mask
        if self.group > 1:
            mask = mask.repeat(1, 1, self.group, 1)

        scores = torch.matmul(q, k.transpose(-1, -2)) + mask
        probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, v)  # [R, Hkv, group * Qmax, D]

        # 4. back to token order, [T, H, D]
        out = out.view(R, Hkv, self.group, Qmax, D).permute(0, 3, 1, 2, 4)
        out = out.reshape(R * Qmax, H * D).index_select(0, md.out_rows)
        output[:T].copy_(out.view(T, H, D))
        return output
