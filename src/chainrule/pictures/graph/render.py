"""Pictures of a graph as SVG, PNG or PDF files: Graphviz when its ``dot`` program is installed,
matplotlib (pip-installable, no system program) when it is not."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from .dot import scene_to_dot
from .scene import DEFAULT_MAX_NODES, Highlight, Scene, build_scene

ENGINES = ("auto", "graphviz", "matplotlib")
FORMATS = ("svg", "png", "pdf", "dot")


def graphviz_available() -> bool:
    """True when the ``dot`` program is on the PATH and the ``graphviz`` package imports."""
    if shutil.which("dot") is None:
        return False
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return False
    return True


def pick_engine(engine: str, where: str = "render") -> str:
    """'graphviz' or 'matplotlib' for ``engine`` ('auto' chooses Graphviz when it is installed)."""
    if engine not in ENGINES:
        raise ValueError(f"{where}: engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")
    if engine == "auto":
        return "graphviz" if graphviz_available() else "matplotlib"
    if engine == "graphviz" and not graphviz_available():
        raise RuntimeError(
            f"{where}: engine='graphviz' needs the Graphviz 'dot' program (e.g. `apt-get install graphviz` or "
            "`brew install graphviz`) and the Python package (`pip install chainrule[viz]`); "
            "use engine='matplotlib' or 'auto' to draw without them"
        )
    return engine


def _graphviz_bytes(scene: Scene, fmt: str, rankdir: str, dpi: float) -> bytes:
    import graphviz

    source = scene_to_dot(scene, rankdir)
    if fmt == "png":
        source = source.replace("  graph [", f"  graph [dpi={dpi:g}, ", 1)
    return graphviz.Source(source).pipe(format=fmt)


def scene_bytes(scene: Scene, fmt: str, engine: str = "auto", rankdir: str = "LR", dpi: float = 120) -> bytes:
    """The picture of ``scene`` as ``fmt`` ('svg', 'png', 'pdf' or 'dot') file contents."""
    if fmt == "dot":
        return scene_to_dot(scene, rankdir).encode("utf-8")
    if pick_engine(engine) == "graphviz":
        return _graphviz_bytes(scene, fmt, rankdir, dpi)
    if rankdir != "LR":
        raise ValueError(
            f"render: the matplotlib engine draws left to right only (rankdir='LR'), got rankdir={rankdir!r}; "
            "install Graphviz for other directions"
        )
    import io

    from .mpl_scene import save_scene

    buf = io.BytesIO()
    save_scene(scene, buf, fmt, dpi=dpi)
    return buf.getvalue()


def file_format(path: str | Path, fmt: str | None) -> str:
    if fmt is None:
        suffix = Path(path).suffix.lower().lstrip(".")
        fmt = "dot" if suffix == "gv" else suffix
    if fmt not in FORMATS:
        raise ValueError(
            f"render: cannot tell the picture format from {str(path)!r}; name the file .svg, .png, .pdf or .dot "
            "(or pass format='svg' / 'png' / 'pdf' / 'dot')"
        )
    return fmt


def render(
    out: Any,
    path: str | Path,
    engine: str = "auto",
    format: str | None = None,
    max_nodes: int | None = DEFAULT_MAX_NODES,
    max_depth: int | None = None,
    rankdir: str = "LR",
    highlight: Highlight | None = None,
    title: str | None = None,
    dpi: float = 120,
) -> Path:
    """Draw the graph behind ``out`` into ``path`` (.svg, .png, .pdf, or .dot for the source); returns the path.

    ``engine='auto'`` uses Graphviz when the ``dot`` program is installed and matplotlib
    otherwise, so it works on a fresh machine with only pip packages. Graphs bigger than
    ``max_nodes`` values are cut, and the picture says how many nodes are hidden. ``max_nodes=None`` (all)
    refuses a graph of more than 5,000 nodes, naming its size: pass that number to draw it anyway.

    Example:
        >>> import tempfile, os
        >>> from chainrule import Scalar
        >>> from chainrule.graph import render
        >>> x = Scalar(3.0, label="x")
        >>> y = x * x + 1.0
        >>> y.backward()
        >>> p = render(y, os.path.join(tempfile.mkdtemp(), "y.svg"), engine="matplotlib")
        >>> p.suffix, "<svg" in p.read_text()
        ('.svg', True)
    """
    fmt = file_format(path, format)
    if rankdir not in ("LR", "RL", "TB", "BT"):
        raise ValueError(f"render: rankdir must be one of 'LR', 'RL', 'TB', 'BT', got {rankdir!r}")
    scene = build_scene(out, max_nodes, max_depth, highlight, title, "render")
    data = scene_bytes(scene, fmt, engine, rankdir, dpi)
    target = Path(path)
    target.write_bytes(data)
    return target
