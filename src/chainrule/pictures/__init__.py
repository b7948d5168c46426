"""Every picture chainrule makes, in one package with one matplotlib helper (:mod:`.mpl`).

- :mod:`.graph`: computation graphs as text, DOT, SVG/PNG, networkx, and derivatives
  explained path by path; public as :mod:`chainrule.graph`;
- :mod:`.plot`: tangents, gradient fields, optimiser paths, loss curves; public as
  :mod:`chainrule.plot`.

Optional packages (matplotlib, Graphviz, networkx) are imported only when a picture needs them.
"""
