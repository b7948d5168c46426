"""Kernel launches per GPT training step, counted on the strict double (each array operation that computes is one
launch on a GPU, tens of microseconds from Python): a bound per layer, so a change that multiplies them is seen
without a GPU. bench/bench_device_launches.py prints the whole table beside PyTorch's count."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim
from chainrule.gpt.training import lm_loss

device_setup = pytest.importorskip("device_setup")
if device_setup.NAME != "strict":
    pytest.skip("launches are counted by the strict double only", allow_module_level=True)
import strict_device  # noqa: E402
from strict_device import LAUNCHES  # noqa: E402


def _launches(layers: int) -> dict[str, int]:
    device_setup.backend()
    config = nn.GPTConfig(vocab_size=64, context_length=16, d_model=32, n_heads=4, n_layers=layers)
    model = nn.GPT(config, seed=0, dtype=np.float32).to("strict")
    opt = optim.AdamW(optim.weight_decay_groups(model, 0.1), lr=1e-3)
    windows = np.random.default_rng(0).integers(0, 64, (2, 17))
    x, y = (cr.devices.move(w, cr.devices.backend("strict")) for w in (windows[:, :-1], windows[:, 1:]))
    counts = {}
    for _ in range(2):
        reads = strict_device.HOST_COPIES[0]
        opt.zero_grad()
        LAUNCHES.clear()
        loss = lm_loss(model, x, y)
        counts["forward"] = sum(LAUNCHES.values())
        LAUNCHES.clear()
        loss.backward()
        counts["backward"] = sum(LAUNCHES.values())
        LAUNCHES.clear()
        optim.clip_grad_norm_(model.parameters(), 1e-3)
        opt.step()
        counts["update"] = sum(LAUNCHES.values())
        counts["host reads"] = strict_device.HOST_COPIES[0] - reads
    return counts


def test_a_gpt_training_step_reads_nothing_on_the_host():
    """A read is a sync with a GPU (the host stops queueing work ahead of it): the token ids' and the targets'
    range checks are answered with the program's next read, and the clipping scales by the norm where it is."""
    assert _launches(1)["host reads"] == 0


def test_a_gpt_layer_costs_a_bounded_number_of_launches():
    one, two = _launches(1), _launches(2)
    per_layer = {k: two[k] - one[k] for k in one}
    # at the time of writing: forward 23, backward 34, update 0 (a packed module's groups are updated in place);
    # before the norms' and softmax's reductions went into their kernels: 31, 43, 0; before packing: 32, 46, 12
    # (the copy back of 12 parameters); before fused kernels (layer norm, GELU, softmax) and one-reduction index
    # checks: 43, 67, 12; before one vector per group and the layer norm's single reverse pass: 43, 105 and 208
    assert per_layer["forward"] <= 25, per_layer
    assert per_layer["backward"] <= 37, per_layer
    assert per_layer["update"] <= 2, per_layer


def test_layer_norm_gelu_and_softmax_run_as_fused_kernels():
    _launches(1)  # (the last step's counts are left in LAUNCHES: the update's)
    device_setup.backend()
    model = nn.GPT(nn.GPTConfig(vocab_size=64, context_length=16, d_model=32, n_heads=4, n_layers=1), seed=0,
                   dtype=np.float32).to("strict")
    x = cr.devices.move(np.zeros((1, 4), dtype=np.int64), cr.devices.backend("strict"))
    LAUNCHES.clear()
    lm_loss(model, x, x).backward()
    fused = {k: v for k, v in LAUNCHES.items() if k.startswith("fused:")}
    assert {"fused:gelu", "fused:gelu_grad", "fused:normalised_111", "fused:normalised_100", "fused:dnorm_weighted",
            "fused:softmax_quotient_0.35355339059327373_masked", "fused:score_grad_0.35355339059327373",
            "fused:rows_dot"} <= set(fused), fused


@pytest.mark.parametrize("make", [
    lambda ps: optim.Adam(ps, lr=1e-2),
    lambda ps: optim.Adam(ps, lr=1e-2, weight_decay=0.1),  # L2: added to the gradient
    lambda ps: optim.AdamW(ps, lr=1e-2, weight_decay=0.1, maximize=True),
], ids=["plain", "l2", "decoupled"])
def test_an_adam_step_is_one_kernel_per_group_with_the_cpu_step_s_results_bit_for_bit(make):
    backend = device_setup.backend()
    rng = np.random.default_rng(0)
    host = [cr.Tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True) for s in [(3, 4), (4,)]]
    dev = [cr.Tensor(cr.devices.move(p.numpy(), backend), requires_grad=True) for p in host]
    host_opt, dev_opt = make(host), make(dev)
    for step in range(3):
        for params, opt in ((host, host_opt), (dev, dev_opt)):
            opt.zero_grad()
            sum(((p * p).sum() * (step + 1) for p in params), cr.Tensor(np.float32(0))).backward()
            LAUNCHES.clear()
            opt.step()
        assert sum(v for k, v in LAUNCHES.items() if k.startswith("fused:adam")) == 1, LAUNCHES
        for p, q in zip(host, dev):
            np.testing.assert_array_equal(backend.to_host(q.detach()._data), p.detach().numpy())


def test_a_training_step_checks_its_token_ids_and_its_targets_once_each_without_waiting():
    """A range check's answer read on the host at once is a sync with a GPU: the GPT's ids and cross-entropy's
    targets are checked once each (its primitive checks them again only in a jit replay), and the answers read
    with the next value the program reads (as PyTorch's device-side asserts)."""
    device_setup.backend()
    model = nn.GPT(nn.GPTConfig(vocab_size=64, context_length=16, d_model=32, n_heads=4, n_layers=1), seed=0,
                   dtype=np.float32).to("strict")
    x = cr.devices.move(np.ones((2, 8), dtype=np.int64), cr.devices.backend("strict"))
    LAUNCHES.clear()
    copies = strict_device.HOST_COPIES[0]
    lm_loss(model, x, x)
    # one kernel each for the token ids and the targets (positions are rows of their table: nothing to check),
    # answered with the next read: no read (no sync) during the step
    assert LAUNCHES["fused:indices_outside"] == 2 and LAUNCHES["max"] == 1, LAUNCHES  # (the log-sum-exp's)
    assert strict_device.HOST_COPIES[0] == copies
    loss = lm_loss(model, x * 64, x)
    with pytest.raises(ValueError, match=r"GPT: token ids must be in \[0, 64\), got 64\.\.64"):
        float(loss)
    assert float(lm_loss(model, x, x)) > 0  # (the failed check is gone once raised)
