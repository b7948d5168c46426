"""The package index page is the README with its relative links made absolute.

The README links to `docs/*.md` and `docs/img/*.png` relative to the repository, which works on
GitHub and in the docs site but not on the package index: there each link is rewritten to the
repository's file (pages) or raw file (images). Everything else is in pyproject.toml.
"""

import re
from pathlib import Path

from setuptools import setup

REPOSITORY = "https://github.com/chainrule/chainrule"
PAGE, RAW = f"{REPOSITORY}/blob/main/", f"{REPOSITORY}/raw/main/"


def absolute_links(markdown: str) -> str:
    def rewrite(match: re.Match) -> str:
        bang, text, target = match.groups()
        if re.match(r"[a-z]+:|#|/", target):
            return match.group(0)
        return f"{bang}[{text}]({(RAW if bang else PAGE) + target})"

    return re.sub(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)", rewrite, markdown)


setup(
    long_description=absolute_links((Path(__file__).parent / "README.md").read_text(encoding="utf-8")),
    long_description_content_type="text/markdown",
)
