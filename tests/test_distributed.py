"""chainrule.distributed, nn.parallel.DistributedDataParallel and data.DistributedSampler under ``mpiexec``.

Each test launches tests/distributed/checks.py on 2 or 3 processes (loopback) and reads what rank 0
printed. They are marked ``mpi``: without mpi4py or mpiexec they skip, except in CI, where a skipped
``mpi`` test fails the run (conftest.py), as the PyTorch oracle tests do.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CHECKS = HERE / "distributed" / "checks.py"
SRC = HERE.parent / "src"
VALUE_CHECKS = ["collectives", "ddp_mlp", "no_sync", "unused", "sampler", "gpt_ddp"]


def mpiexec() -> str | None:
    """The launcher next to this Python (the mpich wheel puts it in the venv's bin), else on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


def _why_not() -> str | None:
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed (pip install -e '.[mpi]')"
    if mpiexec() is None:
        return "no mpiexec (pip install mpich, or a system MPI)"
    return None


pytestmark = [pytest.mark.mpi, pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))]


def launch(n: int, *args: str, timeout: float = 60, **env_vars: str) -> subprocess.CompletedProcess:
    """``mpiexec -n n python args...`` with chainrule importable, each rank on one thread."""
    env = dict(os.environ, **env_vars, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
               CHAINRULE_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    return subprocess.run([mpiexec(), "-n", str(n), sys.executable, "-Werror", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("n", [2, 3])
def test_collectives_ddp_and_sampler_match_one_process(n):
    out = launch(n, str(CHECKS), *VALUE_CHECKS)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
    assert out.stdout.split() == [w for name in VALUE_CHECKS for w in ("PASS", name)], out.stdout


def test_gpt_training_resumes_on_another_number_of_ranks(tmp_path):
    """6 steps: 3 on 2 ranks, 3 more on 3 ranks from rank 0's checkpoint = one process's 6 (float64)."""
    first = launch(2, str(CHECKS), "gpt_resume_part1", CHECKS_DIR=str(tmp_path))
    assert first.returncode == 0, first.stderr[-4000:]
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".npz") == ["mpi.npz"]  # rank 0's, whole
    second = launch(3, str(CHECKS), "gpt_resume_part2", "gpt_dropout_matches_fork_split", CHECKS_DIR=str(tmp_path))
    assert second.returncode == 0, second.stderr[-4000:]
    assert "PASS gpt_resume_part2" in second.stdout and "PASS gpt_dropout_matches_fork_split" in second.stdout


def test_gpt_train_command_under_mpiexec_gives_the_one_process_run(tmp_path):
    np = pytest.importorskip("numpy")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(20):
        (corpus / f"m{i}.py").write_text("".join(f"def f_{i}_{j}(x):\n    return x * {j}\n" for j in range(20)))
    common = ["-m", "chainrule", "gpt", "train", "--steps", "4", "--corpus", str(corpus), "--layers", "1",
              "--d-model", "16", "--heads", "2", "--context", "16", "--batch-size", "5", "--eval-interval", "2",
              "--eval-batches", "2", "--dtype", "float64", "--quiet"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
               CHAINRULE_NUM_THREADS="1", MPLBACKEND="Agg")
    alone = subprocess.run([sys.executable, "-Werror", *common, "--workers", "1", "--out", str(tmp_path / "one")],
                           env=env, capture_output=True, text=True, timeout=120)
    assert alone.returncode == 0, alone.stderr[-3000:]
    ranks = launch(2, *common, "--out", str(tmp_path / "two"), MPLBACKEND="Agg")
    assert ranks.returncode == 0, ranks.stderr[-3000:]
    assert ranks.stdout.count("model:") == 1, ranks.stdout  # rank 0 alone prints
    assert "training in 2 MPI ranks" in ranks.stdout and "rank 1 = " in ranks.stdout
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == sorted(p.name for p in (tmp_path / "one").iterdir())
    one, two = np.load(tmp_path / "one" / "checkpoint.npz"), np.load(tmp_path / "two" / "checkpoint.npz")
    for key in one.files:
        if key.startswith(("model/", "optimizer/state")):
            np.testing.assert_allclose(two[key], one[key], rtol=1e-12, atol=1e-12, err_msg=key)


def test_the_example_script_trains_under_mpiexec():
    out = launch(2, str(HERE.parent / "examples" / "ddp_train.py"))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "every rank holds the same weights: True" in out.stdout, out.stdout
    accuracy = float(out.stdout.split("accuracy ")[1].split(";")[0])
    assert accuracy > 0.95, out.stdout


def test_a_bad_option_under_mpiexec_ends_every_rank_with_the_message(tmp_path):
    start = time.monotonic()
    out = launch(2, "-m", "chainrule", "gpt", "train", "--corpus", str(tmp_path / "missing"), "--out",
                 str(tmp_path / "run"), timeout=60)
    assert time.monotonic() - start < 30
    assert out.returncode != 0
    assert "chainrule gpt train: error:" in out.stderr and "rank 0 failed: ending all 2 ranks" in out.stderr, out.stderr


def test_a_rank_that_raises_ends_the_job_naming_it():
    start = time.monotonic()
    out = launch(3, str(CHECKS), "raises", timeout=30)
    assert time.monotonic() - start < 20
    assert out.returncode != 0
    assert "rank 2 failed: ValueError: a deliberate failure" in out.stderr, out.stderr[-3000:]
    assert "PASS" not in out.stdout


@pytest.mark.parametrize("how", ["killed", "exits"])
def test_a_rank_that_dies_ends_the_job_within_seconds(how):
    start = time.monotonic()
    out = launch(3, str(CHECKS), how, timeout=30)  # the others wait in barrier(): mpiexec must end them
    assert time.monotonic() - start < 20
    assert out.returncode != 0 and "PASS" not in out.stdout, out.stdout + out.stderr[-3000:]
    why = "was killed by signal SIGKILL" if how == "killed" else "exited with status 7"
    assert "rank 2 failed: its process " in out.stderr and why in out.stderr, out.stderr[-3000:]
    assert out.stderr.count("failed") == 1, out.stderr[-3000:]  # the ranks ended by mpiexec stay silent


def test_docstring_examples_in_one_process():
    """(In a child process: MPI stays out of the pytest process, whose other tests fork.)"""
    code = ("import doctest, sys\n"
            "from chainrule import distributed\n"
            "from chainrule.distributed import sampler\n"
            "from chainrule.nn import parallel\n"
            "results = [doctest.testmod(m) for m in (distributed, sampler, parallel)]\n"
            "sys.exit(any(r.failed or not r.attempted for r in results))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-Werror", "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
