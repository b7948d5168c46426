"""How chainrule uses the machine: freed memory kept for reuse, BLAS threads that sleep when idle and step
aside for small products, and the worker threads that split large element-wise ops."""
