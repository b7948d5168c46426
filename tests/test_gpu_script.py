"""``bench/gpu.py`` (the GPU check a GPU machine runs in one go) runs to its table on any machine: here on the CPU
at tiny sizes, with PyTorch's CPU as the peer (speed is measured there, never asserted here)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_gpu_script_runs_every_part_and_writes_its_table(tmp_path):
    env = dict(os.environ, OUT=str(tmp_path), PYTHONPATH=str(ROOT / "src"))
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu.py"), "--device", "cpu", "--tiny", "--skip-tests"],
                         capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "FAILED" not in out.stdout, out.stdout[-3000:]
    table = (tmp_path / "gpu.txt").read_text()
    for part in ("small-tensor chain", "MLP", "GPT training step", "sampling with the KV cache"):
        assert part in table


def test_the_gpu_script_refuses_a_device_that_is_not_there():
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu.py"), "--device", "nosuchdevice"],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 2 and "not available" in out.stderr
