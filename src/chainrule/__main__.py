"""``python -m chainrule demo``: the same as the ``chainrule`` script."""

from __future__ import annotations

import sys

from .cli import main

sys.exit(main())
