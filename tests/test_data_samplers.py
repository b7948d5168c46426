"""Samplers, random_split, Subset, ConcatDataset, IterableDataset and DataLoader's sampler=/batch_sampler=, checked
against ``torch.utils.data`` (orders drawn at random are checked for their law, not PyTorch's numbers)."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import data

torch = pytest.importorskip("torch")
tud = torch.utils.data
pytestmark = pytest.mark.oracle


def _same(got, want):
    """Batches equal, structure and values (Tensors against torch tensors)."""
    if isinstance(want, torch.Tensor):
        assert isinstance(got, cr.Tensor), type(got)
        assert got.shape == tuple(want.shape) and str(got.dtype) == str(want.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(got.data, want.numpy())
    elif isinstance(want, dict):
        assert sorted(got) == sorted(want)
        for k in want:
            _same(got[k], want[k])
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    else:
        assert got == want


def test_sequential_and_batch_samplers_match_torch():
    for n, bs, drop in [(7, 3, False), (7, 3, True), (6, 3, True), (1, 4, False)]:
        ours = data.BatchSampler(data.SequentialSampler(range(n)), bs, drop)
        theirs = tud.BatchSampler(tud.SequentialSampler(range(n)), bs, drop)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    with pytest.raises(ValueError):
        tud.BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="batch_size"):
        data.BatchSampler(range(3), 0, False)


@pytest.mark.parametrize("kw", [{}, dict(num_samples=23), dict(num_samples=5), dict(replacement=True),
                                dict(replacement=True, num_samples=40)])
def test_random_sampler_law_and_length_match_torch(kw):
    ours, theirs = data.RandomSampler(range(10), generator=0, **kw), tud.RandomSampler(range(10), **kw)
    got, want = list(ours), list(theirs)
    assert len(ours) == len(theirs) == len(got) == len(want)
    assert all(0 <= i < 10 and isinstance(i, int) for i in got)
    if not kw.get("replacement"):
        for start in range(0, len(got) - len(got) % 10, 10):  # each whole pass is a permutation
            assert sorted(got[start:start + 10]) == list(range(10))
        assert len(set(got[len(got) - len(got) % 10:])) == len(got) % 10
    assert got != list(ours)  # a new order each pass


def test_random_sampler_is_reproducible_from_its_generator_and_manual_seed():
    a, b = data.RandomSampler(range(20), generator=cr.Generator().manual_seed(4)), \
        data.RandomSampler(range(20), generator=cr.Generator().manual_seed(4))
    assert list(a) == list(b)
    cr.manual_seed(2)
    first = list(data.RandomSampler(range(20)))
    cr.manual_seed(2)
    assert list(data.RandomSampler(range(20))) == first


def test_subset_random_and_weighted_samplers():
    idx = [3, 8, 11, 20]
    ours, theirs = data.SubsetRandomSampler(idx, generator=0), tud.SubsetRandomSampler(idx)
    assert sorted(ours) == sorted(theirs) == idx and len(ours) == len(theirs)
    w = [0.0, 1.0, 3.0, 0.0]
    ours = data.WeightedRandomSampler(w, 4000, generator=1)
    theirs = tud.WeightedRandomSampler(w, 4000)
    got = np.bincount(list(ours), minlength=4) / 4000
    want = np.bincount(list(theirs), minlength=4) / 4000
    np.testing.assert_allclose(got, [0, 0.25, 0.75, 0], atol=0.03)
    np.testing.assert_allclose(got, want, atol=0.05)
    assert len(ours) == len(theirs) == 4000
    assert sorted(data.WeightedRandomSampler([1.0, 2.0, 3.0], 3, replacement=False)) == [0, 1, 2]


@pytest.mark.parametrize("n, lengths", [(10, [7, 3]), (10, [0.7, 0.3]), (11, [0.5, 0.5]), (7, [0.2, 0.3, 0.5]),
                                        (100, [0.8, 0.1, 0.1]), (3, [1, 1, 1])])
def test_random_split_sizes_match_torch(n, lengths):
    ours = data.random_split(range(n), lengths, generator=0)
    theirs = tud.random_split(range(n), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in ours] == [len(p) for p in theirs]
    everything = sorted(x for part in ours for x in (part[i] for i in range(len(part))))
    assert everything == list(range(n))
    assert all(isinstance(p, data.Subset) for p in ours)


def test_random_split_refuses_what_torch_refuses_and_is_seeded():
    for lengths in ([3, 3], [0.5, 0.6]):
        with pytest.raises(ValueError):
            tud.random_split(range(10), lengths)
        with pytest.raises(ValueError, match="random_split"):
            data.random_split(range(10), lengths)
    a = data.random_split(range(10), [5, 5], generator=cr.Generator().manual_seed(3))
    b = data.random_split(range(10), [5, 5], generator=cr.Generator().manual_seed(3))
    assert a[0].indices == b[0].indices


def test_random_split_warns_of_an_empty_split_as_torch_does():
    with pytest.warns(UserWarning, match="index 2 is 0"):
        theirs = tud.random_split(range(2), [0.5, 0.5, 0.0])
    with pytest.warns(cr.ChainruleWarning, match="index 2 is 0"):
        ours = data.random_split(range(2), [0.5, 0.5, 0.0], generator=0)
    assert [len(p) for p in ours] == [len(p) for p in theirs] == [1, 1, 0]


def test_subset_and_concat_dataset_index_as_torch():
    base = [10 * i for i in range(8)]
    assert [data.Subset(base, [5, 1, 2])[i] for i in range(3)] == [tud.Subset(base, [5, 1, 2])[i] for i in range(3)]
    assert len(data.Subset(base, [5, 1])) == 2
    parts = [[1, 2, 3], [], [4, 5]]
    ours, theirs = data.ConcatDataset(parts), tud.ConcatDataset(parts)
    assert len(ours) == len(theirs) == 5
    assert [ours[i] for i in range(-5, 5)] == [theirs[i] for i in range(-5, 5)]
    assert ours.cumulative_sizes == theirs.cumulative_sizes


class _Stream:
    """The same iterable dataset for both libraries."""

    def __init__(self, base, n=7):
        class Stream(base):
            def __iter__(self):
                return iter([(np.full(2, float(i)), i) for i in range(n)])

            def __len__(self):
                return n

        self.dataset = Stream()


@pytest.mark.parametrize("kw", [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None),
                                dict(batch_size=7)])
def test_iterable_dataset_batches_match_torch(kw):
    ours = data.DataLoader(_Stream(data.IterableDataset).dataset, **kw)
    theirs = tud.DataLoader(_Stream(tud.IterableDataset).dataset, **kw)
    _same(list(ours), list(theirs))
    assert len(ours) == len(theirs)
    with pytest.raises(ValueError):
        tud.DataLoader(_Stream(tud.IterableDataset).dataset, shuffle=True)
    with pytest.raises(ValueError, match="IterableDataset"):
        data.DataLoader(_Stream(data.IterableDataset).dataset, shuffle=True)


class _Pairs:
    def __init__(self, n=9):
        self.x, self.y = np.arange(2.0 * n).reshape(n, 2), np.arange(n)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], int(self.y[i]), float(self.y[i]) / 2, {"flag": bool(i % 2)}


def test_dataloader_over_arrays_and_numbers_yields_tensors_of_torchs_dtypes():
    for kw in [dict(batch_size=4), dict(batch_size=4, drop_last=True), dict(batch_size=None)]:
        _same(list(data.DataLoader(_Pairs(), **kw)), list(tud.DataLoader(_Pairs(), **kw)))
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    _same(list(data.DataLoader(x, batch_size=4)), list(tud.DataLoader(x, batch_size=4)))


class _Reversed:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n - 1, -1, -1))

    def __len__(self):
        return self.n


def test_sampler_and_batch_sampler_give_torchs_batches():
    ds = _Pairs()
    for kw in [dict(sampler=_Reversed(9), batch_size=2), dict(sampler=_Reversed(9), batch_size=2, drop_last=True),
               dict(batch_sampler=[[0, 4], [8], [1, 2, 3]]), dict(sampler=_Reversed(9), batch_size=None),
               dict(batch_sampler=data.BatchSampler(_Reversed(9), 4, False))]:
        theirs_kw = dict(kw)
        if isinstance(kw.get("batch_sampler"), data.BatchSampler):
            theirs_kw["batch_sampler"] = tud.BatchSampler(_Reversed(9), 4, False)
        ours, theirs = data.DataLoader(ds, **kw), tud.DataLoader(ds, **theirs_kw)
        _same(list(ours), list(theirs))
        assert len(ours) == len(theirs)
    subset = data.DataLoader(ds, batch_size=3, sampler=data.SubsetRandomSampler([0, 2, 4, 6], generator=0))
    assert sorted(int(v) for xb, yb, *_ in subset for v in yb.data) == [0, 2, 4, 6]


@pytest.mark.parametrize("kw", [dict(sampler=[0, 1], shuffle=True), dict(batch_sampler=[[0]], batch_size=2),
                                dict(batch_sampler=[[0]], shuffle=True), dict(batch_sampler=[[0]], sampler=[0]),
                                dict(batch_sampler=[[0]], drop_last=True), dict(batch_size=None, drop_last=True)])
def test_dataloader_refuses_the_combinations_torch_refuses(kw):
    with pytest.raises(ValueError):
        tud.DataLoader(_Pairs(), **kw)
    with pytest.raises(ValueError, match="DataLoader"):
        data.DataLoader(_Pairs(), **kw)


def test_worker_init_fn_and_generator():
    calls = []
    list(data.DataLoader(_Pairs(), batch_size=4, worker_init_fn=calls.append))
    assert calls == []  # num_workers=0: PyTorch does not call it either
    list(data.DataLoader(_Pairs(), batch_size=4, num_workers=2, worker_init_fn=calls.append))
    assert calls == [0]  # loading runs here, as one worker
    a = data.DataLoader(_Pairs(), batch_size=3, shuffle=True, generator=cr.Generator().manual_seed(5))
    b = data.DataLoader(_Pairs(), batch_size=3, shuffle=True, generator=cr.Generator().manual_seed(5))
    assert [yb.tolist() for _, yb, *_ in a] == [yb.tolist() for _, yb, *_ in b]


def test_torch_utils_data_path():
    import chainrule.utils.data as utils_data

    assert cr.utils.data.DataLoader is utils_data.DataLoader is data.DataLoader
    assert set(tud.__all__) & {"random_split", "Subset", "IterableDataset", "RandomSampler"} <= set(utils_data.__all__)
