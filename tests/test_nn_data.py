"""chainrule.data: seeded shuffling mini-batches, train/validation split, toy data sets."""

from __future__ import annotations

import numpy as np
import pytest

from chainrule import Tensor
from chainrule.data import Batches, batches, make_moons, make_spirals, train_val_split


def test_batches_cover_every_row_once_per_epoch_and_reshuffle():
    X, y = np.arange(23).reshape(23, 1), np.arange(23)
    loader = Batches(X, y, batch_size=5, seed=0)
    assert len(loader) == 5
    epochs = []
    for _ in range(2):
        seen = []
        for xb, yb in loader:
            np.testing.assert_array_equal(xb[:, 0], yb)  # rows stay paired
            seen.extend(yb.tolist())
        assert sorted(seen) == list(range(23))
        epochs.append(seen)
    assert epochs[0] != epochs[1]
    again = Batches(X, y, batch_size=5, seed=0)
    assert [yb.tolist() for _, yb in again] == [epochs[0][i:i + 5] for i in range(0, 23, 5)]


def test_batches_options():
    X = np.arange(10)
    assert [b.tolist() for b in Batches(X, batch_size=4, shuffle=False)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    dropped = Batches(X, batch_size=4, drop_last=True, seed=1)
    assert len(dropped) == 2 and all(len(b) == 4 for b in dropped)
    assert sum(len(b) for b in batches(Tensor(np.zeros((7, 2))), batch_size=3, seed=2)) == 7
    with pytest.raises(ValueError, match=r"same number of rows \(first axis\), got \[10, 9\]"):
        Batches(X, X[:9])
    with pytest.raises(ValueError, match="batch_size must be positive"):
        Batches(X, batch_size=0)
    with pytest.raises(ValueError, match="at least one array"):
        Batches()


def test_train_val_split():
    X, y = np.arange(40).reshape(20, 2), np.arange(20)
    X_tr, X_val, y_tr, y_val = train_val_split(X, y, val_fraction=0.25, seed=3)
    assert len(X_val) == 5 and len(X_tr) == 15
    np.testing.assert_array_equal(X_tr[:, 0] // 2, y_tr)
    assert sorted(np.concatenate([y_tr, y_val]).tolist()) == list(range(20))
    again = train_val_split(X, y, val_fraction=0.25, seed=3)
    np.testing.assert_array_equal(again[3], y_val)
    labels = np.array([0] * 15 + [1] * 5)
    l_tr, l_val = train_val_split(labels, val_fraction=0.2, stratify=labels, seed=0)
    assert sorted(l_val.tolist()) == [0, 0, 0, 1]
    _, tail = train_val_split(y, val_fraction=0.1, shuffle=False)
    assert tail.tolist() == [18, 19]
    with pytest.raises(ValueError, match="val_fraction must be between 0 and 1"):
        train_val_split(y, val_fraction=1.0)


@pytest.mark.parametrize("maker", [make_moons, make_spirals])
def test_toy_sets_are_seeded_and_balanced(maker):
    X, y = maker(101, seed=4)
    X2, y2 = maker(101, seed=4)
    np.testing.assert_array_equal(X, X2)
    assert X.shape == (101, 2) and set(y.tolist()) == {0, 1} and abs(int(y.sum()) - 50) <= 1


def test_moons_match_sklearn_without_noise():
    datasets = pytest.importorskip("sklearn.datasets")
    X, y = make_moons(50, noise=0.0, seed=0)
    Xs, ys = datasets.make_moons(50, noise=0.0, shuffle=False)
    ours = sorted(map(tuple, np.round(np.c_[X, y], 10)))
    theirs = sorted(map(tuple, np.round(np.c_[Xs, ys], 10)))
    np.testing.assert_allclose(ours, theirs)
