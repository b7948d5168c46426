"""Complex numbers: every op case of the registry drawn with complex inputs, checked by finite
differences (reverse and forward mode, second order), plus the conventions (JAX's ``grad`` of a
real function of complex inputs, ``holomorphic=True``) and JAX as an oracle."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chainrule as cr
from op_cases import CASES, draw_inputs
from test_ops_gradcheck import one_output

NOT_COMPLEX = re.compile(r"not defined for complex")


def complexify(arrays, seed=0):
    """The case's real inputs moved off the real axis by an imaginary part in (-0.3, 0.3)."""
    rng = np.random.default_rng(seed)
    return [a + 0.3j * rng.uniform(-1, 1, size=np.shape(a)) if a.dtype.kind == "f" else a for a in arrays]


def numpy_allows(case, arrays, params):
    """NumPy's own answer on plain complex arrays (None where NumPy refuses complex inputs)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return case.fn(*arrays, **params)
        except (TypeError, ValueError, np.linalg.LinAlgError, AttributeError):
            return None


# nn's functions (layer norms, attention, losses) are not NumPy's and are defined for real inputs only
NUMPY_CASES = [c for c in CASES if not c.name.startswith("nn_")]


@pytest.mark.parametrize("case", NUMPY_CASES, ids=str)
@settings(max_examples=1, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_complex_gradcheck(case, data):
    arrays, params = draw_inputs(case, data)
    zs = complexify(arrays)
    expected = numpy_allows(case, zs, params)
    if expected is None:
        return  # NumPy has no complex version of this function: nothing to differentiate
    if case.name == "astype":  # a cast to float discards the imaginary part: NumPy warns, and so does chainrule
        with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary part"):
            _check_complex_case(case, zs, params)
    else:
        _check_complex_case(case, zs, params)


def _check_complex_case(case, zs, params):
    f = one_output(case.fn, params)
    got = f(*[cr.Tensor(z) for z in zs])
    want = one_output(lambda *xs, **kw: case.fn(*[x.data for x in xs], **kw), params)(*zs)
    np.testing.assert_allclose(got.data, np.asarray(want.data if hasattr(want, "data") else want), rtol=1e-10,
                               atol=1e-12, err_msg=f"{case.name}: chainrule's value differs from NumPy's")
    try:
        assert cr.gradcheck(f, *zs, modes=("rev", "fwd"), order=case.order, rtol=1e-5 * case.tol,
                            atol=1e-6 * case.tol)
    except TypeError as e:
        if not NOT_COMPLEX.search(str(e)):
            raise


# -- JAX as the oracle ----------------------------------------------------------------------------------
def _jax():
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install 'jax[cpu]'; the dev extra has it)")
    jax.config.update("jax_enable_x64", True)
    return jax


def _z(rng, *shape, gap=0.3):
    z = rng.uniform(-1.5, 1.5, size=shape) + 1j * rng.uniform(-1.5, 1.5, size=shape)
    return np.where(np.abs(z) < gap, z + gap * (1 + 1j), z)


# name, function of numpy-like module ``m`` (numpy for chainrule, jax.numpy for JAX), input shapes
ORACLE = [
    ("exp_sin_log", lambda m, z: m.exp(z) * m.sin(z) + m.log(z + 3.0), [(4,)]),
    ("sqrt_power", lambda m, z: m.sqrt(z + 3.0) * z ** 3 + (z + 3.0) ** 1.5, [(4,)]),
    ("tan_tanh_arctan", lambda m, z: m.tan(0.5 * z) + m.tanh(z) + m.arctan(0.3 * z), [(3,)]),
    ("arcsin_arccos_sinh", lambda m, z: m.arcsin(0.3 * z) + m.arccos(0.2 * z) + m.sinh(z) + m.cosh(z), [(3,)]),
    ("reciprocal_square", lambda m, z: 1.0 / z + m.square(z) + m.expm1(z) + m.log1p(0.2 * z), [(3,)]),
    ("abs", lambda m, z: m.abs(z), [(5,)]),
    ("abs_squared", lambda m, z: m.abs(z) ** 2, [(5,)]),
    ("real_imag", lambda m, z: m.real(z) * m.imag(z) + m.real(z * z), [(4,)]),
    ("conj", lambda m, z: m.conj(z) * z + m.conj(z) ** 2, [(4,)]),
    ("angle", lambda m, z: m.angle(z), [(4,)]),
    ("mixed_real_complex", lambda m, x, z: m.abs(x * z) + m.real(m.exp(1j * x) * z), [(3,), (3,)]),
    ("sum_mean_prod", lambda m, z: m.sum(z ** 2) + m.mean(z, axis=0) * m.prod(z), [(2, 3)]),
    ("cumsum_cumprod", lambda m, z: m.cumsum(z) + m.cumprod(z), [(4,)]),
    ("matmul_einsum", lambda m, a, b: a @ b + m.einsum("ij,jk->ik", a, b) ** 2, [(2, 3), (3, 2)]),
    ("vdot", lambda m, a, b: m.vdot(a, b), [(4,), (4,)]),
    ("inv_det_solve", lambda m, a, b: m.linalg.solve(a + 4 * m.eye(3), b) + m.linalg.det(a + 4 * m.eye(3))
     + m.linalg.inv(a + 4 * m.eye(3))[0], [(3, 3), (3,)]),
    ("norm_var", lambda m, z: m.linalg.norm(z) + m.var(z) + m.std(z), [(5,)]),
    ("shapes", lambda m, z: m.concatenate([m.transpose(z), m.flip(z, 0).T], 1).reshape(-1)[::2] * z.sum(), [(3, 2)]),
    ("where_max", lambda m, z: m.where(m.real(z) > 0, z, z * z), [(5,)]),
    ("sigmoid_logsumexp", lambda m, z: 1 / (1 + m.exp(-z)), [(4,)]),
]


def _call(fn, m, args):
    return fn(m, *args)


@pytest.mark.oracle
@pytest.mark.parametrize("name, fn, shapes", ORACLE, ids=[o[0] for o in ORACLE])
def test_vjp_jvp_and_second_order_match_jax(name, fn, shapes):
    jax = _jax()
    jnp = jax.numpy
    rng = np.random.default_rng(7)
    args = [rng.uniform(-1.5, 1.5, size=s) if name.startswith("mixed") and k == 0 else _z(rng, *s)
            for k, s in enumerate(shapes)]
    out = _call(fn, np, args)
    u = _z(rng, *np.shape(out)) if np.iscomplexobj(out) else rng.normal(size=np.shape(out))
    tangents = [_z(rng, *np.shape(a)) if np.iscomplexobj(a) else rng.normal(size=np.shape(a)) for a in args]

    f_cr = lambda *a: fn(np, *a)  # noqa: E731
    f_jax = lambda *a: fn(jnp, *a)  # noqa: E731
    value, pullback = cr.vjp(f_cr, *args)
    j_value, j_pullback = jax.vjp(f_jax, *args)
    np.testing.assert_allclose(value, np.asarray(j_value), rtol=1e-10, atol=1e-12)
    for got, want in zip(pullback(u), j_pullback(u.astype(np.asarray(j_value).dtype)), strict=True):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-9, atol=1e-11)
    _, tangent = cr.jvp(f_cr, tuple(args), tuple(tangents))
    _, j_tangent = jax.jvp(f_jax, tuple(args), tuple(tangents))
    np.testing.assert_allclose(tangent, np.asarray(j_tangent), rtol=1e-9, atol=1e-11)

    # second order: the gradient of real(<w, grad of real(<u, f>)>), reverse over reverse, as JAX computes it
    w = [_z(rng, *np.shape(a)) if np.iscomplexobj(a) else rng.normal(size=np.shape(a)) for a in args]

    def second(m, grad, *a):
        loss = lambda *b: m.real(m.sum(u * fn(m, *b)))  # noqa: E731
        gs = grad(loss, argnums=tuple(range(len(a))))(*a)
        return m.real(sum(m.sum(wk * gk) for wk, gk in zip(w, gs)))

    argnums = tuple(range(len(args)))
    got = cr.grad(lambda *a: second(np, cr.grad, *a), argnums=argnums)(*args)
    want = jax.grad(lambda *a: second(jnp, jax.grad, *a), argnums=argnums)(*args)
    for g, j in zip(got, want, strict=True):
        np.testing.assert_allclose(g, np.asarray(j), rtol=1e-8, atol=1e-10)


@pytest.mark.oracle
def test_holomorphic_transforms_match_jax():
    jax = _jax()
    jnp = jax.numpy
    z = _z(np.random.default_rng(3), 3)
    f = lambda m: (lambda z: m.sin(z) * z ** 2)  # noqa: E731
    np.testing.assert_allclose(cr.jacrev(f(np), holomorphic=True)(z), jax.jacrev(f(jnp), holomorphic=True)(z))
    np.testing.assert_allclose(cr.jacfwd(f(np), holomorphic=True)(z), jax.jacfwd(f(jnp), holomorphic=True)(z))
    s = lambda m: (lambda z: m.sum(m.exp(z) * z))  # noqa: E731
    np.testing.assert_allclose(cr.grad(s(np), holomorphic=True)(z), jax.grad(s(jnp), holomorphic=True)(z))
    np.testing.assert_allclose(cr.holomorphic_grad(s(np))(z), jax.grad(s(jnp), holomorphic=True)(z))
    np.testing.assert_allclose(cr.hessian(s(np), holomorphic=True)(z), jax.hessian(s(jnp), holomorphic=True)(z))
    r = lambda m: (lambda z: m.abs(m.sin(z)))  # noqa: E731  (real output: jacrev without holomorphic)
    np.testing.assert_allclose(cr.jacrev(r(np))(z), jax.jacrev(r(jnp))(z))
    x = np.array([0.5, -1.0])  # real input, complex output: jacfwd
    c = lambda m: (lambda x: m.exp(1j * x) * x)  # noqa: E731
    np.testing.assert_allclose(cr.jacfwd(c(np))(x), jax.jacfwd(c(jnp))(x))


# -- conventions ----------------------------------------------------------------------------------------
def test_grad_of_a_real_function_is_d_dx_minus_i_d_dy():
    z = np.array([1.0 + 2.0j, -0.5 + 0.25j])
    g = cr.grad(lambda z: np.sum(np.abs(z) ** 2))(z)
    np.testing.assert_allclose(g, 2 * np.conj(z))  # d/dx (x^2 + y^2) - i d/dy = 2x - 2iy
    assert cr.grad(lambda z: np.real(z * z))(1.0 + 2.0j) == pytest.approx(2.0 + 4.0j)  # 2x - i(-2y)
    assert cr.grad(lambda z: np.imag(z))(1.0 + 2.0j) == pytest.approx(-1j)


def test_a_real_input_gets_the_real_part_of_a_complex_cotangent():
    assert cr.grad(lambda x: np.real(x * (1 + 2j)))(3.0) == 1.0
    assert cr.grad(lambda x: np.imag(x * (1 + 2j)))(3.0) == 2.0
    x = cr.Tensor([1.0, 2.0], requires_grad=True)
    np.sum(np.abs(x * (3 + 4j))).backward()
    np.testing.assert_allclose(x.grad.data, [5.0, 5.0])
    assert x.grad.dtype == np.float64


def test_tensor_backward_matches_grad_and_gradient_steps_agree():
    z0 = np.array([1.0 + 2.0j, -0.5 + 0.25j])
    loss = lambda z: np.sum(np.abs(z - (0.5 - 1j)) ** 2)  # noqa: E731
    z = cr.Tensor(z0, requires_grad=True)
    loss(z).backward()
    np.testing.assert_allclose(z.grad.data, cr.grad(loss)(z0))
    # JAX's gradient is the conjugate of PyTorch's: descend along conj(g) here, along g there
    step = z0 - 0.1 * np.conj(z.grad.data)
    assert loss(step) < loss(z0)
    np.testing.assert_allclose(step, z0 - 0.1 * 2 * (z0 - (0.5 - 1j)))


@pytest.mark.oracle
def test_pytorch_grad_is_the_conjugate():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    z0 = np.array([1.0 + 2.0j, -0.5 + 0.25j])
    t = torch.tensor(z0, requires_grad=True)
    (torch.abs(torch.sin(t)) ** 2).sum().backward()
    ours = cr.grad(lambda z: np.sum(np.abs(np.sin(z)) ** 2))(z0)
    np.testing.assert_allclose(t.grad.numpy(), np.conj(ours), rtol=1e-12)


def test_complex_outputs_need_holomorphic_or_a_real_part():
    with pytest.raises(TypeError, match="grad requires a real-valued output.*holomorphic=True"):
        cr.grad(lambda z: z * z)(1.0 + 1.0j)
    with pytest.raises(TypeError, match="jacrev requires a real-valued output"):
        cr.jacrev(lambda z: z * z)(np.array([1.0 + 1.0j]))
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        cr.jacfwd(lambda z: z * z)(np.array([1.0 + 1.0j]))
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with a complex dtype"):
        cr.grad(lambda x: x * x, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="holomorphic=True requires a complex output"):
        cr.grad(lambda z: np.abs(z), holomorphic=True)(1.0 + 1j)
    z = cr.Tensor([1.0 + 1.0j], requires_grad=True)
    with pytest.raises(RuntimeError, match="the output is complex"):
        (z * z).sum().backward()


def test_jvp_and_vjp_on_complex_in_and_out():
    z = np.array([1.0 + 1.0j, 2.0 - 1.0j])
    out, tangent = cr.jvp(lambda z: z * z, (z,), (np.array([1.0, 1j]),))
    np.testing.assert_allclose(tangent, 2 * z * np.array([1.0, 1j]))
    _, pullback = cr.vjp(lambda z: z * z, z)
    np.testing.assert_allclose(pullback(np.array([1.0, 1j]))[0], 2 * z * np.array([1.0, 1j]))  # no conjugation


def test_derivatives_without_a_complex_rule_raise_naming_the_op():
    a = np.array([[2.0, 1j], [-1j, 3.0]])
    with pytest.raises(TypeError, match=r"qr: the derivative is not defined for complex inputs"):
        cr.grad(lambda a: np.sum(np.abs(np.linalg.qr(a)[1])))(a)
    np.testing.assert_allclose(np.linalg.qr(cr.Tensor(a))[1].data, np.linalg.qr(a)[1])  # values still work


def test_complex_eigenvectors_phase_dependence_raises():
    # eigh has complex (Hermitian) rules; a function of the eigenvectors' arbitrary phases has no derivative
    a = np.array([[2.0, 1j], [-1j, 3.0]])
    np.testing.assert_allclose(cr.grad(lambda a: np.sum(np.linalg.eigvalsh(a)))(a), np.eye(2), atol=1e-12)
    with pytest.raises(TypeError, match=r"eigh: the derivative is not defined for complex eigenvectors"):
        cr.grad(lambda a: np.sum(np.real(np.linalg.eigh(a)[1])))(a)
    assert cr.gradcheck(lambda a: np.abs(np.linalg.eigh(a)[1]), a)
    with pytest.raises(TypeError, match=r"svd: the derivative is not defined for complex singular vectors"):
        cr.grad(lambda a: np.sum(np.real(np.linalg.svd(a)[0])))(a)
    assert cr.gradcheck(lambda a: (lambda r: np.real(r.U @ r.Vh))(np.linalg.svd(a)), a)  # one SVD: phase-free


def test_sign_of_a_complex_number_moves():
    # sign(z) = z / |z|: its derivative is not zero (JAX returns zero here; finite differences do not)
    assert cr.gradcheck(np.sign, np.array([1.0 + 1.0j, -2.0 + 0.5j]))
    _, t = cr.jvp(np.sign, (1j,), (1.0,))
    assert t == pytest.approx(1.0)


def test_gradcheck_catches_a_conjugated_rule():
    """The complex gradcheck can fail: a rule that conjugates (the adjoint, not the transpose)."""
    from chainrule.autodiff.primitive import Primitive

    wrong = Primitive("sin_adjoint_test_only", np.sin, register=False)
    wrong.defvjp(lambda g, ans, z: g * np.conj(np.cos(z)))
    wrong.defjvp(lambda t, ans, z: t * np.cos(z))
    z = np.array([0.5 + 0.7j])
    assert cr.gradcheck(wrong, z, modes=("fwd",), order=1)
    with pytest.raises(cr.GradcheckError, match=r"order 1 \(rev mode\)"):
        cr.gradcheck(wrong, z, modes=("rev",), order=1)


def test_a_complex_tangent_needs_a_complex_primal():
    with pytest.raises(TypeError, match="jvp: a complex tangent for a real primal"):
        cr.jvp(lambda x: x * 2, (np.array([1.0]),), (np.array([1j]),))
    with pytest.raises(TypeError, match="backward: a complex gradient .* for a real output"):
        cr.vjp(lambda x: x * 2, np.array([1.0]))[1](np.array([1j]))


def test_casting_complex_to_real_keeps_the_real_part_of_the_tangent():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy warns that the cast drops the imaginary part
        assert cr.jvp(lambda z: z.astype(np.float64), (np.array([1 + 1j]),), (np.array([2 + 3j]),))[1] == [2.0]
        assert cr.gradcheck(lambda z: z.astype(np.float64) * z, np.array([1 + 1j]))


def test_hessian_of_a_real_function_of_complex_inputs_names_hessian_and_the_split():
    z = np.array([1 + 2j, 0.3 - 1j])
    f = lambda a: cr.sum(cr.abs(a) ** 2 * cr.real(a))  # noqa: E731
    with pytest.raises(TypeError, match=r"hessian: argument 0 is complex.*holomorphic=True.*z\.real, z\.imag"):
        cr.hessian(f)(z)
    h = cr.hessian(lambda re, im: f(re + 1j * im), argnums=(0, 1))(z.real, z.imag)
    np.testing.assert_allclose(h[0][1], np.diag(2 * z.imag))  # d2/dre dim of (re^2 + im^2) re = 2 im


@pytest.mark.oracle
def test_vmap_of_a_holomorphic_grad_matches_jax():
    jax = _jax()
    jnp = jax.numpy
    zs = _z(np.random.default_rng(5), 3, 2)
    f = lambda m: (lambda z: m.sum(m.exp(z) * z))  # noqa: E731
    got = cr.vmap(cr.grad(f(np), holomorphic=True))(zs)  # the flag was dropped inside vmap: a TypeError
    np.testing.assert_allclose(got, jax.vmap(jax.grad(f(jnp), holomorphic=True))(zs), rtol=1e-12)
    np.testing.assert_allclose(got, (zs + 1) * np.exp(zs), rtol=1e-12)
    with pytest.raises(TypeError, match="holomorphic=True requires a complex output"):
        cr.vmap(cr.grad(lambda z: np.sum(np.abs(z)), holomorphic=True))(zs)


def test_real_transforms_refuse_a_complex_input():
    # NumPy, JAX and PyTorch raise; taking the real part silently gave the imaginary part a zero gradient
    z = np.array([1.0 + 1.0j, 2.0, 3.0, 4.0 - 2.0j])
    for fn in (np.fft.rfft, np.fft.rfftn, np.fft.rfft2):
        with pytest.raises(TypeError, match=r"fft\.rfftn?: the input must be real, got dtype complex128"):
            fn(cr.Tensor(z.reshape(2, 2)))
    with pytest.raises(TypeError, match=r"fft\.rfft: the input must be real.*np\.real\(x\)"):
        cr.grad(lambda z: np.sum(np.abs(np.fft.rfft(z))))(z)
    g = cr.grad(lambda z: np.sum(np.abs(np.fft.rfft(np.real(z)))))(z)  # the fix the message names
    assert np.all(np.imag(g) == 0)


def test_real_and_imag_are_settable_outside_the_graph_only():
    z = cr.Tensor(np.array([1 + 2j, 3 - 1j]))
    z.real = cr.Tensor([5.0, 6.0])
    z.imag = np.array([0.5, 0.25])
    np.testing.assert_array_equal(z.data, [5 + 0.5j, 6 + 0.25j])
    w = cr.Tensor(np.array([1 + 2j]), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Tensor\.real = \.\.\.: a leaf Tensor .* z = x \+ 1j \* z\.imag"):
        w.real = 1.0
    v = w * 2
    with pytest.raises(RuntimeError, match=r"Tensor\.imag = \.\.\.: in-place change .* z = z\.real \+ 1j \* x"):
        v.imag = 1.0
    with pytest.raises(TypeError, match=r"Tensor\.imag = \.\.\.: a float64 tensor has no imaginary part"):
        cr.Tensor([1.0]).imag = 1.0


@pytest.mark.oracle
def test_autograd_functional_vjp_and_jvp_on_complex_functions():
    """PyTorch's jvp is the true J t; its vjp is conj(chainrule's vjp at conj(v)), chainrule's being cr.vjp's.
    Both raised 'the output is complex' (a sum of output * v was differentiated)."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    z, v = np.array([1 + 2j, 0.5 - 1j]), np.array([1.0 + 1j, 2 - 1j])
    cases = [(lambda z: torch.abs(z) ** 2 * torch.exp(z), lambda z: np.abs(z) ** 2 * np.exp(z)),  # not holomorphic
             (lambda z: z ** 2 * torch.exp(z), lambda z: z ** 2 * np.exp(z)),
             (lambda z: torch.conj(z) * z.real, lambda z: np.conj(z) * np.real(z))]
    for tf, cf in cases:
        want = torch.autograd.functional.jvp(tf, torch.tensor(z), torch.tensor(v))[1].numpy()
        got = cr.autograd.functional.jvp(cf, cr.Tensor(z), cr.Tensor(v))[1]
        np.testing.assert_allclose(got.data, want, rtol=1e-12)
        np.testing.assert_allclose(got.data, cr.jvp(cf, (z,), (v,))[1], rtol=1e-12)
        want = torch.autograd.functional.vjp(tf, torch.tensor(z), torch.tensor(np.conj(v)))[1].numpy()
        got = cr.autograd.functional.vjp(cf, cr.Tensor(z), cr.Tensor(v))[1]
        np.testing.assert_allclose(got.data, np.conj(want), rtol=1e-12)
        np.testing.assert_allclose(got.data, cr.vjp(cf, z)[1](v)[0], rtol=1e-12)
    x = np.array([0.3, -1.2])  # real input, complex output: a real tangent out of a complex J t
    got = cr.autograd.functional.jvp(lambda x: np.exp(1j * x) * x, cr.Tensor(x), cr.Tensor([1.0, 2.0]))[1]
    np.testing.assert_allclose(got.data, (1j * x + 1) * np.exp(1j * x) * [1.0, 2.0], rtol=1e-12)
    zt = cr.Tensor(z, requires_grad=True)  # create_graph: the complex jvp is differentiable again
    _, tangent = cr.autograd.functional.jvp(lambda z: np.exp(z) * np.abs(z), zt, cr.Tensor(v), create_graph=True)
    (g,) = cr.autograd.grad(np.sum(np.abs(tangent) ** 2), zt)
    f = lambda z: np.sum(np.abs(cr.jvp(lambda w: np.exp(w) * np.abs(w), (z,), (v,))[1]) ** 2)  # noqa: E731
    np.testing.assert_allclose(g.data, cr.grad(f)(z), rtol=1e-10)
    with pytest.raises(TypeError, match=r"autograd\.functional\.jacobian: the output is complex .*holomorphic=True"):
        cr.autograd.functional.jacobian(lambda z: z * z, cr.Tensor(z))
    tf = lambda z: (torch.abs(torch.sin(z)) ** 2 * z.real).sum()  # noqa: E731
    cf = lambda z: np.sum(np.abs(np.sin(z)) ** 2 * np.real(z))  # noqa: E731
    for fn in ("vhp", "hvp"):  # raised 'the output is complex': PyTorch's is the conjugate of cr.hvp's
        want = getattr(torch.autograd.functional, fn)(tf, torch.tensor(z), torch.tensor(v))[1].numpy()
        got = getattr(cr.autograd.functional, fn)(cf, cr.Tensor(z), cr.Tensor(v))[1]
        np.testing.assert_allclose(got.data, np.conj(want), rtol=1e-12)
        np.testing.assert_allclose(got.data, cr.hvp(cf, (z,), (v,)), rtol=1e-12)


def test_minimize_refuses_a_complex_start():
    # x0 was cast to float: the imaginary part dropped (a ComplexWarning only) and a wrong minimum returned
    target = np.array([1 - 2j, 0.5 + 1j])
    loss = lambda z: np.sum(np.abs(z - target) ** 2)  # noqa: E731
    for x0 in (np.zeros(2, complex), [1j, 2.0], cr.Tensor(np.zeros(2, complex))):
        with pytest.raises(TypeError, match=r"minimize: x0 must be real, got complex values .*z\.real, z\.imag"):
            cr.optimize.minimize(loss, x0)
    r = cr.optimize.minimize(lambda v: loss(v[:2] + 1j * v[2:]), np.zeros(4))  # the split the message names
    np.testing.assert_allclose(r.x, [1.0, 0.5, -2.0, 1.0], atol=1e-6)


@pytest.mark.oracle
def test_complex_keeps_the_sign_of_a_zero_part_as_pytorchs():
    """complex(re, im) holds re and im as given: a signed zero decides which side of a branch cut the number is
    on. re + im * 1j lost it (im * 1j is -0 + 0j for im = -0.0): angle(complex(-1.5, -0.0)) was pi, PyTorch's -pi,
    and sqrt and log took the other branch too."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    x, y = np.array([-1.5, -0.0, 2.0, -4.0]), np.array([-0.0, 0.5, -0.0, -0.0])
    ours, theirs = cr.complex(cr.tensor(x), cr.tensor(y)), torch.complex(torch.tensor(x), torch.tensor(y))
    for f in (lambda z: z, lambda z: z.angle(), lambda z: z.sqrt(), lambda z: z.log()):
        a, b = np.asarray(f(ours).numpy()), f(theirs).numpy()
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(np.signbit(a.real), np.signbit(b.real))
        np.testing.assert_array_equal(np.signbit(np.imag(a)), np.signbit(np.imag(b)))
