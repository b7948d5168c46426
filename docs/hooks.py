"""MkDocs hook: the site's home page is the README, its links made relative to docs/.

The README lives at the repository root and links `docs/nn.md`; on the site the same page is
`nn.md`. Links outside docs/ (examples/, src/) point to the repository instead.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPOSITORY = "https://github.com/chainrule/chainrule/blob/main/"


def _relink(match: re.Match) -> str:
    bang, text, target = match.groups()
    if re.match(r"[a-z]+:|#|/", target):
        return match.group(0)
    target = target[len("docs/"):] if target.startswith("docs/") else REPOSITORY + target
    return f"{bang}[{text}]({target})"


def on_page_read_source(page, config):  # noqa: ANN001 - MkDocs' hook signature
    if page.file.src_uri == "index.md":
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        return re.sub(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)", _relink, readme)
    return None
