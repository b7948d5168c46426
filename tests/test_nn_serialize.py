"""Saving and loading: identical parameters and identical next steps after a round trip; files
with pickled objects are refused; wrong shapes name the parameter and both shapes."""

from __future__ import annotations

import pickle
import zipfile

import numpy as np
import pytest

import chainrule as cr
from chainrule import Scalar, nn, optim
from chainrule.nn import functional as F

RNG = np.random.default_rng(0)
XS = RNG.normal(size=(10, 16, 4)).astype(np.float32)
YS = RNG.integers(0, 3, size=(10, 16))


def train(model, opt, sched, steps):
    for step in steps:
        opt.zero_grad()
        F.cross_entropy(model(XS[step]), YS[step]).backward()
        optim.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()


def make(seed=0):
    model = nn.Sequential(nn.Linear(4, 8, rng=seed), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3, rng=seed + 1))
    opt = optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.05, amsgrad=True)
    sched = optim.WarmupCosineLR(opt, warmup_steps=2, total_steps=10)
    return model, opt, sched


def test_model_round_trip_is_exact(tmp_path):
    model = nn.MLP(4, [8, 3], rng=0).double()
    path = tmp_path / "model.npz"
    nn.save(model, path)
    assert path.exists() and not (tmp_path / "model.npz.npz").exists()
    raw = np.load(path, allow_pickle=False)
    assert "layers.0.weight" in raw.files and raw["layers.0.weight"].dtype == np.float64
    fresh = nn.MLP(4, [8, 3], rng=5).double()
    fresh.load_state_dict(nn.load(path))
    for (k, p), q in zip(model.named_parameters(), fresh.parameters(), strict=True):
        np.testing.assert_array_equal(p.data, q.data, err_msg=k)
        assert p.dtype == q.dtype


def test_checkpoint_resume_gives_identical_next_steps(tmp_path):
    model, opt, sched = make()
    train(model, opt, sched, range(4))
    path = tmp_path / "ckpt.npz"
    nn.save_checkpoint(path, model=model, optimizer=opt, scheduler=sched, epoch=4, note="resume here")
    train(model, opt, sched, range(4, 10))

    fresh, opt2, sched2 = make(seed=7)
    extra = nn.load_checkpoint(path, model=fresh, optimizer=opt2, scheduler=sched2)
    assert extra == {"epoch": 4, "note": "resume here"}
    assert opt2.param_groups[0]["betas"] == (0.9, 0.999) and opt2.state[0]["step"] == 4
    assert sched2.last_epoch == 4 and opt2.param_groups[0]["lr"] == pytest.approx(sched2.get_last_lr()[0])
    train(fresh, opt2, sched2, range(4, 10))
    for (k, p), q in zip(model.named_parameters(), fresh.parameters(), strict=True):
        np.testing.assert_array_equal(p.data, q.data, err_msg=k)


def test_nested_state_round_trip(tmp_path):
    state = {
        "a": np.arange(3, dtype=np.int16), "b": [1, 2.5, None, "x", True], "c": (np.float32(2.0), (1, 2)),
        "d": {0: np.eye(2), "k": {"$odd": 1}}, "e": float("inf"),
    }
    nn.save(state, tmp_path / "s.npz")
    back = nn.load(tmp_path / "s.npz")
    assert back["a"].dtype == np.int16 and back["a"].tolist() == [0, 1, 2]
    assert back["b"] == [1, 2.5, None, "x", True]
    assert isinstance(back["c"], tuple) and back["c"][1] == (1, 2) and back["c"][0].dtype == np.float32
    np.testing.assert_array_equal(back["d"][0], np.eye(2))
    assert back["d"]["k"] == {"$odd": 1} and back["e"] == float("inf")
    with pytest.raises(TypeError, match=r"cannot store a object at 'z/0'"):
        nn.save({"z": [object()]}, tmp_path / "bad.npz")
    with pytest.raises(TypeError, match="only numeric arrays"):
        nn.save({"z": np.array(["text"])}, tmp_path / "bad.npz")


def test_pickled_objects_are_refused(tmp_path):
    class Boom:
        def __reduce__(self):
            return (print, ("this must never run",))

    obj_file = tmp_path / "object.npz"
    np.savez(obj_file, weight=np.array([Boom()], dtype=object))
    with pytest.raises(nn.UnsafeFileError, match="holds pickled Python objects .*entry 'weight'.*refused"):
        nn.load(obj_file)
    pkl_file = tmp_path / "model.pkl"
    pkl_file.write_bytes(pickle.dumps({"weight": np.zeros(2)}))
    with pytest.raises(nn.UnsafeFileError, match="the whole file is a pickle"):
        nn.load(pkl_file)
    model = nn.Linear(2, 2)
    with pytest.raises(nn.UnsafeFileError):
        nn.load_checkpoint(obj_file, model=model)
    assert issubclass(nn.UnsafeFileError, ValueError)


def test_other_bad_files(tmp_path):
    np.save(tmp_path / "single.npy", np.zeros(3))
    with pytest.raises(ValueError, match=r"single array \(.npy\)"):
        nn.load(tmp_path / "single.npy")
    (tmp_path / "junk.npz").write_bytes(b"not a zip at all")
    with pytest.raises(ValueError, match="is not a NumPy .npz archive"):
        nn.load(tmp_path / "junk.npz")
    with pytest.raises(FileNotFoundError):
        nn.load(tmp_path / "missing.npz")
    nn.save(nn.Linear(2, 2, rng=0), tmp_path / "plain.npz")
    with pytest.raises(ValueError, match="is not a checkpoint"):
        nn.load_checkpoint(tmp_path / "plain.npz", model=nn.Linear(2, 2))
    nn.save_checkpoint(tmp_path / "c.npz", model=nn.Linear(2, 2))
    with pytest.raises(KeyError, match="holds no optimizer state"):
        nn.load_checkpoint(tmp_path / "c.npz", optimizer=optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1))
    with zipfile.ZipFile(tmp_path / "c.npz", "a") as zf:
        assert any(n.startswith("__chainrule__") for n in zf.namelist())


@pytest.mark.parametrize("manifest,message", [
    ("{not json", "damaged manifest"),
    ('{"format": "other/9", "state": 1}', "unknown format 'other/9'"),
    ('[1, 2]', "unknown format 'list'"),
    ('{"format": "chainrule-state/1", "state": {"w": {"$a": "missing"}}}', "refers to a missing array 'missing'"),
    ('{"format": "chainrule-state/1", "state": {"$d": [[1]]}}', "damaged manifest"),
])
def test_damaged_manifests_are_clear_errors(tmp_path, manifest, message):
    np.savez(tmp_path / "m.npz", __chainrule__=np.array(manifest), w=np.zeros(2))
    with pytest.raises(ValueError, match=message):
        nn.load(tmp_path / "m.npz")


def test_plain_npz_loads_as_a_state_dict(tmp_path):
    model = nn.Linear(3, 2, rng=0)
    np.savez(tmp_path / "plain.npz", **model.state_dict())
    other = nn.Linear(3, 2, rng=1)
    other.load_state_dict(nn.load(tmp_path / "plain.npz"))
    np.testing.assert_array_equal(other.weight.data, model.weight.data)


def test_wrong_shape_names_parameter_and_both_shapes(tmp_path):
    nn.save(nn.MLP(4, [8, 3], rng=0), tmp_path / "m.npz")
    with pytest.raises(nn.StateDictError, match=r"'layers.0.weight' has shape \(16, 4\) in the model but shape "
                                                 r"\(8, 4\) in the state dict"):
        nn.MLP(4, [16, 3]).load_state_dict(nn.load(tmp_path / "m.npz"))


def test_scalar_model_round_trip(tmp_path):
    model = nn.scalar.MLP(2, [3, 1], rng=0)
    nn.save(model, tmp_path / "s.npz")
    other = nn.scalar.MLP(2, [3, 1], rng=1)
    other.load_state_dict(nn.load(tmp_path / "s.npz"))
    assert [p.data for p in other.parameters()] == [p.data for p in model.parameters()]
    opt = optim.Adam(model.parameters(), lr=0.1)
    out = model([1.0, 2.0])
    out.backward()
    opt.step()
    nn.save_checkpoint(tmp_path / "sc.npz", model=model, optimizer=opt)
    opt2 = optim.Adam(other.parameters(), lr=0.1)
    nn.load_checkpoint(tmp_path / "sc.npz", model=other, optimizer=opt2)
    for m, o in ((model, opt), (other, opt2)):
        m.zero_grad()
        m([0.5, -1.0]).backward()
        o.step()
    assert [p.data for p in other.parameters()] == [p.data for p in model.parameters()]
    assert isinstance(model.parameters()[0], Scalar)


@pytest.mark.oracle
def test_load_refuses_a_pytorch_file_naming_how_to_convert_it(tmp_path):
    # cr.load of a torch.save file returned the zip's raw bytes as if they were arrays
    torch = pytest.importorskip("torch")
    path = tmp_path / "model.pt"
    torch.save(torch.nn.Linear(2, 2).state_dict(), path)
    with pytest.raises(nn.UnsafeFileError, match=r"torch\.save.*torch\.load\(path, weights_only=True\).*numpy"):
        nn.load(path)


def test_load_refuses_a_zip_whose_entries_are_not_arrays(tmp_path):
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("notes.txt", b"hello")
    with pytest.raises(ValueError, match="not a NumPy .npz: entry 'notes.txt'"):
        nn.load(path)


@pytest.mark.oracle
def test_a_state_dict_that_does_not_fit_raises_a_runtime_error_as_pytorchs():
    torch = pytest.importorskip("torch")
    for lib in (torch, cr):
        model = lib.nn.Linear(2, 1)
        with pytest.raises(RuntimeError, match="(?i)missing key"):  # PyTorch programs catch RuntimeError here
            model.load_state_dict({"nope": lib.zeros(1)})
        with pytest.raises(RuntimeError, match="size mismatch|shape"):
            model.load_state_dict({"weight": lib.zeros(3, 3), "bias": lib.zeros(1)})


def test_a_saved_tensor_loads_as_a_tensor_as_in_pytorch(tmp_path):
    """What was saved comes back: Tensors as Tensors (requires_grad kept; a computed one as a leaf), Parameters as
    Parameters, arrays as arrays (they loaded as arrays, so t.numpy() or t.requires_grad_() failed on a PyTorch
    habit)."""
    import chainrule as cr

    a = cr.tensor([1.0, 2.0], requires_grad=True)
    frozen = nn.Parameter(cr.ones(2), requires_grad=False)
    state = {"a": a, "twice": a * 2, "param": nn.Parameter(cr.ones(2)), "frozen": frozen, "ids": cr.arange(3),
             "plain": np.zeros(2), "nested": [cr.zeros(1)]}
    nn.save(state, tmp_path / "s.npz")
    got = nn.load(tmp_path / "s.npz")
    kinds = {k: (type(v).__name__, getattr(v, "requires_grad", None)) for k, v in got.items() if k != "nested"}
    assert kinds == {"a": ("Tensor", True), "twice": ("Tensor", True), "param": ("Parameter", True),
                     "frozen": ("Parameter", False), "ids": ("Tensor", False), "plain": ("ndarray", None)}
    assert got["twice"].is_leaf and type(got["nested"][0]).__name__ == "Tensor"
    np.testing.assert_array_equal(got["twice"].numpy(), [2.0, 4.0])
    model = nn.Linear(2, 3)
    nn.save(model.state_dict(), tmp_path / "m.npz")
    loaded = nn.load(tmp_path / "m.npz")
    assert all(type(v).__name__ == "Tensor" and not v.requires_grad for v in loaded.values())
    nn.Linear(2, 3).load_state_dict(loaded)
