"""`chainrule demo`: runs in a fresh folder, exits 0, writes every file it names, prints the seeds' numbers."""

from __future__ import annotations

import html
import importlib.util
import io
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chainrule.cli import main
from chainrule.demo import bar as progress
from chainrule.demo import seeds, tour

HAS_GRAPH = importlib.util.find_spec("chainrule.graph") is not None
HAS_MPL = importlib.util.find_spec("matplotlib") is not None
CHECK_LINE = re.compile(r"^  (?:✓ pass|✗ FAIL|pass|FAIL)  (.+?)\s+expected (\S+)\s+got (\S+)")


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "fresh"  # does not exist yet: the demo creates it
    proc = subprocess.run(
        [sys.executable, "-Werror", "-m", "chainrule", "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    return out, proc


def checks_in(text):
    found = {}
    for line in text.splitlines():
        m = CHECK_LINE.match(line)
        if m:
            found[m.group(1).strip()] = (float(m.group(2)), float(m.group(3)), "FAIL" not in line)
    return found


def test_demo_exits_zero_and_every_check_passes(demo_run):
    out, proc = demo_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    checks = checks_in(proc.stdout)
    assert len(checks) >= 40
    assert all(ok for _, _, ok in checks.values())
    n = len(checks)
    assert f"{n} checks: {n} passed, 0 failed" in proc.stdout


@pytest.mark.parametrize(
    "name, number",
    [
        ("seed 002: dL/da (Scalar.backward)", 4.0),
        ("seed 002: dL/db (Scalar.backward)", -11.0),
        ("seed 002: L = b(a+b)(a-b) at (a, b) = (1, 2)", -6.0),
        ("seed 002: L after a -= 0.01 * dL/da", -6.1568),
        ("seed 002: L after b -= 0.01 * dL/db", -7.283931),
        ("seed 002: dL/da by finite difference, h = 1e-5", 4.00002),
        ("seed 002: dL/db by finite difference, h = 1e-5", -11.00006),
        ("seed 002: f'(6) by autodiff, f = x^3 - 10x^2 + 5x - 2", -7.0),
        ("seed 002: d2L/da2 = 2b", 4.0),
        ("seed 002: d2L/db2 = -6b", -12.0),
        ("seed 000: dL/dx for L = (y - (mx + c))^2 at y=1, m=2, x=3, c=4", 36.0),
        ("seed 000: d/dx of the long polynomial at x = 2", 578.0),
        ("seed 000: z = (x + c) x, dz/dx = 2x + c at x=3, c=4", 10.0),
    ],
)
def test_printed_numbers_match_the_seeds(demo_run, name, number):
    checks = checks_in(demo_run[1].stdout)
    expected, got, ok = checks[name]
    assert expected == number
    assert got == pytest.approx(number, rel=1e-9)
    assert ok


def test_sections_in_order(demo_run):
    text = demo_run[1].stdout
    heads = [
        "1. The tutorials' derivatives",
        "2. Finite differences versus autodiff",
        "3. Paths and chains",
        "4. The graph of L",
        "5. Descent: 50 random starts",
        "6. Second derivatives",
    ]
    positions = [text.index(h) for h in heads]
    assert positions == sorted(positions)
    # the finite-difference table: one row per step size, error growing again at tiny h
    rows = re.findall(r"^\s+(1e-\d\d)\s+(-?\d+\.\d+)\s+(\d\.\de[-+]\d\d)", text, flags=re.M)
    assert [r[0] for r in rows] == ["1e-01", "1e-03", "1e-05", "1e-07", "1e-09", "1e-11", "1e-13"]
    errors = [float(r[2]) for r in rows]
    assert errors.index(min(errors)) not in (0, len(errors) - 1)


def png_size(path):
    Image = pytest.importorskip("PIL.Image")
    with Image.open(path) as im:
        im.verify()
    with Image.open(path) as im:
        return im.format, im.size


def test_every_named_file_is_written(demo_run):
    out, proc = demo_run
    wrote = [Path(p) for p in re.findall(r"^  wrote (.+)$", proc.stdout, flags=re.M)]
    expected = {"tangent.png", "trajectories.png"} if HAS_MPL else set()
    if HAS_GRAPH:
        expected |= {"graph.svg", "graph.png"}
    assert {p.name for p in wrote} == expected
    for p in wrote:
        assert p.parent == out.resolve()
        assert p.is_file() and p.stat().st_size > 1000
    sizes = {p.name: png_size(p) for p in wrote if p.suffix == ".png"}
    if HAS_MPL:
        assert sizes["tangent.png"] == ("PNG", (640, 500))
        assert sizes["trajectories.png"] == ("PNG", (720, 600))
    if HAS_GRAPH:
        fmt, (w, h) = sizes["graph.png"]
        assert fmt == "PNG" and w > h >= 100, "a left-to-right graph picture"
        svg = html.unescape((out / "graph.svg").read_text())
        assert "<svg" in svg and "data -6.0000" in svg and "grad -11.0000" in svg


@pytest.mark.skipif(not HAS_GRAPH, reason="chainrule.graph is not available")
def test_paths_and_chains_are_printed(demo_run):
    text = demo_run[1].stdout
    assert "skipped" not in text
    assert text.count("chain [-9, -1, 1, 2]: (-9) × (-1) × 1 × 2 = 18") == 2
    assert "sum: 18 + 18 = 36" in text
    assert "sum: 3 + 7 = 10" in text


def test_help_describes_the_tour(capsys):
    with pytest.raises(SystemExit) as info:
        main(["demo", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for words in ("--out DIR", "pass/fail", "finite differences versus autodiff", "trajectories.png", "Exit status"):
        assert words in text


def test_no_command_prints_usage(capsys):
    assert main([]) == 2
    assert "demo" in capsys.readouterr().out


def test_a_wrong_number_makes_the_demo_fail(tmp_path, monkeypatch):
    monkeypatch.setattr(seeds, "REGISTRY", [*seeds.REGISTRY, (seeds.FIRST, lambda: ("a wrong claim", 1.0, 2.0), 0.0)])
    monkeypatch.setattr(tour, "SECTIONS", (tour.derivatives,))
    stream = io.StringIO()
    assert tour.run(tmp_path, stream=stream) == 1
    text = stream.getvalue()
    assert re.search(r"FAIL  a wrong claim\s+expected 1\s+got 2", text)
    assert "1 failed" in text and "FAILED: a wrong claim expected 1, got 2" in text


def test_a_crashing_check_fails_without_crashing_the_demo(tmp_path, monkeypatch):
    def broken():
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(seeds, "REGISTRY", [(seeds.SECOND, broken, 0.0)])
    monkeypatch.setattr(tour, "SECTIONS", (tour.second_derivatives,))
    stream = io.StringIO()
    assert tour.run(tmp_path, stream=stream) == 1
    assert "(ZeroDivisionError: boom)" in stream.getvalue()


def test_without_matplotlib_or_graph_the_pictures_are_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(tour, "_has_matplotlib", lambda: False)
    monkeypatch.setattr(tour, "_has_graph", lambda: False)
    monkeypatch.setattr(tour, "SECTIONS", (tour.finite_differences, tour.paths_and_chains, tour.graph_picture))
    stream = io.StringIO()
    assert tour.run(tmp_path, stream=stream) == 0
    text = stream.getvalue()
    assert "skipped tangent.png (matplotlib is not installed: pip install chainrule[plot])" in text
    assert "skipped paths and chains (graph module not available)" in text
    assert "skipped graph.svg, graph.png (graph module not available)" in text
    assert list(tmp_path.iterdir()) == []


def test_progress_bar_only_after_a_second(monkeypatch):
    stream = io.StringIO()
    with progress.stage("quick", 2, stream) as tick:
        tick()
        tick()
    assert "quick" not in stream.getvalue()
    monkeypatch.setattr(progress, "DELAY", 0.01)
    with progress.stage("slow", 2, stream) as tick:
        time.sleep(0.05)
        tick()
        time.sleep(0.05)
        tick()
    assert "slow" in stream.getvalue()


def test_plain_progress_without_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    stream = io.StringIO()
    with progress.stage("plain", 2, stream) as tick:
        tick()
        tick()
    assert "... plain: 2/2" in stream.getvalue()
