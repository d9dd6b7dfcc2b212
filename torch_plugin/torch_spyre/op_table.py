# SPDX-License-Identifier: MIT
"""libspyre's op table (spyre/op_table.h), read at run time from the C rows.

Every list of ops on the Python side comes from here: the lowering's
name -> value maps and its generic lowerings (compiler/lower.py), the OpInfo
allow-list of the tests. A row is an ``Op``; ``torch`` rows are those whose
``aten::<name>`` is exactly the op (the plugin registers and lowers them
without further code).
"""
from collections import namedtuple

from . import _C

Op = namedtuple("Op", "kind name op iface dtypes result torch truth")

ROWS = tuple(Op(r["kind"], r["name"], r["op"], tuple(r["iface"]), tuple(r["dtypes"]),
                r["result"], r["torch"], r["truth"]) for r in _C._OP_TABLE)


def rows(kind, torch_only=False):
    """The rows of one kind ("unary", "binary", "reduce")."""
    return [r for r in ROWS if r.kind == kind and (r.torch or not torch_only)]


def values(kind):
    """name -> the op library's value, for one kind (what _C._Graph takes)."""
    return {r.name: r.op for r in rows(kind)}
