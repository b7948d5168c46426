"""Found by re-expressing PyTorch's own autograd tests (test/test_autograd.py, TestAutograd) on chainrule's object
API: each test is one difference that suite exposed, run on chainrule and on PyTorch 2.13 (the oracle) with the
same body, ``lib`` standing for ``torch`` or ``chainrule``."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def _values(v):
    if isinstance(v, (torch.Tensor, cr.Tensor)):
        return np.array(v.detach().numpy(), dtype=np.float64)
    if isinstance(v, (list, tuple)):
        return type(v)(_values(x) for x in v)
    return v


def _agree(body):
    """``body(lib)`` on PyTorch and on chainrule: the same values (arrays compared to 1e-10)."""
    theirs, ours = _values(body(torch)), _values(body(cr))

    def check(a, b, where):
        if isinstance(a, (list, tuple)):
            assert isinstance(b, (list, tuple)) and len(a) == len(b), (where, a, b)
            for i, (x, y) in enumerate(zip(a, b)):
                check(x, y, f"{where}[{i}]")
        elif isinstance(a, np.ndarray):
            assert isinstance(b, np.ndarray) and a.shape == b.shape, (where, a, b)
            np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12, err_msg=where)
        else:
            assert a == b, (where, a, b)

    check(theirs, ours, "result")
    return ours


def _t(lib, values, requires_grad=False):
    return lib.tensor(np.array(values, dtype=np.float64), requires_grad=requires_grad)


# -- .grad accumulation --------------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:Using backward")  # (PyTorch's warning for create_graph=True into .grad)
def test_backward_adds_into_the_existing_grad_in_place_without_create_graph():
    # (test_accumulate_grad, test_accumulate_grad_tensor_reference) a reference to .grad sees later backwards
    def body(lib):
        out = []
        for create_graph in (False, True):
            x = _t(lib, [[1.0, -2.0], [0.5, 3.0]], True)
            y = x + 2
            y.backward(lib.ones(2, 2), retain_graph=True)
            first = x.grad
            y.backward(lib.ones(2, 2), create_graph=create_graph)
            out += [first, x.grad, first is x.grad]
        return out

    _agree(body)


def test_a_retained_non_leaf_grad_is_summed_out_of_place():
    def body(lib):
        x = _t(lib, [[0.3, 0.6, 0.9]], True)
        h = x * 3
        out = (h * h).sum()
        h.retain_grad()
        out.backward(retain_graph=True)
        first = h.grad
        out.backward()
        return [first, h.grad, x.grad]

    _agree(body)


# -- autograd.Function ---------------------------------------------------------------------------------------------
def test_function_backward_returning_none_leaves_grad_none():
    # (test_function_returns_undefined_tensor) None is no gradient, not zeros
    def body(lib):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return None

        x = lib.ones(1, requires_grad=True)
        Twice.apply(x).backward()
        Twice.apply(x ** 2).backward()
        return [x.grad is None, lib.autograd.grad(Twice.apply(x), x, allow_unused=True)[0] is None]

    assert _agree(body) == [True, True]


def test_function_set_materialize_grads_false_gives_none_for_an_unused_output():
    def body(lib):
        seen = []

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, materialize):
                ctx.set_materialize_grads(materialize)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append(None if g2 is None else g2.detach().clone())
                return g1 * 2 if g2 is None else g1 * 2 + g2 * 3, None

        out = []
        for materialize in (False, True):
            seen.clear()
            x = lib.ones(2, requires_grad=True)
            a, _ = Two.apply(x, materialize)
            a.sum().backward()
            out += [seen[0] is None, x.grad]
        return out

    _agree(body)


def test_function_with_outputs_that_are_not_tensors():
    # (test_custom_function_non_tensor_inputs_outputs) numbers, None, flags and strings come back as they are
    def body(lib):
        counts = []

        class Mixed(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t1, t2, scale, t3):
                t4 = t1 + t2 * t3
                t5 = t1 * t2 + t3
                t4 *= scale
                t5 *= scale
                ctx.scale = scale
                ctx.save_for_backward(t1, t2, t3)
                return scale, t4, None, True, t5, "bar", t1

            @staticmethod
            def backward(ctx, *grads):
                counts.append((len(grads), [g is None for g in grads]))
                v1, v2, v3 = ctx.saved_tensors
                s = ctx.scale
                return (grads[1] * s + grads[4] * v2 * s + grads[6], grads[1] * v3 * s + grads[4] * v1 * s, None,
                        grads[1] * v2 * s + grads[4] * s)

        t1, t2, t3 = _t(lib, [0.1, 0.5], True), _t(lib, [0.7, -0.2], True), _t(lib, [1.5, 2.0])
        res = Mixed.apply(t1, t2, 3, t3)
        lib.autograd.backward([res[1].sum(), res[4].sum(), res[6].sum()])
        return [res[0], res[2], res[3], res[5], res[1], res[4], t1.grad, t2.grad, t3.grad is None, counts[0],
                lib.autograd.gradcheck(lambda a, b, c: Mixed.apply(a, b, 3, c)[4], (t1, t2, t3))]

    _agree(body)


def test_function_in_setup_context_form():
    def body(lib):
        class Reshape(lib.autograd.Function):
            @staticmethod
            def forward(x, shape, scale_forward, scale_backward):
                return x.reshape(shape) * scale_forward

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, _, _, ctx.scale_backward = inputs
                ctx.x_shape = x.shape

            @staticmethod
            def backward(ctx, g):
                return g.reshape(ctx.x_shape) * ctx.scale_backward, None, None, None

        class Square(lib.autograd.Function):  # a number beside the Tensor output, read back in setup_context
            @staticmethod
            def forward(x):
                return x ** 2, x.item() * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.two_x = output[1]

            @staticmethod
            def backward(ctx, g, _):
                return g * ctx.two_x

        x = _t(lib, np.arange(6.0) / 7, True)
        y = Reshape.apply(x, (2, 3), 7, 11).sum()
        z = _t(lib, 0.7, True)
        square, number = Square.apply(z)
        return [y, lib.autograd.grad(y, x)[0], square, number, lib.autograd.grad(square, z)[0]]

    _agree(body)


def test_function_needs_input_grad_says_which_inputs_require_grad():
    def body(lib):
        seen = []

        class Pair(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                seen.append(tuple(ctx.needs_input_grad))
                return x * 1, y * 1

            @staticmethod
            def backward(ctx, gx, gy):
                return gx, None

        x, y = _t(lib, [1.0, 2.0], True), _t(lib, [3.0, 4.0])
        rx, ry = Pair.apply(x, y)
        (rx + ry).sum().backward()
        return [seen, x.grad]

    assert _agree(body)[0] == [(True, False)]


@pytest.mark.filterwarnings("ignore:Using backward")
def test_once_differentiable_runs_backward_without_grad_and_refuses_a_second_derivative():
    from chainrule.autograd.function import once_differentiable

    def body(lib, decorator):
        grad_mode = []

        class Mul(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a * b

            @staticmethod
            @decorator
            def backward(ctx, g):
                grad_mode.append(lib.is_grad_enabled())
                a, b = ctx.saved_tensors
                return g * b, g * a

        x, y = _t(lib, [1.5, -2.0], True), _t(lib, [0.5, 3.0], True)
        # (test_once_differentiable) a seed that requires grad: the gradients are recorded, and raise when used
        Mul.apply(x, y).sum().backward(lib.ones((), requires_grad=True), create_graph=True)
        with pytest.raises(RuntimeError, match="once_differentiable"):
            x.grad.sum().backward()
        # a seed that does not: the gradients are constants (PyTorch's rule)
        (g,) = lib.autograd.grad(Mul.apply(x, y).sum(), x, create_graph=True)
        return [x.grad.detach(), y.grad.detach(), g, g.requires_grad, grad_mode]

    assert _agree(lambda lib: body(lib, torch.autograd.function.once_differentiable if lib is torch
                                   else once_differentiable))[-1] == [False, False]


def test_a_legacy_function_with_non_static_forward_is_refused():
    class Legacy(cr.autograd.Function):
        def forward(self, x):
            return x

        def backward(self, g):
            return g

    with pytest.raises(RuntimeError, match="non-static forward"):
        Legacy()(cr.ones(3))
    with pytest.raises(RuntimeError, match="non-static forward"):
        Legacy.apply(cr.ones(3, requires_grad=True))


def test_function_backward_of_the_wrong_shape_raises_a_runtime_error():
    class Wrong(cr.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return cr.ones(10)

    with pytest.raises(RuntimeError, match="shape"):
        Wrong.apply(cr.ones((5, 5), requires_grad=True)).sum().backward()


# -- autograd.grad -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["output_without_grad", "input_without_grad", "no_inputs", "shape_mismatch",
                                  "materialize_with_allow_unused_false"])
def test_grad_refuses_what_pytorch_refuses(case):
    def body(lib):
        x = lib.ones(2, requires_grad=True)
        plain = lib.ones(2)
        call = {
            "output_without_grad": lambda: lib.autograd.grad(plain * 2, plain),
            "input_without_grad": lambda: lib.autograd.grad((x * 2).sum(), plain),
            "no_inputs": lambda: lib.autograd.grad((x * 2).sum(), []),
            "shape_mismatch": lambda: lib.autograd.grad([x * 2], [x], grad_outputs=[lib.ones(3)]),
            "materialize_with_allow_unused_false": lambda: lib.autograd.grad(
                (x * 2).sum(), x, allow_unused=False, materialize_grads=True),
        }[case]
        with pytest.raises(Exception) as info:
            call()
        return info.type

    expected = body(torch)
    assert issubclass(body(cr), expected)


def test_grad_materialize_grads_under_create_graph_gives_zeros_that_require_grad():
    def body(lib):
        x = _t(lib, 0.5, True)
        y = x * _t(lib, 1.0, True)
        (dydx,) = lib.autograd.grad(y, x, create_graph=True)
        (none,) = lib.autograd.grad(dydx, x, create_graph=True, allow_unused=True)
        (d2,) = lib.autograd.grad(dydx, x, create_graph=True, materialize_grads=True)
        (d3,) = lib.autograd.grad(d2, x, materialize_grads=True)
        return [dydx, none is None, d2, d2.requires_grad, d3, d3.requires_grad]

    _agree(body)


def test_grad_with_inputs_as_a_dict_and_batched_grad_outputs_as_a_tuple():
    def body(lib):
        x = _t(lib, [[1.0, 2.0], [3.0, 4.0]], True)
        found = lib.autograd.grad((x * x).sum(), {"x": x}, retain_graph=True)
        batched = lib.arange(3.0).expand(2, 2, 3).transpose(0, 2)
        (rows,) = lib.autograd.grad(x * x, (x,), (batched,), is_grads_batched=True)
        (scalar_rows,) = lib.autograd.grad((x * x).sum(), (x,), (lib.arange(3.0),), is_grads_batched=True)
        with pytest.raises(RuntimeError):
            lib.autograd.grad(x * x, (x,), (lib.ones(2, 2),), is_grads_batched=True)
        return [list(found), found["x"], rows, scalar_rows]

    _agree(body)


def test_backward_with_inputs_accumulates_into_grad():
    def body(lib):
        a, b = _t(lib, [1.0, 2.0], True), _t(lib, [3.0, 4.0], True)
        b.grad = _t(lib, [10.0, 10.0])
        kept = b.grad
        lib.autograd.backward([(a * b).sum(), (b * b).sum()], inputs=[b])
        return [a.grad is None, b.grad, kept is b.grad]

    _agree(body)


def test_grad_runs_only_the_part_of_the_graph_that_leads_to_the_inputs():
    # (test_grad_unreachable_discovery) a custom backward off the path to the inputs is not called
    def body(lib):
        ran = []

        class Marked(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                ran.append(1)
                return g

        y, z = _t(lib, [1.0], True), _t(lib, [2.0], True)
        x = Marked.apply(_t(lib, [3.0], True) * 2)
        (gy,) = lib.autograd.grad(x, (y,), allow_unused=True)
        gy2, gz = lib.autograd.grad(Marked.apply(_t(lib, [3.0], True) * 2) + z, (y, z), allow_unused=True)
        lib.autograd.backward(Marked.apply(_t(lib, [3.0], True) * 2), inputs=(y,))
        return [gy is None, gy2 is None, gz, y.grad is None, len(ran)]

    assert _agree(body)[-1] == 0


# -- hooks ---------------------------------------------------------------------------------------------------------
def test_post_accumulate_grad_hooks_run_in_order_after_the_grad_is_written():
    def body(lib):
        def shift(p):
            p.grad.add_(0.5)

        def step(p):  # a step on the leaf itself: allowed there
            p.sub_(p.grad)

        def scale(p):
            p.mul_(4.0)

        t = _t(lib, [1.0, 2.0, 3.0], True)
        t.register_hook(lambda g: g.sub(2.0))
        t.register_post_accumulate_grad_hook(shift)
        t.register_post_accumulate_grad_hook(step)
        handle = t.register_post_accumulate_grad_hook(scale)
        t.sum().backward()
        first = t.detach().clone()
        handle.remove()
        t.grad = None
        (t * t).sum().backward()
        unused = lib.autograd.grad((t * t).sum(), t)  # grad() writes no .grad, so it calls none
        with pytest.raises(RuntimeError, match="non-leaf"):
            (t * 2).register_post_accumulate_grad_hook(lambda p: None)
        u = lib.ones(2, 3, requires_grad=True)
        u.register_post_accumulate_grad_hook(lambda p: p.grad)
        with pytest.raises(RuntimeError, match="should return None"):
            u.sum().backward()
        return [first, t, t.grad, unused]

    _agree(body)


def test_an_optimiser_step_per_parameter_inside_backward():
    # (test_post_accumulate_grad_hook_e2e)
    def body(lib):
        model = lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            model.weight.copy_(_t(lib, [[0.1, 0.2, 0.3], [-0.1, 0.4, 0.2]]))
            model.bias.copy_(_t(lib, [0.1, -0.2]))
        x = _t(lib, [[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]])
        optims = {p: lib.optim.Adam([p]) for p in model.parameters()}

        def step(p):
            optims[p].step()
            optims[p].zero_grad()

        handles = [p.register_post_accumulate_grad_hook(step) for p in model.parameters()]
        for _ in range(3):
            model(x).sum().backward()
        for h in handles:
            h.remove()
        model(x).sum().backward()
        return [list(model.parameters()), [p.grad for p in model.parameters()]]

    _agree(body)


def test_var_mean_and_std_mean_as_pytorchs_with_hooks_on_both_outputs():
    def body(lib):
        b = _t(lib, np.arange(9.0).reshape(3, 3) ** 1.5 / 10, True)
        seen = []
        var, mean = lib.var_mean(b, dim=0)
        var.register_hook(lambda g: seen.append(g.detach().clone()))
        mean.register_hook(lambda g: seen.append(g.detach().clone()))
        (var + mean * 3).sum().backward()
        std, mean2 = lib.std_mean(b, 1, keepdim=True)
        return [var, mean, b.grad, sorted(float(s.sum()) for s in seen), std, mean2, lib.var_mean(b, correction=0)]

    _agree(body)


# -- grad mode -----------------------------------------------------------------------------------------------------
def test_grad_mode_decorators_on_generators_hold_while_the_body_runs():
    # (test_set_grad_generator_functions, test_set_grad_coroutines_exit) not at the call that makes the generator
    def body(lib):
        seen = []

        @lib.no_grad()
        def quiet(n):
            for i in range(n):
                sent = yield i
                seen.append(("body", lib.is_grad_enabled(), sent))

        @lib.enable_grad()
        def loud():
            try:
                while True:
                    yield lib.is_grad_enabled()
            except GeneratorExit:
                seen.append(("closing", lib.is_grad_enabled()))
                raise

        with lib.enable_grad():
            steps, sent = quiet(3), None
            try:
                while True:
                    sent = steps.send(sent)
                    seen.append(("caller", lib.is_grad_enabled()))
            except StopIteration:
                pass
        with lib.no_grad():
            gen = loud()
            seen.append(("loud", next(gen), lib.is_grad_enabled()))
            gen.close()
        return seen

    assert ("body", False, 0) in _agree(body)


# -- Tensor attributes ---------------------------------------------------------------------------------------------
def test_del_grad_forgets_the_gradient_and_other_deletions_are_refused():
    def body(lib):
        x = lib.ones(2, requires_grad=True)
        (x * 3).sum().backward()
        del x.grad
        forgotten = x.grad is None
        (x * 2).sum().backward()
        out = [forgotten, x.grad]
        for name in ("data", "requires_grad"):
            with pytest.raises(RuntimeError):
                delattr(x, name)
        return out

    _agree(body)


def test_backward_with_empty_inputs_is_refused_and_output_nr_says_which_output():
    def body(lib):
        x = _t(lib, np.arange(10.0), True)
        with pytest.raises(RuntimeError, match="cannot be empty"):
            (x * x).sum().backward(inputs=[])
        class Halves(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                return t[:5] * 1, t[5:] * 1

            @staticmethod
            def backward(ctx, ga, gb):
                return lib.cat([ga, gb])

        a, b = Halves.apply(x)
        return [x.output_nr, a.output_nr, b.output_nr]

    assert _agree(body) == [0, 0, 1]


def test_a_function_returning_one_tensor_twice_gives_one_object():
    # (test_return_duplicate)
    def body(lib):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out = x * 2
                return out, out

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 2 + g2 * 2

        x = _t(lib, [[0.5, -1.0], [2.0, 0.25]], True)
        a, b = Twice.apply(x)
        (a + b).sum().backward()
        return [a is b, a, x.grad,
                lib.autograd.gradgradcheck(lambda t: sum(Twice.apply(t)), [x.detach().requires_grad_()])]

    assert _agree(body)[0] is True


def test_ctx_saved_variables_is_the_deprecated_name_of_saved_tensors():
    class Add(cr.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a + b

        @staticmethod
        def backward(ctx, g):
            a, _ = ctx.saved_variables
            return g * a, g

    x, y = cr.tensor([2.0, 3.0], requires_grad=True), cr.tensor([1.0, 1.0], requires_grad=True)
    with pytest.warns(DeprecationWarning, match="saved_tensors"):
        Add.apply(x, y).sum().backward()
    assert x.grad.tolist() == [2.0, 3.0] and y.grad.tolist() == [1.0, 1.0]


def test_set_grad_enabled_as_a_decorator_leaves_the_mode_of_the_caller():
    def body(lib):
        out = []
        with lib.enable_grad():
            @lib.set_grad_enabled(False)
            def quiet(x):
                return x.sin()

            out.append(lib.is_grad_enabled())
            obj = lib.set_grad_enabled(False)  # switched at once, as a call ...
            out.append(lib.is_grad_enabled())
            also_quiet = obj(lambda x: x.cos())  # ... and back when it decorates
            out.append(lib.is_grad_enabled())
            x = lib.zeros(1, requires_grad=True)
            out += [quiet(x).requires_grad, also_quiet(x).requires_grad, (x * 2).requires_grad]
        return out

    assert _agree(body) == [True, False, True, False, False, True]


def test_function_backward_may_return_extra_nones():
    # (test_too_many_grads)
    def body(lib):
        class Same(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g, None, None

        x = _t(lib, [1.0, 2.0], True)
        Same.apply(x).sum().backward()
        return x.grad

    _agree(body)


def test_torch_arithmetic_functions_and_threshold():
    def body(lib):
        a = _t(lib, [[1.0, -2.0], [3.0, 0.5]], True)
        b = _t(lib, [[2.0, 4.0], [-1.0, 3.0]], True)
        out = [lib.mul(a, b), lib.sub(a, b, alpha=3), lib.div(a, b), lib.true_divide(a, 2.0), lib.clone(a),
               lib.atan2(a, b), lib.nn.functional.threshold(a, 0.75, -1.0)]
        sum(o.sum() for o in out).backward()
        return out + [a.grad, b.grad]

    _agree(body)


def test_detect_anomaly_names_the_op_whose_gradient_is_nan():
    x = cr.tensor([0.0, 1.0], requires_grad=True)
    (cr.sqrt(x) * 0).sum().backward()  # NaN in .grad, silently, as PyTorch outside anomaly mode
    assert np.isnan(x.grad.numpy()[0]) and not cr.autograd.is_anomaly_enabled()
    with cr.autograd.detect_anomaly():
        assert cr.autograd.is_anomaly_enabled()
        with pytest.raises(RuntimeError, match="Function 'sqrtBackward' returned nan values in its 0th output"):
            (cr.sqrt(x) * 0).sum().backward()
        with cr.autograd.detect_anomaly(check_nan=False):
            (cr.sqrt(x) * 0).sum().backward()
    assert not cr.autograd.is_anomaly_enabled()
    cr.autograd.set_detect_anomaly(True)
    try:
        with pytest.raises(RuntimeError, match="nan values"):
            cr.autograd.grad((cr.sqrt(x) * 0).sum(), x)
    finally:
        cr.autograd.set_detect_anomaly(False)
    assert not cr.autograd.is_anomaly_enabled()


def test_errors_for_a_changed_saved_value_and_a_freed_graph_carry_pytorchs_words():
    a = cr.ones(5, requires_grad=True)
    d1 = a + 1
    d2 = d1 ** 2
    with cr.no_grad():
        d1 += 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        cr.autograd.grad(d2.sum(), a)
    y = a.exp().sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        y.backward()


# -- gradcheck -----------------------------------------------------------------------------------------------------
def test_gradcheck_differentiates_the_inputs_that_require_grad_and_lets_func_register_hooks():
    def body(lib):
        def shifted_hook(x):
            y = x.clone()
            y.register_hook(lambda g: g + 1e-2)  # a wrong backward
            return y

        def scaled(x, k):
            return x * k.sum()

        x = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        k = lib.tensor([2.0, 3.0], dtype=lib.float64)
        with pytest.raises(RuntimeError):
            lib.autograd.gradcheck(shifted_hook, (x,))
        with pytest.raises(ValueError):
            lib.autograd.gradcheck(lambda t: t, (k,))
        return [lib.autograd.gradcheck(shifted_hook, (x,), raise_exception=False),
                lib.autograd.gradcheck(scaled, (x, k)), lib.autograd.gradgradcheck(scaled, (x, k))]

    assert _agree(body) == [False, True, True]


def test_gradcheck_warns_for_single_precision_and_refuses_outputs_whose_shape_jumps():
    def body(lib):
        x = lib.ones(1, dtype=lib.float32, requires_grad=True)
        with pytest.warns(UserWarning, match="double precision"):
            passed = lib.autograd.gradcheck(lambda t: t * 2, (x,), atol=1e-1)

        def jumps(t):
            return lib.cat([t, t]) if bool(lib.all(t >= 1)) else t

        with pytest.raises(AssertionError, match="same shape"):
            lib.autograd.gradcheck(jumps, (lib.ones(1, dtype=lib.float64, requires_grad=True),))
        return passed

    assert _agree(body) is True


# -- checkpoint, callbacks, Variable ---------------------------------------------------------------------------------
def test_a_leaf_hook_runs_once_on_the_whole_gradient_when_the_leaf_is_also_used_inside_a_checkpoint():
    # (test_checkpointing_without_reentrant_parameter_used_in_an_out) the hook ran on the inside part too: x4 there
    from torch.utils.checkpoint import checkpoint as torch_checkpoint

    from chainrule.utils.checkpoint import checkpoint as cr_checkpoint

    def body(lib):
        calls = []
        w = _t(lib, [1.0, 2.0], True)
        x = _t(lib, [3.0, 4.0], True)
        w.register_hook(lambda g: calls.append(1) or g * 2)
        h = w * x
        check = torch_checkpoint if lib is torch else cr_checkpoint
        check(lambda t: w * t, h, use_reentrant=False).sum().backward()
        return [w.grad, x.grad, len(calls)]

    assert _agree(body)[-1] == 1


def test_torch_utils_checkpoint_and_checkpoint_sequential():
    from torch.utils import checkpoint as torch_checkpoint

    from chainrule.utils import checkpoint as cr_checkpoint

    def body(lib):
        check = torch_checkpoint if lib is torch else cr_checkpoint
        layers = [lib.nn.Linear(3, 3).double() for _ in range(4)]
        with lib.no_grad():
            for k, layer in enumerate(layers):
                layer.weight.copy_(_t(lib, np.arange(9.0).reshape(3, 3) / (10 + k) - 0.3))
                layer.bias.fill_(0.1 * k)
        x = _t(lib, [[0.5, -1.0, 2.0]], True)
        out = check.checkpoint_sequential(lib.nn.Sequential(*layers), 2, x, use_reentrant=False)
        out.sum().backward()
        y = check.checkpoint(lambda a, b: (a * b).exp(), x, x, use_reentrant=False)
        (gy,) = lib.autograd.grad(y.sum(), x)
        return [out, x.grad, layers[0].weight.grad, y, gy]

    _agree(body)


def test_callbacks_queued_during_backward_run_at_its_end_even_one_queued_by_another():
    # (test_callback_adds_callback)
    def body(lib):
        called = []

        def final():
            called.append("final")

        def adds():
            called.append("adds")
            lib.autograd.Variable._execution_engine.queue_callback(final)

        class Marked(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                lib.autograd.Variable._execution_engine.queue_callback(adds)
                return g

        a = lib.ones(3, requires_grad=True)
        Marked.apply(a).sum().backward()
        lib.autograd.grad(Marked.apply(a).sum(), a)
        return called

    assert _agree(body) == ["adds", "final"] * 2


def test_variable_is_pytorchs_old_name_of_a_tensor():
    def body(lib):
        x = lib.autograd.Variable(lib.ones(2), requires_grad=True)
        (x * 2).sum().backward()
        return [x.grad, x.requires_grad, isinstance(x, lib.autograd.Variable), isinstance(lib.ones(1),
                                                                                           lib.autograd.Variable)]

    _agree(body)


# -- more of autograd.Function -------------------------------------------------------------------------------------
def test_function_backward_may_be_named_vjp_and_a_missing_one_is_named():
    # (test_custom_function_error)
    def body(lib):
        class VjpOnly(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 3

            @staticmethod
            def vjp(ctx, g):
                return g * 3

        class NoForward(lib.autograd.Function):
            @staticmethod
            def backward(ctx, g):
                return g

        class NoBackward(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

        class Both(VjpOnly):
            @staticmethod
            def backward(ctx, g):
                return g

        x = lib.ones(2, requires_grad=True)
        VjpOnly.apply(x).sum().backward()
        with pytest.raises(NotImplementedError, match="forward"):
            NoForward.apply(x)
        with pytest.raises(NotImplementedError, match="backward or vjp"):
            NoBackward.apply(x).sum().backward()
        with pytest.raises(RuntimeError, match="both 'backward' and 'vjp'"):
            Both.apply(x).sum().backward()
        return x.grad

    _agree(body)


def test_function_jvp_serves_forward_mode():
    # (test_custom_function_save_for_forward) PyTorch's forward mode needs the setup_context form; chainrule's jvp,
    # jacfwd and hessian use the same static jvp
    def body(lib):
        class Scaled(lib.autograd.Function):
            @staticmethod
            def forward(x, y, k):
                return k * x * y

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, y, ctx.k = inputs
                ctx.save_for_backward(x, y)
                ctx.save_for_forward(x, y)

            @staticmethod
            def jvp(ctx, x_t, y_t, _):
                x, y = ctx.saved_tensors
                return ctx.k * (y * x_t + x * y_t)

            @staticmethod
            def vjp(ctx, g):
                x, y = ctx.saved_tensors
                return ctx.k * g * y, ctx.k * g * x, None

        a, b = _t(lib, [1.0, 2.0]), _t(lib, [2.0, 5.0])
        _, tangent = lib.func.jvp(lambda x, y: Scaled.apply(x, y, 4), (a, b), (lib.ones(2, dtype=lib.float64),
                                                                              _t(lib, [0.5, -1.0])))
        return np.asarray(tangent)

    _agree(body)
    scaled = type("Cube", (cr.autograd.Function,), {
        "forward": staticmethod(lambda ctx, x: (ctx.save_for_forward(x), ctx.save_for_backward(x), x ** 3)[-1]),
        "jvp": staticmethod(lambda ctx, t: 3 * ctx.saved_tensors[0] ** 2 * t),
        "backward": staticmethod(lambda ctx, g: 3 * ctx.saved_tensors[0] ** 2 * g)})
    x = np.array([0.5, -2.0])
    np.testing.assert_allclose(cr.jacfwd(scaled.apply)(x), np.diag(3 * x ** 2))
    np.testing.assert_allclose(cr.hessian(lambda t: scaled.apply(t).sum())(x), np.diag(6 * x))


@pytest.mark.filterwarnings("ignore:divide by zero")  # (NumPy's, for the forward value 0 ** -1 = inf)
def test_zero_to_a_power_has_pytorchs_gradient_in_the_exponent():
    # (test_power_function) d/db 0 ** b: -inf for b < 0 (was nan), 0 for b >= 0
    def body(lib):
        b = _t(lib, [-1.0, 0.0, 1.0], True)
        (lib.zeros(3, dtype=lib.float64) ** b).sum().backward()
        c = _t(lib, [-1.0, 0.0, 1.0], True)
        (0 ** c).sum().backward()
        return [b.grad, c.grad]

    _agree(body)


def test_a_module_full_backward_hook_is_not_called_again_by_a_double_backward():
    # (test_full_backward_hook_double_backward) the second pass reaches the module's inputs, not its outputs
    def body(lib):
        x = _t(lib, [0.3], True)
        y = _t(lib, [0.9])
        loss = lib.nn.MSELoss()
        calls = []
        loss.register_full_backward_hook(lambda module, grad_input, grad_output: calls.append(len(grad_input)))
        (g,) = lib.autograd.grad(loss(x, y), x, create_graph=True)
        after_first = len(calls)
        (gg,) = lib.autograd.grad(g, x)
        loss(x, y).backward()  # a new forward and backward: called again
        return [after_first, len(calls), g, gg, x.grad]

    assert _agree(body)[:2] == [1, 2]


def test_torch_unique_with_inverse_and_counts():
    def body(lib):
        x = _t(lib, [3.0, 1.0, 3.0, 2.0], True)
        values, inverse, counts = lib.unique(x, return_inverse=True, return_counts=True)
        return [values, inverse, counts, inverse.requires_grad, counts.requires_grad]

    _agree(body)


def test_setup_context_gets_the_defaults_and_classmethods_serve_as_staticmethods():
    # (test_setup_context_when_forward_has_default_args)
    def body(lib):
        class Pow(lib.autograd.Function):
            @staticmethod
            def forward(x, y=3):
                return x ** y

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, ctx.y = inputs
                ctx.save_for_backward(x)

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * ctx.y * x ** (ctx.y - 1), None

        class PowByClass(lib.autograd.Function):
            @classmethod
            def forward(cls, x, y=3):
                return x ** y

            @classmethod
            def setup_context(cls, ctx, inputs, output):
                x, ctx.y = inputs
                ctx.save_for_backward(x)

            @classmethod
            def backward(cls, ctx, g):
                (x,) = ctx.saved_tensors
                return g * ctx.y * x ** (ctx.y - 1), None

        x = _t(lib, 2.0, True)
        out = []
        for fn in (Pow, PowByClass):
            y = fn.apply(x)
            out += [y, lib.autograd.grad(y, x)[0]]
        return out

    _agree(body)


def test_a_grad_of_another_shape_or_type_set_by_hand_is_refused_at_backward():
    # (test_grad_assignment) PyTorch refuses the assignment; chainrule broadcast it into the sum: 1 + 2 = 3 each
    x = cr.ones(2, 2, requires_grad=True)
    x.grad = cr.ones(1)
    with pytest.raises(RuntimeError, match=r"shape \(1,\).*shape \(2, 2\)"):
        (x * 2).sum().backward()
    y = cr.ones(2, requires_grad=True)
    y.grad = 0
    with pytest.raises(TypeError, match="Tensor or None"):
        (y * 2).sum().backward()
    z = cr.ones(2, requires_grad=True)
    z.grad = cr.tensor([1.0, 1.0])
    (z * 2).sum().backward()
    assert z.grad.tolist() == [3.0, 3.0]


def test_inference_mode_false_records_as_pytorchs_and_the_decorator_forms():
    # (TestAutogradInferenceMode) inference_mode was no_grad itself: inference_mode(False) stopped recording too
    def body(lib):
        out = [lib.is_inference_mode_enabled()]
        x = lib.ones(2, requires_grad=True)
        with lib.inference_mode():
            out += [lib.is_inference_mode_enabled(), (x * 2).requires_grad]
            with lib.inference_mode(False):
                out += [lib.is_inference_mode_enabled(), (x * 2).requires_grad]
        with lib.no_grad(), lib.inference_mode(False):
            out.append((x * 2).requires_grad)

        def square(t):
            out.append(lib.is_inference_mode_enabled())
            return t * t

        for decorated in (lib.inference_mode(square), lib.inference_mode(mode=square), lib.inference_mode(True)(square),
                          lib.inference_mode(mode=False)(square)):
            out.append(decorated(x).requires_grad)
        return out

    assert _agree(body)[:6] == [False, True, False, False, True, True]


# -- autograd.functional (test/autograd/test_functional.py) -------------------------------------------------------
def test_autograd_functional_records_inside_no_grad():
    # (test_vjp_no_grad) every result was silently zero inside no_grad
    def body(lib):
        F = lib.autograd.functional
        f = lambda x: (x ** 3).sum()  # noqa: E731
        g = lambda x: x ** 2  # noqa: E731
        x, v = _t(lib, [0.5, 1.5]), _t(lib, [1.0, -1.0])
        with lib.no_grad():
            plain = [F.jacobian(g, x), F.hessian(f, x), F.jvp(g, x, v)[1], F.hvp(f, x, v)[1], F.vhp(f, x, v)[1],
                     F.vjp(g, x, v)[1]]
            xg, vg = _t(lib, [0.5, 1.5], True), _t(lib, [1.0, -1.0], True)
            kept = F.vjp(g, xg, vg, create_graph=True)[1]
        return plain + [[r.requires_grad for r in plain], kept, kept.requires_grad]

    _agree(body)


def test_autograd_functional_strict_mode_refuses_outputs_independent_of_the_inputs():
    # (test_vjp_err_check_strict) strict=True was accepted and ignored: zeros where PyTorch raises
    def body(lib):
        F = lib.autograd.functional
        inp, v = _t(lib, [0.1, 0.2, 0.3, 0.4]), _t(lib, [1.0, 2.0, 3.0, 4.0])
        detached = lambda a: a.detach()  # noqa: E731
        unrelated = lambda a: a.long().double().requires_grad_().clone()  # noqa: E731
        calls = [lambda: F.vjp(detached, inp, v, strict=True), lambda: F.vjp(unrelated, inp, v, strict=True),
                 lambda: F.jacobian(detached, inp, strict=True), lambda: F.jvp(detached, inp, v, strict=True),
                 lambda: F.hessian(lambda a: a.detach().sum(), inp, strict=True),
                 lambda: F.vhp(lambda a: a.detach().sum(), inp, v, strict=True),
                 lambda: F.hessian(lambda a: (a.sum(), a.sum()), inp),
                 lambda: F.vhp(lambda a: (3 * a).sum(), inp, v, strict=True),  # a Jacobian independent of the input
                 lambda: F.jacobian(lambda a: a * 2, inp, strict=True, vectorize=True)]
        for call in calls:
            with pytest.raises(RuntimeError):
                call()
        return [F.vjp(detached, inp, v)[1], F.vjp(unrelated, inp, v)[1], F.jacobian(lambda a: a * 2, inp, strict=True)]

    _agree(body)


def test_an_integer_tensor_asked_to_require_grad_raises_pytorchs_runtime_error_and_a_type_error():
    # (test_set_requires_grad_only_for_floats)
    for make in (lambda: cr.ones(1, dtype=cr.int64).requires_grad_(),
                 lambda: cr.ones(1, dtype=cr.int32, requires_grad=True)):
        for kind in (RuntimeError, TypeError):
            with pytest.raises(kind, match="floating-point"):
                make()
    b = cr.tensor(1.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="floating"):  # (test_set_data_self_requires_grad)
        b.data = cr.tensor(3, dtype=cr.int64)
    a = cr.ones(1, dtype=cr.int64)
    a.requires_grad = False  # always allowed
    assert not a.requires_grad_(False).requires_grad


def test_backward_from_several_threads_into_one_leaf_loses_no_sum():
    # (TestMultithreadAutograd.test_simple_backward_same_input) the read-add-write of .grad raced
    import threading

    for _ in range(5):
        x = cr.ones(300, 300, requires_grad=True)

        def train():
            for _ in range(3):
                ((x * 2) * 0.5).sum().backward()

        threads = [threading.Thread(target=train) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        np.testing.assert_array_equal(x.grad.numpy(), 18.0)


@pytest.mark.oracle
def test_forward_ad_dual_tensors_as_pytorchs_forward_mode_tutorial():
    # torch.autograd.forward_ad was missing: "No module named 'chainrule.autograd.forward_ad'"
    torch = pytest.importorskip("torch")
    import chainrule.autograd.forward_ad as fwAD

    rng = np.random.default_rng(0)
    a, b, u = (rng.normal(size=(4, 3)) for _ in range(3))

    def fn(lib, x, y):
        return (x ** 2 + y.sin() * x).exp().sum(dim=1)

    results = {}
    for lib in (cr, torch):
        ad = cr.autograd.forward_ad if lib is cr else torch.autograd.forward_ad
        primal, tangent = lib.tensor(a), lib.tensor(u)
        with ad.dual_level():
            dual = ad.make_dual(primal, tangent)
            assert ad.unpack_dual(dual).tangent is tangent
            out = fn(lib, dual, lib.tensor(b))
            value, jvp = ad.unpack_dual(out)
        assert ad.unpack_dual(out).tangent is None  # the level is closed
        results[lib] = value.numpy(), jvp.numpy()
    np.testing.assert_allclose(results[cr][0], results[torch][0], rtol=1e-12)
    np.testing.assert_allclose(results[cr][1], results[torch][1], rtol=1e-12)
    w = cr.tensor(a, requires_grad=True)  # a dual of a tensor that requires grad passes gradients back to it
    with fwAD.dual_level():
        value, jvp = fwAD.unpack_dual(fn(cr, fwAD.make_dual(w, cr.tensor(u)), cr.tensor(b)))
        value.sum().backward()
    x = cr.tensor(a, requires_grad=True)
    fn(cr, x, cr.tensor(b)).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), x.grad.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match=r"make_dual: no dual level is open; .*with forward_ad.dual_level\(\)"):
        fwAD.make_dual(cr.tensor(a), cr.tensor(u))
    with fwAD.dual_level(), pytest.raises(ValueError, match=r"the tangent has shape \(3, 4\) but the tensor"):
        fwAD.make_dual(cr.tensor(a), cr.tensor(u.T))
