"""Every example in a docstring of chainrule runs and prints what it shows (doctest)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import warnings

import pytest

import chainrule

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(chainrule.__path__, "chainrule.") if not m.name.endswith("__main__")
)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _examples(module) -> list[doctest.DocTest]:
    """The module's own docstring tests (not those of names it imports from elsewhere)."""
    tests = doctest.DocTestFinder().find(module, module.__name__)
    return [t for t in tests if t.examples and t.filename == module.__file__]


def test_there_are_examples_to_run():
    assert sum(len(_examples(importlib.import_module(name))) for name in MODULES) > 200


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run_as_shown(name: str) -> None:
    module = importlib.import_module(name)
    failures = []
    for test in _examples(module):
        runner = doctest.DocTestRunner(optionflags=FLAGS)
        report: list[str] = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # examples show values, not NumPy's notes
            runner.run(test, out=report.append)
        if runner.failures:
            failures.append("".join(report))
    assert not failures, "\n".join(failures)
