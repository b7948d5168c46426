"""A dtype PyTorch has and NumPy lacks (``bfloat16``), as a name that can be written but not computed with.

PyTorch programs name ``torch.bfloat16`` in places that compute nothing: a table of dtypes built at the top of a
training script, an ``autocast(dtype=...)`` that chainrule ignores, a comparison. Those run; an array of it
cannot be made, and every attempt (``dtype=``, ``.to()``, ``astype``) raises a TypeError saying what to use,
through NumPy's own lookup of a ``dtype`` attribute.

Example:
    >>> import chainrule as cr
    >>> table = {"float32": cr.float32, "bfloat16": cr.bfloat16}
    >>> table["bfloat16"]
    chainrule.bfloat16
    >>> cr.zeros(2, dtype=cr.bfloat16)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: bfloat16: NumPy, chainrule's engine, has no bfloat16 type; use chainrule.float32 (or ...)
"""

from __future__ import annotations

from typing import NoReturn


class AbsentDtype:
    """A dtype that can be named but has no NumPy type (see the module's docstring)."""

    is_floating_point = True
    is_complex = False
    is_signed = True
    itemsize = 2

    def __init__(self, name: str, fix: str) -> None:
        self.name = name
        self._fix = fix

    def __repr__(self) -> str:
        return f"chainrule.{self.name}"

    @property
    def dtype(self) -> NoReturn:  # (NumPy's np.dtype(x) reads x.dtype: this error is what it raises)
        raise TypeError(f"{self.name}: NumPy, chainrule's engine, has no {self.name} type; {self._fix}")


bfloat16 = AbsentDtype("bfloat16", "use chainrule.float32 (or chainrule.float16 for half precision)")
