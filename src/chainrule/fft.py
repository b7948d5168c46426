"""``chainrule.fft``: NumPy's discrete Fourier transforms, differentiable (also ``chainrule.numpy.fft``).

The same functions answer ``np.fft.<name>(tensor)``. See :mod:`chainrule.ops.fourier` for how they are
computed (products with the DFT matrix: O(n^2) per line). ``fftfreq`` and ``rfftfreq`` are NumPy's.

Example:
    >>> import numpy as np, chainrule as cr
    >>> import chainrule.fft as cfft
    >>> g = cr.grad(lambda x: np.sum(np.abs(cfft.rfft(x)) ** 2))(np.array([1.0, 0.0, 0.0, 0.0]))
    >>> np.round(g, 12) + 0.0  # 2 * sum over k = 0, 1, 2 of cos(2 pi j k / 4)
    array([6., 0., 2., 0.])
"""

from __future__ import annotations

import numpy as _np

from .ops.declare import declared_in

fftfreq, rfftfreq = _np.fft.fftfreq, _np.fft.rfftfreq

# the functions declared public here (fft, ifft, rfft, ...: ops/fourier.py), by their declarations
globals().update(declared_in("fft"))

__all__ = sorted(declared_in("fft"))  # and fftfreq, rfftfreq: NumPy's constants
