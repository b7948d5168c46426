"""The core: state and machinery that know no Tensor (NumPy and the standard library only)."""
