"""chainrule.testing.assert_close: PyTorch's defaults by dtype, its messages, nested inputs."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule.testing import assert_close


def _message(actual, expected, **kw):
    with pytest.raises(AssertionError) as e:
        assert_close(actual, expected, **kw)
    return str(e.value)


def test_float32_defaults_are_pytorchs():
    assert_close(cr.tensor([1.0]), cr.tensor([1.0 + 9e-6]))  # inside atol 1e-5
    assert "not close" in _message(cr.tensor([1.0]), cr.tensor([1.0 + 2e-5]))


def test_float64_defaults_are_pytorchs():
    assert_close(np.array([1.0]), np.array([1.0 + 1.5e-7]))  # 1e-7 + 1e-7 * 1
    assert "up to 1e-07 allowed" in _message(np.array([1.0]), np.array([1.0 + 5e-7]))


def test_float16_defaults_and_the_looser_dtype_wins():
    assert_close(np.float16(1.0) * np.ones(1, np.float16), np.ones(1, np.float16) * np.float16(1.0005))
    assert_close(cr.tensor([1.0]), cr.tensor([1.0 + 5e-6], dtype=cr.float64), check_dtype=False)


def test_integers_and_booleans_compare_exactly():
    assert_close(cr.tensor([1, 2]), cr.tensor([1, 2]))
    message = _message(cr.tensor([1, 2]), cr.tensor([1, 3]))
    assert "Tensor-likes are not equal!" in message and "Greatest absolute difference: 1 at index (1,)" in message
    assert "not equal" in _message(np.array([True, False]), np.array([True, True]))
    assert "not equal" in _message(np.array([2**40]), np.array([2**40 + 1]))


def test_message_names_the_greatest_differences_and_their_indices():
    message = _message(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 2.5], [3.0, 10.0]]))
    assert message.splitlines()[0] == "Tensor-likes are not close!"
    assert "Mismatched elements: 2 / 4 (50.0%)" in message
    assert "Greatest absolute difference: 6.0 at index (1, 1) (up to 1e-07 allowed)" in message
    assert "Greatest relative difference: 0.6 at index (1, 1) (up to 1e-07 allowed)" in message


@pytest.mark.oracle
def test_messages_match_pytorchs():
    torch = pytest.importorskip("torch")
    from torch.testing import assert_close as torch_close

    cases = [([1.0, 2.0, 3.0], [1.0, 2.5, 3.0], "float32"), ([[1.0, 2.0]], [[1.0, np.nan]], "float64"),
             ([1, 2, 5], [1, 3, 5], "int64"), (1.0, 1.5, "float64"), (2.0, 2.5, "float32")]
    for actual, expected, dtype in cases:
        mine = _message(cr.tensor(actual, dtype=dtype), cr.tensor(expected, dtype=dtype))
        with pytest.raises(AssertionError) as theirs:
            torch_close(torch.tensor(actual, dtype=getattr(torch, dtype)),
                        torch.tensor(expected, dtype=getattr(torch, dtype)))
        assert mine == str(theirs.value).replace("torch.Size", "")


def test_scalars_and_python_numbers():
    assert_close(1.0, 1.0 + 5e-8)
    message = _message(1.0, 1.5)
    assert message.startswith("Scalars are not close!") and "Expected 1.5 but got 1.0." in message
    assert_close(cr.tensor(2.0), 2.0)  # a Python number has no dtype to check


def test_shape_and_dtype_are_checked():
    assert "'shape' do not match: (2,) != (3,)" in _message(np.zeros(2), np.zeros(3))
    assert "'dtype' do not match: float32 != float64" in _message(cr.tensor([1.0]), np.array([1.0]))
    assert_close(cr.tensor([1.0]), np.array([1.0]), check_dtype=False)


def test_nan_and_inf():
    assert "not close" in _message(np.array([np.nan]), np.array([np.nan]))
    assert_close(np.array([np.nan, np.inf]), np.array([np.nan, np.inf]), equal_nan=True)
    assert "not close" in _message(np.array([np.inf]), np.array([-np.inf]))


def test_nested_sequences_and_mappings_name_the_failing_item():
    assert_close({"a": [cr.tensor(1.0), np.ones(2)]}, {"a": [cr.tensor(1.0), np.ones(2)]})
    message = _message({"a": [cr.tensor(1.0), np.ones(2)]}, {"a": [cr.tensor(1.0), np.zeros(2)]})
    assert message.endswith("The failure occurred for item ['a'][1]")
    assert "length of the sequences mismatch: 1 != 2" in _message([1.0], [1.0, 2.0])
    assert "keys of the mappings do not match" in _message({"a": 1.0}, {"b": 1.0})


def test_explicit_tolerances_and_msg():
    assert_close(np.array([1.0]), np.array([1.1]), rtol=0.0, atol=0.2)
    assert _message(np.array([1.0]), np.array([2.0]), msg="custom") == "custom"
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        assert_close(1.0, 1.0, rtol=1e-3)
    with pytest.raises(TypeError, match="no comparison for inputs of type object"):
        assert_close(object(), 1.0)
