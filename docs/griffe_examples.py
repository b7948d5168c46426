"""Griffe extension for the API reference: chainrule's docstrings head their doctests ``Example:``.

Google style's section for doctests is ``Examples:``; under ``Example:`` mkdocstrings would render
``>>>`` lines as Markdown (quotes, and ``[a][b]`` read as links). Only the site's reading changes.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_HEADING = re.compile(r"^(\s*)Example:\s*$", re.M)


class ExampleSections(griffe.Extension):
    def on_object(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _HEADING.sub(r"\1Examples:", obj.docstring.value)
