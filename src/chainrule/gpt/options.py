"""The values ``chainrule gpt``'s options take: argparse types that refuse a bad value with one line (exit
status 2) naming the option's range, and a parser and help format that keep errors to that line and show
every default.

Example:
    >>> minutes("1.5"), fraction(low_open=True)("1")
    (1.5, 1.0)
"""

from __future__ import annotations

import argparse
import math
from typing import Any, NoReturn

MINUTES = (0.01, 525600.0)  # 0.6 s to a year: a budget outside is a typo (inf, 1e308, 1e-9)


class OneLineParser(argparse.ArgumentParser):
    """An argument error is one line on stderr (exit status 2), not argparse's usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written; every option's default shown after its help (unless the help explains it)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text or action.default in (None, argparse.SUPPRESS) or not action.option_strings:
            return text
        shown = "off" if action.default is False else repr(action.default) if isinstance(action.default, str) else \
            action.default
        return f"{text} (default: {shown})"


class Given(argparse._StoreAction):
    """``store`` that also records that the option was typed (``args.given_options``), for --resume."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        super().__call__(parser, namespace, values, option_string)
        vars(namespace).setdefault("given_options", set()).add(self.dest)


class GivenFlag(argparse._StoreTrueAction):
    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        super().__call__(parser, namespace, values, option_string)
        vars(namespace).setdefault("given_options", set()).add(self.dest)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _whole(text: str, low: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:  # 1e6 is a whole number too
        number = _number(text)
        if not (math.isfinite(number) and number == int(number)):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text}") from None
        value = int(number)
    if value < low:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
    return value


def positive_int(text: str) -> int:
    return _whole(text, 1, "a positive integer")


def nonnegative_int(text: str) -> int:
    return _whole(text, 0, "an integer >= 0")


def positive_float(text: str) -> float:
    value = _number(text)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def nonnegative_float(text: str) -> float:
    value = _number(text)
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return value


def port_number(text: str) -> int:
    value = _whole(text, 0, "a port number in [0, 65535]")
    if value > 65535:
        raise argparse.ArgumentTypeError(f"must be a port number in [0, 65535], got {text}")
    return value


def minutes(text: str) -> float:
    value = _number(text)
    if not MINUTES[0] <= value <= MINUTES[1]:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be between {MINUTES[0]:g} (0.6 s) and {MINUTES[1]:g} (a year) "
                                         f"minutes, got {text}")
    return value


def fraction(low_open: bool) -> Any:
    def parse(text: str) -> float:
        value = _number(text)
        ok = 0.0 < value <= 1.0 if low_open else 0.0 <= value < 1.0
        if not ok:
            raise argparse.ArgumentTypeError(f"must be in {'(0, 1]' if low_open else '[0, 1)'}, got {text}")
        return value

    parse.__name__ = "fraction"
    return parse
