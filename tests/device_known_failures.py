"""The op cases (``op_cases.CASES``) known not to run yet on a device that refuses hidden host copies (the strict
double of CuPy), each with where it fails, as measured by ``tests/test_device_ops.py``. They are expected
failures (strict on the double: a case that starts passing must leave this list). Most are one of two kinds:

- the case itself builds a host constant (a NumPy mask, condition or index array) and mixes it with device
  values: on a GPU the caller would pass device arrays; the double (like CuPy) refuses the mix;
- a rule still makes a host array (``np.zeros(shape)``, ``np.arange``, ``np.add.at`` on host indices) where it
  should make it from its inputs' module: device work not yet done for that op.

Every such failure is an error naming the op, never a silent host round trip.

``LACKING``: the cases of functions a GPU's special functions (``cupyx.scipy.special``) do not have, nor the
strict double's: there the expected outcome is the error naming the function and the device, which the test
checks (a device that has them fails the test: its case must then leave the list).
"""

KNOWN: dict[str, str] = {}  # every case runs on the double now (the last ones made their constants on the host)

LACKING: dict[str, str] = {
    name: f"cupyx.scipy.special has no {name} (it has the orders 0 and 1: j0, j1, y0, y1, i0, i1, i0e, i1e; and yn)"
    for name in ("jn", "yv", "ive", "jv", "iv")
}
