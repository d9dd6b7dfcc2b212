# SPDX-License-Identifier: MIT
"""torch.compile's default backend (Inductor) on spyre.

``torch.compile(model)`` with spyre tensors goes through Inductor:
AOTAutograd with Inductor's decompositions (those of ops the card lowers
whole are skipped on spyre, ``decomps``), Inductor's post-grad passes, then
the spyre device pass (``graph_pass``) that lowers the graph's card part
into prepared libspyre recipes with the lowering of ``backend="spyre"``,
then Inductor's lowering, scheduling and Python wrapper codegen, whose
module launches each recipe (one SUBMIT) and calls spyre eager kernels for
what the lowering refused. Inductor's FX graph cache and AOTAutogradCache
store that module, recipes included, so a second process loads it without
tracing AOTAutograd again or compiling a card program
(Documentation/inductor.rst).

Registered lazily by ``_lazy_hooks`` when Inductor loads; importing this
package does not import Inductor.
"""


def stats():
    """What the spyre device pass did in this process (graph_pass.stats)."""
    from . import graph_pass
    return graph_pass.stats()


def reset_stats():
    from . import graph_pass
    graph_pass.reset_stats()


class _Wrapper:
    """Inductor's wrapper codegen class for spyre, imported when first used
    (Inductor's wrapper module cannot be imported while codegen.common,
    whose import registers this, is still loading)."""

    supports_caching = True  # its module is complete: recipes included

    @staticmethod
    def create(*args, **kwargs):
        from .codegen import SpyreWrapperCodegen
        return SpyreWrapperCodegen.create(*args, **kwargs)


def _scheduling(scheduler):
    from .codegen import SpyreScheduling
    return SpyreScheduling(scheduler)


def register(common):
    """Registers the spyre device with Inductor's codegen registry @common."""
    from .graph_pass import LowerToRecipes

    class SpyreDeviceOpOverrides(common.DeviceOpOverrides):
        """What Inductor's wrapper writes for device handling on spyre."""

        def set_device(self, device_idx):
            return f"torch.spyre.set_device({device_idx})"

        def synchronize(self):
            return "torch.spyre.synchronize()"

        def device_guard(self, device_idx):
            return f"torch.spyre.device({device_idx})"

    common.register_backend_for_device("spyre", _scheduling, _Wrapper,
                                       device_custom_pass=LowerToRecipes())
    common.register_device_op_overrides("spyre", SpyreDeviceOpOverrides())


def register_decompositions(decomposition):
    from . import decomps
    decomps.install(decomposition)
