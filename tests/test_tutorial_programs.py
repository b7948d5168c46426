"""PyTorch's beginner tutorials (pytorch/tutorials: basics/, blitz/, examples_*/, nn_tutorial) and JAX's docs
(automatic-vectorization, thinking_in_jax, the autodiff cookbook), re-expressed in short: each test is the
tutorial's code with ``torch`` (or ``jax``, ``jax.numpy``) bound to chainrule, the datasets replaced by small arrays
of the same shapes. Each spelling here failed before (or answered differently); PyTorch and JAX are the oracles
where the numbers are deterministic."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

import chainrule as cr


def _torch():
    return pytest.importorskip("torch", reason="torch is not installed")


def test_torch_device_is_what_a_tensor_reports():
    # tensorqs_tutorial: `torch.cuda.is_available() & (torch.device('cuda').index is not None)`
    assert cr.device("cuda").index is None and cr.device("cuda:1").index == 1
    assert cr.zeros(2, device=cr.device("cpu")).device == cr.device("cpu")
    assert isinstance(cr.zeros(2).device, cr.device)
    assert not (cr.cuda.is_available() & (cr.device("cuda").index is not None))


def test_accelerator_and_the_default_device():
    # polynomial_autograd: `torch.accelerator.current_accelerator().type if torch.accelerator.is_available()`
    device = cr.accelerator.current_accelerator().type if cr.accelerator.is_available() else "cpu"
    assert device in ("cpu", "cuda")
    assert (cr.accelerator.current_accelerator() is None) == (not cr.accelerator.is_available())
    cr.set_default_device("cpu")
    assert cr.get_default_device() == "cpu"
    with pytest.raises(NotImplementedError, match=r"set_default_device\('cuda'\).*device='cuda'.*model.to"):
        cr.set_default_device("cuda")


@pytest.mark.oracle
def test_matmul_with_pytorchs_keyword_names_as_polynomial_tensor():
    torch = _torch()

    def grads(lib):
        x = lib.linspace(-math.pi, math.pi, 200, dtype=lib.float64)
        grad_y_pred = -2.0 * (lib.sin(x) - 0.3 * x)
        return [lib.matmul(input=grad_y_pred, other=x.pow(k)).sum().item() for k in (1, 2, 3)]

    np.testing.assert_allclose(grads(cr), grads(torch), rtol=1e-12, atol=1e-9)  # the x^2 term is 0 up to rounding
    with pytest.raises(TypeError, match=r"matmul\(\) missing the argument 'other'"):
        cr.matmul(input=cr.ones(2))
    with pytest.raises(TypeError, match=r"matmul\(\): got \['input'\] both by position and by name"):
        cr.matmul(cr.ones(2), cr.ones(2), input=cr.ones(2))
    assert cr.exp(input=cr.zeros(1)).tolist() == [1.0] and cr.add(cr.ones(1), other=cr.ones(1)).tolist() == [2.0]


@pytest.mark.oracle
def test_out_writes_into_the_given_tensor_as_tensorqs():
    torch = _torch()

    def run(lib):
        tensor = lib.ones(4, 4)
        tensor[:, 1] = 0
        y3 = lib.zeros(4, 4)
        returned = lib.matmul(tensor, tensor.T, out=y3)
        z3 = lib.zeros(4, 4)
        lib.add(tensor, tensor, out=z3)
        return returned is y3, y3.numpy().copy(), z3.numpy().copy()

    ours, theirs = run(cr), run(torch)
    assert ours[0] and theirs[0]
    np.testing.assert_array_equal(ours[1], theirs[1])
    np.testing.assert_array_equal(ours[2], theirs[2])


def test_out_refuses_a_gradient_and_another_shape():
    w = cr.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"exp\(\): functions with out=.*requires grad.*no_grad"):
        cr.exp(w, out=cr.zeros(2))
    with cr.no_grad():
        assert cr.exp(w, out=cr.zeros(2)).tolist() == pytest.approx([math.e, math.e])
    with pytest.raises(ValueError, match=r"matmul\(\): out= has shape \(3,\) but the result has shape \(\)"):
        cr.matmul(cr.ones(2), cr.ones(2), out=cr.zeros(3))
    with pytest.raises(TypeError, match=r"out= must be a Tensor, got ndarray"):
        cr.exp(cr.ones(2), out=np.zeros(2))


@pytest.mark.oracle
def test_type_casts_as_the_optimization_tutorials_accuracy():
    torch = _torch()
    rng = np.random.default_rng(0)
    logits, labels = rng.standard_normal((64, 10)).astype(np.float32), rng.integers(0, 10, 64)

    def correct(lib):
        pred, y = lib.tensor(logits), lib.tensor(labels)
        hits = (pred.argmax(1) == y).type(lib.float)
        return hits.dtype, hits.sum().item(), y.type(), hits.type()

    (dt, n, y_type, hits_type), (tdt, tn, ty_type, thits_type) = correct(cr), correct(torch)
    assert n == tn and str(tdt) == f"torch.{np.dtype(dt).name}"
    assert (y_type, hits_type) == (ty_type, thits_type) == ("torch.LongTensor", "torch.FloatTensor")
    assert cr.tensor([1, 2]).type("torch.DoubleTensor").dtype == np.float64
    with pytest.raises(TypeError, match=r"CUDA tensor type; use t.to\('cuda'\)"):
        cr.tensor([1.0]).type("torch.cuda.FloatTensor")


def test_save_a_whole_model_then_load_it_with_weights_only_false_says_what_to_do(tmp_path):
    # saveloadrun_tutorial: torch.save(model, 'model.pth'); model = torch.load('model.pth', weights_only=False)
    model = cr.nn.Sequential(cr.nn.Linear(3, 2), cr.nn.ReLU())
    path = os.fspath(tmp_path / "model.pth")
    cr.save(model, path)
    with pytest.raises(TypeError, match=r"holds the state_dict of a whole Sequential.*model.load_state_dict"):
        cr.load(path, weights_only=False)
    again = cr.nn.Sequential(cr.nn.Linear(3, 2), cr.nn.ReLU())
    again.load_state_dict(cr.load(path, weights_only=True))
    x = cr.rand(4, 3)
    assert (again(x) == model(x)).all()
    cr.save(model.state_dict(), path)  # a state dict still loads either way
    assert sorted(cr.load(path, weights_only=False)) == ["0.bias", "0.weight"]


@pytest.mark.oracle
def test_polynomial_custom_function_program_ends_where_pytorch_does():
    torch = _torch()

    def program(lib):
        class LegendrePolynomial3(lib.autograd.Function):
            @staticmethod
            def forward(ctx, input):  # noqa: A002  (the tutorial's name)
                ctx.save_for_backward(input)
                return 0.5 * (5 * input**3 - 3 * input)

            @staticmethod
            def backward(ctx, grad_output):
                (input,) = ctx.saved_tensors  # noqa: A001
                return grad_output * 1.5 * (5 * input**2 - 1)

        x = lib.linspace(-math.pi, math.pi, 200, device=lib.device("cpu"), dtype=lib.double)
        y = lib.sin(x)
        a, b, c, d = (lib.full((), v, dtype=lib.double, requires_grad=True) for v in (0.0, -1.0, 0.0, 0.3))
        for _ in range(50):
            loss = (a + b * LegendrePolynomial3.apply(c + d * x) - y).pow(2).sum()
            loss.backward()
            with lib.no_grad():
                for p in (a, b, c, d):
                    p -= 5e-5 * p.grad
                    p.grad = None
        return [p.item() for p in (a, b, c, d)] + [loss.item()]

    np.testing.assert_allclose(program(cr), program(torch), rtol=1e-10, atol=1e-14)


@pytest.mark.oracle
def test_optimization_tutorial_loop_ends_where_pytorch_does():
    torch = _torch()
    rng = np.random.default_rng(0)
    images, labels = rng.random((48, 1, 6, 6)), rng.integers(0, 10, 48)
    init = [rng.standard_normal(s) * 0.1 for s in ((16, 36), (16,), (10, 16), (10,))]

    def program(lib):
        from_data = lib.utils.data
        loader = from_data.DataLoader(from_data.TensorDataset(lib.tensor(images), lib.tensor(labels)), batch_size=16)

        class NeuralNetwork(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.flatten = lib.nn.Flatten()
                self.stack = lib.nn.Sequential(lib.nn.Linear(36, 16), lib.nn.ReLU(), lib.nn.Linear(16, 10))

            def forward(self, x):
                return self.stack(self.flatten(x))

        model = NeuralNetwork().double()
        with lib.no_grad():
            for p, v in zip(model.parameters(), init):
                p.copy_(lib.tensor(v))
        loss_fn, optimizer = lib.nn.CrossEntropyLoss(), lib.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            model.train()
            for X, y in loader:
                loss = loss_fn(model(X), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        model.eval()
        correct = 0.0
        with lib.no_grad():
            for X, y in loader:
                correct += (model(X).argmax(1) == y).type(lib.float).sum().item()
        return [p.detach().numpy().copy() for p in model.parameters()], correct

    (ours, n), (theirs, tn) = program(cr), program(torch)
    assert n == tn
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_two_shuffling_loaders_draw_different_orders_and_manual_seed_repeats_them():
    # nn_tutorial builds a new DataLoader(train_ds, shuffle=True) for each refactoring step: in PyTorch each one
    # shuffles differently (they draw from the global generator); here they all gave the same orders before
    ds = cr.utils.data.TensorDataset(cr.arange(16))

    def orders():
        loaders = [cr.utils.data.DataLoader(ds, batch_size=16, shuffle=True) for _ in range(2)]
        return [[b[0].tolist() for b in dl] for dl in loaders]

    cr.manual_seed(3)
    first = orders()
    assert first[0] != first[1]
    cr.manual_seed(3)
    assert orders() == first
    seeded = [[b[0].tolist() for b in cr.utils.data.DataLoader(ds, batch_size=16, shuffle=True, seed=5)]
              for _ in range(2)]
    assert seeded[0] == seeded[1]  # an explicit seed= still repeats itself


# --- JAX's docs (automatic-vectorization.md, notebooks/autodiff_cookbook.md), jax.numpy bound to chainrule.numpy


def _convolve(jnp):
    def convolve(x, w):
        output = []
        for i in range(1, len(x) - 1):
            output.append(jnp.dot(x[i - 1:i + 2], w))
        return jnp.array(output)

    return convolve


def test_jit_of_vmap_traces_and_replays_as_automatic_vectorization():
    # jax.jit(jax.vmap(convolve)): ran eagerly with a PerformanceWarning before (the batching rules' calls were
    # hidden from the trace); now one trace, replayed for new values
    import warnings

    jnp = cr.numpy
    convolve = _convolve(jnp)
    xs, ws = jnp.stack([jnp.arange(5.0), jnp.arange(5.0) + 1]), jnp.stack([jnp.array([2.0, 3.0, 4.0])] * 2)
    jitted = cr.jit(cr.vmap(convolve))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first, again = jitted(xs, ws), jitted(xs * 2, ws)
    assert jitted.traces == 1
    np.testing.assert_allclose(first, [[11.0, 20.0, 29.0], [20.0, 29.0, 38.0]])
    np.testing.assert_allclose(again, cr.vmap(convolve)(xs * 2, ws))
    np.testing.assert_allclose(cr.jit(cr.vmap(convolve, in_axes=[0, None]))(xs, ws[0]), first)


@pytest.mark.oracle
def test_autodiff_cookbook_matches_jax():
    jax = pytest.importorskip("jax", reason="jax is not installed")  # (float32 inputs: other tests may enable x64)

    def cookbook(lib, jnp):
        def predict(W, b, inputs):
            return 0.5 * (jnp.tanh((jnp.dot(inputs, W) + b) / 2) + 1)

        inputs = jnp.array(np.array([[0.52, 1.12, 0.77], [0.88, -1.08, 0.15], [0.52, 0.06, -1.30],
                                     [0.74, -2.49, 1.39]], np.float32))
        targets = jnp.array([True, True, False, True])

        def loss(W, b):
            preds = predict(W, b, inputs)
            return -jnp.sum(jnp.log(preds * targets + (1 - preds) * (1 - targets)))

        W, b = jnp.array(np.array([0.3, -0.5, 0.8], np.float32)), jnp.array(np.float32(0.1))
        f = lambda W: predict(W, b, inputs)  # noqa: E731

        def hvp(f, primals, tangents):
            return lib.jvp(lib.grad(f), primals, tangents)[1]

        def vmap_mjp(f, x, M):
            y, vjp_fun = lib.vjp(f, x)
            (outs,) = lib.vmap(vjp_fun)(M)
            return outs

        value, (gW, gb) = lib.value_and_grad(loss, (0, 1))(W, b)
        grads = lib.grad(lambda p: loss(p["W"], p["b"]))({"W": W, "b": b})
        return [value, gW, gb, grads["W"], lib.jacfwd(f)(W), lib.jacrev(f)(W), lib.jacfwd(lib.jacrev(f))(W),
                lib.hessian(loss)(W, b), hvp(lambda W: loss(W, b), (W,), (jnp.array(np.ones(3, np.float32)),)),
                vmap_mjp(f, W, jnp.array(np.eye(4, dtype=np.float32))), lib.jit(lib.vmap(f))(jnp.stack([W, W * 2]))]

    ours, theirs = cookbook(cr, cr.numpy), cookbook(jax, jax.numpy)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=1e-6, err_msg=f"result {k}")


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss"])  # (PyTorch's huber_loss backward refuses)
def test_a_regression_loss_against_integer_targets_answers_in_the_inputs_dtype(name):
    # blitz/neural_networks_tutorial: loss = nn.MSELoss()(output, torch.arange(1, 11).view(1, -1))
    torch = _torch()
    values = np.array([[0.5, 1.5, 2.0, 7.25]], np.float32)

    def run(lib):
        out = lib.tensor(values, requires_grad=True)
        loss = getattr(lib.nn.functional, name)(out, lib.arange(1, 5).view(1, -1))
        loss.backward()
        return str(loss.dtype).removeprefix("torch."), loss.item(), out.grad.numpy().copy()

    (dt, value, grad), (tdt, tvalue, tgrad) = run(cr), run(torch)
    assert dt == tdt == "float32"
    assert value == pytest.approx(tvalue, rel=1e-6)
    np.testing.assert_allclose(grad, tgrad, rtol=1e-6)


def test_randint_with_size_by_name_as_the_data_tutorial():
    # basics/data_tutorial: sample_idx = torch.randint(len(training_data), size=(1,)).item()
    drawn = cr.randint(7, size=(50,))
    assert drawn.shape == (50,) and drawn.dtype == np.int64 and 0 <= int(drawn.min()) and int(drawn.max()) < 7
    assert isinstance(cr.randint(7, size=(1,)).item(), int)
    assert cr.randint(3, 4, size=(2,)).tolist() == [3, 3]


@pytest.mark.oracle
def test_a_zero_d_index_scatters_and_gathers_one_entry_of_a_vector_as_pytorch():
    # basics/data_tutorial: Lambda(lambda y: torch.zeros(10, dtype=torch.float).scatter_(0, torch.tensor(y), value=1))
    torch = _torch()

    def run(lib):
        one_hot = lib.zeros(10, dtype=lib.float).scatter_(0, lib.tensor(3), value=1)
        src = lib.tensor(7.0, requires_grad=True)
        base = lib.arange(5.0).requires_grad_()
        written = lib.zeros(5).scatter(0, lib.tensor(2), src) + lib.zeros(5).scatter_add(0, lib.tensor(4), src)
        picked = base.gather(0, lib.tensor(3))
        (written.sum() * 2 + picked * 5).backward()
        return one_hot.numpy().copy(), written.detach().numpy().copy(), picked.shape, src.grad.item(), \
            base.grad.numpy().copy()

    ours, theirs = run(cr), run(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.oracle
def test_jit_between_grads_runs_as_thinking_in_jax():
    # thinking_in_jax: grad(jit(grad(jit(grad(sum_logistic)))))(1.0) raised JitError (a gradient transform inside a
    # jit called with a transform's Tensors); now the inner function runs as it is, with a PerformanceWarning
    jax = pytest.importorskip("jax", reason="jax is not installed")

    def third(lib, jnp):
        def sum_logistic(x):
            return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))

        return lib.grad(lib.jit(lib.grad(lib.jit(lib.grad(sum_logistic)))))(1.0)

    with pytest.warns(cr.PerformanceWarning, match=r"runs the function as it is \(no replay\)"):
        ours = third(cr, cr.numpy)
    assert float(ours) == pytest.approx(float(third(jax, jax.numpy)), rel=1e-5)
