"""The machinery: the op-agnostic engine, primitives and their rules, forward-mode levels."""
