"""Layers, optimisers, transforms and the GPT on the device under test (the strict double of CuPy, or
``CHAINRULE_TEST_DEVICE=cuda``), each compared with the same program on the CPU: same values, every array on
the device, no hidden host copy (the double refuses implicit conversions and mixing with host arrays)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim
from chainrule.core.errors import PerformanceWarning
from device_setup import NAME, backend, host, on_device, to_device

TOL = 1e-9 if NAME == "strict" else 1e-4


def close(a, b, tol=TOL):
    np.testing.assert_allclose(host(a), host(b), rtol=tol, atol=tol)


@pytest.fixture(autouse=True)
def _device():
    backend()


def _train(model, batches, make_opt, steps, loss_fn, clip=None):
    opt = make_opt(model.parameters())
    losses = []
    for x, y in batches[:steps]:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        losses.append(loss)
    return losses, opt


OPTIMIZERS = {
    "SGD": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=1e-3),
    "Adam": lambda ps: optim.Adam(ps, lr=1e-2),
    "AdamW": lambda ps: optim.AdamW(ps, lr=1e-2, weight_decay=0.1, amsgrad=True),
    "RMSprop": lambda ps: optim.RMSprop(ps, lr=1e-2, momentum=0.5, centered=True),
    "Adagrad": lambda ps: optim.Adagrad(ps, lr=1e-1),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_an_mlp_trains_on_the_device_as_on_the_cpu(name):
    nn.manual_seed(0)
    cpu_model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.GELU(), nn.LayerNorm(8),
                              nn.Linear(8, 3)).to(np.float64)
    dev_model = copy.deepcopy(cpu_model).to(NAME)
    assert all(on_device(p) for p in dev_model.parameters())
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((5, 4)), rng.integers(0, 3, 5)) for _ in range(3)]
    dev_batches = [(cr.Tensor(x, device=NAME), to_device(y)) for x, y in batches]
    loss_fn = nn.functional.cross_entropy
    want, _ = _train(cpu_model, [(cr.Tensor(x), y) for x, y in batches], OPTIMIZERS[name], 3, loss_fn, clip=0.5)
    got, opt = _train(dev_model, dev_batches, OPTIMIZERS[name], 3, loss_fn, clip=0.5)
    for w, g in zip(want, got):
        assert on_device(g)
        close(g, w)
    for p, q in zip(cpu_model.parameters(), dev_model.parameters()):
        assert on_device(q) and on_device(q.grad)
        close(q, p)
    for state in opt.state.values():
        for v in state.values():
            if hasattr(v, "shape") and getattr(v, "ndim", 0):
                assert on_device(v), "optimiser state lives on its parameter's device"


def test_state_dicts_are_host_arrays_and_load_back_onto_the_device(tmp_path):
    nn.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2)).to(np.float64).to(NAME)
    opt = optim.AdamW(model.parameters(), lr=1e-2)
    x = cr.Tensor(np.random.default_rng(0).standard_normal((6, 3)), device=NAME)
    for _ in range(2):
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()
    sd, osd = model.state_dict(), opt.state_dict()
    # state_dict values are Tensors (sharing memory on the host, as PyTorch's), a device's values copied to the host
    assert all(type(v._data) is np.ndarray for v in sd.values())
    assert all(type(v) is np.ndarray for st in osd["state"].values() for v in st.values() if hasattr(v, "shape"))
    nn.save_checkpoint(tmp_path / "ck.npz", model=model, optimizer=opt) if hasattr(nn, "save_checkpoint") else None
    cr.save({"model": sd, "opt": osd}, tmp_path / "s.npz")
    # resume on the CPU
    cpu = copy.deepcopy(model).to("cpu")
    cpu.load_state_dict(cr.load(tmp_path / "s.npz")["model"])
    assert all(type(p._data) is np.ndarray for p in cpu.parameters())
    for p, q in zip(cpu.parameters(), model.parameters()):
        close(q, p)
    # and back on the device, through map_location
    loaded = cr.load(tmp_path / "s.npz", map_location=NAME)
    assert on_device(loaded["model"]["0.weight"])
    again = copy.deepcopy(cpu).to(NAME)
    again.load_state_dict(cr.load(tmp_path / "s.npz")["model"])  # host arrays onto the device's module
    opt2 = optim.AdamW(again.parameters(), lr=1e-2)
    opt2.load_state_dict(cr.load(tmp_path / "s.npz")["opt"])
    assert all(on_device(v) for st in opt2.state.values() for v in st.values() if getattr(v, "ndim", 0))
    assert all(on_device(p) for p in again.parameters())


def test_moves_are_differentiable_and_errors_are_clear():
    x = cr.tensor([1.0, 2.0, 3.0], dtype=np.float64, requires_grad=True)
    y = x.to(NAME)
    assert on_device(y) and y.device == NAME and str(y.device).startswith(NAME)
    assert f"device='{NAME}" in repr(y)  # printing copies the values to the host, on purpose
    (y.cpu() * y.cpu()).sum().backward()
    close(x.grad, 2 * x.detach())
    with pytest.raises(TypeError, match=r"t.cpu\(\).numpy\(\)"):
        y.numpy()
    with pytest.raises(TypeError, match=r"t.cpu\(\).numpy\(\)"):
        np.asarray(y)
    with pytest.raises(RuntimeError, match=rf"(multiply|mul).*one device.*{NAME}.*cpu|(multiply|mul).*one device.*cpu"):
        y * x
    assert cr.zeros_like(y).device == y.device and cr.randn(2, device=NAME).device == NAME
    assert y.new_zeros(3).device == y.device
    assert cr.ones(2, 2, device=NAME).device == NAME and cr.arange(3, device=NAME).device == NAME
    assert cr.eye(2, device=NAME).device == NAME and cr.full((2,), 3.0, device=NAME).device == NAME
    assert x.to(y).device == y.device and y.to(np.float32).device == y.device


def test_manual_seed_seeds_the_device():
    cr.manual_seed(5)
    a = backend().xp.random.random(3)
    cr.manual_seed(5)
    b = backend().xp.random.random(3)
    close(a, b, 0)


def test_the_functional_api_takes_and_returns_device_arrays():
    x = to_device(np.array([0.5, -1.0, 2.0]))

    def f(v):
        return (np.tanh(v) * v).sum()

    g = cr.grad(f)(x)
    assert on_device(g)
    close(g, cr.grad(f)(host(x)))
    h = cr.hessian(f)(x)
    assert on_device(h)
    close(h, cr.hessian(f)(host(x)))
    out, t = cr.jvp(np.sin, (x,), (to_device(np.ones(3)),))
    assert on_device(out) and on_device(t)
    close(t, np.cos(host(x)))
    vm = cr.vmap(lambda r: (r * r).sum())(to_device(np.arange(6.0).reshape(2, 3)))
    assert on_device(vm)
    close(vm, [5.0, 50.0])
    vg = cr.vmap(cr.grad(f))(to_device(np.arange(6.0).reshape(2, 3)))
    close(vg, cr.vmap(cr.grad(f))(np.arange(6.0).reshape(2, 3)))


def test_jit_replays_on_the_device():  # (more in tests/test_device_transforms.py)
    def f(a, b):
        return (np.exp(a) * b).sum()

    a, b = np.array([0.1, 0.2]), np.array([1.0, 3.0])
    jitted = cr.jit(cr.grad(f))
    want = cr.grad(f)(a, b)
    with pytest.warns(PerformanceWarning, match=r"write grad\(jit\(f\)\)"):  # as on the CPU: jit(grad(f)) runs as is
        for _ in range(2):
            got = jitted(to_device(a), to_device(b))
            assert on_device(got)
            close(got, want)
    replayed = cr.jit(f)
    for _ in range(3):  # the recording call, then replays
        got = cr.grad(replayed)(to_device(a), to_device(b))
        assert on_device(got)
        close(got, want)
    assert replayed.traces == 1


def test_a_few_gpt_training_steps_on_the_device_match_the_cpu():
    from chainrule.gpt.training import lm_loss

    config = nn.GPTConfig(vocab_size=11, context_length=8, d_model=16, n_heads=2, n_layers=2)
    cpu_model = nn.GPT(config, seed=0, dtype=np.float64)
    dev_model = copy.deepcopy(cpu_model).to(NAME)
    rng = np.random.default_rng(0)
    windows = [rng.integers(0, 11, (3, 9)) for _ in range(3)]
    results = []
    for model in (cpu_model, dev_model):
        opt = optim.AdamW(optim.weight_decay_groups(model, 0.1), lr=1e-2)
        losses = []
        for w in windows:
            opt.zero_grad()
            loss = lm_loss(model, w[:, :-1], w[:, 1:])  # host tokens: lm_loss moves them to the model's device
            loss.backward()
            optim.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            losses.append(loss)
        results.append(losses)
    for w, g in zip(*results):
        assert on_device(g)
        close(g, w)
    for p, q in zip(cpu_model.parameters(), dev_model.parameters()):
        close(q, p)
    a = cpu_model.generate(np.array([[1, 2]]), 6, top_k=4, seed=3)
    b = dev_model.generate(np.array([[1, 2]]), 6, top_k=4, seed=3)
    assert type(b) is np.ndarray and (a == b).all()
    assert (dev_model.generate(np.array([[1, 2]]), 6, top_k=4, seed=3, use_cache=False) == a).all()
    # a prompt given on the device (PyTorch's habit): the tokens come back there
    for prompt in (to_device(np.array([[1, 2]])), cr.Tensor(to_device(np.array([[1, 2]])))):
        c = dev_model.generate(prompt, 6, top_k=4, seed=3)
        assert on_device(c) and (host(c) == a).all()


def test_a_gpt_checkpoint_written_on_the_device_resumes_on_the_cpu_and_the_reverse(tmp_path):
    from chainrule.gpt import ByteTokenizer, TokenStream, TrainConfig, Trainer, write_tokens

    paths = write_tokens(["def f(x):\n    return x + 1\n" * 30], ByteTokenizer(), str(tmp_path))
    config = nn.GPTConfig(vocab_size=256, context_length=8, d_model=16, n_heads=2, n_layers=1)
    tconfig = TrainConfig(batch_size=2, max_steps=6, warmup_steps=1, lr=1e-2, eval_interval=3, eval_batches=1,
                          workers=1)
    streams = TokenStream(paths["train"]), TokenStream(paths["val"])

    def trainer(device):
        return Trainer(nn.GPT(config, seed=0, dtype=np.float64).to(device), *streams, tconfig)

    whole = trainer("cpu")
    for _ in range(4):
        whole.step()
    first = trainer(NAME)
    assert first.processes == 1
    for _ in range(2):
        first.step()
    first.save(tmp_path / "on_device.npz")
    on_cpu = trainer("cpu")
    on_cpu.resume(tmp_path / "on_device.npz")  # a checkpoint written on the device resumes on the CPU
    for _ in range(2):
        on_cpu.step()
    for p, q in zip(whole.model.parameters(), on_cpu.model.parameters()):
        close(q, p)
    on_cpu.save(tmp_path / "on_cpu.npz")
    back = trainer(NAME)
    back.resume(tmp_path / "on_cpu.npz")  # and the reverse
    assert all(on_device(p) for p in back.model.parameters())
    assert all(on_device(v) for st in back.optimizer.state.values() for v in st.values() if getattr(v, "ndim", 0))
    loss, _ = back.step()
    want, _ = whole.step()
    assert abs(loss - want) < 1e-6


def test_gpt_cli_validates_the_device_flag(capsys):
    from chainrule.cli import main

    if cr.cuda.is_available():
        pytest.skip("this machine has the device")
    code = main(["gpt", "sample", "--checkpoint", "nowhere.npz", "--device", "cuda"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and "--device cuda: device 'cuda' is not available" in err[0]


def test_a_function_the_device_lacks_raises_naming_the_op_and_the_device(monkeypatch):
    import types

    from chainrule import special

    x = cr.Tensor(np.array([1.5, 2.5]), device=NAME, requires_grad=True)
    special.gammaln(x)  # the device's own (cupyx.scipy.special on a GPU)
    monkeypatch.setattr(backend(), "_special", lambda: types.SimpleNamespace())  # a device without it
    with pytest.raises(TypeError, match=rf"gammaln: not available on the device '{NAME}'"):
        special.gammaln(x)


def test_masks_on_the_device_work_as_on_the_cpu():
    import chainrule.nn.functional as F

    rng = np.random.default_rng(3)
    x0, q0 = rng.standard_normal((3, 4)), rng.standard_normal((1, 3, 4))
    keep = np.array([[True, False, True, True]] * 3)

    def run(place):
        x = cr.Tensor(place(x0), requires_grad=True)
        q = cr.Tensor(place(q0), requires_grad=True)
        mask = place(keep)
        out = (cr.masked_fill(x, ~mask, 2.5).sum() + F.masked_softmax(x, mask).square().sum()
               + F.scaled_dot_product_attention(q, q, q, attn_mask=place(keep[:, :3])).sum())
        out.backward()
        return out, x.grad, q.grad

    for want, got in zip(run(lambda a: a), run(to_device)):
        assert on_device(got)
        close(got, want)
