"""``jit``: trace a function once, then replay it as a flat program, forward and backward.

Eager chainrule pays Python for every op: a Tensor, a graph node, a topological sort and a
dictionary of gradients. For small arrays that bookkeeping costs more than NumPy's arithmetic.
``jit(fn)`` runs ``fn`` eagerly once while recording each primitive it calls (the *tape*); later
calls with arguments of the same shapes and dtypes run the tape as two straight-line Python
functions generated from it: one calls the primitives' NumPy functions, the other their reverse
rules, in exactly the order (and with exactly the summation order) the eager engine would. The
result is one Tensor whose single graph node hands the tape's gradients to the inputs and to the
tensors ``fn`` reads from outside (e.g. a model's parameters), so ``loss.backward()`` and
optimisers work as usual, with bit-for-bit the eager results.

What a replay checks: every argument has the traced shape, dtype and ``requires_grad`` (numbers and other
plain arguments are equal), else the call is traced again, as JAX's jit does (``static_argnums`` and
``static_argnames`` name arguments that choose what the function does: one trace per value, see
:mod:`chainrule.replay.static_args`). What it checks raising :class:`JitError` when one fails: the tensors read
from outside still have their traced shape, dtype and ``requires_grad``; every value the function
turned into Python during the trace (``bool()``, ``float()``, ``int()``, ``.item()``, ``.tolist()``,
``.numpy()``, ``np.asarray``, ``argmax``/``argmin``/``any``/``all``/``nonzero``/``argsort``, NumPy's
query functions, integer and boolean operators) gives the same answer, so control flow and
constants that depend on values are caught.

``jit_step(loss_fn, optimizer)`` (:mod:`chainrule.replay.step`) replays a whole training step the same
way: forward, backward and the optimiser's update, with no graph object at all.

Under ``vmap`` or ``jvp`` a jitted function runs as it is (no replay). On NumPy arguments (JAX's
``jit(f)(array)``, arrays in lists, tuples and dicts too: ``jit(update)(params, x)``) it traces them as Tensors and
returns arrays; on a device's arrays (CuPy's) or Tensors the trace records and the replay runs on that device (an
argument on another device raises). A function a tape cannot hold (``jit(jacfwd(f))``, ``jit(grad(f))`` or a
``.backward()`` inside: the gradient's rules run outside the tape; in-place changes, such as BatchNorm's running
statistics in training mode; several outputs that require grad; an output that is not a Tensor) runs as it is,
with a ``PerformanceWarning`` saying why: its first call ran eagerly under the trace, so nothing runs twice (for
speed, write ``grad(jit(f))``). A replay whose values read into Python answer otherwise (a branch, a sort's order,
an index Tensor's entries) is traced again: an eager run. A ``create_graph`` backward through a replay raises.
**Values taken out with ``.data`` and computed on with NumPy inside the function are frozen at their traced
values**: compute with chainrule ops instead.
Random ops (``cr.randn``, dropout masks, ...) draw afresh at each replay, from the generator, as eager does;
what the function reads by name (closed-over values, globals, the settings of the modules it calls, such
as ``training``) is guarded: a change traces the function again (:mod:`chainrule.replay.guards`).
The trace of a first call is this thread's (and task's) own (``core/traces.py``): other threads' ops are not
recorded, and they run as usual meanwhile.

Example:
    >>> import numpy as np
    >>> import chainrule as cr
    >>> w = cr.Tensor([1.0, 2.0], requires_grad=True)
    >>> f = cr.jit(lambda x: (cr.tanh(x * w) ** 2).sum())
    >>> x = np.array([0.5, -1.0])
    >>> f(x).backward()                  # first call: eager, recorded
    >>> g1 = w.grad.numpy().copy(); w.grad = None
    >>> f(x).backward()                  # later calls: replayed
    >>> bool(np.array_equal(w.grad.numpy(), g1))
    True
"""

from .jitted import Jitted, jit
from .step import JittedStep, jit_step
from .tape import JitError

__all__ = ["jit", "Jitted", "JitError", "jit_step", "JittedStep"]
