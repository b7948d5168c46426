"""New users' programs, fifth round: PyTorch habits on chainrule's object API.

Most programs are written once against a module named `torch` and run twice, with `import chainrule as torch`
and with PyTorch itself (the oracle), and the numbers are compared.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule as cr

oracle = pytest.mark.oracle


def both(program):
    """Run `program(torch_like)` with chainrule and with PyTorch; return both results as nested float arrays."""
    torch = pytest.importorskip("torch")
    ours = program(cr)
    theirs = program(torch)
    return _plain(ours), _plain(theirs)


def _plain(v):
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if hasattr(v, "detach"):
        return np.asarray(v.detach().numpy(), dtype=np.float64)
    return np.asarray(v, dtype=np.float64)


def _close(a, b, tol=1e-6):
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, tol)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k], tol)
    else:
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@oracle
def test_custom_function_with_save_for_backward_needs_input_grad_and_non_differentiable_indices():
    def program(torch):
        class SortWithIndex(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, scale):
                values, idx = torch.sort(x * scale)
                ctx.save_for_backward(idx, scale)
                ctx.mark_non_differentiable(idx)
                return values, idx

            @staticmethod
            def backward(ctx, g_values, g_idx):
                idx, scale = ctx.saved_tensors
                gx = gscale = None
                if ctx.needs_input_grad[0]:
                    gx = torch.zeros_like(g_values).scatter(0, idx, g_values) * scale
                if ctx.needs_input_grad[1]:
                    gscale = None  # deliberately not differentiated
                return gx, gscale

        x = torch.tensor([3.0, -1.0, 2.0, 0.5], dtype=torch.float64, requires_grad=True)
        scale = torch.tensor(2.0, dtype=torch.float64)
        values, idx = SortWithIndex.apply(x, scale)
        (values * torch.arange(4, dtype=torch.float64)).sum().backward()
        return values, idx.to(torch.float64), x.grad, float(idx.requires_grad)

    ours, theirs = both(program)
    _close(ours, theirs)


@oracle
def test_once_differentiable_backward_and_a_second_derivative_through_a_tensor_backward():
    def program(torch):
        from torch.autograd.function import once_differentiable

        class Cube(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x**3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 3 * x**2

        class CubeOnce(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x**3

            @staticmethod
            @once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 3 * x**2

        x = torch.tensor([0.5, -2.0], dtype=torch.float64, requires_grad=True)
        (g,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        (gg,) = torch.autograd.grad(g.sum(), x)
        (g1,) = torch.autograd.grad(CubeOnce.apply(x).sum(), x)
        return g, gg, g1

    ours, theirs = both(program)
    _close(ours, theirs)
    # the once-differentiable one refuses a second derivative, as PyTorch does
    x = cr.tensor([0.5, -2.0], dtype=cr.float64, requires_grad=True)
    from chainrule.autograd.function import once_differentiable

    class CubeOnce(cr.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x**2

    # the gradient arriving depends on x, so the backward's result is in the graph: differentiating it raises
    (g,) = cr.autograd.grad((CubeOnce.apply(x) * x).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        cr.autograd.grad(g.sum(), x)


@oracle
def test_tensor_hooks_scale_gradients_and_retain_grad_keeps_an_intermediate_grad():
    def program(torch):
        seen = []
        w = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
        h = w * w
        h.retain_grad()
        h.register_hook(lambda g: seen.append(g.clone()))
        z = h.exp()
        z.register_hook(lambda g: g * 0.5)  # halve what flows back from here
        w.register_hook(lambda g: g + 1.0)
        z.sum().backward()
        return w.grad, h.grad, seen[0], float(h.is_leaf), float(h.retains_grad)

    ours, theirs = both(program)
    _close(ours, theirs)


@oracle
def test_module_forward_pre_hook_forward_hook_and_full_backward_hook():
    def program(torch):
        torch.manual_seed(0)
        lin = torch.nn.Linear(3, 2).double()
        with torch.no_grad():
            lin.weight.copy_(torch.tensor([[1.0, -1.0, 0.5], [0.2, 0.3, -0.4]], dtype=torch.float64))
            lin.bias.copy_(torch.tensor([0.1, -0.2], dtype=torch.float64))
        record = {}
        lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        lin.register_forward_hook(lambda m, args, out: out + 1)

        def bhook(m, grad_input, grad_output):
            record["gout"] = grad_output[0].clone()
            record["gin"] = grad_input[0].clone()

        lin.register_full_backward_hook(bhook)
        x = torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64, requires_grad=True)
        y = lin(x)
        (y * torch.tensor([[1.0, 3.0]], dtype=torch.float64)).sum().backward()
        return y, x.grad, record["gout"], record["gin"], lin.weight.grad

    ours, theirs = both(program)
    _close(ours, theirs)


@oracle
def test_detect_anomaly_names_the_backward_that_made_a_nan():
    torch = pytest.importorskip("torch")

    def program(lib):
        x = lib.tensor([0.0, 1.0], dtype=lib.float64, requires_grad=True)
        with lib.autograd.detect_anomaly():
            y = lib.sqrt(x) * 0.0  # d sqrt at 0 is inf; inf * 0 = nan
            y.sum().backward()

    with pytest.raises(RuntimeError, match="(?i)nan") as ours:
        program(cr)
    with pytest.raises(RuntimeError, match="(?i)nan"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch warns that anomaly mode is on and where the forward ran
        program(torch)
    assert "sqrt" in str(ours.value).lower() or "mul" in str(ours.value).lower()


@oracle
def test_autograd_grad_with_grad_outputs_allow_unused_and_materialize_grads():
    def program(torch):
        x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
        unused = torch.tensor([5.0], dtype=torch.float64, requires_grad=True)
        y = torch.stack([x[0] * x[1], x[0] ** 2, torch.sin(x[1])])
        gx, gu = torch.autograd.grad(
            y, (x, unused), grad_outputs=torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64), allow_unused=True,
            retain_graph=True,
        )
        assert gu is None
        gx2, gu2 = torch.autograd.grad(y.sum(), (x, unused), allow_unused=True, materialize_grads=True)
        return gx, gx2, gu2

    ours, theirs = both(program)
    _close(ours, theirs)


@oracle
def test_gradient_accumulation_over_micro_batches_equals_one_big_batch():
    def program(torch):
        torch.manual_seed(0)
        X = torch.tensor(np.random.default_rng(0).normal(size=(8, 4)), dtype=torch.float32)
        y = torch.tensor(np.random.default_rng(1).normal(size=(8, 1)), dtype=torch.float32)
        model = torch.nn.Linear(4, 1)
        with torch.no_grad():
            model.weight.copy_(torch.tensor([[0.1, -0.2, 0.3, 0.4]]))
            model.bias.zero_()
        loss_fn = torch.nn.MSELoss()
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for _epoch in range(3):
            opt.zero_grad()
            for i in range(0, 8, 2):  # four micro-batches of 2, each scaled by 1/4
                loss = loss_fn(model(X[i : i + 2]), y[i : i + 2]) / 4
                loss.backward()
            opt.step()
        full = loss_fn(model(X), y)
        return model.weight, model.bias, full

    ours, theirs = both(program)
    _close(ours, theirs, 1e-5)


def test_dataloader_with_a_padding_collate_fn_and_a_batch_sampler():
    from chainrule.data import BatchSampler, DataLoader, Dataset, SequentialSampler

    class Sentences(Dataset):
        def __init__(self):
            self.items = [[1, 2, 3], [4], [5, 6], [7, 8, 9, 10], [11]]

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            return self.items[i], len(self.items[i])

    def pad(batch):
        seqs, lengths = zip(*batch)
        width = max(lengths)
        out = cr.zeros(len(seqs), width, dtype=cr.int64)
        for i, s in enumerate(seqs):
            out[i, : len(s)] = cr.tensor(s)
        return out, cr.tensor(lengths)

    loader = DataLoader(Sentences(), batch_sampler=BatchSampler(SequentialSampler(range(5)), 2, False), collate_fn=pad)
    batches = list(loader)
    assert len(batches) == 3 and len(loader) == 3
    assert batches[0][0].tolist() == [[1, 2, 3], [4, 0, 0]] and batches[0][1].tolist() == [3, 1]
    assert batches[2][0].tolist() == [[11]]
    emb = cr.nn.Embedding(12, 3, padding_idx=0)
    out = emb(batches[1][0]).sum(dim=1) / batches[1][1].unsqueeze(1)
    out.sum().backward()
    assert out.shape == (2, 3) and np.all(emb.weight.grad.numpy()[0] == 0)
    assert np.allclose(emb.weight.grad.numpy()[7], 0.25)  # in a row of 4, averaged


def test_weighted_random_sampler_draws_by_weight_and_without_replacement_never_repeats():
    from chainrule.data import DataLoader, TensorDataset, WeightedRandomSampler

    weights = [0.0, 0.0, 1.0, 3.0]
    s = WeightedRandomSampler(weights, num_samples=4000, replacement=True, generator=cr.Generator().manual_seed(0))
    draws = np.array(list(s))
    assert set(draws.tolist()) <= {2, 3} and abs((draws == 3).mean() - 0.75) < 0.03
    s2 = WeightedRandomSampler([1.0, 1.0, 1.0, 1.0, 5.0], num_samples=5, replacement=False)
    assert sorted(s2) == [0, 1, 2, 3, 4]
    ds = TensorDataset(cr.arange(4, dtype=cr.float32).unsqueeze(1), cr.tensor([0, 1, 2, 3]))
    sampler = WeightedRandomSampler(weights, 8, generator=cr.Generator().manual_seed(1))
    loader = DataLoader(ds, batch_size=8, sampler=sampler)
    xb, yb = next(iter(loader))
    assert xb.shape == (8, 1) and set(yb.tolist()) <= {2, 3}


@oracle
def test_module_containers_sequential_list_dict_and_parameter_list_names_match_pytorch():
    def program(torch):
        nn = torch.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])
                self.heads = nn.ModuleDict({"a": nn.Linear(2, 1), "b": nn.Sequential(nn.Tanh(), nn.Linear(2, 1))})
                self.scales = nn.ParameterList([nn.Parameter(torch.ones(1)), nn.Parameter(2 * torch.ones(1))])

            def forward(self, x):
                for blk in self.blocks:
                    x = torch.relu(blk(x))
                return self.heads["a"](x) * self.scales[0] + self.heads["b"](x) * self.scales[1]

        net = Net()
        names = [n for n, _ in net.named_parameters()]
        shapes = [tuple(p.shape) for p in net.parameters()]
        return names, shapes, len(net.state_dict()), len(list(net.modules()))

    torch = pytest.importorskip("torch")
    assert program(cr) == program(torch)


@oracle
def test_state_dict_round_trip_through_save_and_load_continues_training_identically(tmp_path):
    torch = pytest.importorskip("torch")

    def program(lib, path):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 1))
        with lib.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(lib.tensor(np.cos(np.arange(p.numel()) + i).reshape(tuple(p.shape)), dtype=lib.float32))
        opt = lib.optim.Adam(model.parameters(), lr=0.01)
        X = lib.tensor(np.linspace(-1, 1, 15).reshape(5, 3), dtype=lib.float32)
        y = lib.tensor(np.linspace(0, 1, 5).reshape(5, 1), dtype=lib.float32)

        def step(m, o):
            o.zero_grad()
            loss = ((m(X) - y) ** 2).mean()
            loss.backward()
            o.step()
            return loss.item()

        for _ in range(3):
            step(model, opt)
        lib.save({"model": model.state_dict(), "opt": opt.state_dict()}, path)
        ckpt = lib.load(path)
        model2 = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 1))
        model2.load_state_dict(ckpt["model"])
        opt2 = lib.optim.Adam(model2.parameters(), lr=0.01)
        opt2.load_state_dict(ckpt["opt"])
        a = [step(model, opt) for _ in range(2)]
        b = [step(model2, opt2) for _ in range(2)]
        return a, b, [p.detach().numpy().copy() for p in model2.parameters()]

    ours = program(cr, str(tmp_path / "ours.pt"))
    theirs = program(torch, str(tmp_path / "theirs.pt"))
    assert ours[0] == ours[1]  # the reloaded copy continues exactly
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    for a, b in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@oracle
def test_lr_schedulers_step_by_step_match_pytorch():
    def program(torch):
        lrs = []
        for make in (
            lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5),
            lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=5, eta_min=0.01),
            lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda e: 1 / (1 + e)),
            lambda o: torch.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=10),
            lambda o: torch.optim.lr_scheduler.MultiStepLR(o, milestones=[2, 5], gamma=0.1),
        ):
            p = torch.nn.Parameter(torch.zeros(1))
            opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
            sched = make(opt)
            row = []
            for _ in range(8):
                opt.step()
                sched.step()
                row.append(sched.get_last_lr()[0])
            lrs.append(row)
        return lrs

    ours, theirs = both(program)
    _close(ours, theirs, 1e-10)


@oracle
def test_weight_tying_shares_one_parameter_that_collects_both_gradients():
    def program(torch):
        nn = torch.nn

        class TinyLM(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(5, 3)
                self.head = nn.Linear(3, 5, bias=False)
                self.head.weight = self.emb.weight  # tie

            def forward(self, idx):
                return self.head(torch.tanh(self.emb(idx)))

        torch.manual_seed(0)
        m = TinyLM()
        with torch.no_grad():
            m.emb.weight.copy_(torch.tensor(np.sin(np.arange(15.0)).reshape(5, 3), dtype=torch.float32))
        logits = m(torch.tensor([1, 3, 3]))
        torch.nn.functional.cross_entropy(logits, torch.tensor([0, 2, 4])).backward()
        n_params = len(list(m.parameters()))
        return m.emb.weight.grad, float(n_params), float(m.head.weight is m.emb.weight), len(m.state_dict())

    ours, theirs = both(program)
    _close(ours, theirs, 1e-5)


@oracle
def test_optimizer_param_groups_and_add_param_group_match_pytorch():
    def program(torch):
        torch.manual_seed(0)
        a = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
        b = torch.nn.Parameter(torch.tensor([0.5]))
        c = torch.nn.Parameter(torch.tensor([3.0, 3.0, 3.0]))
        opt = torch.optim.AdamW([{"params": [a]}, {"params": [b], "lr": 0.1, "weight_decay": 0.0}], lr=0.01)
        out = []
        for step in range(4):
            if step == 2:
                opt.add_param_group({"params": [c], "lr": 0.05, "betas": (0.8, 0.9)})
            opt.zero_grad()
            loss = (a**2).sum() + (b**3).sum() + (c * a.sum()).sum()
            loss.backward()
            opt.step()
            out.append([g["lr"] for g in opt.param_groups])
        return a, b, c, [x for row in out for x in row], float(len(opt.param_groups))

    ours, theirs = both(program)
    _close(ours, theirs, 1e-6)


@oracle
def test_grad_mode_managers_as_decorators_and_context_managers():
    def program(torch):
        x = torch.tensor([1.0, 2.0], requires_grad=True)

        @torch.no_grad()
        def evaluate(t):
            return t * 2

        @torch.enable_grad()
        def inner(t):
            return t * 3

        @torch.inference_mode()
        def infer(t):
            return t + 1

        flags = [evaluate(x).requires_grad]
        with torch.no_grad():
            flags.append(inner(x).requires_grad)  # enable_grad wins inside no_grad
            flags.append(torch.is_grad_enabled())
        flags.append(infer(x).requires_grad)
        torch.set_grad_enabled(False)
        flags.append((x * 2).requires_grad)
        torch.set_grad_enabled(True)
        with torch.set_grad_enabled(False):
            flags.append((x * 2).requires_grad)
        flags.append((x * 2).requires_grad)

        @torch.no_grad
        def bare(t):  # the decorator without parentheses
            return t * 2

        flags.append(bare(x).requires_grad)
        return [float(f) for f in flags]

    ours, theirs = both(program)
    _close(ours, theirs)


@oracle
def test_torch_func_over_a_modules_parameters_grad_vmap_jacrev_hessian():
    def program(torch):
        functional_call, grad, hessian = torch.func.functional_call, torch.func.grad, torch.func.hessian
        jacrev, vmap = torch.func.jacrev, torch.func.vmap
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)).double()
        with torch.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(torch.tensor(np.sin(np.arange(p.numel()) * 0.7 + i).reshape(tuple(p.shape))))
        params = {k: v.detach() for k, v in model.named_parameters()}
        x = torch.tensor(np.linspace(-1, 1, 12).reshape(4, 3))
        y = torch.tensor([0.1, -0.2, 0.3, 0.0], dtype=torch.float64)

        def loss(p, xi, yi):
            return (functional_call(model, p, (xi,)).squeeze() - yi) ** 2

        per_ex = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
        jac = jacrev(lambda xi: functional_call(model, params, (xi,)))(x[0])
        hess = hessian(lambda b: loss({**params, "2.bias": b}, x[1], y[1]))(params["2.bias"])
        return per_ex, jac, hess

    ours, theirs = both(program)
    _close(ours, theirs, 1e-10)


@oracle
def test_autograd_functional_jacobian_hessian_vjp_of_a_python_function():
    def program(torch):
        F = torch.autograd.functional

        def f(x, y):
            return torch.stack([x[0] * y[0], torch.sin(x[1]) + y[1] ** 2])

        x = torch.tensor([1.0, 2.0], dtype=torch.float64)
        y = torch.tensor([0.5, -1.0], dtype=torch.float64)
        jx, jy = F.jacobian(f, (x, y))
        H = F.hessian(lambda v: (v**3).sum() + v[0] * v[1], x)
        _, vjp = F.vjp(lambda v: v**2, x, torch.tensor([1.0, 3.0], dtype=torch.float64))
        _, hvp = F.hvp(lambda v: (v**3).sum(), x, torch.ones(2, dtype=torch.float64))
        return jx, jy, H, vjp, hvp

    ours, theirs = both(program)
    _close(ours, theirs)


@oracle
def test_train_and_eval_mode_switch_dropout_and_batch_norm_as_pytorch():
    def program(torch):
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Dropout(0.5))
        with torch.no_grad():
            net[0].weight.copy_(torch.tensor(np.cos(np.arange(12.0)).reshape(4, 3), dtype=torch.float32))
            net[0].bias.zero_()
        x = torch.tensor(np.linspace(-1, 1, 15).reshape(5, 3), dtype=torch.float32)
        out_train = net(x)
        zeros = float((out_train == 0).float().mean() > 0)
        net.eval()
        out1, out2 = net(x), net(x)
        return out1, out2, net[1].running_mean, net[1].running_var, zeros, float(net.training), float(net[2].training)

    ours, theirs = both(program)
    _close(ours, theirs, 1e-5)


@oracle
def test_a_hand_written_optimizer_subclass_keeps_its_state_under_each_parameter_as_pytorch():
    # PyTorch's optimizer.state is a defaultdict(dict): `state = self.state[p]` on a first step gave KeyError
    def program(torch):
        class MomentumSGD(torch.optim.Optimizer):
            def __init__(self, params, lr=0.1, momentum=0.5):
                super().__init__(params, dict(lr=lr, momentum=momentum))

            @torch.no_grad()
            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is None:
                            continue
                        state = self.state[p]
                        if "buf" not in state:
                            state["buf"] = p.grad.clone()
                            state["step"] = 0
                        else:
                            state["buf"].mul_(group["momentum"]).add_(p.grad)
                        state["step"] += 1
                        p.add_(state["buf"], alpha=-group["lr"])

        p = torch.nn.Parameter(torch.tensor([1.0, 2.0], dtype=torch.float64))
        q = torch.nn.Parameter(torch.tensor([-1.0], dtype=torch.float64))
        opt = MomentumSGD([{"params": [p]}, {"params": [q], "lr": 0.05}])
        for _ in range(3):
            opt.zero_grad()
            ((p**2).sum() + (q**3).sum()).backward()
            opt.step()
        saved = opt.state_dict()
        fresh = MomentumSGD([{"params": [p]}, {"params": [q], "lr": 0.05}])
        fresh.load_state_dict(saved)
        fresh.zero_grad()
        ((p**2).sum() + (q**3).sum()).backward()
        fresh.step()
        return p, q, saved["state"][0]["buf"], float(saved["state"][1]["step"]), float(len(opt.state))

    ours, theirs = both(program)
    _close(ours, theirs, 1e-12)


def test_handing_one_parameters_iterator_to_two_optimizers_says_it_is_used_up():
    # a newcomer keeps `params = model.parameters()` and builds a second optimiser from it: the iterator is empty
    model = cr.nn.Linear(2, 2)
    params = model.parameters()
    cr.optim.SGD(params, lr=0.1)
    with pytest.raises(ValueError, match="already used up.*list\\(model.parameters\\(\\)\\)"):
        cr.optim.Adam(params, lr=0.1)
    with pytest.raises(ValueError, match="did the model register"):
        cr.optim.Adam([], lr=0.1)
    kept = list(model.parameters())
    assert len(cr.optim.SGD(kept, lr=0.1).param_groups[0]["params"]) == 2
    assert len(cr.optim.Adam(kept, lr=0.1).param_groups[0]["params"]) == 2


@pytest.mark.parametrize("bar", ["tqdm", "chainrule"])
def test_a_progress_bar_over_a_loader_of_an_iterable_dataset_has_no_length_and_runs(bar):
    # len() of such a loader raised NotImplementedError, which tqdm (catching TypeError, as len() raises) let through
    from chainrule.data import DataLoader, IterableDataset

    class Stream(IterableDataset):
        def __iter__(self):
            for i in range(7):
                yield np.float32(i), i % 2

    loader = DataLoader(Stream(), batch_size=3)
    with pytest.raises(TypeError, match="Stream"):
        len(loader)
    if bar == "tqdm":
        tqdm = pytest.importorskip("tqdm").tqdm
        wrapped = tqdm(loader, disable=True)
    else:
        from chainrule.nn.progress import _Plain

        wrapped = _Plain(loader, None, None, 0.0, None)
        assert wrapped.total is None
    sums = [float(xb.sum()) for xb, _ in wrapped]
    assert sums == [3.0, 12.0, 6.0]


@pytest.mark.parametrize("sizes", [(5, 3), (2, 3, 4)])
def test_the_legacy_torch_tensor_of_sizes_is_refused_naming_zeros(sizes):
    # the old 60-minute blitz's `x = torch.Tensor(5, 3)` read 3 as requires_grad and said the int data can't need grad
    with pytest.raises(TypeError, match=rf"requires_grad.*cr\.zeros\({', '.join(map(str, sizes))}\)"):
        cr.Tensor(*sizes)
    assert cr.zeros(*sizes).shape == sizes
    assert cr.Tensor([1.0, 2.0], True).requires_grad  # a bool in that place keeps working


@oracle
def test_an_old_tutorials_typed_tensors_and_variables_run_as_in_pytorch():
    # 2017-era code: torch.FloatTensor(...), torch.LongTensor(...), Variable, isinstance(x, torch.FloatTensor)
    def program(torch):
        x = torch.autograd.Variable(torch.FloatTensor([[1, 2], [3, 4]]), requires_grad=True)
        target = torch.autograd.Variable(torch.LongTensor([1, 0]))
        loss = torch.nn.functional.cross_entropy(x * 2, target)
        loss.backward()
        kinds = [isinstance(x.data, torch.FloatTensor), isinstance(target, torch.LongTensor),
                 isinstance(x, torch.DoubleTensor), isinstance(torch.DoubleTensor(2, 3), torch.DoubleTensor)]
        mask = torch.ByteTensor([1, 0]).bool()
        named = float(x.data.type() == "torch.FloatTensor")
        return x.grad, [float(k) for k in kinds], list(torch.LongTensor(2, 3).shape), named, mask.float()

    ours, theirs = both(program)
    assert [float(k) for k in ours[1]] == [1.0, 1.0, 0.0, 1.0] and float(ours[3]) == 1.0
    _close(ours, theirs)
