"""chainrule's warning classes, so that users can filter them as a family.

``ChainruleWarning`` is the base (a ``UserWarning``, so filters written for those still apply);
``PerformanceWarning`` says a result is right but slower than asked for (a jit that cannot replay,
training in one process when the workers could not start).

Example:
    >>> import warnings
    >>> from chainrule.core.errors import ChainruleWarning, PerformanceWarning
    >>> issubclass(PerformanceWarning, ChainruleWarning) and issubclass(ChainruleWarning, UserWarning)
    True
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", ChainruleWarning)   # silence all of chainrule's warnings
"""

from __future__ import annotations


class ChainruleWarning(UserWarning):
    """The base of every warning chainrule gives."""


class PerformanceWarning(ChainruleWarning):
    """The result is right, but it runs slower than asked for (the warning says why and how to fix it)."""


class GradientShapeError(ValueError, RuntimeError):
    """A gradient whose shape does not fit its value (a ``backward(gradient=...)`` seed, or what a rule returned).

    PyTorch raises ``RuntimeError`` there ("Mismatch in shape"), NumPy-style code expects ``ValueError``: an
    ``except`` written for either catches it.
    """


class GradDtypeError(TypeError, RuntimeError):
    """A tensor whose dtype cannot require grad (an integer one) was asked to: a TypeError, and the
    RuntimeError PyTorch raises there ("only Tensors of floating point dtype can require gradients")."""


class IntegerDivisionByZero(ZeroDivisionError, RuntimeError):
    """An integer Tensor divided by zero (``//``, ``%``, ``fmod``): Python's ZeroDivisionError, and the RuntimeError
    PyTorch raises there ("ZeroDivisionError"); NumPy's answer (0, with a warning) would be silently wrong."""
