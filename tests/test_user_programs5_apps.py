"""New users' programs, fifth round: the GPT in Python and from the command line, saved models reloaded, and
more PyTorch habits (per-sample losses, mixed dtypes, ParameterDict, backward pre-hooks, clipping)."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import cli, nn

oracle = pytest.mark.oracle


def _run(capsys, *argv):
    try:
        code = cli.main(list(argv))
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def test_a_tiny_gpt_learns_a_repeated_string_then_reloads_and_generates_the_same_tokens(tmp_path):
    text = "abcabcabcabcabcabcabcabcabcabc" * 4
    vocab = sorted(set(text))
    ids = np.array([vocab.index(c) for c in text])
    config = nn.GPTConfig(vocab_size=len(vocab), context_length=8, d_model=16, n_heads=2, n_layers=1)
    model = nn.GPT(config, seed=0)
    opt = cr.optim.AdamW(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(40):
        starts = rng.integers(0, len(ids) - 9, 4)
        x = np.stack([ids[s : s + 8] for s in starts])
        y = np.stack([ids[s + 1 : s + 9] for s in starts])
        logits = model(x)
        loss = nn.functional.cross_entropy(logits.reshape(-1, len(vocab)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.3 * losses[0]
    out = model.generate(np.array([[0]]), max_new_tokens=6, temperature=0)
    assert "".join(vocab[i] for i in out[0]) == "abcabca"
    cr.save(model.state_dict(), str(tmp_path / "gpt.pt"))
    again = nn.GPT(config, seed=1)
    again.load_state_dict(cr.load(str(tmp_path / "gpt.pt")))
    prompt = np.array([[1]])
    assert np.array_equal(again.generate(prompt, 5, temperature=0), model.generate(prompt, 5, temperature=0))
    np.testing.assert_array_equal(again(x).numpy(), model(x).numpy())


def test_the_command_line_trains_samples_and_completes_a_tiny_run(capsys, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(12):
        (corpus / f"m{i:02d}.py").write_text(f"def add_{i}(x):\n    return x + {i}\n")
    out = tmp_path / "run"
    tiny = ["--layers", "1", "--d-model", "16", "--heads", "2", "--context", "16", "--batch-size", "2",
            "--eval-interval", "2", "--warmup", "1", "--quiet"]
    code, _, err = _run(capsys, "gpt", "train", "--corpus", str(corpus), "--out", str(out), "--steps", "3", *tiny)
    assert code == 0, err
    assert (out / "checkpoint.npz").exists()
    code, text, err = _run(capsys, "gpt", "sample", "--checkpoint", str(out), "--prompt", "def ", "--tokens", "8",
                           "--seed", "0")
    assert code == 0, err and text.startswith("def ")
    code, again, _ = _run(capsys, "gpt", "sample", "--checkpoint", str(out / "checkpoint.npz"), "--prompt", "def ",
                          "--tokens", "8", "--seed", "0")
    assert again == text  # the same seed, the same text
    src = tmp_path / "f.py"
    src.write_text("def f(x):\n")
    code, done, err = _run(capsys, "gpt", "complete", "--checkpoint", str(out), str(src), "--max-tokens", "5")
    assert code == 0, err
    from chainrule.gpt import load_gpt

    model, tokenizer, extra = load_gpt(str(out / "checkpoint.npz"))
    assert len(tokenizer.encode(done)) <= 5 + 1
    # a second training run with --resume and more steps continues from step 3
    code, _, err = _run(capsys, "gpt", "train", "--out", str(out), "--resume", "--steps", "4", "--quiet")
    assert code == 0, err
    code, _, err = _run(capsys, "gpt", "train", "--out", str(out), "--resume", "--layers", "2")
    assert code != 0 and "--layers" in err and "Traceback" not in err


@oracle
def test_per_sample_losses_with_reduction_none_weighted_then_backward_match_pytorch():
    torch = pytest.importorskip("torch")

    def program(lib):
        logits = lib.tensor(np.sin(np.arange(12.0)).reshape(4, 3), dtype=lib.float64, requires_grad=True)
        target = lib.tensor([0, 2, 1, 2])
        per = lib.nn.functional.cross_entropy(logits, target, reduction="none")
        w = lib.tensor([1.0, 0.5, 2.0, 0.0], dtype=lib.float64)
        (per * w).sum().backward()
        pred = lib.tensor([[0.2], [0.9], [0.4], [0.6]], dtype=lib.float64, requires_grad=True)
        bce = lib.nn.functional.binary_cross_entropy_with_logits(pred, lib.tensor([[0.0], [1.0], [1.0], [0.0]],
                                                                                  dtype=lib.float64),
                                                                 pos_weight=lib.tensor([3.0], dtype=lib.float64))
        bce.backward()
        huber = lib.nn.SmoothL1Loss(beta=0.5)(pred.detach() * 3, lib.zeros(4, 1, dtype=lib.float64))
        return [per.detach().numpy(), logits.grad.numpy(), bce.item(), pred.grad.numpy(), huber.item()]

    ours, theirs = program(cr), program(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@oracle
def test_a_double_model_on_float32_data_and_an_int_target_promote_as_pytorch():
    torch = pytest.importorskip("torch")

    def program(lib):
        w = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float32)
        target = lib.tensor([1, 0])  # int64
        y = (x * w).sum(1)  # float32 * float64 -> float64
        err = (y - target) ** 2
        err.mean().backward()
        names = [str(t.dtype).split(".")[-1] for t in (y, err, w.grad)]
        return names[0], names[1], names[2], w.grad.numpy()

    ours, theirs = program(cr), program(torch)
    assert ours[:3] == theirs[:3]
    np.testing.assert_allclose(ours[3], theirs[3])


@oracle
def test_parameter_dict_and_buffers_in_named_parameters_and_state_dict_as_pytorch():
    torch = pytest.importorskip("torch")

    def program(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.p = lib.nn.ParameterDict({"scale": lib.nn.Parameter(lib.ones(2)),
                                               "shift": lib.nn.Parameter(lib.zeros(2))})
                self.lin = lib.nn.Linear(2, 2)
                self.frozen = lib.nn.Linear(2, 1)
                for q in self.frozen.parameters():
                    q.requires_grad_(False)

            def forward(self, x):
                return self.frozen(self.lin(x * self.p["scale"] + self.p["shift"]))

        m = M()
        trainable = [n for n, q in m.named_parameters() if q.requires_grad]
        out = m(lib.ones(3, 2)).sum()
        out.backward()
        grads = [n for n, q in m.named_parameters() if q.grad is not None]
        return trainable, grads, sorted(m.state_dict().keys()), sum(q.numel() for q in m.parameters())

    assert program(cr) == program(torch)


@oracle
def test_module_backward_pre_hook_and_gradient_clipping_by_norm_and_value_match_pytorch():
    torch = pytest.importorskip("torch")

    def program(lib):
        lin = lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            lin.weight.copy_(lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]], dtype=lib.float64))
            lin.bias.fill_(0.25)
        lin.register_full_backward_pre_hook(lambda m, gout: (gout[0] * 10,))
        x = lib.tensor([[1.0, -1.0, 2.0], [0.5, 0.5, 0.5]], dtype=lib.float64)
        lin(x).pow(2).sum().backward()
        before = lib.nn.utils.clip_grad_norm_(lin.parameters(), max_norm=5.0)
        w_after = lin.weight.grad.clone()
        lib.nn.utils.clip_grad_value_(lin.parameters(), clip_value=0.3)
        return float(before), w_after.numpy(), lin.weight.grad.numpy(), lin.bias.grad.numpy()

    ours, theirs = program(cr), program(torch)
    assert np.isclose(ours[0], theirs[0])
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-10)


@oracle
def test_a_pytorch_tutorial_training_loop_with_a_dataloader_and_an_accuracy_count():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 2)).astype(np.float32)
    Y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)

    def program(lib):
        lib.manual_seed(0)
        ds = lib.utils.data.TensorDataset(lib.tensor(X), lib.tensor(Y))
        loader = lib.utils.data.DataLoader(ds, batch_size=16, shuffle=False)
        model = lib.nn.Sequential(lib.nn.Linear(2, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2))
        with lib.no_grad():
            for i, q in enumerate(model.parameters()):
                q.copy_(lib.tensor(np.cos(np.arange(q.numel()) * 1.3 + i).reshape(tuple(q.shape)) * 0.5,
                                   dtype=lib.float32))
        loss_fn = lib.nn.CrossEntropyLoss()
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
        for _epoch in range(3):
            model.train()
            for xb, yb in loader:
                pred = model(xb)
                loss = loss_fn(pred, yb)
                loss.backward()
                opt.step()
                opt.zero_grad()
        model.eval()
        correct = 0
        with lib.no_grad():
            for xb, yb in loader:
                correct += (model(xb).argmax(1) == yb).type(lib.float).sum().item()
        return correct / len(ds), loss.item()

    ours, theirs = program(cr), program(torch)
    assert ours[0] == theirs[0] and ours[0] > 0.9
    assert np.isclose(ours[1], theirs[1], rtol=1e-4)


def test_explain_and_tree_on_a_tensor_model_loss_agree_with_backward():
    from chainrule.graph import explain, tree

    x = cr.Tensor([[0.5, -1.0]], requires_grad=True, label="x")
    W = cr.Tensor([[1.0, 2.0], [0.0, -1.0]], requires_grad=True, label="W")
    h = cr.tanh(x @ W)
    h.label = "h"
    out = (h * x).sum()
    out.label = "out"
    e = explain(out, x)
    out.backward(retain_graph=True)
    assert e.ok and e.n_paths == 2
    np.testing.assert_allclose(np.asarray(e.total), x.grad.numpy())
    text = tree(out)
    assert text.splitlines()[0].startswith("out (sum)") and "W  (2, 2) float64" in text


@oracle
def test_a_full_backward_hook_on_a_two_input_module_sees_zeros_for_the_input_needing_no_grad():
    # PyTorch's grad_input has one entry per positional argument: zeros for a Tensor that needs no gradient
    # (chainrule gave None: a hook taking its norm raised), None for a number (chainrule left it out)
    torch = pytest.importorskip("torch")

    def program(lib):
        class Gate(lib.nn.Module):
            def forward(self, x, mask, scale):
                return x * mask * scale

        gate, norms = Gate(), []
        gate.register_full_backward_hook(lambda m, gin, gout: norms.append(
            [None if g is None else float(g.norm()) for g in gin]))
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        mask = lib.tensor([1.0, 0.0, 1.0], dtype=lib.float64)
        (gate(x, mask, 2.0) ** 2).sum().backward()
        return norms, x.grad.numpy()

    ours, theirs = program(cr), program(torch)
    assert ours[0] == theirs[0] and ours[0][0][1:] == [0.0, None]
    np.testing.assert_allclose(ours[1], theirs[1])


@oracle
@pytest.mark.parametrize("kind", ["transformer", "gru", "conv_bn"])
def test_porting_a_pytorch_models_state_dict_gives_its_outputs_and_gradients(kind):
    # a user moves trained PyTorch weights over as NumPy arrays and checks the forward and backward pass
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    if kind == "transformer":
        make = lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=True,
                                                          activation="gelu")
        x = np.random.default_rng(0).normal(size=(2, 5, 8)).astype(np.float32)
    elif kind == "gru":
        make = lambda lib: lib.nn.GRU(8, 4, num_layers=2, bidirectional=True, batch_first=True)
        x = np.random.default_rng(0).normal(size=(2, 5, 8)).astype(np.float32)
    else:
        make = lambda lib: lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3, padding=1), lib.nn.BatchNorm2d(4), lib.nn.ReLU(),
                                             lib.nn.MaxPool2d(2))
        x = np.random.default_rng(1).normal(size=(2, 3, 6, 6)).astype(np.float32)
    theirs, ours = make(torch), make(cr)
    result = ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys
    a, b = theirs(torch.tensor(x)), ours(cr.tensor(x))
    a, b = (a[0], b[0]) if isinstance(a, tuple) else (a, b)
    (a**2).sum().backward()
    (b**2).sum().backward()
    np.testing.assert_allclose(b.numpy(), a.detach().numpy(), rtol=1e-4, atol=1e-5)
    for (name, p), q in zip(theirs.named_parameters(), ours.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-3, atol=1e-4, err_msg=name)
    if kind == "conv_bn":  # the running statistics moved the same way
        np.testing.assert_allclose(ours[1].running_var.numpy(), theirs[1].running_var.numpy(), rtol=1e-5)
