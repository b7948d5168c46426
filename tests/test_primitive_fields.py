"""The node-creation path (``autodiff/primitive._output``, unrolled again in ``apply1`` and ``apply2``) has
``Tensor._set`` and ``Node.__init__`` inlined for speed: this test reads them with ``ast`` and checks that each
inlined copy assigns exactly the fields the originals list, so a field added to one cannot be forgotten."""

from __future__ import annotations

import ast
import inspect
import textwrap

import chainrule as cr
from chainrule.autodiff import primitive
from chainrule.core.node import Node
from chainrule.tensor import Tensor


def _assigned(fn, name: str) -> set[str]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    fields = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        else:
            targets = [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            for t in ast.walk(target):
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == name:
                    fields.add(t.attr)
    return fields


PATHS = (primitive._output, primitive.apply1, primitive.apply2)


def test_the_inlined_tensor_fields_are_tensor_set_s():
    for path in PATHS:
        assert _assigned(path, "out") == _assigned(Tensor._set, "self"), path.__name__


def test_the_inlined_node_fields_are_the_node_s_slots():
    for path in PATHS:
        assert _assigned(path, "node") == set(Node.__slots__) == _assigned(Node.__init__, "self"), path.__name__


def test_every_path_builds_the_same_tensor():
    x = cr.Tensor([1.0, 2.0], requires_grad=True)
    y = cr.Tensor([3.0, 4.0])
    for out in (cr.exp(x), x * y, cr.add(x, y), cr.ops.REGISTRY["add"](x, y), cr.clip(x, 0.0, 1.5)):
        assert out._node is not None and out.requires_grad and out.grad is None and out._index is None
    with cr.no_grad():
        assert cr.exp(x)._node is None and not (x * y).requires_grad
