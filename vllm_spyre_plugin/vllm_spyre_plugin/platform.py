# SPDX-License-Identifier: MIT
"""The vLLM Platform for the Spyre card.

Tensors live on torch device "spyre" (torch_spyre, dispatch key
PrivateUse1); memory figures come from the plugin's caching allocator; the
worker is SpyreWorker; attention is the spyre backend (attention.py).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import torch
from vllm.logger import init_logger
from vllm.platforms.interface import Platform, PlatformEnum

if TYPE_CHECKING:
    from vllm.config import VllmConfig
    from vllm.v1.attention.selector import AttentionSelectorConfig

logger = init_logger(__name__)

ATTN_BACKEND = "vllm_spyre_plugin.attention.SpyreAttentionBackend"


class SpyrePlatform(Platform):
    _enum = PlatformEnum.OOT
    device_name: str = "spyre"
    device_type: str = "spyre"
    dispatch_key: str = "PrivateUse1"
    # gloo until the project's torch.distributed backend is wired in here
    dist_backend: str = "gloo"
    device_control_env_var: str = "SPYRE_VISIBLE_DEVICES"
    # vLLM compiles small helper functions with this backend. The model's
    # forward is compiled by the model runner through torch.compile's
    # default path (compile.py), not by vLLM's compilation (mode NONE).
    simple_compile_backend: str = "eager"

    @property
    def supported_dtypes(self) -> list[torch.dtype]:
        # float32 first: the card computes in float32 and the tests compare
        # tokens with a float32 CPU reference.
        return [torch.float32, torch.bfloat16, torch.float16]

    @classmethod
    def get_device_name(cls, device_id: int = 0) -> str:
        return torch.spyre.get_device_name(device_id)

    @classmethod
    def get_device_total_memory(cls, device_id: int = 0) -> int:
        return torch.spyre.mem_get_info(device_id)[1]

    @classmethod
    def get_current_memory_usage(cls, device: torch.types.Device | None = None) -> float:
        return float(torch.spyre.memory_allocated(device))

    @classmethod
    def set_device(cls, device: torch.device) -> None:
        torch.spyre.set_device(device)

    @classmethod
    def manual_seed_all(cls, seed: int) -> None:
        torch.spyre.manual_seed_all(seed)

    @classmethod
    def inference_mode(cls):
        return torch.no_grad()

    @classmethod
    def is_pin_memory_available(cls) -> bool:
        # host->card copies are synchronous DMA from any host buffer
        return False

    @classmethod
    def get_attn_backend_cls(
        cls,
        selected_backend,
        attn_selector_config: AttentionSelectorConfig,
        num_heads: int | None = None,
    ) -> str:
        if attn_selector_config.use_mla or attn_selector_config.use_sparse:
            raise NotImplementedError("spyre: MLA and sparse attention are not supported")
        if selected_backend is not None:
            logger.info("spyre: ignoring attention backend %s", selected_backend)
        return ATTN_BACKEND

    @classmethod
    def get_device_communicator_cls(cls) -> str:
        return (
            "vllm.distributed.device_communicators.base_device_communicator."
            "DeviceCommunicatorBase"
        )

    @classmethod
    def support_hybrid_kv_cache(cls) -> bool:
        return False

    @classmethod
    def support_static_graph_mode(cls) -> bool:
        return False

    @classmethod
    def opaque_attention_op(cls) -> bool:
        # compiled model: attention is vLLM's custom op, opaque to Dynamo,
        # so the per-step metadata never reaches a trace; eager model:
        # attention layers call the backend directly
        from vllm_spyre_plugin.compile import compile_enabled

        return compile_enabled()

    @classmethod
    def check_and_update_config(cls, vllm_config: VllmConfig) -> None:
        from vllm.config import CompilationMode
        from vllm.config.compilation import CUDAGraphMode

        parallel = vllm_config.parallel_config
        if parallel.world_size > 1:
            raise NotImplementedError(
                "spyre: tensor/pipeline parallelism is not supported yet "
                f"(world size {parallel.world_size})"
            )
        if parallel.worker_cls == "auto":
            parallel.worker_cls = "vllm_spyre_plugin.worker.SpyreWorker"

        cache = vllm_config.cache_config
        if cache is not None and not cache.user_specified_block_size:
            cache.block_size = 16

        # No CUDA graphs and no vLLM compilation: the model runner compiles
        # the model's forward itself (compile.py).
        comp = vllm_config.compilation_config
        comp.mode = CompilationMode.NONE
        comp.cudagraph_mode = CUDAGraphMode.NONE
        comp.cudagraph_capture_sizes = []
        if vllm_config.model_config is not None:
            vllm_config.model_config.enforce_eager = True

        # The model runner is synchronous: no async scheduling, no
        # overlapped output copies.
        vllm_config.scheduler_config.async_scheduling = False

        # The engine core and the worker are separate processes; the card's
        # runtime must be started after fork, so spawn them.
        os.environ.setdefault("VLLM_WORKER_MULTIPROC_METHOD", "spawn")
