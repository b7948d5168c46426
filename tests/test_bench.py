"""Every benchmark in bench/ still runs: once, at tiny sizes (speed is measured there, never asserted here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
SCRIPTS = sorted(p for p in BENCH.glob("bench_*.py"))


def test_there_are_benchmarks():
    assert len(SCRIPTS) >= 5


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_benchmark_runs_at_tiny_size(script: Path):
    out = subprocess.run([sys.executable, "-Werror", str(script), "--tiny"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "chainrule" in out.stdout, "the table names chainrule"
