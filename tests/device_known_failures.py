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

KNOWN: dict[str, str] = {
    'nn_interpolate_bilinear': 'ops/fused/interpolate.py: the per-axis interpolation matrices are made on the host',
    'nn_interpolate_linear_corners': 'ops/fused/interpolate.py: the per-axis interpolation matrices are made on '
                                     'the host',
    'nn_interpolate_nearest': 'ops/fused/interpolate.py: the per-axis interpolation matrices are made on the host',
    'average_returned': 'ops/shape.py:175: a host array mixed with device values',
    'cnp_r_c': 'ops/shape.py:175: a host array mixed with device values',
    'convolve_full': 'ops/shape.py:175: a host array mixed with device values',
    'convolve_same': 'ops/shape.py:175: a host array mixed with device values',
    'convolve_valid': 'ops/shape.py:175: a host array mixed with device values',
    'correlate_full': 'ops/shape.py:175: a host array mixed with device values',
    'correlate_same': 'ops/shape.py:175: a host array mixed with device values',
    'correlate_valid': 'ops/shape.py:175: a host array mixed with device values',
    'diff_prepend_append': 'ops/shape.py:175: a host array mixed with device values',
    'ediff1d': 'ops/shape.py:175: a host array mixed with device values',
    'fft': 'autodiff/primitive.py:277: a host array mixed with device values',
    'fft2_rfftn': 'autodiff/primitive.py:277: a host array mixed with device values',
    'fft_complex': 'autodiff/primitive.py:277: a host array mixed with device values',
    'fft_n_ortho': 'ops/shape.py:175: a host array mixed with device values',
    'fftshift': 'the case multiplies by a host array (np.arange), mixed with device values',
    'gammainc': 'ops/special_functions/device.py:36: a host array mixed with device values',
    'gradient': 'autodiff/primitive.py:277: a host array mixed with device values',
    'gradient_2d_edge2': 'autodiff/primitive.py:277: a host array mixed with device values',
    'gradient_coords': 'autodiff/primitive.py:277: a host array mixed with device values',
    'hfft_ihfft': 'autodiff/primitive.py:277: a host array mixed with device values',
    'ifft_forward': 'autodiff/primitive.py:277: a host array mixed with device values',
    'interp': 'ops/selection.py:106: a host array mixed with device values',
    'interp_bounds': 'ops/selection.py:106: a host array mixed with device values',
    'irfft': 'autodiff/primitive.py:277: a host array mixed with device values',
    'irfft2': 'autodiff/primitive.py:277: a host array mixed with device values',
    'iv': 'the case gives the order v as a host array, mixed with device values (and cupyx.scipy.special has no iv)',
    'jv': 'the case gives the order v as a host array, mixed with device values (and cupyx.scipy.special has no jv)',
    'masked_fill': 'ops/masking.py:39: a host array mixed with device values',
    'masked_fill_method': 'ops/masking.py:39: a host array mixed with device values',
    'matrix_power_0': 'autodiff/primitive.py:277: a host array mixed with device values',
    'nn_adaptive_avg_pool1d': 'autodiff/primitive.py:277: a host array mixed with device values',
    'nn_adaptive_avg_pool2d': 'autodiff/primitive.py:277: a host array mixed with device values',
    'nn_batch_norm_eval': 'autodiff/primitive.py:277: a host array mixed with device values',
    'nn_cross_entropy': 'nn/functional/losses.py:133: a host index array',
    'nn_masked_softmax': 'ops/masking.py:76: a host array mixed with device values',
    'nn_max_pool1d_ceil': 'ops/fused/pooling.py:80: a host array mixed with device values',
    'nn_max_pool2d': 'ops/fused/pooling.py:80: a host array mixed with device values',
    'nn_sdpa_bool_mask': 'ops/fused/attention.py:58: a host array mixed with device values',
    'norm_vector_3': 'autodiff/primitive.py:277: a host array mixed with device values',
    'np_elementwise': 'an implicit conversion to NumPy',
    'pad_constant': 'ops/shape.py:175: a host array mixed with device values',
    'pad_reflect_odd': 'autodiff/primitive.py:277: a host array mixed with device values',
    'pad_symmetric_odd': 'autodiff/primitive.py:277: a host array mixed with device values',
    'piecewise': 'an implicit conversion to NumPy',
    'piecewise_default': "AttributeError: 'numpy.ndarray' object has no attribute 'requires_grad' 'numpy.ndarray' ob",
    'polyval': 'autodiff/primitive.py:277: a host array mixed with device values',
    'qr_complete': 'ops/shape.py:175: a host array mixed with device values',
    'real_if_close': 'autodiff/primitive.py:277: a host array mixed with device values',
    'rfft': 'autodiff/primitive.py:277: a host array mixed with device values',
    'select': 'an implicit conversion to NumPy',
    'svd_full_tall': 'ops/shape.py:175: a host array mixed with device values',
    'svd_full_wide': 'ops/shape.py:175: a host array mixed with device values',
    'take_along_axis': 'an implicit conversion to NumPy',
    'vander': 'autodiff/primitive.py:277: a host array mixed with device values',
    'vander_increasing': "AttributeError: 'numpy.ndarray' object has no attribute 'requires_grad' 'numpy.ndarray' ob",
    'vector_norm': 'autodiff/primitive.py:277: a host array mixed with device values',
    'where': 'autodiff/primitive.py:277: a host array mixed with device values',
    'xlogy_zero': 'autodiff/primitive.py:277: a host array mixed with device values',
}

LACKING: dict[str, str] = {
    name: f"cupyx.scipy.special has no {name} (it has the orders 0 and 1: j0, j1, y0, y1, i0, i1, i0e, i1e; and yn)"
    for name in ("jn", "yv", "ive")
}
