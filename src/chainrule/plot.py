"""Pictures for derivatives and descent (matplotlib, an optional extra: ``pip install chainrule[plot]``).

Each function returns the matplotlib figure and saves it when given ``path=``:

- :func:`tangent`: a function of one number with its tangent by autodiff, finite difference
  and (when given) the analytic derivative;
- :func:`vector_field`: colour map + contour lines + gradient arrows of a 2-D function, the
  whole grid evaluated and differentiated in one vectorised call (:func:`gradient_grid`);
- :func:`trajectories`: the paths of ``chainrule.optimize.minimize`` over that map;
- :func:`loss_curve`: values step by step, one run or several.

Figures are made without pyplot, so nothing opens a window and no global state builds up.

Example:
    >>> import numpy as np
    >>> from chainrule.plot import gradient_grid
    >>> X, Y, Z, dX, dY = gradient_grid(lambda x: x[0] ** 2 + 3 * x[1], (-1, 1), (-1, 1), 5)
    >>> dX[0].tolist(), float(dY[0, 0])
    ([-2.0, -1.0, 0.0, 1.0, 2.0], 3.0)
"""

from __future__ import annotations

from .pictures.plot import (
    gradient_grid,
    loss_curve,
    slopes,
    tangent,
    trajectories,
    vector_field,
)

__all__ = ["gradient_grid", "loss_curve", "slopes", "tangent", "trajectories", "vector_field"]
