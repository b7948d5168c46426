"""The special functions: the error function in plain NumPy (``gauss``), SciPy's special functions with
derivatives (``scipy_special``, ``bessel``; SciPy is an optional extra, imported only by them) and where a
device finds its own (``device``: ``cupyx.scipy.special`` on a GPU)."""
