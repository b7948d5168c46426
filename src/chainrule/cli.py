"""The ``chainrule`` command: ``chainrule demo [--out DIR]`` (also ``python -m chainrule demo``) and
``chainrule gpt train|sample`` (see :mod:`chainrule.gpt.cli`)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence

DEMO_HELP = """\
The guided tour of the tutorials' story, every number checked against what the tutorials print:

  1. the derivatives they print (seeds 002 and 000), each with the expected value and a pass/fail mark;
  2. finite differences versus autodiff as the step h shrinks (a table), and the tangent picture;
  3. the paths and chains behind dL/dx for L = (y - (mx + c))^2 (sum over paths of products);
  4. the graph of L = b(a + b)(a - b) with data, grad and local derivatives, as SVG and PNG;
  5. 50 gradient-descent paths over the contour map and gradient field of L, as PNG;
  6. second derivatives (the Hessian of L).

Files written under --out: tangent.png, graph.svg, graph.png, trajectories.png (pictures need
matplotlib: pip install chainrule[plot]; without it they are skipped and said so). Steps that
take over a second show a progress bar on stderr (tqdm, pip install chainrule[nn]).
Exit status: 0 when every check passes, 1 when one fails."""


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="chainrule", description="chainrule: automatic differentiation for Python, from one scalar up."
    )
    parser.add_argument("--version", action="version", version=f"chainrule {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="the guided tour: the tutorials' derivatives checked, pictures written",
        description=DEMO_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument(
        "--out",
        metavar="DIR",
        default="chainrule-demo",
        help="folder for the pictures (created if needed; default: ./chainrule-demo)",
    )
    demo.add_argument("--seed", type=int, default=0, help="random seed of the 50 descent starts (default: 0)")
    from .gpt.cli import add_gpt_parser

    add_gpt_parser(sub)
    return parser


def _unwritable(out: str) -> str:
    """Why files cannot be written under ``out`` ('' when they can): made if missing, then probed."""
    if os.path.exists(out) and not os.path.isdir(out):
        return "it is a file, not a folder"
    try:
        os.makedirs(out, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out, prefix=".chainrule-probe-")
        os.close(fd)
        os.remove(probe)
    except OSError as e:
        return e.strerror or str(e)
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``chainrule`` script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "demo":
        from .demo import run

        if hasattr(sys.stdout, "reconfigure"):
            try:
                sys.stdout.reconfigure(errors="replace")  # a terminal without UTF-8 gets '?' for '×'
            except (ValueError, OSError):
                pass
        problem = _unwritable(args.out)
        if problem:
            print(f"chainrule demo: cannot write to --out {args.out!r} ({problem}); pick a folder you can write to",
                  file=sys.stderr)
            return 2
        try:
            return run(args.out, seed=args.seed)
        except OSError as e:  # e.g. the disk filled up on the way: one line, not a traceback
            print(f"chainrule demo: could not write {e.filename or args.out!r} ({e.strerror or e})", file=sys.stderr)
            return 1
    if args.command == "gpt":
        from .gpt.cli import run_gpt

        return run_gpt(args)
    parser.error(f"unknown command {args.command!r}")  # pragma: no cover (argparse rejects it first)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
