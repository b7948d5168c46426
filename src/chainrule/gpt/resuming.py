"""What ``chainrule gpt train --resume`` does with the options typed again: it continues the saved
run exactly, so an option that would change the model, the data or the training is refused, naming
it; ``--steps`` extends (or shortens) the schedule; ``--minutes`` re-fits a time-fitted schedule to a
new budget, or caps a fixed one; ``--workers``, ``--quiet`` and ``--out`` only say how this session runs."""

from __future__ import annotations

import os
from typing import Any

from .errors import GPTError

__all__ = ["RECORDED", "recorded_options", "refuse_changes", "apply_schedule_options"]

# option -> where an older checkpoint (without the recorded options) keeps its value
RECORDED = {
    "layers": ("model_config", "n_layers"), "d_model": ("model_config", "d_model"),
    "heads": ("model_config", "n_heads"), "context": ("model_config", "context_length"),
    "dropout": ("model_config", "dropout"), "batch_size": ("train_config", "batch_size"),
    "accum": ("train_config", "accum_steps"), "lr": ("train_config", "lr"), "warmup": None,
    "eval_interval": ("train_config", "eval_interval"), "eval_batches": ("train_config", "eval_batches"),
    "seed": ("train_config", "seed"), "tokenizer": None, "vocab_size": None, "corpus": None, "max_bytes": None,
    "dtype": None, "recipe": None, "norm": None, "mlp": None, "position": None, "kv_heads": None,
    "rope_theta": None, "bias": None,
}
# options read from the saved model config itself (an older one, without these fields, is GPT-2's recipe)
FROM_CONFIG = {"recipe": "recipe", "norm": "norm", "mlp": "mlp", "position": "position", "kv_heads": "kv_heads",
               "rope_theta": "rope_theta", "bias": "bias"}


def recorded_options(args: Any) -> dict[str, Any]:
    """The options of a new run that ``--resume`` compares against, as stored in its checkpoint."""
    return {name: getattr(args, name) for name in RECORDED if hasattr(args, name)}


def _saved(name: str, extra: dict[str, Any]) -> Any:
    recorded = extra.get("cli_options")
    if isinstance(recorded, dict) and name in recorded:
        return recorded[name]
    if name == "tokenizer":
        return (extra.get("tokenizer") or {}).get("kind")
    if name == "dtype":
        return extra.get("dtype")
    if name in FROM_CONFIG:
        from ..nn.language_model.model import GPTConfig

        try:
            value = getattr(GPTConfig(**extra.get("model_config", {})), FROM_CONFIG[name])
        except (TypeError, ValueError):
            return None
        return ("on" if value else "off") if name == "bias" else value
    where = RECORDED.get(name)
    return None if where is None else (extra.get(where[0]) or {}).get(where[1])


def _same(name: str, typed: Any, saved: Any) -> bool:
    if name == "corpus":
        return saved is None or typed is None or os.path.realpath(str(typed)) == os.path.realpath(str(saved))
    return saved is None or typed == saved


def refuse_changes(args: Any, extra: dict[str, Any]) -> None:
    """Raise :class:`GPTError` naming the first typed option that differs from the saved run."""
    for name in RECORDED:
        if name not in getattr(args, "given_options", ()):
            continue
        typed, saved = getattr(args, name), _saved(name, extra)
        if not _same(name, typed, saved):
            flag = "--" + name.replace("_", "-")
            raise GPTError(f"{flag} {typed} differs from the saved run's {saved}: --resume continues the run in "
                           f"{args.out!r} as it was (drop {flag}, or start a new run with another --out)")


def apply_schedule_options(args: Any, trainer: Any, unfixed: int) -> str:
    """Apply ``--steps`` and ``--minutes`` to a resumed trainer; returns what was done, for the user."""
    config, step = trainer.config, trainer.step_count
    given = getattr(args, "given_options", set())
    notes = []
    if "steps" in given and args.steps != trainer.total_steps:
        if args.steps <= step:
            raise GPTError(f"--steps {args.steps} is not past the saved run's step {step}; give more steps to "
                           "extend its schedule, or drop --steps to finish it")
        verb = "extends" if args.steps > trainer.total_steps or trainer.total_steps >= unfixed else "shortens"
        was = "its time-fitted schedule" if trainer.total_steps >= unfixed else f"the schedule of {trainer.total_steps}"
        notes.append(f"--steps {args.steps} {verb} {was} (the cosine is stretched from here)")
        trainer.scheduler.total_steps = config.max_steps = args.steps
        trainer.scheduler.warmup_steps = min(config.warmup_steps, args.steps - 1)
    if config.max_steps is None:  # a schedule fitted to a time budget
        if args.minutes is not None or trainer.total_steps >= unfixed:
            config.minutes = args.minutes if args.minutes is not None else config.minutes
            trainer.plan_to_budget = True
            notes.append(f"the rest of the schedule is fitted to {config.minutes:g} minute(s)")
        else:
            notes.append("finishing the saved schedule (--minutes M would re-fit it to a new budget)")
            trainer.budget_seconds = None
            return "; ".join(notes)
    elif args.minutes is not None:
        config.minutes = args.minutes
        notes.append(f"--minutes {args.minutes:g} caps this session")
    trainer.budget_seconds = None if config.minutes is None else 60.0 * config.minutes
    return "; ".join(notes)
