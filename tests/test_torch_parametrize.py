"""nn.utils.parametrize, nn.utils.parametrizations (weight_norm, spectral_norm) and the older hook-based
nn.utils.weight_norm / spectral_norm, checked against PyTorch: values, gradients of the underlying parameters,
state dict keys, and loading PyTorch's state dicts (which carries spectral norm's u, v)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim
from chainrule.nn.utils import parametrizations, parametrize

torch = pytest.importorskip("torch")
tparametrize = torch.nn.utils.parametrize
tparametrizations = torch.nn.utils.parametrizations

pytestmark = pytest.mark.oracle


def to_numpy(sd):
    return {k: v.detach().numpy().copy() for k, v in sd.items()}


def to_torch(sd):
    return {k: torch.from_numpy(np.array(v.numpy())) for k, v in sd.items()}


def linears(n_in=4, n_out=3, seed=0):
    """A torch and a chainrule Linear (float64) with the same weights."""
    torch.manual_seed(seed)
    t = torch.nn.Linear(n_in, n_out).double()
    c = nn.Linear(n_in, n_out, dtype=np.float64)
    c.load_state_dict(to_numpy(t.state_dict()))
    return t, c


def grads_after(tmod, cmod, x):
    """Backward of sum(out**2) through both; the gradients of every parameter, by name."""
    tmod.zero_grad()
    cmod.zero_grad()
    tout = tmod(torch.from_numpy(x))
    (tout**2).sum().backward()
    cout = cmod(x)
    (cout**2).sum().backward()
    np.testing.assert_allclose(cout.numpy(), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    tg = {n: p.grad.numpy() for n, p in tmod.named_parameters()}
    cg = {n: p.grad.numpy() for n, p in cmod.named_parameters()}
    assert list(cg) == list(tg)
    for n in tg:
        np.testing.assert_allclose(cg[n], tg[n], rtol=1e-9, atol=1e-12, err_msg=n)


X = np.random.default_rng(1).standard_normal((5, 4))


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_values_gradients_and_state_dict(dim):
    t, c = linears()
    tparametrizations.weight_norm(t, dim=dim)
    parametrizations.weight_norm(c, dim=dim)
    assert list(c.state_dict()) == list(t.state_dict()) == [
        "bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    for k, v in t.state_dict().items():
        np.testing.assert_allclose(c.state_dict()[k].numpy(), v.numpy(), rtol=1e-12, err_msg=k)
    np.testing.assert_allclose(c.weight.numpy(), t.weight.detach().numpy(), rtol=1e-12)
    grads_after(t, c, X)
    assert type(c).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert parametrize.type_before_parametrizations(c) is nn.Linear
    assert isinstance(c.parametrizations.weight[0], parametrizations._WeightNorm)


def test_weight_norm_loads_a_torch_state_dict_and_back():
    t, c = linears(seed=3)
    tparametrizations.weight_norm(t)
    parametrizations.weight_norm(c)
    with torch.no_grad():
        t.parametrizations.weight.original0.mul_(2.0)
    c.load_state_dict(to_numpy(t.state_dict()))
    np.testing.assert_allclose(c.weight.numpy(), t.weight.detach().numpy(), rtol=1e-12)
    t2 = tparametrizations.weight_norm(torch.nn.Linear(4, 3).double())
    t2.load_state_dict(to_torch(c.state_dict()))
    np.testing.assert_allclose(t2.weight.detach().numpy(), c.weight.numpy(), rtol=1e-12)


def test_training_loop_with_a_weight_normed_linear_matches_torch_step_by_step():
    t, c = linears(seed=5)
    tparametrizations.weight_norm(t)
    parametrizations.weight_norm(c)
    topt = torch.optim.SGD(t.parameters(), lr=0.1, momentum=0.9)
    copt = optim.SGD(c.parameters(), lr=0.1, momentum=0.9)
    y = np.random.default_rng(2).standard_normal((5, 3))
    for _ in range(6):
        topt.zero_grad()
        tloss = ((t(torch.from_numpy(X)) - torch.from_numpy(y)) ** 2).mean()
        tloss.backward()
        topt.step()
        copt.zero_grad()
        closs = ((c(X) - y) ** 2).mean()
        closs.backward()
        copt.step()
        assert closs.item() == pytest.approx(tloss.item(), rel=1e-10)
        for k, v in t.state_dict().items():
            np.testing.assert_allclose(c.state_dict()[k].numpy(), v.numpy(), rtol=1e-9, atol=1e-12, err_msg=k)


def test_spectral_norm_matches_torch_from_the_same_u_v_in_training_and_eval():
    t, c = linears(6, 5, seed=7)
    tparametrizations.spectral_norm(t, n_power_iterations=2)
    parametrizations.spectral_norm(c, n_power_iterations=2)
    keys = ["bias", "parametrizations.weight.original", "parametrizations.weight.0._u", "parametrizations.weight.0._v"]
    assert list(c.state_dict()) == list(t.state_dict()) == keys
    c.load_state_dict(to_numpy(t.state_dict()))
    for _ in range(3):  # each access in training mode moves u, v by a power step
        X6 = np.random.default_rng(3).standard_normal((2, 6))
        grads_after(t, c, X6)
        for k, v in t.state_dict().items():
            np.testing.assert_allclose(c.state_dict()[k].numpy(), v.numpy(), rtol=1e-10, atol=1e-12, err_msg=k)
    t.eval()
    c.eval()
    before = to_numpy(c.state_dict())
    np.testing.assert_allclose(c.weight.numpy(), t.weight.detach().numpy(), rtol=1e-10)
    c.weight  # noqa: B018  (a second access)
    for k, v in to_numpy(c.state_dict()).items():
        np.testing.assert_array_equal(v, before[k])  # eval: no power step


class TorchHolder(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.from_numpy(w.copy()))


class Holder(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.weight = nn.Parameter(w.copy())


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_spectral_norm_of_a_3d_weight_along_each_dim(dim):
    w = np.random.default_rng(dim).standard_normal((3, 2, 4))
    t, c = TorchHolder(w), Holder(w)
    tparametrizations.spectral_norm(t, dim=dim)
    parametrizations.spectral_norm(c, dim=dim)
    c.load_state_dict(to_numpy(t.state_dict()))
    tw, cw = t.weight, c.weight
    np.testing.assert_allclose(cw.numpy(), tw.detach().numpy(), rtol=1e-10)
    g = np.random.default_rng(9).standard_normal(w.shape)
    (tw * torch.from_numpy(g)).sum().backward()
    (cw * g).sum().backward()
    np.testing.assert_allclose(c.parametrizations.weight.original.grad.numpy(),
                               t.parametrizations.weight.original.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_spectral_norm_of_a_conv_transpose_uses_dim_1():
    c = parametrizations.spectral_norm(nn.ConvTranspose2d(2, 5, 3))
    assert c.parametrizations.weight[0].dim == 1
    assert c.parametrizations.weight[0]._u.shape == (5,)


class TSym(torch.nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).T


class CSym(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).T


class TSplit(torch.nn.Module):  # right_inverse returning a tuple: original0, original1
    def forward(self, a, b):
        return a + 2 * b

    def right_inverse(self, w):
        return w / 2, w / 4


class CSplit(nn.Module):
    def forward(self, a, b):
        return a + 2 * b

    def right_inverse(self, w):
        return w / 2, w / 4


class TScale(torch.nn.Module):
    def forward(self, x):
        return 3 * x

    def right_inverse(self, y):
        return y / 3


class CScale(nn.Module):
    def forward(self, x):
        return 3 * x

    def right_inverse(self, y):
        return y / 3


def test_chained_parametrizations_assignment_and_removal_match_torch():
    t, c = linears(4, 4, seed=11)
    for reg, mod, first, second in ((tparametrize.register_parametrization, t, TSym(), TScale()),
                                    (parametrize.register_parametrization, c, CSym(), CScale())):
        reg(mod, "weight", first)
        reg(mod, "weight", second)
    assert list(c.state_dict()) == list(t.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert len(c.parametrizations.weight) == 2
    np.testing.assert_allclose(c.weight.numpy(), t.weight.detach().numpy(), rtol=1e-12)
    grads_after(t, c, X)
    new = np.arange(16.0).reshape(4, 4)
    with pytest.raises(RuntimeError, match="right_inverse"):  # CSym has none
        c.weight = new
    original = c.parametrizations.weight.original
    tparametrize.remove_parametrizations(t, "weight")
    parametrize.remove_parametrizations(c, "weight")
    assert c.weight is original  # the same Parameter (an optimiser keeps it), now holding the parametrized value
    assert type(c) is nn.Linear and not parametrize.is_parametrized(c) and "parametrizations" not in c.__dict__
    assert list(c.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(c.weight.numpy(), t.weight.detach().numpy(), rtol=1e-12)


def test_tuple_right_inverse_assignment_and_removal_match_torch():
    t, c = linears(seed=13)
    tparametrize.register_parametrization(t, "weight", TSplit())
    parametrize.register_parametrization(c, "weight", CSplit())
    assert list(c.state_dict()) == list(t.state_dict()) == [
        "bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    for k, v in t.state_dict().items():
        np.testing.assert_allclose(c.state_dict()[k].numpy(), v.numpy(), rtol=1e-12, err_msg=k)
    grads_after(t, c, X)
    new = np.arange(12.0).reshape(3, 4)
    t.weight = torch.from_numpy(new)
    c.weight = new
    for k, v in t.state_dict().items():
        np.testing.assert_allclose(c.state_dict()[k].numpy(), v.numpy(), rtol=1e-12, err_msg=k)
    with pytest.raises(ValueError, match="leave_parametrized=False"):
        parametrize.remove_parametrizations(c, "weight", leave_parametrized=False)
    tparametrize.remove_parametrizations(t, "weight")
    parametrize.remove_parametrizations(c, "weight")
    np.testing.assert_allclose(c.weight.numpy(), new, rtol=1e-12)
    assert isinstance(c.weight, nn.Parameter)


def test_remove_without_leaving_parametrized_restores_the_original_as_torch():
    t, c = linears(seed=17)
    tparametrize.register_parametrization(t, "weight", TScale())
    parametrize.register_parametrization(c, "weight", CScale())
    tparametrize.remove_parametrizations(t, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(c, "weight", leave_parametrized=False)
    np.testing.assert_allclose(c.weight.numpy(), t.weight.detach().numpy(), rtol=1e-12)


def test_a_buffer_can_be_parametrized():
    class T(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", torch.tensor([1.0, 2.0], dtype=torch.float64))

    class C(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", np.array([1.0, 2.0]))

    t, c = T(), C()
    tparametrize.register_parametrization(t, "scale", TScale())
    parametrize.register_parametrization(c, "scale", CScale())
    assert list(c.state_dict()) == list(t.state_dict()) == ["parametrizations.scale.original"]
    np.testing.assert_allclose(c.scale.numpy(), t.scale.numpy())
    assert list(c.parameters()) == []


def test_cached_computes_once_and_the_cache_ends_with_the_context():
    c = parametrizations.weight_norm(nn.Linear(2, 2, rng=0))
    assert c.weight is not c.weight
    with parametrize.cached():
        with parametrize.cached():
            w = c.weight
        assert c.weight is w
    assert c.weight is not w


def test_the_old_hook_based_weight_norm_matches_torch():
    t, c = linears(seed=19)
    with pytest.warns(FutureWarning, match="deprecated"):  # (PyTorch's; chainrule's keeps quiet)
        torch.nn.utils.weight_norm(t)
    nn.utils.weight_norm(c)
    assert list(c.state_dict()) == list(t.state_dict()) == ["bias", "weight_g", "weight_v"]
    for k, v in t.state_dict().items():
        np.testing.assert_allclose(c.state_dict()[k].numpy(), v.numpy(), rtol=1e-12, err_msg=k)
    with torch.no_grad():
        t.weight_g.mul_(1.5)
    c.load_state_dict(to_numpy(t.state_dict()))
    grads_after(t, c, X)
    with pytest.raises(RuntimeError, match="two weight_norm"):
        nn.utils.weight_norm(c)
    torch.nn.utils.remove_weight_norm(t)
    nn.utils.remove_weight_norm(c)
    assert list(c.state_dict()) == list(t.state_dict())
    np.testing.assert_allclose(c.weight.numpy(), t.weight.detach().numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="not found"):
        nn.utils.remove_weight_norm(c)


def test_the_old_hook_based_spectral_norm_matches_torch():
    t, c = linears(6, 5, seed=23)
    torch.nn.utils.spectral_norm(t, n_power_iterations=3)
    nn.utils.spectral_norm(c, n_power_iterations=3)
    assert list(c.state_dict()) == list(t.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    c.load_state_dict(to_numpy(t.state_dict()))
    X6 = np.random.default_rng(4).standard_normal((3, 6))
    for _ in range(2):
        grads_after(t, c, X6)
        for k, v in t.state_dict().items():
            np.testing.assert_allclose(c.state_dict()[k].numpy(), v.numpy(), rtol=1e-10, atol=1e-12, err_msg=k)
    t.eval()
    c.eval()
    grads_after(t, c, X6)
    torch.nn.utils.remove_spectral_norm(t)
    nn.utils.remove_spectral_norm(c)
    assert list(c.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(c.weight.numpy(), t.weight.detach().numpy(), rtol=1e-10)


def test_errors_name_the_problem():
    c = nn.Linear(2, 2, rng=0)
    with pytest.raises(ValueError, match="no parameter, buffer or parametrized tensor named 'nope'"):
        parametrize.register_parametrization(c, "nope", CScale())
    with pytest.raises(ValueError, match="no parametrization on 'weight'"):
        parametrize.remove_parametrizations(c, "weight")
    with pytest.raises(ValueError, match="shape"):
        parametrize.register_parametrization(c, "weight", CSplitShape())
    assert not parametrize.is_parametrized(c)


class CSplitShape(nn.Module):
    def forward(self, x):
        return x.sum(0)


def test_a_parametrized_model_deep_copies():
    c = parametrizations.weight_norm(nn.Linear(2, 1, rng=0))
    e = copy.deepcopy(c)
    assert cr.nn.utils.parametrize.is_parametrized(e, "weight")
    np.testing.assert_allclose(e.weight.numpy(), c.weight.numpy())
    assert e.parametrizations.weight.original1 is not c.parametrizations.weight.original1


def test_two_parametrized_tensors_share_the_class_until_both_are_removed():
    t, c = linears(seed=29)
    tparametrizations.weight_norm(t)
    parametrizations.weight_norm(c)
    tparametrize.register_parametrization(t, "bias", TScale())
    parametrize.register_parametrization(c, "bias", CScale())
    assert list(c.state_dict()) == list(t.state_dict())
    grads_after(t, c, X)
    tparametrize.remove_parametrizations(t, "weight")
    parametrize.remove_parametrizations(c, "weight")
    assert parametrize.is_parametrized(c) and not parametrize.is_parametrized(c, "weight")
    assert type(c).__name__ == "ParametrizedLinear"
    grads_after(t, c, X)
    parametrize.remove_parametrizations(c, "bias")
    tparametrize.remove_parametrizations(t, "bias")
    assert type(c) is nn.Linear
    assert list(c.state_dict()) == list(t.state_dict())
    np.testing.assert_allclose(c.bias.numpy(), t.bias.detach().numpy(), rtol=1e-12)
