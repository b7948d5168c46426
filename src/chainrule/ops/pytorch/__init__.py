"""PyTorch's spellings of the ops: ``dim=``/``keepdim=`` arguments, aliases (``t.sub``, ``t.gather``), the
top-level functions (``cr.cat``, ``cr.clamp``), constructors (``cr.zeros``, ``cr.randn``), ``(values, indices)``
extremes and in-place random fills. Each module attaches its names to the ops declared elsewhere."""
