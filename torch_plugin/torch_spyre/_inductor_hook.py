# SPDX-License-Identifier: MIT
"""torch.compile with its default backend (Inductor) on spyre tensors.

Inductor has no code generator for the card: without one it fails deep in
its codegen with ``KeyError: 'spyre'``. Registering a refusing backend for
the device makes it fail at once, naming what works instead. Importing
Inductor costs about a second, so nothing is imported here: a meta path
hook waits for Inductor's device registry module to be imported (which
happens only when something compiles with Inductor) and registers then.
"""
import importlib.abc
import importlib.util
import sys

_REGISTRY = "torch._inductor.codegen.common"
MESSAGE = ('spyre: Inductor cannot generate code for the spyre device; compile with '
           'torch.compile(model, backend="spyre"), which lowers the graph to the card\'s '
           'op library (Documentation/torch-plugin.rst, "torch.compile")')


def _refuse(*args, **kwargs):
    raise RuntimeError(MESSAGE)


class _Refusing(type):
    def __getattr__(cls, name):  # whatever Inductor asks first
        _refuse()


class _RefusingWrapper(metaclass=_Refusing):
    """Stands for Inductor's wrapper code generator on spyre."""


def _register(common):
    common.register_backend_for_device("spyre", _refuse, _RefusingWrapper)
    common.register_device_op_overrides("spyre", common.DeviceOpOverrides())


class _Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _REGISTRY:
            return None
        sys.meta_path.remove(self)  # one shot; the lookup below must not recurse
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_register(module):
            exec_module(module)
            _register(module)
        spec.loader.exec_module = exec_and_register
        return spec


def install():
    if _REGISTRY in sys.modules:
        _register(sys.modules[_REGISTRY])
    elif not any(isinstance(f, _Hook) for f in sys.meta_path):
        sys.meta_path.insert(0, _Hook())
