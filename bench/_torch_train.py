"""PyTorch's side of a training run as ``chainrule.gpt.Trainer`` makes it (bench_gpt_quality.py): the same
windows in the same order, AdamW with the same weight-decay groups, warm-up then cosine fitted to a time
budget the way the Trainer fits it, clipping, and a validation every ``eval_interval`` steps (it costs both
libraries the same time).

``train(torch, model, train, val, config, context)`` runs it and returns the history.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from _torch_gpt import torch_weight_decay_groups

from chainrule import Tensor, optim
from chainrule.gpt.training import PROBE_STEPS, UNFIXED, VAL_SEED_OFFSET, WARM_STEPS


def _loss(torch: Any, model: Any, x: np.ndarray, y: np.ndarray) -> Any:
    logits = model(torch.from_numpy(x))
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.from_numpy(y).reshape(-1))


def evaluate(torch: Any, model: Any, val: Any, config: Any, context: int) -> float:
    """Mean loss on the Trainer's validation windows (the same ones every time)."""
    rng = np.random.default_rng(config.seed + VAL_SEED_OFFSET)
    model.eval()
    with torch.no_grad():
        losses = [float(_loss(torch, model, *val.batch(config.batch_size, context, rng)))
                  for _ in range(config.eval_batches)]
    model.train()
    return float(np.mean(losses))


def train(torch: Any, model: Any, train_data: Any, val: Any, config: Any, context: int) -> dict[str, list[float]]:
    """Train ``model`` as the Trainer trains a chainrule GPT with ``config`` (a ``TrainConfig``)."""
    c = config
    opt = torch.optim.AdamW(torch_weight_decay_groups(model, c.weight_decay), lr=c.lr, betas=c.betas, eps=c.eps)
    # the Trainer's schedule object computes the rates (its optimiser is a stand-in: only lr_at is used)
    stand_in = optim.SGD([Tensor([0.0], requires_grad=True)], lr=c.lr)
    total = c.max_steps or UNFIXED
    schedule = optim.WarmupCosineLR(stand_in, min(c.warmup_steps, total - 1), total, eta_min=c.min_lr)
    rng = np.random.default_rng(c.seed)
    budget = None if c.minutes is None else 60.0 * c.minutes
    history: dict[str, list[float]] = {"train_loss": [], "val_step": [], "val_loss": []}
    durations: list[float] = []
    val_seconds = None
    step, start = 0, time.perf_counter()
    model.train()
    while step < schedule.total_steps and not (budget is not None and time.perf_counter() - start >= budget):
        t0 = time.perf_counter()
        for group in opt.param_groups:
            group["lr"] = schedule.lr_at(c.lr, step)
        opt.zero_grad()
        loss = _loss(torch, model, *train_data.batch(c.batch_size, context, rng))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), c.grad_clip)
        opt.step()
        step += 1
        durations.append(time.perf_counter() - t0)
        history["train_loss"].append(float(loss.detach()))
        if c.max_steps is None and budget is not None and len(durations) >= PROBE_STEPS:
            if val_seconds is None:  # one validation batch timed, as the Trainer does
                t1 = time.perf_counter()
                model.eval()
                with torch.no_grad():
                    _loss(torch, model, *val.batch(c.batch_size, context, np.random.default_rng(0)))
                model.train()
                val_seconds = (time.perf_counter() - t1) * c.eval_batches
            _plan(schedule, c, step, budget - (time.perf_counter() - start),
                  float(np.median(durations[max(WARM_STEPS, len(durations) - 50):])), val_seconds)
        if step % c.eval_interval == 0:
            t1 = time.perf_counter()
            history["val_step"].append(step)
            history["val_loss"].append(evaluate(torch, model, val, c, context))
            val_seconds = time.perf_counter() - t1
    if not history["val_step"] or history["val_step"][-1] != step:
        history["val_step"].append(step)
        history["val_loss"].append(evaluate(torch, model, val, c, context))
    history["steps"] = [step]
    history["train_seconds"] = [sum(durations)]
    return history


def _plan(schedule: Any, c: Any, step: int, seconds_left: float, seconds_per_step: float, val: float) -> None:
    """``Trainer._plan``: the schedule's length from the time left (small changes ignored)."""
    steps_left = max(0, int((seconds_left - val) / (seconds_per_step + val / c.eval_interval)))
    total = max(step + steps_left, 1)
    current = schedule.total_steps
    if current != UNFIXED and total > step and abs(total - current) <= max(1.0, 0.01 * current):
        return
    schedule.total_steps = total
    schedule.warmup_steps = min(c.warmup_steps, total - 1)
