"""Repository-wide pytest hooks: in CI, the PyTorch and JAX oracle tests must run, not skip.

CI sets ``CI=true`` (or ``CHAINRULE_REQUIRE_ORACLE``). Tests that compare with PyTorch or JAX
are marked ``oracle``; they skip (with a reason) where torch or jax is not installed,
which is fine on a laptop but would let CI
pass without the oracle, so there any skipped oracle test fails the session. Tests marked ``mpi`` (run
under mpiexec; the dev extra brings mpi4py and MPICH) must not skip there either.
"""

from __future__ import annotations

import os

import pytest

try:  # property tests draw the same examples on every run, so CI cannot fail by chance
    from hypothesis import settings

    settings.register_profile("chainrule", derandomize=True, deadline=None, database=None)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "chainrule"))
except ImportError:  # hypothesis is a dev extra; without it those tests are not collected
    pass

_skipped_oracles: list[str] = []
_ran_oracles: list[str] = []
_skipped_mpi: list[str] = []  # tests marked ``mpi`` (under mpiexec): CI installs the mpi extra, so none may skip


def _require_oracle() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes") or bool(os.environ.get("CHAINRULE_REQUIRE_ORACLE"))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "mpi" in report.keywords and report.skipped:
        _skipped_mpi.append(report.nodeid)
    if "oracle" not in report.keywords:
        return
    if report.skipped:
        _skipped_oracles.append(report.nodeid)
    elif report.when == "call":
        _ran_oracles.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not _require_oracle() or session.config.option.collectonly:
        return
    selected_all = not session.config.option.keyword and not session.config.option.markexpr
    if _skipped_mpi:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter:
            reporter.write_line(f"CI requires the MPI tests: {len(_skipped_mpi)} skipped (install the dev extra, "
                                "which brings the mpi extra: mpi4py and the mpich wheel's mpiexec)", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if _skipped_oracles or (selected_all and not _ran_oracles):
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        msg = (
            f"CI requires the PyTorch and JAX oracle tests: {len(_skipped_oracles)} skipped, {len(_ran_oracles)} "
            "ran (install the dev extra: pip install -e '.[dev]', which pins torch==2.13.0 and brings jax[cpu])"
        )
        if reporter:
            reporter.write_line(msg, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
