"""``register_pytree_node`` / ``register_pytree_node_class`` / ``register_dataclass``: the transforms look inside
registered types, as JAX's do (checked against jax.tree_util and jax's transforms)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import chainrule as cr
from chainrule import tree_util

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)
pytestmark = pytest.mark.oracle


def _point_class(register):
    class Point:
        def __init__(self, x, y, tag="p"):
            self.x, self.y, self.tag = x, y, tag

    register(Point, lambda p: ((p.x, p.y), p.tag), lambda tag, xy: Point(*xy, tag=tag))
    return Point


Ours = _point_class(tree_util.register_pytree_node)
Theirs = _point_class(jax.tree_util.register_pytree_node)
X, Y = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.75])


def _loss(lib):
    return lambda p: lib.sum(lib.sin(p.x) * p.y ** 2)


def test_flatten_and_structures_as_jax():
    tree = {"b": Ours(X, (Y, None), tag="q"), "a": [1.0]}
    jtree = {"b": Theirs(X, (Y, None), tag="q"), "a": [1.0]}
    leaves, treedef = tree_util.tree_flatten(tree)
    jleaves, jdef = jax.tree_util.tree_flatten(jtree)
    assert len(leaves) == len(jleaves) == treedef.num_leaves == jdef.num_leaves
    for a, b in zip(leaves, jleaves):
        np.testing.assert_array_equal(a, b)
    back = tree_util.tree_unflatten(treedef, leaves)
    assert isinstance(back["b"], Ours) and back["b"].tag == "q" and back["b"].y[1] is None
    # the auxiliary data is part of the structure, as in JAX
    assert (tree_util.tree_structure(Ours(1.0, 2.0, "a")) == tree_util.tree_structure(Ours(3.0, 4.0, "a"))) == \
        (jax.tree_util.tree_structure(Theirs(1.0, 2.0, "a")) == jax.tree_util.tree_structure(Theirs(3.0, 4.0, "a")))
    assert tree_util.tree_structure(Ours(1.0, 2.0, "a")) != tree_util.tree_structure(Ours(1.0, 2.0, "b"))
    assert jax.tree_util.tree_structure(Theirs(1.0, 2.0, "a")) != jax.tree_util.tree_structure(Theirs(1.0, 2.0, "b"))
    doubled = tree_util.tree_map(lambda v: v * 2, Ours(X, Y))
    assert isinstance(doubled, Ours)
    np.testing.assert_array_equal(doubled.y, 2 * Y)


def test_grad_value_and_grad_hessian_as_jax():
    g = cr.grad(_loss(np))(Ours(X, Y))
    jg = jax.grad(_loss(jnp))(Theirs(jnp.array(X), jnp.array(Y)))
    assert isinstance(g, Ours) and g.tag == "p"
    np.testing.assert_allclose(g.x, jg.x, rtol=1e-12)
    np.testing.assert_allclose(g.y, jg.y, rtol=1e-12)
    v, g2 = cr.value_and_grad(_loss(np))(Ours(X, Y))
    np.testing.assert_allclose(v, _loss(jnp)(Theirs(X, Y)), rtol=1e-12)
    np.testing.assert_allclose(g2.y, jg.y, rtol=1e-12)
    h = cr.hessian(_loss(np))(Ours(X, Y))
    jh = jax.hessian(_loss(jnp))(Theirs(jnp.array(X), jnp.array(Y)))
    np.testing.assert_allclose(h.x.y, jh.x.y, rtol=1e-12)
    np.testing.assert_allclose(h.y.y, jh.y.y, rtol=1e-12)


def test_jacobians_jvp_vjp_and_vmap_as_jax():
    def f(lib):
        return lambda p: Ours(p.x * p.y, lib.cos(p.x)) if lib is np else Theirs(p.x * p.y, lib.cos(p.x))

    for ours, theirs in [(cr.jacrev, jax.jacrev), (cr.jacfwd, jax.jacfwd)]:
        j, jj = ours(f(np))(Ours(X, Y)), theirs(f(jnp))(Theirs(jnp.array(X), jnp.array(Y)))
        assert isinstance(j, Ours) and isinstance(j.x, Ours)
        for a, b in [(j.x.x, jj.x.x), (j.x.y, jj.x.y), (j.y.x, jj.y.x), (j.y.y, jj.y.y)]:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    tangent = Ours(np.ones(3), np.arange(3.0))
    out, tan = cr.jvp(_loss(np), (Ours(X, Y),), (tangent,))
    jout, jtan = jax.jvp(_loss(jnp), (Theirs(X, Y),), (Theirs(np.ones(3), np.arange(3.0)),))
    np.testing.assert_allclose([out, tan], [jout, jtan], rtol=1e-12)
    out, pullback = cr.vjp(f(np), Ours(X, Y))
    (ct,) = pullback(Ours(np.ones(3), np.ones(3)))
    jout, jpullback = jax.vjp(f(jnp), Theirs(X, Y))
    (jct,) = jpullback(Theirs(jnp.ones(3), jnp.ones(3)))
    np.testing.assert_allclose(ct.x, jct.x, rtol=1e-12)
    batched = cr.vmap(lambda p: Ours(p.y, np.sin(p.x) * p.y))(Ours(np.stack([X, Y]), np.stack([Y, X])))
    jbatched = jax.vmap(lambda p: Theirs(p.y, jnp.sin(p.x) * p.y))(Theirs(np.stack([X, Y]), np.stack([Y, X])))
    assert isinstance(batched, Ours)
    np.testing.assert_allclose(batched.y, jbatched.y, rtol=1e-12)


def test_register_pytree_node_class_as_jax():
    def make(register):
        @register
        class Scaled:
            def __init__(self, value, scale):
                self.value, self.scale = value, scale

            def tree_flatten(self):
                return (self.value,), self.scale

            @classmethod
            def tree_unflatten(cls, scale, children):
                return cls(children[0], scale)

        return Scaled

    ours, theirs = make(tree_util.register_pytree_node_class), make(jax.tree_util.register_pytree_node_class)
    g = cr.grad(lambda s: np.sum(s.scale * s.value ** 3))(ours(X, 2.0))
    jg = jax.grad(lambda s: jnp.sum(s.scale * s.value ** 3))(theirs(jnp.array(X), 2.0))
    assert isinstance(g, ours) and g.scale == 2.0
    np.testing.assert_allclose(g.value, jg.value, rtol=1e-12)


def test_register_dataclass_as_jax():
    def make(register):
        @register
        @dataclasses.dataclass
        class Layer:
            w: object
            b: object
            act: str = dataclasses.field(default="tanh", metadata={"static": True})

        return Layer

    ours, theirs = make(tree_util.register_dataclass), make(jax.tree_util.register_dataclass)
    assert tree_util.tree_leaves(ours(1.0, 2.0)) == jax.tree_util.tree_leaves(theirs(1.0, 2.0)) == [1.0, 2.0]
    g = cr.grad(lambda p: np.sum(np.tanh(p.w * X + p.b)))(ours(0.3, 0.1))
    jg = jax.grad(lambda p: jnp.sum(jnp.tanh(p.w * X + p.b)))(theirs(0.3, 0.1))
    assert g.act == "tanh"
    np.testing.assert_allclose([g.w, g.b], [jg.w, jg.b], rtol=1e-12)
    # explicit fields, on a plain class
    class Pair:
        def __init__(self, a, n):
            self.a, self.n = a, n

    tree_util.register_dataclass(Pair, data_fields=["a"], meta_fields=["n"])
    assert tree_util.tree_leaves(Pair(5.0, 3)) == [5.0]


def test_registering_twice_or_a_builtin_is_refused_as_jax():
    with pytest.raises(ValueError):
        jax.tree_util.register_pytree_node(Theirs, lambda p: ((), None), lambda a, c: None)
    with pytest.raises(ValueError, match="already"):
        tree_util.register_pytree_node(Ours, lambda p: ((), None), lambda a, c: None)
    with pytest.raises(ValueError, match="already"):
        tree_util.register_pytree_node(dict, lambda p: ((), None), lambda a, c: None)


def test_a_vjp_cotangent_of_another_structure_is_refused():
    _, pullback = cr.vjp(lambda p: Ours(p.x * 2, p.y), Ours(X, Y))
    with pytest.raises(ValueError, match="structure"):
        pullback(Ours(np.ones(3), np.ones(3), tag="other"))
