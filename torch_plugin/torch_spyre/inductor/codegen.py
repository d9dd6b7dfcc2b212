# SPDX-License-Identifier: MIT
"""The spyre device's code generators in Inductor: scheduling, wrapper, guards.

After the device pass (graph_pass) the graph Inductor lowers holds only
extern kernels on spyre (recipe launches and fallbacks to eager kernels),
so the scheduling is never asked for a kernel: it fuses nothing, and if a
spyre pointwise or reduction node reaches it anyway (a pass of Inductor's
after ours making one), it raises naming the node rather than running it
elsewhere.

The wrapper is Inductor's Python wrapper plus one thing: its header loads
the recipes the graph launches (``runtime.load``, from the serialised
recipe the module carries), so the module Inductor caches is complete.
"""
from torch._inductor.codegen.wrapper import PythonWrapperCodegen
from torch._inductor.scheduler import BaseScheduling
from torch._inductor.virtualized import V


class SpyreScheduling(BaseScheduling):
    def group_fn(self, sizes):
        return tuple(tuple(s) for s in sizes)

    def can_fuse_vertical(self, node1, node2):
        return False

    def can_fuse_horizontal(self, node1, node2):
        return False

    def _refuse(self, node):
        names = ", ".join(sorted(n.get_name() for n in node.get_nodes()))
        origins = sorted({str(o.target) for n in node.get_nodes()
                          for o in getattr(n.node, "origins", ())})
        raise NotImplementedError(
            f"spyre: Inductor made a kernel of its own for {names} (from {origins}); "
            "the spyre backend generates no Inductor kernels (every spyre op is a recipe "
            "or an eager kernel), so this graph cannot be compiled by the default "
            "backend. torch.compile(model, backend=\"spyre\") compiles it.")

    def codegen_node(self, node):
        self._refuse(node)

    def codegen_template(self, template_node, epilogue_nodes, prologue_nodes):
        self._refuse(template_node)

    def codegen_sync(self):
        pass

    def flush(self):
        pass

    def ready_to_flush(self):
        return False

    def benchmark_fused_nodes(self, nodes):
        raise NotImplementedError("spyre: no fused Inductor kernels to benchmark")


class SpyreWrapperCodegen(PythonWrapperCodegen):
    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
        if is_subgraph:
            return PythonWrapperCodegen.create(is_subgraph, subgraph_name, parent_wrapper,
                                               partition_signatures)
        return SpyreWrapperCodegen()

    def write_header(self):
        super().write_header()
        loads = getattr(getattr(V.graph, "module", None), "meta", {}).get("spyre_loads", {})
        if not loads:
            return
        self.header.writeline("from torch_spyre.inductor import per_size as spyre_per_size")
        self.header.writeline("from torch_spyre.inductor import runtime as spyre_runtime")
        # the module holds its recipes and graphs: loaded here (not
        # compiled), alive as long as it is
        for i, (key, (_, text, loader)) in enumerate(sorted(loads.items())):
            self.header.writeline(f"spyre_load_{i} = {loader}({key!r}, {text!r})")
