"""Which of several equal entries PyTorch's ``sort``, ``argsort``, ``topk`` and ``kthvalue`` pick (on the
CPU), so that a tie's gradient goes to the same entry as PyTorch's.

None of them is stable: ``sort`` (without ``stable=True``) is the C++ library's ``std::sort``, an insertion
sort (stable) for rows of up to 16 and an introsort beyond; ``kthvalue`` runs PyTorch's own quickselect;
``topk`` ``std::nth_element`` (or ``std::partial_sort`` when ``64 * k <= n``) and then ``std::sort`` of
the first ``k - 1``. Which equal entry lands where follows from the exact sequence of swaps, so it is replayed here
(the GNU libstdc++ algorithms PyTorch's Linux wheels are built with). Only rows with a tie where it matters
are replayed, in Python; the others take NumPy's stable order, which then gives the same answer.
NaN is not handled (it is ordered as PyTorch orders it only in the stable path). The replay runs in
Python, so a call whose tied rows hold more than ``REPLAY_LIMIT`` entries in all is not replayed: ties then
keep NumPy's stable order (still a valid choice of the equal entry, not PyTorch's).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Less = Callable[[float, float], bool]
_THRESHOLD = 16  # libstdc++'s _S_threshold: std::sort leaves runs this short to insertion sort
REPLAY_LIMIT = 1 << 17  # entries replayed per call at most (~0.25 s of Python); beyond, NumPy's stable order


def rows_to_replay(tied: np.ndarray, n: int) -> np.ndarray:
    """The rows (of length ``n``) whose ties are replayed: every tied row, or none when they hold more than
    ``REPLAY_LIMIT`` entries in all (a replay of millions of entries in Python would take minutes)."""
    rows = np.flatnonzero(tied)
    return rows if rows.size * n <= REPLAY_LIMIT else rows[:0]


def _lg(n: int) -> int:
    return n.bit_length() - 1


class _Row:
    """A row of (value, index) pairs, sorted in place by the libstdc++ algorithms below with ``less``."""

    def __init__(self, values: np.ndarray, less: Less) -> None:
        self.v = [float(x) for x in values]
        self.i = list(range(len(values)))
        self.less = less

    def lt(self, a: int, b: int) -> bool:
        return self.less(self.v[a], self.v[b])

    def swap(self, a: int, b: int) -> None:
        self.v[a], self.v[b] = self.v[b], self.v[a]
        self.i[a], self.i[b] = self.i[b], self.i[a]

    # -- insertion sorts -----------------------------------------------------------------------------
    def _linear_insert(self, last: int) -> None:  # __unguarded_linear_insert
        val, idx = self.v[last], self.i[last]
        nxt = last - 1
        while self.less(val, self.v[nxt]):
            self.v[last], self.i[last] = self.v[nxt], self.i[nxt]
            last, nxt = nxt, nxt - 1
        self.v[last], self.i[last] = val, idx

    def insertion_sort(self, first: int, last: int) -> None:
        if first == last:
            return
        for k in range(first + 1, last):
            if self.less(self.v[k], self.v[first]):  # move_backward [first, k) by one, put k first
                val, idx = self.v[k], self.i[k]
                self.v[first + 1:k + 1], self.i[first + 1:k + 1] = self.v[first:k], self.i[first:k]
                self.v[first], self.i[first] = val, idx
            else:
                self._linear_insert(k)

    def final_insertion_sort(self, first: int, last: int) -> None:
        if last - first > _THRESHOLD:
            self.insertion_sort(first, first + _THRESHOLD)
            for k in range(first + _THRESHOLD, last):
                self._linear_insert(k)
        else:
            self.insertion_sort(first, last)

    # -- partitioning --------------------------------------------------------------------------------
    def _move_median_to_first(self, result: int, a: int, b: int, c: int) -> None:
        if self.lt(a, b):
            if self.lt(b, c):
                self.swap(result, b)
            elif self.lt(a, c):
                self.swap(result, c)
            else:
                self.swap(result, a)
        elif self.lt(a, c):
            self.swap(result, a)
        elif self.lt(b, c):
            self.swap(result, c)
        else:
            self.swap(result, b)

    def _partition_pivot(self, first: int, last: int) -> int:  # __unguarded_partition_pivot
        mid = first + (last - first) // 2
        self._move_median_to_first(first, first + 1, mid, last - 1)
        lo, hi, pivot = first + 1, last, first
        while True:
            while self.lt(lo, pivot):
                lo += 1
            hi -= 1
            while self.lt(pivot, hi):
                hi -= 1
            if not lo < hi:
                return lo
            self.swap(lo, hi)
            lo += 1

    # -- heaps (partial_sort, and the fallbacks when the depth limit runs out) ------------------------
    def _push_heap(self, first: int, hole: int, top: int, val: float, idx: int) -> None:
        parent = (hole - 1) // 2
        while hole > top and self.less(self.v[first + parent], val):
            self.v[first + hole], self.i[first + hole] = self.v[first + parent], self.i[first + parent]
            hole, parent = parent, (parent - 1) // 2
        self.v[first + hole], self.i[first + hole] = val, idx

    def _adjust_heap(self, first: int, hole: int, length: int, val: float, idx: int) -> None:
        top, child = hole, hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if self.lt(first + child, first + child - 1):
                child -= 1
            self.v[first + hole], self.i[first + hole] = self.v[first + child], self.i[first + child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            self.v[first + hole], self.i[first + hole] = self.v[first + child - 1], self.i[first + child - 1]
            hole = child - 1
        self._push_heap(first, hole, top, val, idx)

    def _make_heap(self, first: int, last: int) -> None:
        length = last - first
        if length < 2:
            return
        parent = (length - 2) // 2
        while True:
            self._adjust_heap(first, parent, length, self.v[first + parent], self.i[first + parent])
            if parent == 0:
                return
            parent -= 1

    def _pop_heap(self, first: int, last: int, result: int) -> None:
        val, idx = self.v[result], self.i[result]
        self.v[result], self.i[result] = self.v[first], self.i[first]
        self._adjust_heap(first, 0, last - first, val, idx)

    def heap_select(self, first: int, middle: int, last: int) -> None:
        self._make_heap(first, middle)
        for k in range(middle, last):
            if self.lt(k, first):
                self._pop_heap(first, middle, k)

    def sort_heap(self, first: int, last: int) -> None:
        while last - first > 1:
            last -= 1
            self._pop_heap(first, last, last)

    # -- the algorithms ----------------------------------------------------------------------------
    def partial_sort(self, first: int, middle: int, last: int) -> None:
        self.heap_select(first, middle, last)
        self.sort_heap(first, middle)

    def nth_element(self, first: int, nth: int, last: int) -> None:
        if first == last or nth == last:
            return
        depth = 2 * _lg(last - first)
        while last - first > 3:
            if depth == 0:
                self.heap_select(first, nth + 1, last)
                self.swap(first, nth)
                return
            depth -= 1
            cut = self._partition_pivot(first, last)
            if cut <= nth:
                first = cut
            else:
                last = cut
        self.insertion_sort(first, last)

    def sort(self, first: int, last: int) -> None:
        if first == last:
            return
        stack = [(first, last, 2 * _lg(last - first))]
        while stack:  # __introsort_loop; the right part first, as its loop does, the left recursively
            lo, hi, depth = stack.pop()
            while hi - lo > _THRESHOLD:
                if depth == 0:
                    self.partial_sort(lo, hi, hi)
                    break
                depth -= 1
                cut = self._partition_pivot(lo, hi)
                stack.append((cut, hi, depth))
                hi = cut
        self.final_insertion_sort(first, last)


def _greater(x: float, y: float) -> bool:
    return x > y


def _less(x: float, y: float) -> bool:
    return x < y


def sort_rows(data: np.ndarray, axis: int, order: np.ndarray, descending: bool) -> np.ndarray:
    """PyTorch's ``sort`` order along ``axis``, from NumPy's stable ``order``: rows longer than 16 with a tie
    are replayed (shorter rows are insertion-sorted by PyTorch too: stably)."""
    n = data.shape[axis]
    if n <= _THRESHOLD or data.dtype.kind != "f":
        return order
    rows = np.moveaxis(data, axis, -1).reshape(-1, n)
    moved = np.moveaxis(order, axis, -1).reshape(-1, n)
    ranked = np.take_along_axis(rows, moved, -1)
    tied = (ranked[:, 1:] == ranked[:, :-1]).any(axis=1) & ~np.isnan(rows).any(axis=1)
    replay = rows_to_replay(tied, n)
    if not replay.size:
        return order
    moved = moved.copy()
    for r in replay:
        row = _Row(rows[r], _greater if descending else _less)
        row.sort(0, n)
        moved[r] = row.i
    return np.moveaxis(moved.reshape(np.moveaxis(data, axis, -1).shape), -1, axis)


def topk_row(values: np.ndarray, k: int, largest: bool) -> list[int]:
    """The indices PyTorch's CPU ``topk(k, largest=largest, sorted=True)`` returns for one row."""
    row = _Row(values, _greater if largest else _less)
    n = len(row.v)
    if k * 64 <= n:
        row.partial_sort(0, k, n)
    else:
        row.nth_element(0, k - 1, n)
        row.sort(0, k - 1)
    return row.i[:k]


def kthvalue_row(values: np.ndarray, k: int) -> int:
    """The index PyTorch's CPU ``kthvalue(k)`` (k from 1) returns for one row: its quickselect, replayed."""
    v, idx = [float(x) for x in values], list(range(len(values)))

    def swap(a: int, b: int) -> None:
        v[a], v[b] = v[b], v[a]
        idx[a], idx[b] = idx[b], idx[a]

    target, lo, hi = k - 1, 0, len(v) - 1
    while True:
        if hi <= lo:
            break
        if hi == lo + 1:
            if v[lo] > v[hi]:
                swap(lo, hi)
            break
        mid = lo + (hi - lo) // 2
        swap(mid, lo + 1)
        if v[lo + 1] > v[hi]:
            swap(lo + 1, hi)
        if v[lo] > v[hi]:
            swap(lo, hi)
        if v[lo + 1] > v[lo]:
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, v[lo]
        while True:
            i += 1
            while pivot > v[i]:
                i += 1
            j -= 1
            while v[j] > pivot:
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= target:
            lo = i
        if j >= target:
            hi = j - 1
    return idx[target]
