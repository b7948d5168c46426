"""GPT checkpoints: one safe ``.npz`` (never unpickled) with everything a run needs to go on.

It holds the model's weights, the optimiser's moments, the schedule's step, the training
step, the data generator's state (and the dropout layers'), the model and training
configurations, the tokenizer, and the loss history: :func:`load_gpt` rebuilds the model and
tokenizer from the file alone, and :class:`chainrule.gpt.Trainer` resumes from it exactly.
Any problem reading it (missing, truncated, not a GPT checkpoint, pickled content) becomes a
one-line :class:`GPTError`.
"""

from __future__ import annotations

import os
import zipfile
from typing import Any

import numpy as np

from ..nn.language_model.model import GPT, GPTConfig
from ..nn.serialize import UnsafeFileError, load
from .errors import GPTError
from .tokens import Tokenizer, tokenizer_from_spec

__all__ = ["FORMAT", "load_gpt", "read_checkpoint", "check_model_state", "generator_states", "set_generator_states"]

FORMAT = "chainrule-gpt/1"


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def read_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The checkpoint's contents: ``{'model', 'optimizer', 'scheduler', 'extra'}`` (checked)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise GPTError(f"checkpoint {path!r} does not exist" if not os.path.exists(path) else
                       f"checkpoint {path!r} is not a file")
    try:
        state = load(path)
    except UnsafeFileError:
        raise GPTError(f"checkpoint {path!r} holds pickled Python objects; refused (loading could run code)") from None
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as e:
        reason = _one_line(e).removeprefix(f"load: {path} ").removeprefix("is damaged: ")
        reason = reason.split("; save it again")[0]  # (said by the message around it)
        if "not a NumPy .npz archive" in reason:  # nn.load's long explanation says no more than this
            raise GPTError(f"checkpoint {path!r} is damaged or not an .npz archive") from None
        reason = reason if len(reason) <= 120 else reason[:117] + "..."
        raise GPTError(f"checkpoint {path!r} is damaged or not an .npz archive ({reason})") from None
    extra = state.get("extra") if isinstance(state, dict) else None
    if not isinstance(extra, dict) or extra.get("format") != FORMAT or "model" not in state:
        raise GPTError(f"checkpoint {path!r} is not a chainrule GPT checkpoint (written by `chainrule gpt train`)")
    return state


def load_gpt(path: str | os.PathLike[str]) -> tuple[GPT, Tokenizer, dict[str, Any]]:
    """``(model, tokenizer, extra)`` from a checkpoint; the model is in eval mode.

    ``extra`` holds ``step``, ``model_config``, ``train_config``, ``history`` and the rest.
    """
    state = read_checkpoint(path)
    extra = state["extra"]
    try:
        config = GPTConfig(**extra["model_config"])
        check_model_state(config, state["model"], path)
        dtype = np.asarray(state["model"]["wte.weight"]).dtype
        model = GPT(config, seed=0, dtype=dtype)
        model.load_state_dict(state["model"])
    except GPTError:
        raise
    except (KeyError, TypeError, ValueError) as e:
        raise GPTError(f"checkpoint {os.fspath(path)!r} is damaged: its model does not load ({_one_line(e)})") from None
    for name, p in model.named_parameters():
        if not np.isfinite(p._data).all():
            raise GPTError(f"checkpoint {os.fspath(path)!r} holds non-finite weights (NaN or inf in {name!r}): its run "
                           "diverged; train again with a lower --lr")
    if "tokenizer" not in extra:
        raise GPTError(f"checkpoint {os.fspath(path)!r} holds no tokenizer (train with Trainer(..., tokenizer=...))")
    tokenizer = tokenizer_from_spec(extra["tokenizer"])
    if tokenizer.vocab_size > config.vocab_size:
        raise GPTError(
            f"checkpoint {os.fspath(path)!r} is damaged: its tokenizer has {tokenizer.vocab_size} tokens but the "
            f"model only {config.vocab_size}"
        )
    return model.eval(), tokenizer, extra


def check_model_state(config: GPTConfig, weights: Any, path: str | os.PathLike[str]) -> None:
    """Refuse a checkpoint whose model config does not describe the weights it holds, before the
    model is built (a damaged manifest claiming ``d_model`` 10**6 would otherwise allocate terabytes)."""
    from .memory import parameter_count

    held = sum(int(np.asarray(w).size) for w in weights.values()) if isinstance(weights, dict) else -1
    wanted = parameter_count(config)
    if held != wanted:
        shape = ", ".join(f"{k} {getattr(config, k)}" for k in ("n_layers", "d_model", "n_heads", "context_length",
                                                                "vocab_size"))
        raise GPTError(f"checkpoint {os.fspath(path)!r} is damaged: its model does not load (its configuration, "
                       f"{shape}, makes {wanted:,} weights but the file holds {held:,})")


def generator_states(model: Any) -> dict[str, Any]:
    """The state of every NumPy generator a sub-module keeps in ``.rng`` (dropout masks), by module name."""
    return {name: mod.rng.bit_generator.state for name, mod in model.named_modules()
            if isinstance(getattr(mod, "rng", None), np.random.Generator)}


def set_generator_states(model: Any, states: dict[str, Any]) -> None:
    """Restore :func:`generator_states` (so dropout draws the masks an uninterrupted run would)."""
    mods = dict(model.named_modules())
    for name, st in states.items():
        if name in mods and isinstance(getattr(mods[name], "rng", None), np.random.Generator):
            mods[name].rng.bit_generator.state = st
