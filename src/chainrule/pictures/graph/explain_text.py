"""The readable text of an :class:`~chainrule.graph.explain.Explanation`."""

from __future__ import annotations

from typing import Any

import numpy as np

from .format import array_text, label_of, num, shape_text


def _factor(v: float) -> str:
    s = num(v)
    return f"({s})" if s.startswith("-") else s


def _array(a: Any) -> str:
    a = np.asarray(a)
    if a.ndim == 0:
        return num(float(a))
    body = np.array2string(a, precision=4, threshold=12, edgeitems=2, separator=", ", suppress_small=True)
    return f"{body} {shape_text(a.shape)}" if a.size > 12 else body


LONG = 16  # paths and chains longer than this are shown by their two ends


def _short_path(text: str) -> str:
    items = text.split(" -> ")
    if len(items) <= LONG:
        return text
    k = LONG // 2
    return " -> ".join(items[:k] + [f"... ({len(items) - 2 * k} more)"] + items[-k:])


def _short_list(values: list[str]) -> list[str]:
    if len(values) <= LONG:
        return values
    k = LONG // 2
    return values[:k] + [f"... ({len(values) - 2 * k} more)"] + values[-k:]


def _step_value(v: np.ndarray) -> str:
    """A gradient after one VJP: in full when tiny, else its size (Euclidean norm)."""
    if v.size == 1:
        return f"g = {num(float(v.reshape(-1)[0].real))}"
    if v.size <= 4:
        return f"g = {array_text(v)}"
    return f"|g| = {float(np.linalg.norm(v)):.4g}"


def _header(e: Any) -> list[str]:
    out, wrt = label_of(e.out) or "out", label_of(e.wrt) or "wrt"
    if e.view.numeric_edges:
        how = "multiply the local derivatives along it (its chain), then add the products"
    else:
        how = ("carry the output gradient back through the vector-Jacobian product (VJP) of each edge, "
               "then add the results")
    lines = [f"{e.name}: for every path from {out} to {wrt}, {how}"]
    if e.n_paths == 0:
        lines.append(f"no path leads from {out} to {wrt}: {out} does not depend on {wrt}, the derivative is 0")
        return lines
    s = "" if e.n_paths == 1 else "s"
    if e.n_unlisted:
        lines.append(
            f"{e.n_paths:,} path{s} (counted by dynamic programming, not enumerated); "
            f"the first {len(e.paths)} listed, {e.n_unlisted:,} not listed (raise max_paths to see more):"
        )
    else:
        lines.append(f"{e.n_paths:,} path{s}, all listed:")
    return lines


def _number_body(e: Any) -> list[str]:
    lines = []
    for k, (text, chain, prod) in enumerate(zip(e.path_texts(), e.chains, e.products, strict=True), 1):
        lines.append(f"  {k}. {_short_path(text)}")
        values = ", ".join(_short_list([num(v) for v in chain]))
        if len(chain) <= LONG:
            factors = " \u00d7 ".join(_factor(v) for v in chain) or "(empty chain)"
        else:
            factors = f"the product of the {len(chain)} factors"
        lines.append(f"     chain [{values}]: {factors} = {num(prod)}")
    if e.n_paths and not e.n_unlisted:
        terms = " + ".join(_factor(p) for p in e.products)
        lines.append(f"sum: {terms} = {num(e.total)}" if len(e.products) > 1 else f"sum: {num(e.total)}")
    elif e.n_paths:
        lines.append(f"sum over all {e.n_paths:,} paths: {num(e.total)}")
    return lines


def _vjp_body(e: Any) -> list[str]:
    lines = []
    for k, (text, chain, prod) in enumerate(zip(e.path_texts(), e.chains, e.products, strict=True), 1):
        lines.append(f"  {k}. {_short_path(text)}")
        lines.append(
            f"     the output gradient {shape_text(np.shape(e.out._data))} carried back one VJP per edge:"
        )
        width = max((len(str(step)) for step in chain), default=0)
        shown = chain if len(chain) <= LONG else chain[: LONG // 2] + [None] + chain[-(LONG // 2):]
        for step in shown:
            if step is None:
                lines.append(f"       ... ({len(chain) - 2 * (LONG // 2)} more VJPs)")
                continue
            lines.append(f"       {str(step):<{width}}  {_step_value(step.value)}")
        lines.append(f"     contribution: {_array(prod)}".replace("\n", "\n" + " " * 19))
    if e.n_paths:
        scope = "the contributions" if not e.n_unlisted else f"all {e.n_paths:,} paths"
        lines.append(f"sum of {scope}: {_array(e.total)}".replace("\n", "\n" + " " * (len(scope) + 9)))
    return lines


def explanation_text(e: Any) -> str:
    lines = _header(e)
    lines += _number_body(e) if e.view.numeric_edges else _vjp_body(e)
    verdict = "matches" if e.ok else "DOES NOT MATCH (please report this as a bug)"
    if e.view.numeric_edges:
        lines.append(f"backward() gives {e.name} = {num(e.gradient)}: {verdict}")
    else:
        text = f"backward() gives {e.name} = {_array(e.gradient)}"
        lines.append(text.replace("\n", "\n" + " " * (len(e.name) + 20)) + f": {verdict}")
    return "\n".join(lines)
