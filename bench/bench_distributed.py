"""Data-parallel GPT training on this machine: one process, the fork split over 2, MPI over 2.

The README's GPT (4 layers, d_model 128, 4 heads, context 128, batch 32, float32, byte tokens of the
standard library); one training step = ``chainrule.gpt.Trainer.step``. Each configuration runs in
its own processes, every process on one thread (``CHAINRULE_NUM_THREADS=1``, OpenBLAS 1):

- ``1 process``: the whole batch in one process;
- ``fork split x2``: ``TrainConfig(workers=2)``, a forked worker sharing memory (chainrule.gpt.workers);
- ``MPI x2``: ``mpiexec -n 2``, each rank half the batch, one ``Allreduce`` of the gradients per step
  (chainrule.gpt.averaging.MPIRanks); also the time that ``Allreduce`` took per step (rank 0's, which
  includes waiting for the slower rank);

and the CPU time per step of all the processes of each (MPICH's ranks poll while they wait: CPU they
take from other work on a busy machine).

Reports training tokens/s (median of ``--repeats`` blocks of steps after warm-up; the three runs are
alternated ``--rounds`` times and the median round of each reported), then the predicted
scaling to 2, 8 and 64 machines from the measured one-process step (bench/distributed_scaling.py).

    python bench/bench_distributed.py          # the figures (a minute or two)
    python bench/bench_distributed.py --tiny   # seconds, for CI (tests/test_bench.py)
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import parser, table  # noqa: E402
from distributed_scaling import print_table  # noqa: E402

FULL = dict(n_layers=4, d_model=128, n_heads=4, context_length=128, batch=32, warmup=3, steps=4, corpus_bytes=1_500_000)
TINY = dict(n_layers=1, d_model=16, n_heads=2, context_length=16, batch=4, warmup=1, steps=2, corpus_bytes=30_000)
ONE_THREAD = {"CHAINRULE_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def child(cfg: dict, data: str, mode: str, repeats: int) -> None:
    """Run in a child (or in each MPI rank): time blocks of steps, print one JSON line (rank 0)."""
    import numpy as np

    from chainrule import nn
    from chainrule.gpt import TokenStream, TrainConfig, Trainer

    config = nn.GPTConfig(vocab_size=256, context_length=cfg["context_length"], d_model=cfg["d_model"],
                          n_heads=cfg["n_heads"], n_layers=cfg["n_layers"])
    model = nn.GPT(config, seed=0, dtype=np.float32)
    train, val = (TokenStream(os.path.join(data, f"{n}.bin")) for n in ("train", "val"))
    trainer = Trainer(model, train, val, TrainConfig(batch_size=cfg["batch"], max_steps=10**6, warmup_steps=20,
                                                     workers=2 if mode == "fork" else 1),
                      parallel="mpi" if mode == "mpi" else "fork")
    for _ in range(cfg["warmup"]):
        trainer.step()
    rates, reduces = [], []
    cpu_start = _cpu_seconds()
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(cfg["steps"]):
            trainer.step()
            if mode == "mpi":
                reduces.append(trainer._workers.reduce_seconds)
        rates.append(cfg["batch"] * cfg["context_length"] * cfg["steps"] / (time.perf_counter() - start))
    trainer.close()  # (the forked worker ends: its CPU time joins this process's children's)
    cpu = np.array([_cpu_seconds() - cpu_start])
    if mode == "mpi":
        from chainrule import distributed as dist

        dist.all_reduce(cpu)
    if trainer.writer:
        print(json.dumps({"tokens_per_s": statistics.median(rates), "processes": trainer.processes,
                          "cpu_s_per_step": float(cpu[0]) / (repeats * cfg["steps"]),
                          "reduce_ms": 1e3 * statistics.median(reduces) if reduces else None,
                          "params": model.num_parameters()}), flush=True)


def _cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended (a forked worker, once closed)."""
    import resource

    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def run(cfg: dict, data: str, mode: str, repeats: int) -> dict | str:
    args = [sys.executable, __file__, "--child", mode, "--data", data, "--repeats", str(repeats)]
    args += ["--tiny"] if cfg is TINY else []
    if mode == "mpi":
        launcher = Path(sys.executable).parent / "mpiexec"
        launcher = str(launcher) if launcher.exists() else shutil.which("mpiexec")
        try:
            import mpi4py  # noqa: F401
        except ImportError:
            launcher = None
        if launcher is None:
            return "no mpi4py/mpiexec"
        args = [launcher, "-n", "2", *args]
    env = dict(os.environ, **ONE_THREAD)
    out = subprocess.run(args, capture_output=True, text=True, env=env, timeout=900)
    if out.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median_run(runs: list) -> dict | str:
    if isinstance(runs[0], str):
        return runs[0]
    ordered = sorted(runs, key=lambda r: r["tokens_per_s"])
    return ordered[len(ordered) // 2]


def blas_report() -> None:
    """What threadpoolctl sees (which BLAS, how many threads), and the machine's load: figures are indicative."""
    try:
        import numpy  # noqa: F401  (loads OpenBLAS)
        from threadpoolctl import threadpool_info

        for pool in threadpool_info():
            print(f"  {pool.get('internal_api')} {pool.get('version')} ({pool.get('architecture')}), "
                  f"{pool.get('num_threads')} threads: {pool.get('filepath')}")
    except ImportError:
        print("  (threadpoolctl not installed)")
    print(f"  {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f} (other work on the machine slows these)")


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--child", choices=["one", "fork", "mpi"])
    p.add_argument("--data")
    p.add_argument("--rounds", type=int, default=3, help="rounds of the three runs, alternated (median reported)")
    a = p.parse_args()
    cfg = TINY if a.tiny else FULL
    repeats = 1 if a.tiny else a.repeats
    src = HERE.parent / "src"
    if str(src) not in sys.path and (src / "chainrule").exists():
        sys.path.insert(0, str(src))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")])
    if a.child:
        child(cfg, a.data, a.child, repeats)
        return
    from chainrule.gpt import ByteTokenizer, default_corpus_dir, read_corpus, write_tokens

    data = tempfile.mkdtemp(prefix="bench_distributed_")
    try:
        write_tokens(read_corpus(default_corpus_dir(), max_bytes=cfg["corpus_bytes"]), ByteTokenizer(), data)
        print(f"GPT {cfg['n_layers']} layers, d_model {cfg['d_model']}, context {cfg['context_length']}, batch "
              f"{cfg['batch']}, float32; each process 1 thread")
        blas_report()
        rounds = [{mode: run(cfg, data, mode, repeats) for mode in ("one", "fork", "mpi")}
                  for _ in range(1 if a.tiny else a.rounds)]  # alternated: a change of load hits all three
        results = {mode: _median_run([r[mode] for r in rounds]) for mode in ("one", "fork", "mpi")}
    finally:
        shutil.rmtree(data, ignore_errors=True)
    rows = [("chainrule, 1 process", results["one"]["tokens_per_s"]),
            ("chainrule, fork split x2", results["fork"]["tokens_per_s"])]
    mpi = results["mpi"]
    rows.append(("chainrule, MPI x2", mpi if isinstance(mpi, str) else mpi["tokens_per_s"]))
    table("GPT training (tokens/s, higher is better)", "tokens/s", rows, baseline="chainrule, 1 process")
    cpu = {m: r["cpu_s_per_step"] for m, r in results.items() if not isinstance(r, str)}
    print("  CPU seconds per step, all processes: " + ", ".join(f"{m} {s:.3f}" for m, s in cpu.items()))
    if not isinstance(mpi, str):
        ratio = mpi["tokens_per_s"] / results["fork"]["tokens_per_s"]
        print(f"  MPI x2 / fork split x2: {ratio:.2f}; MPI Allreduce per step (rank 0, waiting included): "
              f"{mpi['reduce_ms']:.2f} ms")
    step = cfg["batch"] * cfg["context_length"] / results["one"]["tokens_per_s"]
    params = results["one"]["params"]
    print_table([(f"GPT float32 ({params:,} params)", params, 4, step)])


if __name__ == "__main__":
    main()
