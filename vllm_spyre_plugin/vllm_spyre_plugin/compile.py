# SPDX-License-Identifier: MIT
"""The model's forward through the project's compile path, or eagerly.

torch.compile with its default backend (Inductor) runs spyre graphs as
prepared op-library recipes (Documentation/inductor.rst). The forward is
compiled with static sizes: one graph per token count, each lowered whole
into card recipes (measured on the tiny GPT-2: no node left to eager
kernels). With dynamic sizes the graph, which holds vLLM's attention op
mutating its output, is one the spyre pass does not lower (every node would
stay an eager kernel). Dynamo compiles a new graph for each new token count
up to its recompile_limit (8), and runs later new counts eagerly (its own
warning says so); counts met before keep their compiled graph.

Attention is vLLM's opaque custom op (the platform reports
opaque_attention_op() when compiling), so the compiled graph calls the
paged-attention backend at run time with the step's metadata instead of
tracing its per-step Python.

VLLM_SPYRE_COMPILE=0 keeps the model eager. The model runs eagerly from the
first step on, with one warning naming the reason, when compiling fails
(Dynamo cannot trace the model, the backend raises) or when the compile path
does not cover the graph: Inductor's spyre pass left every node to a spyre
eager kernel and built no card recipe, so the compiled module would only add
its own overhead to the eager kernels. To tell, the first compiled call runs
with Inductor's FX graph and AOTAutograd caches off (a cache hit skips the
pass, and its statistics). state() says which happened.
"""

from __future__ import annotations

import os
from typing import Any, Callable

import torch
from vllm.logger import init_logger

logger = init_logger(__name__)


def compile_enabled() -> bool:
    return os.environ.get("VLLM_SPYRE_COMPILE", "1") != "0"


# errors of the compile step itself (tracing, the backend, its lowering),
# not of running a compiled graph
def _compile_errors() -> tuple[type[BaseException], ...]:
    import torch._dynamo.exc as exc

    return (exc.TorchDynamoException,)


def _pass_stats() -> dict:
    from torch_spyre import inductor

    return inductor.stats()


class CompiledForward:
    """Calls the compiled forward; when compiling fails or the compile path
    covers none of the graph, logs why and calls the eager forward from
    then on."""

    def __init__(self, eager: Callable[..., Any], name: str) -> None:
        self.eager = eager
        self.name = name
        self.compiled: Callable[..., Any] | None = torch.compile(eager, dynamic=False)
        self.calls = 0  # compiled calls that returned
        self.error: str | None = None

    def _give_up(self, why: str) -> None:
        self.error = why
        self.compiled = None
        logger.warning("spyre: torch.compile of %s: %s; running it eagerly from now on",
                       self.name, why)

    def _first_call(self, *args: Any, **kwargs: Any) -> Any:
        import torch._functorch.config as functorch_config
        import torch._inductor.config as inductor_config

        before = _pass_stats()
        with inductor_config.patch(fx_graph_cache=False), \
                functorch_config.patch(enable_autograd_cache=False):
            out = self.compiled(*args, **kwargs)
        after = _pass_stats()
        graphs = after["graphs"] - before["graphs"]
        built = (after["recipes"] - before["recipes"]
                 + after["per_size_graphs"] - before["per_size_graphs"])
        if graphs and not built:
            breaks = after["graph_breaks"][len(before["graph_breaks"]):]
            reason = breaks[0].split(": ", 1)[-1] if breaks else "no reason given"
            self._give_up(f"the compile path covers none of the graph ({graphs} graph(s), "
                          f"{len(breaks)} node(s) left to eager kernels: {reason})")
        return out

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.compiled is not None:
            try:
                if self.calls == 0:
                    out = self._first_call(*args, **kwargs)
                else:
                    out = self.compiled(*args, **kwargs)
                self.calls += 1
                return out
            except _compile_errors() as e:
                first = str(e).splitlines()[0] if str(e) else ""
                self._give_up(f"compiling failed ({type(e).__name__}: {first})")
        return self.eager(*args, **kwargs)

    def state(self) -> str:
        if self.compiled is not None:
            return "compiled"
        return f"eager ({self.error})"


def compile_model(model: torch.nn.Module) -> CompiledForward | None:
    """Routes model.forward through CompiledForward (or leaves it eager when
    VLLM_SPYRE_COMPILE=0) and returns it."""
    name = type(model).__name__
    if not compile_enabled():
        logger.info("spyre: %s runs eagerly (VLLM_SPYRE_COMPILE=0)", name)
        return None
    fwd = CompiledForward(model.forward, name)
    model.forward = fwd
    logger.info("spyre: %s.forward through torch.compile (Inductor, static sizes)", name)
    return fwd
