"""The GPT trainer and sampler never pass NaN on silently, and a time budget always ends its decay."""

from __future__ import annotations

import numpy as np
import pytest

from chainrule import nn
from chainrule.gpt import ByteTokenizer, GPTError, TokenStream, TrainConfig, Trainer, load_gpt, training, write_tokens

TINY = dict(vocab_size=256, context_length=16, d_model=16, n_heads=2, n_layers=1)
CODE = [f"def add_{i}(x):\n    return x + {i}\n" for i in range(200)]


def streams(folder):
    paths = write_tokens(CODE, ByteTokenizer(), folder)
    return TokenStream(paths["train"]), TokenStream(paths["val"])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN arithmetic on the NaN weights
def test_a_run_that_turns_non_finite_stops_and_keeps_the_last_finite_checkpoint(tmp_path, monkeypatch):
    train, val = streams(tmp_path)
    ckpt = tmp_path / "c.npz"
    trainer = Trainer(nn.GPT(nn.GPTConfig(**TINY), seed=0), train, val,
                      TrainConfig(batch_size=4, max_steps=20, warmup_steps=2, eval_interval=2),
                      checkpoint_path=ckpt, tokenizer=ByteTokenizer())
    real_step = trainer.step

    def step():
        if trainer.step_count == 5:  # as a too-large learning rate does: the weights overflow
            trainer.model.wte.weight.data[0, 0] = np.inf
        return real_step()

    monkeypatch.setattr(trainer, "step", step)
    with pytest.raises(GPTError, match=r"training diverged at step 6: the training loss is nan .*; stopped; the last "
                                       r"finite checkpoint \(step 4\) is kept in .*c\.npz; train with a lower"):
        trainer.fit(progress=False)
    model, _, extra = load_gpt(ckpt)
    assert extra["step"] == 4 and all(np.isfinite(p.data).all() for p in model.parameters())


def test_non_finite_weights_found_at_validation_are_not_saved(tmp_path):
    train, val = streams(tmp_path)
    trainer = Trainer(nn.GPT(nn.GPTConfig(**TINY), seed=0), train, val,
                      TrainConfig(batch_size=4, max_steps=3, warmup_steps=1, eval_interval=10),
                      checkpoint_path=tmp_path / "c.npz")
    trainer.fit(progress=False)
    trainer.model.blocks[0].ln_1.weight.data[:] = np.nan  # a layer the loss has not reached yet
    with pytest.raises(GPTError, match="stopped; the last finite checkpoint \\(step 3\\)"):
        trainer._validate_and_save()


def test_sampling_refuses_non_finite_probabilities_and_temperatures():
    model = nn.GPT(nn.GPTConfig(**TINY), seed=0)
    prompt = np.array([[1, 2]])
    for bad in (np.nan, np.inf, -1.0):
        with pytest.raises(ValueError, match="temperature must be a finite number >= 0"):
            model.generate(prompt, 3, temperature=bad)
    with pytest.raises(ValueError, match="make the probabilities non-finite|makes the probabilities non-finite"):
        model.generate(prompt, 3, temperature=1e-320)
    model.wte.weight.data[5] = np.nan
    with pytest.raises(ValueError, match="logits hold NaN or inf"):
        model.generate(np.array([[5]]), 3, temperature=0.0)


def test_a_checkpoint_with_nan_weights_is_refused(tmp_path):
    train, val = streams(tmp_path)
    trainer = Trainer(nn.GPT(nn.GPTConfig(**TINY), seed=0), train, val,
                      TrainConfig(batch_size=4, max_steps=1, warmup_steps=0), tokenizer=ByteTokenizer())
    trainer.fit(progress=False)
    trainer.model.wpe.weight.data[1, 1] = np.nan
    trainer.save(tmp_path / "nan.npz")
    with pytest.raises(GPTError, match=r"holds non-finite weights \(NaN or inf in 'wpe.weight'\)"):
        load_gpt(tmp_path / "nan.npz")


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


def test_a_time_budget_ends_the_decay_even_when_validation_is_slow(tmp_path, monkeypatch):
    """Validation takes 2/3 of the time (0.2 s every 10 steps of 0.01 s): the decay still ends."""
    clock = FakeClock()
    monkeypatch.setattr(training, "time", clock)
    train, val = streams(tmp_path)
    config = TrainConfig(batch_size=2, max_steps=None, minutes=0.05, warmup_steps=2, lr=1e-2, min_lr=1e-3,
                         eval_interval=10, eval_batches=1)
    trainer = Trainer(nn.GPT(nn.GPTConfig(**TINY), seed=0), train, val, config)
    real_step, real_eval = trainer.step, trainer.evaluate
    monkeypatch.setattr(trainer, "step", lambda: (setattr(clock, "now", clock.now + 0.01), real_step())[1])
    monkeypatch.setattr(trainer, "evaluate", lambda: (setattr(clock, "now", clock.now + 0.2), real_eval())[1])
    history = trainer.fit(progress=False)
    assert clock.now <= 3.0 + 0.2 + 0.01  # the budget holds (the last validation may end just after it)
    assert trainer.step_count >= 0.95 * trainer.total_steps and 80 <= trainer.step_count <= 100
    assert history["lr"][-1] <= 1e-3 + 0.02 * (1e-2 - 1e-3)  # the learning rate decayed to its floor


def test_memory_docstring_example_runs_and_the_formula_counts_every_layout():
    import doctest

    from chainrule.gpt import memory

    result = doctest.testmod(memory)
    assert result.attempted > 0 and result.failed == 0
    for kw in (dict(bias=False), dict(tied_embeddings=False, mlp_ratio=2), dict(n_layers=3, n_heads=4)):
        config = nn.GPTConfig(**{**TINY, **kw})
        assert memory.parameter_count(config) == nn.GPT(config).num_parameters()
