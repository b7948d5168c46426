"""Training a GPT: AdamW with weight-decay groups, warm-up then cosine, clipping, accumulation,
periodic validation, checkpoints that resume exactly, a progress bar.

One optimiser step (``Trainer.step``) draws ``accum_steps`` micro-batches of random windows,
adds their gradients (each loss divided by ``accum_steps``, so the sum is the mean over all
micro-batches), clips the global gradient norm to ``grad_clip``, takes an AdamW step
(no decay on biases, norms and embeddings: :func:`chainrule.optim.weight_decay_groups`) and
advances the schedule (:class:`chainrule.optim.WarmupCosineLR`). Every ``eval_interval``
steps it measures the validation loss on ``eval_batches`` fixed windows and writes a
checkpoint; :meth:`Trainer.resume` continues a run from a checkpoint with the same weights,
moments, schedule and data order as if it had never stopped.

Example:
    >>> import tempfile
    >>> from chainrule import nn
    >>> from chainrule.gpt import ByteTokenizer, TokenStream, Trainer, TrainConfig, write_tokens
    >>> paths = write_tokens(["def f(x):\\n    return x + 1\\n" * 40], ByteTokenizer(), tempfile.mkdtemp())
    >>> model = nn.GPT(nn.GPTConfig(vocab_size=256, context_length=16, d_model=16, n_heads=2, n_layers=1), seed=0)
    >>> trainer = Trainer(model, TokenStream(paths["train"]), TokenStream(paths["val"]),
    ...                   TrainConfig(batch_size=4, max_steps=30, warmup_steps=3, lr=1e-2, eval_interval=10))
    >>> history = trainer.fit(progress=False)
    >>> history["val_loss"][-1] < history["val_loss"][0]
    True
"""

from __future__ import annotations

import functools
import math
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from ..core.device import CPU, is_off_host, move, of
from ..core.errors import PerformanceWarning
from ..core.state import no_grad
from ..nn import functional as F
from ..nn.progress import progress as progress_bar
from ..nn.serialize import save_checkpoint
from ..optim import AdamW, WarmupCosineLR, clip_grad_norm_, weight_decay_groups
from ..runtime.threads import num_threads
from .averaging import GradientAverager, MPIRanks, wants_mpi
from .checkpoint import FORMAT, generator_states, read_checkpoint, set_generator_states
from .dataset import TokenStream
from .errors import GPTError
from .workers import GradientWorkers, fork_available

__all__ = ["TrainConfig", "Trainer", "lm_loss"]

VAL_SEED_OFFSET = 7919  # the validation windows come from their own generator, the same at every evaluation
UNFIXED = 10**9  # the schedule's length while a time budget has not yet been turned into steps
PROBE_STEPS, WARM_STEPS = 8, 4  # a time budget becomes a length after 8 steps, timed by the last 4 of them
SPLIT_WORK = 5e8  # automatic workers: a micro-batch of at least this many multiply-adds (6 per parameter and token)


@dataclass
class TrainConfig:
    """How to train. ``max_steps``: the schedule's length (``None``: chosen from ``minutes`` after
    timing the first steps); ``minutes``: a wall-clock budget (``None``: none). The cosine decays
    from ``lr`` to ``min_lr`` over the steps after the ``warmup_steps`` linear warm-up.
    ``workers``: processes that share each micro-batch's rows (:mod:`chainrule.gpt.workers`; 1: this
    process alone); ``None`` picks one per thread chainrule may use (``CHAINRULE_NUM_THREADS``, else
    the CPU count, at most 4) where the platform can fork and a micro-batch is big enough to gain."""

    batch_size: int = 32
    accum_steps: int = 1
    lr: float = 3e-3
    min_lr: float = 3e-4
    warmup_steps: int = 50
    max_steps: int | None = 1000
    minutes: float | None = None
    weight_decay: float = 0.1
    betas: tuple[float, float] = (0.9, 0.95)
    eps: float = 1e-8
    grad_clip: float = 1.0
    eval_interval: int = 100
    eval_batches: int = 8
    seed: int = 0
    workers: int | None = None

    def __post_init__(self) -> None:
        for name in ("batch_size", "accum_steps", "eval_interval", "eval_batches"):
            if int(getattr(self, name)) <= 0:
                raise GPTError(f"TrainConfig: {name} must be a positive integer, got {getattr(self, name)!r}")
        if self.workers is not None and int(self.workers) <= 0:
            raise GPTError(f"TrainConfig: workers must be a positive integer or None (automatic), got {self.workers!r}")
        if self.max_steps is None and self.minutes is None:
            raise GPTError("TrainConfig: give max_steps, minutes, or both")
        if self.max_steps is not None and int(self.max_steps) <= 0:
            raise GPTError(f"TrainConfig: max_steps must be positive, got {self.max_steps}")
        if self.minutes is not None and not float(self.minutes) > 0:
            raise GPTError(f"TrainConfig: minutes must be positive, got {self.minutes}")
        if self.warmup_steps < 0 or not self.lr > 0 or not 0 <= self.min_lr <= self.lr:
            raise GPTError(f"TrainConfig: need warmup_steps >= 0 and 0 <= min_lr <= lr, got {self.warmup_steps}, "
                           f"{self.min_lr}, {self.lr}")
        self.betas = (float(self.betas[0]), float(self.betas[1]))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["betas"] = list(self.betas)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrainConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: (tuple(v) if k == "betas" else v) for k, v in d.items() if k in known})


def _checked_here(method: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``method`` without NumPy's floating-point warnings: the trainer checks losses, gradients and
    weights itself and stops a run that turns non-finite with one line, which those warnings would bury."""

    @functools.wraps(method)
    def quiet(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return method(*args, **kwargs)

    return quiet


def lm_loss(model: Any, x: np.ndarray, y: np.ndarray) -> Any:
    """Mean cross-entropy of the next-token predictions ``model(x)`` against targets ``y``.

    Host token windows go to the model's device first (one small copy of ``batch * context`` integers)."""
    device = next((of(p._data) for p in model.parameters()), CPU)
    if device is not CPU:
        x, y = move(x, device), move(y, device)
    logits = model(x)
    b, t, v = logits.shape
    return F.cross_entropy(logits.reshape(b * t, v), y.reshape(b * t), ignore_index=None)  # (none: no wait on a GPU)


class Trainer:
    """Trains ``model`` on windows of ``train`` and validates on ``val`` (both :class:`TokenStream`).

    ``checkpoint_path``: where :meth:`fit` saves (``None``: nowhere); ``tokenizer``: stored in the
    checkpoint (so :func:`chainrule.gpt.load_gpt` can encode prompts); ``extra``: more values to store.
    ``parallel``: who shares each batch (:mod:`chainrule.gpt.averaging`): ``"fork"``, forked workers on this
    machine (``config.workers``); ``"mpi"``, the ranks of the ``mpiexec`` job, rank 0 alone writing files
    and the progress bar; ``"auto"`` (default), MPI when a launcher started several processes, else fork.
    """

    def __init__(self, model: Any, train: TokenStream, val: TokenStream, config: TrainConfig,
                 checkpoint_path: str | os.PathLike[str] | None = None, tokenizer: Any = None,
                 extra: dict[str, Any] | None = None, parallel: str = "auto") -> None:
        self.model, self.train_data, self.val_data, self.config = model, train, val, config
        self.context = model.config.context_length
        for name, stream in (("training", train), ("validation", val)):
            if len(stream) < self.context + 1:
                raise GPTError(
                    f"the {name} tokens ({len(stream)}) are fewer than context_length + 1 = {self.context + 1}; "
                    "use a bigger corpus or a shorter context"
                )
        self.checkpoint_path = None if checkpoint_path is None else os.fspath(checkpoint_path)
        self.extra = dict(extra or {})
        if tokenizer is not None:
            self.extra["tokenizer"] = tokenizer.spec()
        c = config
        self.optimizer = AdamW(weight_decay_groups(model, c.weight_decay), lr=c.lr, betas=c.betas, eps=c.eps)
        total = c.max_steps if c.max_steps is not None else UNFIXED  # fixed after timing the first steps
        warmup = min(c.warmup_steps, total - 1)
        self.scheduler = WarmupCosineLR(self.optimizer, warmup, total, eta_min=c.min_lr)
        self.rng = np.random.default_rng(c.seed)
        self.step_count = 0
        self.tokens_per_step = c.batch_size * c.accum_steps * self.context
        self.history: dict[str, list[float]] = {"step": [], "train_loss": [], "lr": [], "val_step": [],
                                                "val_loss": [], "tokens_per_s": []}
        self.mpi = wants_mpi(parallel)
        self._workers: GradientAverager | None = MPIRanks(model, lm_loss) if self.mpi else None
        self.processes = self._workers.processes if self._workers is not None else self._processes()
        self.budget_seconds = None if c.minutes is None else 60.0 * c.minutes  # fit's time budget (None: none)
        self.plan_to_budget = c.max_steps is None  # the schedule's length follows the budget
        self.val_seconds: float | None = None  # measured time of one validation and checkpoint
        self.saved_step: int | None = None  # the step of the last checkpoint written or resumed from

    def _processes(self) -> int:
        """How many processes share each micro-batch (see TrainConfig.workers)."""
        c = self.config
        if any(is_off_host(p._data) for p in self.model.parameters()):
            return 1  # on a GPU: one process (the device computes in parallel)
        if c.workers is not None:
            wanted = int(c.workers)
        else:
            params = sum(int(p._data.size) for p in self.model.parameters())
            big = 6.0 * params * c.batch_size * self.context >= SPLIT_WORK
            wanted = num_threads() if big else 1
        return max(1, min(wanted, c.batch_size)) if fork_available() else 1

    @property
    def writer(self) -> bool:
        """Whether this process writes the checkpoints and the progress bar (under MPI: rank 0 alone)."""
        return self._workers is None or self._workers.writer

    def _gradient_workers(self) -> GradientAverager | None:
        """The workers for this step (started at the first, again if the model's parameters changed)."""
        if self.mpi:
            if not self._workers.matches(self.model):
                self._workers = MPIRanks(self.model, lm_loss)
            return self._workers
        if self.processes == 1:
            return None
        if self._workers is not None and not self._workers.matches(self.model):
            self.close()
        if self._workers is None:
            try:
                self._workers = GradientWorkers(self.model, lm_loss, self.processes)
            except OSError as e:  # no fork here (a sandbox, a process limit): the same step in one process
                warnings.warn(f"Trainer: could not start {self.processes - 1} worker process(es) ({e}); "
                              "training in this process alone (TrainConfig(workers=1) silences this)",
                              PerformanceWarning, stacklevel=3)
                self.processes = 1
        return self._workers

    def close(self) -> None:
        """End the worker processes, if any (the next step starts new ones); :meth:`fit` calls it at the end."""
        if self._workers is not None and not self.mpi:  # (MPI ranks are the job's: they stay)
            self._workers.close()
            self._workers = None

    @property
    def total_steps(self) -> int:
        return self.scheduler.total_steps

    # -- one step ------------------------------------------------------------------------------
    @_checked_here
    def step(self) -> tuple[float, float]:
        """One optimiser step (``accum_steps`` micro-batches); returns (mean loss, gradient norm before clipping)."""
        c, model = self.config, self.model
        model.train()
        self.optimizer.zero_grad()
        workers = self._gradient_workers()
        total = 0.0
        for _ in range(c.accum_steps):
            x, y = self.train_data.batch(c.batch_size, self.context, self.rng)
            if workers is not None:
                total += workers.accumulate(x, y, 1.0 / c.accum_steps, self.step_count, c.seed)
                continue
            loss = lm_loss(model, x, y)
            scaled = loss / c.accum_steps if c.accum_steps > 1 else loss  # the summed gradients are the mean's
            scaled.backward()
            total += float(loss)
        if workers is not None:
            total = workers.finish(total)
        norm = float(clip_grad_norm_(model.parameters(), c.grad_clip)) if c.grad_clip > 0 else float("nan")
        lr = self.optimizer.param_groups[0]["lr"]
        self.optimizer.step()
        self.scheduler.step()
        self.step_count += 1
        loss_value = total / c.accum_steps
        self.history["step"].append(self.step_count)
        self.history["train_loss"].append(loss_value)
        self.history["lr"].append(lr)
        return loss_value, norm

    @_checked_here
    def evaluate(self) -> float:
        """Mean loss on ``eval_batches`` validation windows (the same windows every time)."""
        c, model = self.config, self.model
        rng = np.random.default_rng(c.seed + VAL_SEED_OFFSET)
        was_training = model.training
        model.eval()
        try:
            with no_grad():
                losses = [float(lm_loss(model, *self.val_data.batch(c.batch_size, self.context, rng)))
                          for _ in range(c.eval_batches)]
        finally:
            model.train(was_training)
        return float(np.mean(losses))

    # -- the loop ------------------------------------------------------------------------------
    def fit(self, progress: bool = True, stop_after: int | None = None) -> dict[str, list[float]]:
        """Train until the schedule ends or the time budget is spent (or ``stop_after`` more steps,
        to interrupt on purpose); validates and checkpoints every ``eval_interval`` steps and at
        the end. Returns the history (steps, losses, learning rates, tokens/s).

        A schedule fitted to a time budget (``max_steps=None``) is re-planned at every step from the
        measured step and validation times, so its decay ends at the deadline. A loss, gradient or
        weight that turns non-finite stops the run with :class:`GPTError`; the last checkpoint
        written (all finite) is kept."""
        c = self.config
        budget = self.budget_seconds
        start = time.perf_counter()
        train_time, durations = 0.0, []
        stop_at = self.step_count + stop_after if stop_after is not None else None
        target = self.total_steps if stop_at is None else min(self.total_steps, stop_at)
        bar = progress_bar(total=self.total_steps if self.total_steps < UNFIXED else None, initial=self.step_count,
                           desc="train", disable=not progress or not self.writer, unit="step", dynamic_ncols=True)
        try:
            while self.step_count < target:
                if budget is not None and self._agree(time.perf_counter() - start >= budget):
                    break
                t0 = time.perf_counter()
                loss, norm = self.step()
                dt = time.perf_counter() - t0
                self._check_step(loss, norm)
                train_time += dt
                durations.append(dt)
                if self.plan_to_budget and budget is not None and len(durations) >= PROBE_STEPS:
                    # (the first steps are slower: memory is being mapped, workers started)
                    if self.val_seconds is None:
                        self.val_seconds = self._agree(self._time_validation())  # (ranks plan alike)
                    recent = durations[max(WARM_STEPS, len(durations) - 50):]
                    self._plan(*self._agree((budget - (time.perf_counter() - start), float(np.median(recent)))))
                    target = self.total_steps if stop_at is None else min(self.total_steps, stop_at)
                    bar.total = self.total_steps
                tps = self.tokens_per_step * len(durations) / train_time
                self.history["tokens_per_s"].append(tps)
                bar.update(1)
                postfix = {"loss": f"{loss:.3f}", "tok/s": f"{tps:,.0f}"}
                if self.history["val_loss"]:
                    postfix["val"] = f"{self.history['val_loss'][-1]:.3f}"
                bar.set_postfix(postfix, refresh=False)
                if self.step_count % c.eval_interval == 0:
                    self._validate_and_save()
            if not self.history["val_step"] or self.history["val_step"][-1] != self.step_count:
                self._validate_and_save()
        finally:
            bar.close()
            self.close()
        return self.history

    def _agree(self, value: Any) -> Any:
        """Rank 0's ``value`` on every MPI rank (the ranks must stop at the same step); ``value`` otherwise."""
        return value if self._workers is None else self._workers.agree(value)

    def _plan(self, seconds_left: float, seconds_per_step: float) -> None:
        """Fit the schedule's length to the time left: n more steps cost n step times plus a validation
        (and checkpoint) every ``eval_interval`` steps and one at the end. Small changes are ignored,
        so the learning rate does not jitter with the timings."""
        c = self.config
        val = self.val_seconds or 0.0
        steps_left = max(0, int((seconds_left - val) / (seconds_per_step + val / c.eval_interval)))
        total = max(self.step_count + steps_left, 1)
        current = self.scheduler.total_steps
        if current != UNFIXED and total > self.step_count and abs(total - current) <= max(1.0, 0.01 * current):
            return
        self.scheduler.total_steps = total
        self.scheduler.warmup_steps = min(c.warmup_steps, total - 1)

    def _time_validation(self) -> float:
        """The seconds one validation will take, from one of its batches timed now (a guess from the
        step time can be far off: validation runs in this process alone, in eval mode)."""
        c, model = self.config, self.model
        rng = np.random.default_rng(c.seed + VAL_SEED_OFFSET)
        start = time.perf_counter()
        model.eval()
        try:
            with no_grad():
                lm_loss(model, *self.val_data.batch(c.batch_size, self.context, rng))
        finally:
            model.train()
        return (time.perf_counter() - start) * c.eval_batches

    def _check_step(self, loss: float, norm: float) -> None:
        if math.isfinite(loss) and (math.isfinite(norm) or self.config.grad_clip <= 0):
            return
        what = f"training loss is {loss}" if not math.isfinite(loss) else f"gradient norm is {norm}"
        self._diverged(what)

    def _diverged(self, what: str) -> None:
        lr = self.history["lr"][-1] if self.history["lr"] else self.config.lr
        if self.checkpoint_path is None:
            kept = "stopped"
        elif self.saved_step is None:
            kept = "stopped before any checkpoint was written"
        else:
            kept = f"stopped; the last finite checkpoint (step {self.saved_step}) is kept in {self.checkpoint_path}"
        raise GPTError(f"training diverged at step {self.step_count}: the {what} (learning rate {lr:.3g}); {kept}; "
                       "train with a lower learning rate (--lr)")

    def _validate_and_save(self) -> None:
        t0 = time.perf_counter()
        val_loss = self.evaluate()
        if not math.isfinite(val_loss):
            self._diverged(f"validation loss is {val_loss}")
        bad = next((n for n, p in self.model.named_parameters() if not np.isfinite(p._data).all()), None)
        if bad is not None:
            self._diverged(f"weight {bad!r} is not finite")
        self.history["val_step"].append(self.step_count)
        self.history["val_loss"].append(val_loss)
        if self.checkpoint_path is not None and self.writer:
            self.save(self.checkpoint_path)
        self.val_seconds = self._agree(time.perf_counter() - t0)

    # -- checkpoints ---------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write a checkpoint that :meth:`resume` continues exactly (safe ``.npz``)."""
        save_checkpoint(
            path, model=self.model, optimizer=self.optimizer, scheduler=self.scheduler,
            format=FORMAT, step=self.step_count, model_config=self.model.config.to_dict(),
            train_config=self.config.to_dict(), data_rng=self.rng.bit_generator.state,
            module_rngs=generator_states(self.model), history=self.history, **self.extra,
        )
        self.saved_step = self.step_count

    def resume(self, path: str | os.PathLike[str]) -> None:
        """Load a checkpoint written by :meth:`save` into this trainer (same model shape)."""
        state = read_checkpoint(path)
        extra = state["extra"]
        if _config_dict(self.model.config, extra.get("model_config")) != self.model.config.to_dict():
            raise GPTError(
                f"checkpoint {os.fspath(path)!r} holds a model of another shape: {extra.get('model_config')}"
            )
        try:
            self.model.load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
            self.scheduler.load_state_dict(state["scheduler"])
            self.rng.bit_generator.state = extra["data_rng"]
            set_generator_states(self.model, extra.get("module_rngs", {}))
            self.step_count = self.saved_step = int(extra["step"])
            self.plan_to_budget = False  # keep the saved schedule (set it to True to re-fit it to this budget)
            self.history = {k: [float(v) for v in vals] for k, vals in extra["history"].items()}
        except (KeyError, TypeError, ValueError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise GPTError(f"checkpoint {os.fspath(path)!r} is damaged: it does not resume ({first})") from None
        for k in ("step", "val_step"):
            self.history[k] = [int(v) for v in self.history[k]]


def _config_dict(config: Any, saved: Any) -> Any:
    """A saved model config with the fields it lacks at their defaults (older checkpoints: GPT-2's recipe)."""
    try:
        return type(config)(**saved).to_dict()
    except (TypeError, ValueError):
        return saved
