"""PyTorch's ``nn.utils.rnn``: sequences of different lengths, padded into one batch or packed, for the recurrent
layers.

``pad_sequence`` stacks sequences into a padded batch; ``pack_padded_sequence`` keeps only the steps each sequence
has (PyTorch's layout: the steps in time order, each step the sequences still running, longest first) and
``pad_packed_sequence`` undoes it. ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` take a ``PackedSequence`` and return one:
each sequence runs for its own length, so ``h_n`` is its state after its last step (in both directions of a
bidirectional layer), as PyTorch's. Everything is differentiable.

Example:
    >>> import chainrule as cr
    >>> from chainrule.nn.utils.rnn import pad_sequence, pack_padded_sequence, pad_packed_sequence
    >>> a, b = cr.ones(3, 2), cr.ones(1, 2)
    >>> padded = pad_sequence([a, b], batch_first=True)
    >>> packed = pack_padded_sequence(padded, [3, 1], batch_first=True)
    >>> packed.batch_sizes.tolist(), packed.data.shape
    ([2, 1, 1], (4, 2))
    >>> out, lengths = pad_packed_sequence(packed, batch_first=True)
    >>> out.shape, lengths.tolist()
    ((2, 3, 2), [3, 1])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ...ops.shape import concatenate, getitem, stack, swapaxes
from ...tensor import Tensor
from .. import functional as F

__all__ = ["PackedSequence", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence",
           "unpad_sequence", "unpack_sequence", "invert_permutation"]


class PackedSequence(NamedTuple):
    """A batch of sequences with only their own steps: ``data`` (the steps in time order, each step's rows for the
    sequences still running, longest first), ``batch_sizes`` (how many run at each step), and the permutation
    from the batch's order to the longest-first order and back (None when the batch came sorted)."""

    data: Any
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """The data moved or converted (``Tensor.to``'s arguments); the sizes and orders stay."""
        return self._replace(data=self.data.to(*args, **kwargs))

    @property
    def is_cuda(self) -> bool:
        return bool(getattr(self.data, "is_cuda", False))


def invert_permutation(permutation: Any) -> Tensor | None:
    """The inverse of a permutation of ``range(n)`` (None stays None)."""
    if permutation is None:
        return None
    p = _ints(permutation, "invert_permutation")
    inverse = np.empty_like(p)
    inverse[p] = np.arange(len(p))
    return Tensor(inverse)


def pad_sequence(sequences: Sequence[Any], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Any:
    """The sequences (each (L_i, *)) padded to the longest and stacked: (L, N, *), or (N, L, *) with
    ``batch_first``; ``padding_side`` "right" (after each sequence) or "left"."""
    if padding_side not in ("right", "left"):
        raise ValueError(f"pad_sequence: padding_side must be 'right' or 'left', got {padding_side!r}")
    if len(sequences) == 0:
        raise ValueError("pad_sequence: got no sequences; pass a list of at least one (L_i, *) tensor")
    longest = max(int(np.shape(s)[0]) for s in sequences)
    padded = [_padded_to(s, longest, padding_value, padding_side == "left") for s in sequences]
    return stack(padded, axis=0 if batch_first else 1)


def pack_padded_sequence(input: Any, lengths: Any, batch_first: bool = False,  # noqa: A002 (PyTorch's name)
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ((L, N, *), or (N, L, *) with ``batch_first``) whose sequences have ``lengths``: with
    ``enforce_sorted`` the lengths must be in decreasing order, else the batch is sorted here (and the order kept
    in the result, so that ``pad_packed_sequence`` and the recurrent layers give the batch's order back)."""
    lengths = _ints(lengths, "pack_padded_sequence")
    x = swapaxes(input, 0, 1) if batch_first else input
    steps, n = np.shape(x)[:2]
    if lengths.shape != (n,):
        raise ValueError(f"pack_padded_sequence: {n} sequences in the batch but {lengths.size} lengths "
                         f"({lengths.tolist()})")
    if n and (lengths.min() <= 0 or lengths.max() > steps):
        raise ValueError(f"pack_padded_sequence: every length must be in [1, {steps}] (the padded length), got "
                         f"{lengths.tolist()}")
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise ValueError(f"pack_padded_sequence: lengths {lengths.tolist()} are not in decreasing order, as "
                             "enforce_sorted=True asks; sort the batch by length or pass enforce_sorted=False")
        order = None
    else:
        order = np.argsort(-lengths, kind="stable")
        x = getitem(x, (slice(None), order))
        lengths = lengths[order]
    return _packed(x, lengths, None if order is None else Tensor(order))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Any, Tensor]:
    """``(padded, lengths)`` from a ``PackedSequence``, in the batch's order: padded (L, N, *) (or (N, L, *) with
    ``batch_first``), L the longest length or ``total_length``; ``lengths`` int64."""
    sizes = _ints(sequence.batch_sizes, "pad_packed_sequence")
    steps, n = len(sizes), int(sizes[0]) if len(sizes) else 0
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"pad_packed_sequence: total_length={total_length} is shorter than the longest "
                             f"sequence ({steps} steps)")
        steps = total_length
    blocks, start = [], 0
    for b in sizes:
        blocks.append(_padded_to(getitem(sequence.data, slice(start, start + int(b))), n, padding_value, False))
        start += int(b)
    padded = _padded_to(stack(blocks, axis=0), steps, padding_value, False)
    lengths = (sizes[None, :] > np.arange(n)[:, None]).sum(axis=1).astype(np.int64)
    if sequence.unsorted_indices is not None:
        back = _ints(sequence.unsorted_indices, "pad_packed_sequence")
        padded = getitem(padded, (slice(None), back))
        lengths = lengths[back]
    return (swapaxes(padded, 0, 1) if batch_first else padded), Tensor(lengths)


def pack_sequence(sequences: Sequence[Any], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (each (L_i, *)) directly (``pad_sequence`` then ``pack_padded_sequence``)."""
    return pack_padded_sequence(pad_sequence(sequences), [int(np.shape(s)[0]) for s in sequences],
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Any, lengths: Any, batch_first: bool = False) -> list[Any]:
    """The sequences of a padded batch, each cut to its length (the inverse of ``pad_sequence``)."""
    x = padded_sequences if batch_first else swapaxes(padded_sequences, 0, 1)
    return [getitem(x, (i, slice(0, int(length)))) for i, length in enumerate(_ints(lengths, "unpad_sequence"))]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Any]:
    """The sequences of a ``PackedSequence``, each its own length, in the batch's order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def run_packed(layer: Any, sequence: PackedSequence, hx: Any) -> tuple[PackedSequence, list[Any]]:
    """A recurrent layer (its ``_forward(input, hx)``) on a ``PackedSequence``: the sequences of each length run
    together for exactly that many steps, so each final state is the one after the sequence's own last step.
    Returns the output packed as the input and the final states (h, or h and c) in the batch's order."""
    padded, lengths_t = pad_packed_sequence(sequence)  # (L, N, *) in the batch's order
    lengths = _ints(lengths_t, "rnn")
    given = None if hx is None else list(hx) if isinstance(hx, (tuple, list)) else [hx]
    outputs, finals, order = [], [], []
    steps = int(lengths.max())
    for length in sorted(set(lengths.tolist()), reverse=True):
        rows = np.flatnonzero(lengths == length)
        x = getitem(padded, (slice(0, length), rows))
        h0 = None if given is None else [getitem(h, (slice(None), rows)) for h in given]
        out, last = layer._forward(swapaxes(x, 0, 1) if layer.batch_first else x,
                                   None if h0 is None else h0[0] if len(h0) == 1 else tuple(h0))
        out = swapaxes(out, 0, 1) if layer.batch_first else out
        outputs.append(_padded_to(out, steps, 0.0, False))  # (the steps after the end: left out when packed)
        finals.append(last)
        order.append(rows)
    back = np.argsort(np.concatenate(order), kind="stable")
    output = getitem(concatenate(outputs, axis=1), (slice(None), back))
    states = [getitem(concatenate([f[k] for f in finals], axis=1), (slice(None), back)) for k in range(len(finals[0]))]
    sorted_order = (_ints(sequence.sorted_indices, "rnn") if sequence.sorted_indices is not None
                    else np.arange(len(lengths)))
    packed = _packed(getitem(output, (slice(None), sorted_order)), lengths[sorted_order], sequence.sorted_indices)
    return packed, states


# -- details -----------------------------------------------------------------------------------------------
def _packed(x: Any, lengths: np.ndarray, order: Tensor | None) -> PackedSequence:
    """The PackedSequence of a time-major batch ``x`` whose sequences are sorted longest first."""
    sizes = (lengths[None, :] > np.arange(int(lengths[0]) if len(lengths) else 0)[:, None]).sum(axis=1)
    data = concatenate([getitem(x, (t, slice(0, int(b)))) for t, b in enumerate(sizes)], axis=0)
    return PackedSequence(data, Tensor(sizes.astype(np.int64)), order, invert_permutation(order))


def _padded_to(x: Any, length: int, value: float, left: bool) -> Any:
    """``x`` (L, *) with ``length - L`` rows of ``value`` after it (before it with ``left``)."""
    extra = length - int(np.shape(x)[0])
    if extra == 0:
        return x
    pad = (0, 0) * (len(np.shape(x)) - 1) + ((extra, 0) if left else (0, extra))
    return F.pad(x if isinstance(x, Tensor) else Tensor(x), pad, value=value)


def _ints(values: Any, where: str) -> np.ndarray:
    """Lengths, sizes or an order as a 1-D int64 host array."""
    raw = values.detach().numpy() if isinstance(values, Tensor) else np.asarray(values)
    if raw.ndim != 1 or (raw.size and raw.dtype.kind not in "iu"):
        raise TypeError(f"{where}: expected a 1-D sequence of integers, got {raw.dtype} of shape {raw.shape}")
    return raw.astype(np.int64)
