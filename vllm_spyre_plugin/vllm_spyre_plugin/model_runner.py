# SPDX-License-Identifier: MIT
"""The vLLM model runner for a Spyre card.

vLLM's GPU model runner (V1) does the batching bookkeeping on the host and
keeps the step's inputs, the weights and the KV cache on its device: here
that device is the card. What it does with CUDA (streams and events for
overlapped copies, CUDA graphs, memory profiling) is replaced: copies are
synchronous, and the model's forward runs through torch.compile's default
path on the card (compile.py), eagerly when that is turned off or fails.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
import torch.nn as nn
from vllm.logger import init_logger
from vllm.model_executor.model_loader import get_model
from vllm.v1.kv_cache_interface import FullAttentionSpec
from vllm.v1.worker.block_table import BlockTable, SlotMappingMode
from vllm.v1.worker.gpu_model_runner import GPUModelRunner

from vllm_spyre_plugin.compile import compile_model

logger = init_logger(__name__)


@contextmanager
def _no_cuda_streams():
    """The GPU runner creates CUDA streams and events for overlapped copies
    in its constructor; with async scheduling off they are never waited on,
    so placeholders stand in for them."""

    class _Event:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            pass

        def record(self, *args: Any, **kwargs: Any) -> None:
            pass

        def synchronize(self) -> None:
            pass

        def wait(self, *args: Any, **kwargs: Any) -> None:
            pass

    class _Stream:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.device = torch.device("cpu")

        def wait_stream(self, *args: Any, **kwargs: Any) -> None:
            pass

    saved = (torch.Event, torch.cuda.Stream, torch.cuda.Event)
    try:
        torch.Event, torch.cuda.Stream, torch.cuda.Event = _Event, _Stream, _Event
        yield
    finally:
        torch.Event, torch.cuda.Stream, torch.cuda.Event = saved


def _host_slot_mapping(self, num_reqs: int, query_start_loc: torch.Tensor,
                       positions: torch.Tensor) -> None:
    """BlockTable.compute_slot_mapping without vLLM's Triton kernel: the
    slot of each token (block_table[req, pos // bs] * bs + pos % bs) is
    computed on the host from the block table's numpy copy and uploaded."""
    if self.slot_mapping_mode == SlotMappingMode.NONE:
        return
    if self.dcp_world_size != 1:
        raise NotImplementedError("spyre: decode context parallelism")
    n = positions.shape[0]
    qsl = query_start_loc[: num_reqs + 1].cpu().numpy()
    pos = positions.cpu().numpy().astype(np.int64)
    req = np.repeat(np.arange(num_reqs), qsl[1:] - qsl[:-1])
    slots = np.full(n, -1, dtype=np.int64)
    t = len(req)
    bt = self.block_table.np
    slots[:t] = bt[req, pos[:t] // self.block_size] * self.block_size + pos[:t] % self.block_size
    dst = self.slot_mapping.gpu
    dst[:n].copy_(torch.from_numpy(slots).to(dst.dtype))


class SpyreModelRunner(GPUModelRunner):
    def __init__(self, vllm_config, device: torch.device) -> None:
        # vLLM computes slot mappings with a Triton kernel (GPU only): this
        # worker process uses the host version instead
        BlockTable.compute_slot_mapping = _host_slot_mapping
        with _no_cuda_streams():
            super().__init__(vllm_config, device)
        self.use_cuda_graph = False

    def load_model(self, load_dummy_weights: bool = False) -> None:
        if load_dummy_weights:
            raise ValueError("spyre: dummy weight reloading (elastic EP) is not supported")
        if self.lora_config:
            raise NotImplementedError("spyre: LoRA is not supported")
        logger.info("spyre: loading %s onto %s", self.model_config.model, self.device)
        # vLLM's loaders build the model under `with device:` and copy the
        # checkpoint's tensors into the parameters: weights land on the card
        self.model = get_model(vllm_config=self.vllm_config)
        bad = [n for n, p in self.model.named_parameters() if p.device != self.device]
        if bad:
            raise RuntimeError(f"spyre: parameters not on {self.device}: {bad[:5]}")
        self.compiled_forward = compile_model(self.model)

    def compile_state(self) -> str:
        """"compiled", or "eager (...)" saying why."""
        if self.compiled_forward is None:
            return "eager (VLLM_SPYRE_COMPILE=0)"
        return self.compiled_forward.state()

    def get_model(self) -> nn.Module:
        return self.model

    def _sync_device(self) -> None:
        torch.spyre.synchronize(self.device)

    def _to_list(self, sampled_token_ids: torch.Tensor) -> list[list[int]]:
        # a synchronous copy to the host (the GPU runner's version records
        # a CUDA event first)
        return sampled_token_ids.cpu().tolist()

    def _zero_block_ids(self, block_ids: list[int]) -> None:
        # blocks handed out again are zeroed so that a partial write never
        # exposes another request's K/V (masked anyway; zero for hygiene)
        seen: set[int] = set()
        for group in self.kv_cache_config.kv_cache_groups:
            if not isinstance(group.kv_cache_spec, FullAttentionSpec):
                continue
            for name in group.layer_names:
                ctx = self.compilation_config.static_forward_context.get(name)
                kv = getattr(ctx, "kv_cache", None)
                if not isinstance(kv, torch.Tensor) or kv.data_ptr() in seen:
                    continue
                seen.add(kv.data_ptr())
                for b in block_ids:
                    kv[b].zero_()
