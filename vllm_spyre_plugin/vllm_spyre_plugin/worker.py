# SPDX-License-Identifier: MIT
"""The vLLM worker for one Spyre card.

vLLM's GPU Worker does the protocol with the engine (load, KV cache sizing,
execute_model); this subclass replaces what is CUDA-specific: device set-up,
the memory budget (from torch_spyre's allocator, not a CUDA profile run),
CUDA graphs and sleep mode (not supported).
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

import torch
from vllm.config import set_current_vllm_config
from vllm.logger import init_logger
from vllm.utils.torch_utils import set_random_seed
from vllm.v1.worker.gpu_worker import Worker, init_worker_distributed_environment
from vllm.v1.worker.worker_base import CompilationTimes

from vllm_spyre_plugin.model_runner import SpyreModelRunner

logger = init_logger(__name__)


def _inductor_recipes() -> int:
    from torch_spyre import inductor

    return inductor.stats()["recipes"]


class SpyreWorker(Worker):
    def init_device(self) -> None:
        ncards = torch.spyre.device_count()
        if self.local_rank >= ncards:
            raise RuntimeError(
                f"spyre: worker rank {self.local_rank} has no card ({ncards} visible)"
            )
        self.device = torch.device("spyre", self.local_rank)
        torch.spyre.set_device(self.device)
        init_worker_distributed_environment(
            self.vllm_config,
            self.rank,
            self.distributed_init_method,
            self.local_rank,
            "gloo",
        )
        set_random_seed(self.model_config.seed)
        self._init_workspace_and_model_runner()

    def _make_model_runner(self) -> SpyreModelRunner:
        return SpyreModelRunner(self.vllm_config, self.device)

    def _maybe_get_memory_pool_context(self, tag: str) -> AbstractContextManager:
        # no CuMem pools: weights and KV cache come from torch_spyre's allocator
        return nullcontext()

    def load_model(self, *, load_dummy_weights: bool = False) -> None:
        with set_current_vllm_config(self.vllm_config):
            self.model_runner.load_model(load_dummy_weights=load_dummy_weights)

    def determine_available_memory(self) -> int:
        """Bytes of card memory the KV cache may use.

        An explicit --kv-cache-memory-bytes wins; otherwise the share
        gpu_memory_utilization of the card's memory, less what is allocated
        now (the weights) and a reserve for one step's activations."""
        free, total = torch.spyre.mem_get_info(self.device)
        explicit = self.cache_config.kv_cache_memory_bytes
        if explicit is not None:
            if explicit > free:
                raise ValueError(
                    f"spyre: --kv-cache-memory-bytes {explicit} exceeds the card's "
                    f"free memory ({free} of {total} bytes)"
                )
            return int(explicit)
        used = torch.spyre.memory_reserved(self.device)
        budget = int(total * self.cache_config.gpu_memory_utilization)
        # activations of one step of max_num_batched_tokens tokens: a few
        # hidden-sized float32 rows per token, plus the logits of every
        # request; generous rather than exact.
        hf = self.model_config.hf_text_config
        tokens = self.scheduler_config.max_num_batched_tokens
        reqs = self.scheduler_config.max_num_seqs
        reserve = 4 * (16 * tokens * hf.hidden_size + 2 * reqs * hf.vocab_size)
        avail = min(budget - used - reserve, free - reserve)
        if avail <= 0:
            raise ValueError(
                f"spyre: no card memory left for the KV cache (total {total}, "
                f"in use {used}, activation reserve {reserve}, utilisation "
                f"{self.cache_config.gpu_memory_utilization})"
            )
        logger.info(
            "spyre: %d of %d bytes of card memory for the KV cache (%d in use)",
            avail, total, used,
        )
        return avail

    def compile_or_warm_up_model(self) -> CompilationTimes:
        # eager model: nothing to compile or capture
        set_random_seed(self.model_config.seed)
        return CompilationTimes(language_model=0.0, encoder=0.0)

    def spyre_stats(self) -> dict:
        """What ran where in this worker (collective_rpc("spyre_stats")):
        card kernels per op, CPU fallbacks per op, the model's compile state."""
        return {
            "ops": torch.spyre.op_counts(),
            "fallbacks": torch.spyre.fallback_counts(),
            "compile": self.model_runner.compile_state(),
            # card recipes Inductor's spyre pass built in this worker
            "compile_recipes": _inductor_recipes(),
        }

    def sleep(self, level: int = 1) -> None:
        raise NotImplementedError("spyre: sleep mode is not supported")

    def wake_up(self, tags: list[str] | None = None) -> None:
        raise NotImplementedError("spyre: sleep mode is not supported")
