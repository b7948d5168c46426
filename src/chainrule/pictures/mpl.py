"""The one matplotlib helper for every picture: lazy import, figures made without pyplot
(no global state, no GUI backend needed), saving."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def require(who: str, extra: str = "plot") -> Any:
    """The ``matplotlib`` module, or an ImportError naming ``who`` needs it and the extra to install."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError(f"{who} needs matplotlib: pip install chainrule[{extra}]") from None
    return matplotlib


def new_axes(who: str, ax: Any = None, figsize: tuple[float, float] = (6.4, 5.0)) -> tuple[Any, Any]:
    """``(figure, axes)``: the given axes and its figure, or a fresh figure (not registered with pyplot)."""
    require(f"chainrule.plot.{who}")
    if ax is not None:
        return ax.figure, ax
    fig = new_figure(figsize, layout="constrained")
    return fig, fig.add_subplot()


def new_figure(figsize: tuple[float, float], dpi: float = 100, layout: str | None = None) -> Any:
    """A matplotlib Figure outside pyplot (nothing opens a window, nothing is kept alive).

    It shows itself in a notebook as the last expression of a cell: a Figure made without
    pyplot has no display of its own there (Jupyter printed ``<Figure size 640x500 with 1 Axes>``).
    """
    return _notebook_figure_class()(figsize=figsize, dpi=dpi, layout=layout)


_NOTEBOOK_FIGURE: list[type] = []


def _notebook_figure_class() -> type:
    """matplotlib's Figure with ``_repr_png_``, made once, when matplotlib is first needed."""
    if not _NOTEBOOK_FIGURE:
        from matplotlib.figure import Figure

        class NotebookFigure(Figure):
            """A matplotlib Figure that Jupyter displays inline as PNG (everything else is Figure's)."""

            def _repr_png_(self) -> bytes:
                import io

                buffer = io.BytesIO()
                self.savefig(buffer, format="png")
                return buffer.getvalue()

        _NOTEBOOK_FIGURE.append(NotebookFigure)
    return _NOTEBOOK_FIGURE[0]


def finish(fig: Any, path: str | Path | None, dpi: int = 100) -> Any:
    """Save ``fig`` to ``path`` when given (creating its folder); return the figure."""
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=dpi)
    return fig
