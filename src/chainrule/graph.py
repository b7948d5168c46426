"""Show the work: pictures and text of computation graphs, and derivatives explained path by path.

Works for ``Scalar`` and ``Tensor`` graphs alike, without recursion (graphs of a million
nodes are fine; pictures and text are capped and say how much they leave out).

- :func:`collect`: the nodes and edges behind an output;
- :func:`tree` / :func:`print_graph`: an indented text tree with labels, ops, data, grad;
- :func:`to_dot`: Graphviz DOT source (record boxes ``label | data | grad``, op circles,
  edges labelled with local derivatives);
- :func:`render`: an .svg or .png file, with Graphviz when its ``dot`` program is installed
  and with matplotlib when not;
- :func:`draw`: a picture object that Jupyter shows inline (also ``x.graph()``);
- :func:`to_networkx`: a ``networkx.MultiDiGraph`` for your own analysis;
- :func:`explain`: d(out)/d(wrt) as the sum over every path of the chain of local
  derivatives, checked against ``backward()``; ``.draw()`` shows the paths in colour.

Optional packages (``pip install chainrule[viz]``) are imported only when needed.

Example:
    >>> from chainrule import Scalar
    >>> from chainrule.graph import explain
    >>> y, m, x, c = (Scalar(v, label=n) for v, n in [(1.0, "y"), (2.0, "m"), (3.0, "x"), (4.0, "c")])
    >>> L = (y - (m * x + c)) * (y - (m * x + c))
    >>> L.label = "L"
    >>> e = explain(L, x)
    >>> e.path_texts()[0], e.chains[0], e.total
    ('L -> *(1st) -> - -> + -> * -> x', [-9.0, -1.0, 1.0, 2.0], 36.0)
"""

from __future__ import annotations

from .pictures.graph import *  # noqa: F403  (the public names, listed once in pictures/graph)
from .pictures.graph import __all__  # noqa: F401
