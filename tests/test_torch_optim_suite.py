"""PyTorch's own optimizer test database (``optim_db``) run on ``chainrule.optim`` through an adapter, in float64.

Every ``OptimizerInput`` of ``torch.testing._internal.common_optimizers.optim_db`` (with the ``foreach`` / ``fused``
/ ``differentiable`` variants PyTorch's tests add) is run on the same small model in both libraries, one parameter
group and two: the parameters after each step, the state dict (state names and values, group entries), a
``state_dict`` round trip and a PyTorch checkpoint loaded into chainrule must all agree. The gradients come from
one fixed loss computed by torch, so only the optimisers are compared. Every ``ErrorOptimizerInput`` must raise
(or is one of the deliberate, tested differences listed in ``ACCEPTED``). Then the schedulers of
``torch.optim.lr_scheduler``: learning rates and momenta over 30 steps, and ``state_dict`` round trips.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

# optim_db is read in a child process: importing torch.testing._internal changes this process for good (it freezes
# torch.backends' flags, which other tests set, and wraps TorchScript calls), so the inputs come back as plain data
_READ_OPTIM_DB = """
import sys, torch
from torch.testing._internal import common_optimizers as c
inputs, errors = [], []
for info in c.optim_db:
    name = info.optim_cls.__name__
    for k, oi in enumerate(c._get_optim_inputs_including_global_cliquey_kwargs("cpu", torch.float64, info)):
        inputs.append((name, k, oi.desc, oi.kwargs))
    for e in info.optim_error_inputs_func(device="cpu", dtype=torch.float64):
        oi = e.optimizer_error_input
        errors.append((name, oi.desc, oi.params, oi.kwargs, e.error_type, e.error_regex))
torch.save((inputs, errors), sys.argv[1])
"""


def _read_optim_db():
    import os
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "optim_db.pt")
        done = subprocess.run([sys.executable, "-c", _READ_OPTIM_DB, path], capture_output=True, text=True)
        if done.returncode != 0:
            if "ModuleNotFoundError" in done.stderr:  # (a torch without its testing package: as importorskip)
                pytest.skip("torch.testing._internal.common_optimizers is not installed", allow_module_level=True)
            raise RuntimeError(f"reading PyTorch's optim_db failed:\n{done.stderr[-2000:]}")
        return torch.load(path, weights_only=False)


OPTIM_INPUTS, OPTIM_ERRORS = _read_optim_db()

RNG = np.random.default_rng(0)
X, Y = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 2))
VALUES = [RNG.standard_normal((2, 3)), RNG.standard_normal(2), RNG.standard_normal(3), RNG.standard_normal((3, 2))]
SWITCHES = {"foreach", "fused", "differentiable", "capturable"}  # PyTorch's kernel choices, not kept by chainrule
TOL = dict(rtol=1e-9, atol=1e-12)


def _loss_and_gradients(values: list[np.ndarray]) -> tuple[float, list[np.ndarray]]:
    """One fixed loss and its gradient at ``values`` (torch computes them; both optimisers get the same arrays)."""
    w, b, c, d = (torch.tensor(np.asarray(v, np.float64), requires_grad=True) for v in values)
    pred = torch.tanh(torch.tensor(X) @ w.T + b)
    loss = ((pred - torch.tensor(Y)) ** 2).sum() + 0.1 * (w**4).sum() + (torch.sin(c) * c).sum()
    loss = loss + 0.3 * (d**2).sum() + 0.1 * (d[:2] @ w[:, :2]).sum()
    loss.backward()
    return loss.detach().item(), [t.grad.numpy().astype(v.dtype) for t, v in zip((w, b, c, d), values)]


def _ours(v):
    """A torch value as chainrule's user would write it."""
    if isinstance(v, torch.Tensor):
        return cr.tensor(v.detach().numpy().copy())
    if isinstance(v, (list, tuple)):
        return type(v)(_ours(x) for x in v)
    return {k: _ours(x) for k, x in v.items()} if isinstance(v, dict) else v


def _plain(v):
    """A torch state dict with NumPy arrays and Python numbers (a checkpoint read without torch)."""
    if isinstance(v, torch.Tensor):
        return v.detach().numpy().copy() if v.ndim else v.item()
    if isinstance(v, (list, tuple)):
        return type(v)(_plain(x) for x in v)
    return {k: _plain(x) for k, x in v.items()} if isinstance(v, dict) else v


class Run:
    """One optimiser on the four parameters, in torch or in chainrule, in the given layout of groups."""

    def __init__(self, name, kwargs, layout, lib, values=VALUES, named=False):
        self.name, self.lib = name, lib
        make = (lambda v: torch.nn.Parameter(torch.tensor(v.copy()))) if lib == "torch" else \
            (lambda v: nn.Parameter(v.copy()))
        self.params = [make(v) for v in values]
        self.used = sorted({i for idx, _ in layout for i in idx})
        pick = (lambda i: (f"p{i}", self.params[i])) if named else (lambda i: self.params[i])
        # (a float32 Tensor lr is given to torch in float64: PyTorch does some arithmetic on it in float32, e.g.
        # Muon's 1 - lr * weight_decay, chainrule reads the value it holds as a float, as PyTorch's float64 does)
        convert = (lambda v: {k: (x.double() if isinstance(x, torch.Tensor) else x) for k, x in v.items()}) \
            if lib == "torch" else _ours
        groups = [{"params": [pick(i) for i in idx], **convert(extra)} for idx, extra in layout]
        self.opt = getattr(torch.optim if lib == "torch" else optim, name)(groups, **convert(kwargs))

    def values(self):
        return [p.detach().numpy() if self.lib == "torch" else p.numpy() for p in self.params]

    def _set_grads(self, step):
        wrap = torch.tensor if self.lib == "torch" else cr.tensor
        loss, grads = _loss_and_gradients(self.values())
        for i, g in enumerate(grads):
            if i in self.used:
                self.params[i].grad = None if (i == 2 and step == 3) else wrap(g)  # (a step without one gradient)
        return loss

    def step(self, k):
        if self.name == "LBFGS":
            def closure():
                self.opt.zero_grad()
                loss = np.asarray(self._set_grads(-1), self.values()[0].dtype)  # (a loss in the parameters' dtype)
                return torch.tensor(loss) if self.lib == "torch" else cr.tensor(loss)
            self.opt.step(closure)
        else:
            self.opt.zero_grad()
            self._set_grads(k)
            self.opt.step()


def _layouts(name, kwargs):
    if name == "LBFGS":  # (one group only)
        return [[([0, 1, 2, 3], {})]]
    second = {} if isinstance(kwargs.get("lr"), torch.Tensor) else {"lr": kwargs.get("lr", 1e-3) * 0.5}
    if name == "Muon":  # (matrices only)
        return [[([0, 3], {})], [([0], {}), ([3], second)]]
    return [[([0, 1, 2, 3], {})], [([0, 1], {}), ([2, 3], second)]]


def _same_state(ours, theirs):
    ts, cs = theirs.state_dict(), ours.state_dict()
    assert set(cs["state"]) == set(ts["state"])
    for i, entry in ts["state"].items():
        assert set(cs["state"][i]) == set(entry), i
        for key, value in entry.items():
            if key == "al":  # (LBFGS's scratch of the two-loop recursion: differences of nearly equal numbers)
                continue
            mine = cs["state"][i][key]
            if isinstance(value, list):  # (LBFGS's history)
                assert len(mine) == len(value)
                for a, b in zip(mine, value):
                    np.testing.assert_allclose(np.asarray(a, float), _plain(b), **TOL)
            else:
                np.testing.assert_allclose(np.asarray(mine, float), _plain(value), **TOL, err_msg=key)
    for tg, cg in zip(ts["param_groups"], cs["param_groups"], strict=True):
        assert set(cg) == set(tg) - SWITCHES
        for key in set(cg) - {"params"}:
            if isinstance(tg[key], (str, type(None))) or key == "param_names":
                assert cg[key] == tg[key], key
            else:  # (numbers, Tensors, tuples of them; a None in a tuple is a nan here: Adafactor's eps)
                a, b = (np.asarray(_plain(v), float) for v in (cg[key], tg[key]))
                assert np.allclose(a, b, equal_nan=True), key


def _close(ours, theirs):
    for a, b in zip(ours.values(), theirs.values()):
        np.testing.assert_allclose(a, b, **TOL)


@pytest.mark.parametrize("name, kwargs", [pytest.param(name, kwargs, id=f"{name}-{k}-{desc}")
                                          for name, k, desc, kwargs in OPTIM_INPUTS])
def test_optim_db_input(name, kwargs):
    if name == "SparseAdam":  # chainrule has no sparse gradients: refused, with the way out
        with pytest.raises(NotImplementedError, match="SparseAdam: chainrule has no sparse gradients.*optim.Adam"):
            Run(name, kwargs, [([0, 1, 2, 3], {})], "chainrule")
        return
    if kwargs.get("differentiable"):  # chainrule's steps are outside the graph: refused, with the way out
        with pytest.raises(NotImplementedError, match=rf"{name}\(differentiable=True\).*outside the graph"):
            Run(name, kwargs, [([0, 1, 2, 3], {})], "chainrule")
        return
    for layout in _layouts(name, kwargs):
        theirs, ours = Run(name, kwargs, layout, "torch"), Run(name, kwargs, layout, "chainrule")
        for k in range(6):
            theirs.step(k)
            ours.step(k)
            _close(ours, theirs)
        _same_state(ours.opt, theirs.opt)
        resumed = Run(name, kwargs, layout, "chainrule", values=ours.values())
        resumed.opt.load_state_dict(copy.deepcopy(ours.opt.state_dict()))
        ported = Run(name, kwargs, layout, "chainrule", values=ours.values())
        ported.opt.load_state_dict(_plain(theirs.opt.state_dict()))  # a PyTorch checkpoint, read without torch
        for k in range(6, 10):
            for run in (theirs, resumed, ported):
                run.step(k)
            _close(resumed, theirs)
            _close(ported, theirs)


# PyTorch's error inputs chainrule answers differently, on purpose (each is tested below):
ACCEPTED = {
    "invalid param type": "a single Tensor is taken as a list of one (test_a_single_tensor_is_one_parameter)",
    "lr as Tensor doesn't work with foreach & not capturable": "a limit of PyTorch's kernels (test_tensor_hyper...)",
    "betas must be either both floats or both Tensors": "a limit of PyTorch's kernels (test_tensor_hyper...)",
    "betas\\[0\\] as a Tensor is not supported for capturable=False and foreach=True": "the same",
}




def _our_params(p, memo):
    if isinstance(p, torch.Tensor):
        if id(p) not in memo:
            v = (p.to_dense() if p.is_sparse else p).detach().numpy().copy()
            memo[id(p)] = cr.tensor(v, requires_grad=True) if p.is_complex() else nn.Parameter(v)
        return memo[id(p)]
    if isinstance(p, (list, tuple)):
        return type(p)(_our_params(x, memo) for x in p)
    if isinstance(p, dict):
        return {k: (_our_params(x, memo) if k == "params" else _ours(x)) for k, x in p.items()}
    return p


@pytest.mark.parametrize("name, desc, params, kwargs, error_type", [
    pytest.param(name, desc, params, kwargs, error_type, id=f"{name}-{desc}")
    for name, desc, params, kwargs, error_type, _ in OPTIM_ERRORS if desc not in ACCEPTED])
def test_optim_db_error_input(name, desc, params, kwargs, error_type):
    params = [nn.Parameter(v) for v in (VALUES[0], VALUES[3].T)] if params is None else _our_params(params, {})
    # PyTorch only warns of a parameter twice in one group; chainrule refuses it (as PyTorch says it will)
    expected = ValueError if error_type is UserWarning else error_type
    if "complex" in desc:
        expected = TypeError  # (chainrule refuses a complex parameter when the optimiser is made, not at the step)
    if name == "SparseAdam":
        expected = NotImplementedError  # (refused whatever is passed: test_optim_db_input)
    with pytest.raises(expected, match=name) as raised:
        opt = getattr(optim, name)(params, **_ours(kwargs))
        for group in opt.param_groups:
            for p in group["params"]:
                p.grad = cr.tensor(np.ones(p.shape))
        opt.step((lambda: 0.0) if name == "LBFGS" else None)
    assert len(str(raised.value)) > 30


# -- focused regression tests -----------------------------------------------------------------------------------


def test_asgd_keeps_eta_and_mu_in_the_default_dtype():
    """PyTorch keeps ASGD's eta and mu in tensors of the default dtype (float32): chainrule kept Python floats,
    and the trajectories parted by ~1e-9 from the first step on."""
    theirs = Run("ASGD", dict(lr=0.02, t0=2), [([0, 1, 2, 3], {})], "torch")
    ours = Run("ASGD", dict(lr=0.02, t0=2), [([0, 1, 2, 3], {})], "chainrule")
    for k in range(8):
        theirs.step(k)
        ours.step(k)
        for a, b in zip(ours.values(), theirs.values()):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    assert ours.opt.state[0]["eta"] == theirs.opt.state[theirs.params[0]]["eta"].item()


def test_adam_takes_decoupled_weight_decay():
    """PyTorch's ``Adam(decoupled_weight_decay=True)`` is AdamW; chainrule's Adam refused the keyword."""
    kwargs = dict(lr=0.05, weight_decay=0.2, decoupled_weight_decay=True)
    theirs = Run("Adam", kwargs, [([0, 1, 2, 3], {})], "torch")
    ours = Run("Adam", kwargs, [([0, 1, 2, 3], {})], "chainrule")
    twin = Run("AdamW", dict(lr=0.05, weight_decay=0.2), [([0, 1, 2, 3], {})], "chainrule")
    for k in range(5):
        for run in (theirs, ours, twin):
            run.step(k)
        _close(ours, theirs)
        _close(twin, theirs)
    assert ours.opt.param_groups[0]["decoupled_weight_decay"] is True
    assert twin.opt.param_groups[0]["decoupled_weight_decay"] is True
    assert optim.Adam([nn.Parameter(np.ones(2))]).param_groups[0]["decoupled_weight_decay"] is False


def test_named_parameters_are_taken_with_their_names():
    """``optim.AdamW(model.named_parameters())`` (PyTorch >= 2.6) failed: 'parameter 0 is a tuple'."""
    model = nn.Linear(3, 2, rng=0)
    twin = torch.nn.Linear(3, 2)
    opt = optim.AdamW(model.named_parameters(), lr=0.1)
    topt = torch.optim.AdamW(twin.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == topt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]
    (model(np.ones((1, 3))) ** 2).sum().backward()
    opt.step()
    again = optim.AdamW(nn.Linear(3, 2, rng=0).named_parameters(), lr=0.1)
    again.load_state_dict(opt.state_dict())
    assert again.param_groups[0]["param_names"] == ["weight", "bias"]
    w, b = (nn.Parameter(np.ones(2)) for _ in range(2))
    with pytest.raises(ValueError, match="all optimizer params should be with/without names"):
        optim.SGD([("w", w), b], lr=0.1)
    with pytest.raises(ValueError, match="all optimizer param groups should be with/without names"):
        optim.SGD([{"params": [w]}, {"params": [("b", b)]}], lr=0.1)


def test_a_tensor_lr_is_read_at_each_step():
    """A one-element Tensor lr (PyTorch's spelling) crashed LBFGS; it is read as a float at each step, so changing
    it in place changes the next step, as in PyTorch."""
    lr = cr.tensor(0.5)
    w = nn.Parameter(np.array([1.0, -2.0]))
    opt = optim.SGD([w], lr=lr)
    w.grad = cr.tensor(np.ones(2))
    opt.step()
    lr.fill_(0.25)
    opt.step()
    np.testing.assert_allclose(w.numpy(), [0.25, -2.75])
    v = nn.Parameter(np.zeros(2))
    opt = optim.LBFGS([v], lr=cr.tensor(1.0, dtype=np.float64))

    def closure():
        opt.zero_grad()
        loss = ((v - 3.0) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(v.numpy(), [3.0, 3.0])
    with pytest.raises(ValueError, match="Adam: Tensor lr must be 1-element.*shape \\(2,\\)"):
        optim.Adam([w], lr=cr.tensor([0.1, 0.1]))


def test_tensor_hyperparameters_pytorch_refuses_with_foreach_are_computed():
    """PyTorch's foreach kernels refuse a Tensor lr or Tensor betas (ACCEPTED above); chainrule computes them as
    the floats they hold."""
    kwargs = dict(lr=cr.tensor(0.01, dtype=np.float64), betas=(0.9, cr.tensor(0.99, dtype=np.float64)),
                  foreach=True)
    ours = Run("Adam", {}, [([0, 1, 2, 3], {})], "chainrule")
    ours.opt = optim.Adam(ours.params, **kwargs)
    theirs = Run("Adam", dict(lr=0.01, betas=(0.9, 0.99)), [([0, 1, 2, 3], {})], "torch")
    for k in range(4):
        ours.step(k)
        theirs.step(k)
        _close(ours, theirs)


def test_a_single_tensor_is_one_parameter():
    """PyTorch refuses ``SGD(w)`` (it would iterate over w's rows); chainrule takes it as ``SGD([w])``."""
    w = nn.Parameter(np.ones((2, 2)))
    opt = optim.SGD(w, lr=0.1)
    assert opt.param_groups[0]["params"] == [w]


def test_pytorch_checkpoints_load():
    """A ``torch.optim`` state dict holds PyTorch's implementation switches (foreach, fused, capturable,
    differentiable) in each group: chainrule refused it as 'saved from another optimiser'."""
    theirs = Run("SGD", dict(lr=0.1, momentum=0.9), [([0, 1, 2, 3], {})], "torch")
    ours = Run("SGD", dict(lr=0.1, momentum=0.9), [([0, 1, 2, 3], {})], "chainrule")
    theirs.step(0)
    state = _plain(theirs.opt.state_dict())
    assert {"foreach", "differentiable", "fused"} <= set(state["param_groups"][0])
    ours.opt.load_state_dict(state)
    np.testing.assert_allclose(ours.opt.state[0]["momentum_buffer"],
                               theirs.opt.state[theirs.params[0]]["momentum_buffer"].numpy())
    state["param_groups"][0]["differentiable"] = True
    with pytest.raises(NotImplementedError, match="SGD.load_state_dict: group 0 was saved with differentiable"):
        ours.opt.load_state_dict(state)


def test_state_dict_leaves_out_parameters_without_state():
    """Plain SGD keeps no state: PyTorch's state dict has none, chainrule's had an empty entry per parameter."""
    theirs = Run("SGD", dict(lr=0.1), [([0, 1, 2, 3], {})], "torch")
    ours = Run("SGD", dict(lr=0.1), [([0, 1, 2, 3], {})], "chainrule")
    theirs.step(0)
    ours.step(0)
    assert ours.opt.state_dict()["state"] == theirs.opt.state_dict()["state"] == {}


def test_lbfgs_keeps_its_scratch_in_the_state():
    """PyTorch's LBFGS keeps ``al`` (the two-loop recursion's coefficients, ``history_size`` long) in its state."""
    theirs = Run("LBFGS", {}, [([0, 1, 2, 3], {})], "torch")
    ours = Run("LBFGS", {}, [([0, 1, 2, 3], {})], "chainrule")
    theirs.step(0)
    ours.step(0)
    mine, torchs = ours.opt.state[0]["al"], theirs.opt.state[theirs.params[0]]["al"]
    assert len(mine) == len(torchs) == 100
    assert [a is None for a in mine] == [a is None for a in torchs]


@pytest.mark.parametrize("shape, kwargs", [
    ((3, 2), dict(lr=0.02, adjust_lr_fn="match_rms_adamw", nesterov=False)),
    ((16, 8), dict(lr=0.02, momentum=0.6, adjust_lr_fn="original", weight_decay=0.0)),
    ((8, 16), dict(lr=0.01, eps=1e-5, ns_steps=3)),
])
def test_muon_matches_torch(shape, kwargs):
    """Muon was missing; its Newton-Schulz iterations run in bfloat16 as PyTorch's (emulated: float32 products
    rounded), so the steps agree to float64 rounding."""
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal(shape)
    w, tw = nn.Parameter(w0.copy()), torch.nn.Parameter(torch.tensor(w0.copy()))
    opt, topt = optim.Muon([w], **kwargs), torch.optim.Muon([tw], **kwargs)
    for _ in range(6):
        g = np.sin(3 * w.numpy()) + w.numpy() ** 3
        w.grad, tw.grad = cr.tensor(g), torch.tensor(np.sin(3 * tw.detach().numpy()) + tw.detach().numpy() ** 3)
        opt.step()
        topt.step()
        np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(opt.state[0]["momentum_buffer"], topt.state[tw]["momentum_buffer"].numpy(), rtol=1e-12)


def test_muon_newton_schulz_is_pytorchs_bit_for_bit():
    from torch.optim._muon import _zeropower_via_newtonschulz

    from chainrule.optim.muon import NS_COEFFICIENTS, newton_schulz

    g = np.random.default_rng(2).standard_normal((48, 20))
    theirs = _zeropower_via_newtonschulz(torch.tensor(g), NS_COEFFICIENTS, 5, 1e-7).float().numpy()
    assert np.array_equal(newton_schulz(g, NS_COEFFICIENTS, 5, 1e-7), theirs)


def test_muon_refuses_what_it_cannot_train():
    with pytest.raises(ValueError, match="Muon only supports 2D parameters.*parameter 1 has shape \\(2,\\).*AdamW"):
        optim.Muon([nn.Parameter(np.ones((2, 2))), nn.Parameter(np.ones(2))])
    with pytest.raises(ValueError, match="Muon: adjust learning rate function 'arbitrary' is not supported"):
        optim.Muon([nn.Parameter(np.ones((2, 2)))], adjust_lr_fn="arbitrary")


def _hooked_log(lib):
    """The calls PyTorch's optimiser hooks see in one step, state_dict and load_state_dict, in ``lib``."""
    mod, opt_mod = (torch, torch.optim) if lib == "torch" else (cr, optim)
    p = (torch.nn.Parameter(torch.ones(2, dtype=torch.float64)) if lib == "torch" else nn.Parameter(np.ones(2)))
    opt = opt_mod.SGD([p], lr=0.1)
    log = []

    def closure():
        log.append("closure")
        return 0.0

    opt.register_step_pre_hook(lambda o, args, kwargs: log.append(("pre", len(args), args[0] is o, dict(kwargs))))
    opt.register_step_pre_hook(lambda o, args, kwargs: (args, {"closure": closure}))  # replaces the arguments
    opt.register_step_post_hook(lambda o, args, kwargs: log.append(("post", sorted(kwargs))))
    opt.register_state_dict_pre_hook(lambda o: log.append("state_dict pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    opt.register_state_dict_pre_hook(lambda o: log.append("first"), prepend=True)
    opt.register_load_state_dict_pre_hook(lambda o, sd: log.append(sorted(sd)) or {k: sd[k] for k in sd
                                                                                    if k != "extra"})
    handle = opt.register_load_state_dict_post_hook(lambda o: log.append("loaded"))
    p.grad = mod.tensor(np.ones(2))
    opt.step()
    state = opt.state_dict()
    opt.load_state_dict(state)
    handle.remove()
    opt.load_state_dict(state)
    return log, sorted(state), p.detach().numpy() if lib == "torch" else p.numpy()


def test_optimizer_hooks_are_pytorchs():
    """PyTorch's ``register_step_pre_hook`` and the five others were missing (AttributeError)."""
    ours, theirs = _hooked_log("chainrule"), _hooked_log("torch")
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1] == ["extra", "param_groups", "state"]
    np.testing.assert_array_equal(ours[2], theirs[2])


def test_global_step_hooks_and_a_subclass_step_run_them_once():
    calls = []

    class Counting(optim.SGD):
        def step(self, closure=None):  # a user's subclass calling the base step: the hooks run once
            calls.append("step")
            return super().step(closure)

    p = nn.Parameter(np.ones(2))
    opt = Counting([p], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    handle = optim.register_optimizer_step_post_hook(lambda o, a, k: calls.append(("global post", type(o).__name__)))
    try:
        p.grad = cr.tensor(np.ones(2))
        opt.step()
    finally:
        handle.remove()
    opt.step()
    assert calls == ["pre", "step", ("global post", "Counting"), "pre", "step"]


def test_a_replayed_step_runs_the_step_hooks():
    """``jit_step`` updates without calling ``step``: the step hooks run around the replayed update too."""
    model = nn.Linear(3, 1, dtype=np.float64, rng=0)
    opt = optim.SGD(model.parameters(), lr=0.1)
    seen = []
    opt.register_step_post_hook(lambda o, args, kwargs: seen.append(o.param_groups[0]["lr"]))
    step = cr.jit_step(lambda x: (model(x) ** 2).sum(), opt)
    x = cr.tensor(np.ones((2, 3)))
    for _ in range(3):
        step(x)
    assert seen == [0.1, 0.1, 0.1]
    opt.register_step_pre_hook(lambda o, args, kwargs: (args, kwargs))
    with pytest.raises(cr.JitError, match="a step pre-hook of the optimiser returned new arguments"):
        step(x)


# -- learning-rate schedulers -----------------------------------------------------------------------------------

EPOCHS = 30
METRICS = [5, 4, 4.5, 4.2, 4.3, 4.1, 4.4, 3.0, 3.1, 3.2, 3.3, 3.05, 3.4, 2.0, 2.1, 2.2, 2.3, 2.4, 2.5, 1.0,
           1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0]


def _sched_opt(lib, kind):
    """An optimiser of two groups (rates 0.1 and 0.05) in ``lib``, SGD with momentum or Adam (betas)."""
    make = (lambda n: torch.nn.Parameter(torch.ones(n, dtype=torch.float64))) if lib == "torch" else \
        (lambda n: nn.Parameter(np.ones(n)))
    groups = [{"params": [make(2)]}, {"params": [make(3)], "lr": 0.05}]
    mod = torch.optim if lib == "torch" else optim
    return mod.SGD(groups, lr=0.1, momentum=0.9) if kind == "SGD" else mod.Adam(groups, lr=0.1)


def _s(lib):
    return torch.optim.lr_scheduler if lib == "torch" else optim.lr_scheduler


SCHEDULES = {  # name: (make(lib, optimiser), takes step(epoch) as a closed form)
    "StepLR": (lambda L, o: _s(L).StepLR(o, step_size=3, gamma=0.5), True),
    "MultiStepLR": (lambda L, o: _s(L).MultiStepLR(o, milestones=[3, 7, 7, 12], gamma=0.3), True),
    "ExponentialLR": (lambda L, o: _s(L).ExponentialLR(o, gamma=0.9), True),
    "CosineAnnealingLR": (lambda L, o: _s(L).CosineAnnealingLR(o, T_max=10, eta_min=0.001), True),
    "CosineAnnealingWarmRestarts": (
        lambda L, o: _s(L).CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.001), True),
    "CyclicLR-triangular2": (lambda L, o: _s(L).CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=3,
                                                         step_size_down=5, mode="triangular2"), True),
    "CyclicLR-exp_range": (lambda L, o: _s(L).CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4,
                                                       mode="exp_range", gamma=0.9), True),
    "CyclicLR-scale_fn": (lambda L, o: _s(L).CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4, cycle_momentum=False,
                                                      scale_fn=lambda x: 0.5**x, scale_mode="iterations"), True),
    "OneCycleLR": (lambda L, o: _s(L).OneCycleLR(o, max_lr=0.5, total_steps=EPOCHS + 1), True),
    "OneCycleLR-three_phase": (lambda L, o: _s(L).OneCycleLR(o, max_lr=[0.5, 0.3], epochs=EPOCHS + 1,
                                                             steps_per_epoch=1, three_phase=True,
                                                             anneal_strategy="linear"), True),
    "LinearLR": (lambda L, o: _s(L).LinearLR(o, start_factor=0.2, total_iters=6), True),
    "ConstantLR": (lambda L, o: _s(L).ConstantLR(o, factor=0.5, total_iters=4), True),
    "PolynomialLR": (lambda L, o: _s(L).PolynomialLR(o, total_iters=10, power=2.0), True),
    "LambdaLR": (lambda L, o: _s(L).LambdaLR(o, [lambda e: 0.95**e, lambda e: 1 / (e + 1)]), True),
    "MultiplicativeLR": (lambda L, o: _s(L).MultiplicativeLR(o, lambda e: 0.9), False),
    "SequentialLR": (lambda L, o: _s(L).SequentialLR(
        o, [_s(L).ConstantLR(o, factor=0.1, total_iters=2), _s(L).CosineAnnealingLR(o, T_max=8),
            _s(L).StepLR(o, 4, 0.5)], milestones=[3, 12]), False),
    "ChainedScheduler": (lambda L, o: _s(L).ChainedScheduler(
        [_s(L).LinearLR(o, start_factor=0.5, total_iters=4), _s(L).MultiStepLR(o, [5, 9], 0.5)], optimizer=o), False),
    "ReduceLROnPlateau": (lambda L, o: _s(L).ReduceLROnPlateau(
        o, mode="max", patience=1, factor=0.3, threshold=0.05, threshold_mode="abs", cooldown=2,
        min_lr=[0.01, 0.02]), True),
}


def _sched_step(s, e, jump=False):
    if type(s).__name__ == "ReduceLROnPlateau":
        s.step(METRICS[e], e + 1) if jump else s.step(METRICS[e])
    else:
        s.step(e) if jump else s.step()


def _momenta(o):
    return [g["momentum"] if "momentum" in g else g["betas"][0] for g in o.param_groups]


def _trace(lib, name, kind, epochs=range(EPOCHS), resume_at=None, torch_state=None, jump=False):
    """(rates, get_last_lr, momenta) at each epoch; resumed from a state dict at ``resume_at``, or from
    ``torch_state`` (a PyTorch checkpoint of the optimiser and the scheduler) at the start."""
    make = SCHEDULES[name][0]
    o = _sched_opt(lib, kind)
    s = make(lib, o)
    if torch_state is not None:
        o.load_state_dict(torch_state[0])
        s.load_state_dict(torch_state[1])
    out = []
    for e in epochs:
        if e == resume_at:
            saved = copy.deepcopy((o.state_dict(), s.state_dict()))
            o = _sched_opt(lib, kind)
            s = make(lib, o)
            o.load_state_dict(saved[0])
            s.load_state_dict(saved[1])
        out.append(([float(g["lr"]) for g in o.param_groups], [float(v) for v in s.get_last_lr()], _momenta(o)))
        o.step()
        _sched_step(s, e, jump)
    return out


def _same_trace(ours, theirs):
    for e, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-15, err_msg=f"epoch {e}")


@pytest.mark.parametrize("name, kind", [(n, "SGD") for n in SCHEDULES] + [("CyclicLR-triangular2", "Adam"),
                                                                         ("OneCycleLR", "Adam")])
def test_scheduler_matches_torch(name, kind):
    theirs = _trace("torch", name, kind)
    _same_trace(_trace("chainrule", name, kind), theirs)
    _same_trace(_trace("chainrule", name, kind, resume_at=13), theirs)  # state_dict round trip
    o, s = _sched_opt("torch", kind), None
    s = SCHEDULES[name][0]("torch", o)
    for e in range(7):
        o.step()
        _sched_step(s, e)
    checkpoint = (_plain(o.state_dict()), copy.deepcopy(s.state_dict()))  # a PyTorch checkpoint, loaded here
    _same_trace(_trace("chainrule", name, kind, range(7, 20), torch_state=checkpoint), theirs[7:20])
    if SCHEDULES[name][1]:  # PyTorch's deprecated step(epoch): the closed form at that step
        jumps = [1, 4, 9, 10, 3, 15, 22]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # (PyTorch's note that the argument is deprecated)
            theirs = _trace("torch", name, kind, jumps, jump=True)
        _same_trace(_trace("chainrule", name, kind, jumps, jump=True), theirs)


@pytest.mark.parametrize("base", ["LRScheduler", "_LRScheduler"])
def test_a_scheduler_written_for_pytorch_runs(base):
    """A subclass of LRScheduler (or of its former name) with PyTorch's ``get_lr()`` (chainrule's base wanted
    ``lr_at``)."""
    def halving(lib):
        class Halving(getattr(_s(lib), base)):
            def get_lr(self):
                return [base * 0.5 ** (self.last_epoch // 2) for base in self.base_lrs]
        o = _sched_opt(lib, "SGD")
        s = Halving(o)
        rates = []
        for _ in range(7):
            o.step()
            s.step()
            rates.append(s.get_last_lr())
        return rates

    np.testing.assert_allclose(halving("chainrule"), halving("torch"), rtol=1e-15)


def test_what_chainrule_schedules_refuse_is_said():
    """Deliberate differences raise, naming the way out: MultiplicativeLR.step(epoch) (PyTorch applies one factor),
    ChainedScheduler of a schedule that is not a factor, a second scheduler overwriting the rate of the first."""
    o = _sched_opt("chainrule", "SGD")
    with pytest.raises(TypeError, match="MultiplicativeLR.step\\(epoch=3\\).*call step\\(\\) once per epoch"):
        optim.lr_scheduler.MultiplicativeLR(o, lambda e: 0.9).step(3)
    o = _sched_opt("chainrule", "SGD")
    with pytest.raises(TypeError, match="ChainedScheduler: scheduler 1 is a CosineAnnealingLR.*LambdaLR"):
        optim.lr_scheduler.ChainedScheduler([optim.StepLR(o, 2), optim.CosineAnnealingLR(o, 5)])
    o = _sched_opt("chainrule", "SGD")
    first, second = optim.StepLR(o, 1, gamma=0.5), optim.LambdaLR(o, lambda e: 0.9**e)  # (StepLR's would chain)
    with pytest.raises(ValueError, match="LambdaLR.step: the learning rate of parameter group 0 .* another "):
        o.step()
        first.step()
        second.step()


def test_lbfgs_keeps_its_scalars_in_the_parameters_dtype():
    """PyTorch's LBFGS keeps ys, ro, H_diag, the step t and the slopes as 0-d tensors of the parameters' dtype;
    chainrule made them float64, so a float32 run with the strong-Wolfe search parted from PyTorch's by 4e-5."""
    values = [v.astype(np.float32) for v in VALUES]
    kwargs, layout = dict(line_search_fn="strong_wolfe"), [([0, 1, 2, 3], {})]
    theirs, ours = Run("LBFGS", kwargs, layout, "torch", values), Run("LBFGS", kwargs, layout, "chainrule", values)
    for k in range(3):
        theirs.step(k)
        ours.step(k)
        for a, b in zip(ours.values(), theirs.values()):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    assert ours.opt.state[0]["ro"][0].dtype == np.float32


def test_state_is_keyed_by_the_parameter_too():
    """``opt.state[p]`` (PyTorch's key) was a KeyError and ``p in opt.state`` silently False."""
    def run(lib):
        make = (lambda v: torch.nn.Parameter(torch.tensor(v))) if lib == "torch" else nn.Parameter
        w, b = make(np.ones(2)), make(np.ones(3))
        opt = (torch.optim if lib == "torch" else optim).Adam([w, b], lr=0.1)
        w.grad = torch.ones(2, dtype=torch.float64) if lib == "torch" else cr.tensor(np.ones(2))
        opt.step()
        return w in opt.state, b in opt.state, _plain(opt.state[w]["exp_avg"]), opt.state.get(b, "none")

    assert str(run("chainrule")) == str(run("torch"))
    clone = copy.deepcopy(optim.SGD([nn.Parameter(np.ones(2))], lr=0.1, momentum=0.9))
    p = clone.param_groups[0]["params"][0]
    p.grad = cr.tensor(np.ones(2))
    clone.step()
    assert p in clone.state and clone.state[p] is clone.state[0]


@pytest.mark.parametrize("name", ["Adadelta", "Adafactor", "Adagrad", "Adam", "Adamax", "AdamW", "ASGD", "LBFGS",
                                  "Muon", "NAdam", "RAdam", "RMSprop", "Rprop", "SGD"])
def test_float32_parameters_follow_torch(name):
    """The defaults on float32 parameters: the steps stay in float32 and agree with PyTorch's to float32 rounding."""
    values = [v.astype(np.float32) for v in VALUES]
    kwargs = {"momentum": 0.9, "nesterov": True} if name == "SGD" else {}
    layout = _layouts(name, kwargs)[-1]
    theirs, ours = Run(name, kwargs, layout, "torch", values), Run(name, kwargs, layout, "chainrule", values)
    for k in range(6):
        theirs.step(k)
        ours.step(k)
        for a, b in zip(ours.values(), theirs.values()):
            assert a.dtype == np.float32
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)


def test_an_optimizer_with_hooks_pickles_without_them():
    """As PyTorch's: the hooks (lambdas, often) are not part of a pickled or copied optimiser."""
    import pickle

    opt = optim.Adam([nn.Parameter(np.ones(2))])
    opt.register_step_post_hook(lambda o, a, k: None)
    for copied in (pickle.loads(pickle.dumps(opt)), copy.deepcopy(opt)):
        assert copied.state_dict() == opt.state_dict() and not copied.__dict__.get("_optimizer_hooks")
