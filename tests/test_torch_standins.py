"""PyTorch names with nothing to do in chainrule (amp, compile, backends) are stand-ins that say what they do,
so a PyTorch program that uses them runs unchanged and gives the eager results."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule as cr


def _train(use_amp):
    cr.manual_seed(0)
    model = cr.nn.Sequential(cr.nn.Linear(3, 4), cr.nn.ReLU(), cr.nn.Linear(4, 1))
    model = cr.compile(model) if use_amp else model
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    scaler = cr.amp.GradScaler(enabled=use_amp)
    x, y = cr.tensor(np.linspace(-1, 1, 12).reshape(4, 3).tolist()), cr.ones(4, 1)
    for _ in range(3):
        opt.zero_grad()
        with cr.autocast(device_type="cpu", dtype=cr.float16, enabled=use_amp):
            loss = cr.nn.functional.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
    return [p.data.copy() for p in model.parameters()]


def test_an_amp_training_loop_runs_and_equals_the_plain_one():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        amp = _train(True)
    for a, b in zip(amp, _train(False)):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == np.float32


def test_autocast_says_once_that_it_does_nothing():
    cr.amp._warned[0] = False
    with pytest.warns(cr.PerformanceWarning, match="autocast does nothing"):
        with cr.amp.autocast("cuda", dtype=cr.float16):
            pass
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with cr.autocast("cpu"):  # once only
            pass

        @cr.amp.autocast("cpu", enabled=False)
        def f(x):
            return x * 2

        assert f(3) == 6


@pytest.mark.oracle
def test_grad_scaler_is_torchs_disabled_one():
    torch = pytest.importorskip("torch")
    theirs, ours = torch.amp.GradScaler("cpu", enabled=False), cr.amp.GradScaler("cpu")
    loss = torch.tensor(2.0)
    assert theirs.scale(loss) is loss and ours.scale(loss) is loss
    assert theirs.get_scale() == ours.get_scale() == 1.0
    assert theirs.is_enabled() == ours.is_enabled() is False


def test_compile_returns_the_model_or_function_itself():
    model = cr.nn.Linear(2, 2)
    assert cr.compile(model) is model
    assert cr.compile(model, mode="reduce-overhead", fullgraph=True) is model

    def f(x):
        return x + 1

    assert cr.compile(f) is f and cr.compile(dynamic=True)(f) is f
    with pytest.raises(TypeError, match="compile"):
        cr.compile(3)


def test_backends_flags_are_settable_and_nothing_is_available():
    assert not cr.backends.mps.is_available() and not cr.backends.mps.is_built()
    assert not cr.backends.cudnn.is_available()
    cr.backends.cudnn.benchmark = True
    cr.backends.cudnn.deterministic = True
    cr.backends.cuda.matmul.allow_tf32 = True
    assert cr.backends.cudnn.benchmark and cr.backends.cuda.matmul.allow_tf32
    cr.use_deterministic_algorithms(True)
    assert cr.are_deterministic_algorithms_enabled()
    cr.use_deterministic_algorithms(False)
    cr.backends.cudnn.benchmark = cr.backends.cudnn.deterministic = False


def test_star_import_does_not_shadow_compile():
    namespace: dict = {}
    exec("from chainrule import *", namespace)
    assert "compile" not in namespace


def test_float32_matmul_precision_is_remembered_and_checked():
    assert cr.get_float32_matmul_precision() == "highest"
    cr.set_float32_matmul_precision("high")  # nanoGPT's line: accepted, products stay float32
    try:
        assert cr.get_float32_matmul_precision() == "high"
        a = cr.tensor(np.full((2, 2), 1 + 2.0**-20, dtype=np.float32))
        assert float((a @ a)[0, 0]) == np.float32(2 * (1 + 2.0**-20) ** 2)  # (TF32 would round the inputs)
        with pytest.raises(ValueError, match="one of"):
            cr.set_float32_matmul_precision("fast")
    finally:
        cr.set_float32_matmul_precision("highest")


def test_cuda_backend_is_built_exactly_when_the_device_is_there():
    assert cr.backends.cuda.is_built() == cr.cuda.is_available()


def test_pin_memory_returns_a_copy_in_the_graph_as_pytorchs():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = x.pin_memory()
    assert y is not x and not np.shares_memory(y.detach().numpy(), x.detach().numpy()) and not y.is_pinned()
    (y * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_bfloat16_can_be_named_but_an_array_of_it_is_refused_with_the_fix():
    table = {"float32": cr.float32, "bfloat16": cr.bfloat16, "float16": cr.float16}  # nanoGPT's setup line
    assert repr(table["bfloat16"]) == "chainrule.bfloat16" and table["bfloat16"] != cr.float32
    assert not cr.cuda.is_bf16_supported()
    x = cr.ones(2, requires_grad=True)
    for make in (lambda: cr.zeros(2, dtype=cr.bfloat16), lambda: x.to(cr.bfloat16), lambda: x.bfloat16(),
                 lambda: cr.nn.Linear(2, 2).to(cr.bfloat16), lambda: cr.nn.Linear(2, 2).bfloat16(),
                 lambda: cr.tensor([1.0], dtype=cr.bfloat16), lambda: np.zeros(2, dtype=cr.bfloat16)):
        with pytest.raises(TypeError, match="no bfloat16 type; use chainrule.float32"):
            make()


def test_torch_cuda_amp_is_the_amp_stand_in():
    scaler = cr.cuda.amp.GradScaler(enabled=False)  # nanoGPT: torch.cuda.amp.GradScaler(enabled=(dtype == ...))
    w = cr.tensor([1.0, 2.0], requires_grad=True)
    opt = cr.optim.SGD([w], lr=0.5)
    scaler.scale((w * w).sum()).backward()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    np.testing.assert_allclose(w.detach().numpy(), [0.0, 0.0])
    assert cr.cuda.amp.autocast is cr.amp.autocast
