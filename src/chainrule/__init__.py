"""chainrule: automatic differentiation for Python, from one scalar to a small language model.

Objects (``Scalar``, ``Tensor``) with ``.backward()`` and ``.grad``; NumPy-style functions
that work on Tensors (``chainrule.exp``, ``chainrule.sum``, ...); ``no_grad``; function
transforms (``grad``, ``jacobian``, ``hessian``, ``jvp``, ``vjp``, ...).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import numpy as np

from . import cuda, devices, ops  # noqa: F401  (cr.cuda.is_available(), cr.devices.register)
from .core import drawing
from .core.errors import ChainruleWarning, PerformanceWarning
from .core.state import (  # noqa: F401  (inference_mode: PyTorch's, inference_mode(False) records)
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .ops import *  # noqa: F403
from .ops import index_update as _index_update  # noqa: F401  (Tensor.at, JAX's x.at[idx].set(v))
from .ops.pytorch import constructors as _constructors
from .ops.pytorch import dim as _torch_dim
from .ops.pytorch import extremes as _torch_extremes
from .ops.pytorch import functions as _torch_functions
from .ops.pytorch import keywords as _torch_keywords
from .ops.pytorch import random_fill as _random_fill  # noqa: F401  (Tensor.uniform_, Tensor.normal_)
from .ops.pytorch import toplevel as _torch_toplevel
from .runtime import allocator
from .runtime import blas as blas_threads
from .scalar import Scalar
from .tensor import Tensor  # noqa: F401

# PyTorch-style constructors returning Tensors. Bound after `from .ops import *`: cr.zeros_like and
# cr.ones_like are these, while np.zeros_like(tensor) keeps NumPy's meaning (an array, chainrule.ops').
zeros, ones, empty, full, eye, arange, linspace = (
    _constructors.zeros, _constructors.ones, _constructors.empty, _constructors.full, _constructors.eye,
    _constructors.arange, _constructors.linspace,
)
tensor = _constructors.tensor  # torch.tensor: Python floats take the default dtype
# PyTorch's layout and memory formats, as names (a Tensor is dense and strided; a format changes no value here)
strided, contiguous_format, channels_last, channels_last_3d, preserve_format = (
    "strided", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format")
rand, randn, zeros_like, ones_like, full_like = (
    _constructors.rand, _constructors.randn, _constructors.zeros_like, _constructors.ones_like, _constructors.full_like,
)
randint, rand_like, randn_like = _constructors.randint, _constructors.rand_like, _constructors.randn_like
empty_like = _constructors.empty_like
multinomial = _random_fill.multinomial  # torch.multinomial(probs, num_samples, replacement, generator=)

Value = Scalar  # micrograd's name
max, min = _torch_extremes.max, _torch_extremes.min  # noqa: A001  (torch.max(t, 1) is a (values, indices) pair)
for _name in _torch_dim.NAMES:  # torch.sum(t, dim=1): PyTorch's dim= goes to the Tensor method
    globals()[_name] = _torch_dim.with_torch_dim(globals()[_name], _name)
for _name in _torch_keywords.UNARY + _torch_keywords.BINARY:  # torch.matmul(input=a, other=b, out=c)
    globals()[_name] = _torch_keywords.with_torch_keywords(globals()[_name], _name)
for _name, _renames in _torch_keywords.RENAMED.items():  # torch.flip(t, dims=...): NumPy's axis=
    globals()[_name] = _torch_keywords.with_renamed_keywords(globals()[_name], _name, _renames)
del _name, _renames
# torch.cat, torch.clamp, torch.mm...: the Tensor methods (none hides an op: tests/test_torch_functions.py)
globals().update(_torch_functions.FUNCTIONS)
gradient = _torch_toplevel.gradient  # torch.gradient(t) is a tuple (NumPy's spellings keep NumPy's result)
meshgrid = _torch_toplevel.meshgrid  # torch.meshgrid(a, b) of Tensors indexes 'ij' (NumPy's default: 'xy')
float16, float32, float64, int32, int64, complex64, complex128 = (  # torch.float32 and its kin: NumPy's types
    np.float16, np.float32, np.float64, np.int32, np.int64, np.complex64, np.complex128)

allocator._configure_from_environment()  # keep freed array memory for reuse (CHAINRULE_MALLOC=0: off)
blas_threads._configure_from_environment()  # idle BLAS workers sleep, not spin (CHAINRULE_BLAS_SPIN=1: off)


def _draw(value: Any, **options: Any) -> Any:
    from .graph import draw  # on first use: the pictures load matplotlib and graphviz

    return draw(value, **options)


drawing.register_drawer(_draw)  # Tensor.graph() and Scalar.graph() draw through it (the values sit below the pictures)

__version__ = "0.1.0"

# Names served from submodules, imported on first use (keeps `import chainrule` light).
_LAZY = {
    "grad": "transforms", "value_and_grad": "transforms", "jacobian": "transforms",
    "jacrev": "transforms", "jacfwd": "transforms", "hessian": "transforms", "jvp": "transforms",
    "vjp": "transforms", "hvp": "transforms", "elementwise_grad": "transforms", "deriv": "transforms",
    "linearize": "transforms", "holomorphic_grad": "transforms",
    "make_vjp": "transforms.hips", "make_jvp": "transforms.hips", "grad_and_aux": "transforms.hips",
    "make_hvp": "transforms.hips", "hessian_tensor_product": "transforms.hips",
    "hessian_vector_product": "transforms.hips", "tensor_jacobian_product": "transforms.hips",
    "vector_jacobian_product": "transforms.hips", "grad_named": "transforms.hips", "multigrad_dict": "transforms.hips",
    "custom_vjp": "custom", "custom_jvp": "custom", "stop_gradient": "custom", "checkpoint": "custom",
    "remat": "custom", "checkpoint_policies": "custom",
    "gradcheck": "transforms.checking", "GradcheckError": "transforms.checking",
    "explain": "graph", "draw": "graph", "to_networkx": "graph", "to_dot": "graph", "render": "graph",
    "minimize": "optimize",
    "set_allocator": "runtime.allocator", "release_memory": "runtime.allocator",
    "allocator_info": "runtime.allocator",
    "set_blas_spin": "runtime.blas", "blas_threads_info": "runtime.blas",
    "jit": "replay", "JitError": "replay", "jit_step": "replay",
    "vmap": "batching",
    "save": "nn", "load": "nn",  # torch.save(model.state_dict(), path), torch.load(path)
    "device": "devices",  # torch.device("cpu"), torch.device("cuda:0"): what t.device is
    "set_default_device": "accelerator", "get_default_device": "accelerator",  # the host only: no default device
    "Generator": "core.defaults",  # torch.Generator().manual_seed(42): a seeded NumPy generator
    "manual_seed": "core.defaults",  # torch.manual_seed: the generator of cr.randn, cr.rand and the layers' init
    "get_default_dtype": "core.defaults", "set_default_dtype": "core.defaults",  # float32 unless set
    # PyTorch's names with nothing to do here: stand-ins that say so (amp.py, backends.py, replay/compiling.py)
    "autocast": "amp", "compile": "replay.compiling", "use_deterministic_algorithms": "backends",
    "are_deterministic_algorithms_enabled": "backends", "set_float32_matmul_precision": "backends",
    "get_float32_matmul_precision": "backends",
    "range": "ops.pytorch.legacy_range",  # torch.range (end included): lazy, so `import *` keeps the builtin
    # JAX's top-level helpers (jax.eval_shape, jax.disable_jit, ...)
    "eval_shape": "transforms.jax_extras", "ShapeDtypeStruct": "transforms.jax_extras",
    "Array": "transforms.jax_extras",  # jax.Array: the functional API's arrays (NumPy's)
    "linear_transpose": "transforms.jax_extras", "device_put": "transforms.jax_extras",
    "block_until_ready": "transforms.jax_extras", "disable_jit": "replay.disabling",
    "default_backend": "transforms.jax_extras", "device_count": "transforms.jax_extras",
    "local_devices": "transforms.jax_extras", "local_device_count": "transforms.jax_extras",
}
# torch.layer_norm, torch.embedding(weight, indices), torch.celu_, ...: nn.functional's ops at PyTorch's top level
_LAZY.update(dict.fromkeys((
    "embedding", "dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout", "layer_norm", "rms_norm",
    "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle", "celu", "selu", "rrelu",
    "bilinear", "cosine_similarity", "pairwise_distance", "pdist", "kl_div", "margin_ranking_loss",
    "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss",
    "binary_cross_entropy_with_logits", "constant_pad_nd", "adaptive_max_pool1d", "max_pool1d_with_indices",
    "threshold", "celu_", "selu_", "rrelu_", "threshold_", "dropout_", "alpha_dropout_", "feature_dropout_",
    "feature_alpha_dropout_"), "nn.functional.torch_toplevel"))
# PyTorch's other dtype names (torch.long, torch.float, ...): NumPy's types. Served by __getattr__, so that
# `from chainrule import *` does not shadow the builtins float, int and bool.
_DTYPES = {
    "long": np.int64, "int": np.int32, "short": np.int16, "int16": np.int16, "int8": np.int8, "char": np.int8,
    "uint8": np.uint8, "byte": np.uint8, "bool": np.bool_, "float": np.float32, "double": np.float64,
    "half": np.float16, "cfloat": np.complex64, "cdouble": np.complex128, "uint16": np.uint16,
    "uint32": np.uint32, "uint64": np.uint64,
}
_SUBMODULES = {
    "autograd", "nn", "optim", "graph", "plot", "optimize", "transforms", "numpy", "data", "custom",
    "linalg", "special", "batching", "fft", "tree_util", "amp", "backends",
    "tree",  # jax.tree's names: tree.map, tree.leaves, ...
    "utils",  # torch.utils.data's path: chainrule.utils.data is chainrule.data
    "func",  # torch.func's names: functional_call, grad, vmap(in_dims=...), ...
    "accelerator",  # torch.accelerator.is_available(), current_accelerator()
    "lax", "random",  # jax.lax's control flow and names, jax.random's keys
    "scipy", "config", "flatten_util", "debug",  # jax.scipy, jax.config.update(...), ravel_pytree, debug.print
    "example_libraries",  # jax.example_libraries.optimizers
    "distributions", "testing",  # torch.distributions, torch.testing.assert_close
    "test_util",  # jax.test_util.check_grads (and autograd.test_util's)
}

if TYPE_CHECKING:  # what __getattr__ serves on first use, as type checkers and editors see it (tests/test_types.py)
    from . import (
        accelerator,
        amp,
        autograd,
        backends,
        batching,
        config,
        custom,
        data,
        debug,
        distributions,
        example_libraries,
        fft,
        flatten_util,
        func,
        graph,
        lax,
        linalg,
        nn,
        numpy,
        optim,
        optimize,
        plot,
        random,
        scipy,
        special,
        test_util,
        testing,
        transforms,
        tree,
        tree_util,
        utils,
    )
    from .accelerator import get_default_device, set_default_device
    from .amp import autocast
    from .backends import (
        are_deterministic_algorithms_enabled,
        get_float32_matmul_precision,
        set_float32_matmul_precision,
        use_deterministic_algorithms,
    )
    from .batching import vmap
    from .core.defaults import Generator, get_default_dtype, manual_seed, set_default_dtype
    from .custom import checkpoint, checkpoint_policies, custom_jvp, custom_vjp, remat, stop_gradient
    from .devices import device
    from .graph import draw, explain, render, to_dot, to_networkx
    from .nn import load, save
    from .nn.functional.torch_toplevel import (
        adaptive_max_pool1d,
        alpha_dropout,
        alpha_dropout_,
        bilinear,
        binary_cross_entropy_with_logits,
        celu,
        celu_,
        channel_shuffle,
        constant_pad_nd,
        cosine_embedding_loss,
        cosine_similarity,
        dropout,
        dropout_,
        embedding,
        feature_alpha_dropout,
        feature_alpha_dropout_,
        feature_dropout,
        feature_dropout_,
        hinge_embedding_loss,
        kl_div,
        layer_norm,
        margin_ranking_loss,
        max_pool1d_with_indices,
        native_channel_shuffle,
        pairwise_distance,
        pdist,
        pixel_shuffle,
        pixel_unshuffle,
        poisson_nll_loss,
        rms_norm,
        rrelu,
        rrelu_,
        selu,
        selu_,
        threshold,
        threshold_,
        triplet_margin_loss,
    )
    from .ops.pytorch.legacy_range import range
    from .optimize import minimize
    from .replay import JitError, jit, jit_step
    from .replay.compiling import compile
    from .replay.disabling import disable_jit
    from .runtime.allocator import allocator_info, release_memory, set_allocator
    from .runtime.blas import blas_threads_info, set_blas_spin
    from .transforms import (
        deriv,
        elementwise_grad,
        grad,
        hessian,
        holomorphic_grad,
        hvp,
        jacfwd,
        jacobian,
        jacrev,
        jvp,
        linearize,
        value_and_grad,
        vjp,
    )
    from .transforms.checking import GradcheckError, gradcheck
    from .transforms.hips import (
        grad_and_aux,
        grad_named,
        hessian_tensor_product,
        hessian_vector_product,
        make_hvp,
        make_jvp,
        make_vjp,
        multigrad_dict,
        tensor_jacobian_product,
        vector_jacobian_product,
    )
    from .transforms.jax_extras import (
        Array,
        ShapeDtypeStruct,
        block_until_ready,
        default_backend,
        device_count,
        device_put,
        eval_shape,
        linear_transpose,
        local_device_count,
        local_devices,
    )


# PyTorch's names that chainrule spells NumPy's way (or as a Tensor method): the error says where to look
_TORCH_NAMES = {
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _DTYPES:
        return _DTYPES[name]
    if name == "bfloat16":  # a name only: making an array of it raises, saying what to use
        from .core.absent_dtype import bfloat16

        return bfloat16
    if name in _TORCH_NAMES:
        raise AttributeError(f"module 'chainrule' has no attribute {name!r}: chainrule's functions follow NumPy; "
                             f"use {_TORCH_NAMES[name]}")
    raise AttributeError(f"module 'chainrule' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES | set(_DTYPES))
