"""Type checkers and editors see chainrule's API: Tensor's generated methods, the lazy top-level names.

- the typed listing of Tensor's methods (``chainrule/tensor/methods.py``) matches the declarations
  (regenerate with ``python -m chainrule.ops.typing_block``), as docs/ops.md matches the op table;
- the package's TYPE_CHECKING imports name exactly what ``__getattr__`` serves lazily;
- an ordinary user script (tests/typing/user_script.py) type-checks clean under mypy, and mypy
  does read chainrule's types (a misspelt method and a wrong type are reported).
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import chainrule
from chainrule.ops import typing_block

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tests" / "typing" / "user_script.py"


def test_the_package_is_marked_typed():
    assert (Path(chainrule.__file__).parent / "py.typed").is_file()


def test_tensor_methods_listing_is_up_to_date():
    assert typing_block.current() == typing_block.render(), (
        "the typed listing of Tensor's methods is stale: run python -m chainrule.ops.typing_block"
    )


def test_type_checking_imports_name_the_lazy_exports():
    tree = ast.parse(Path(chainrule.__file__).read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    names: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1
        for alias in node.names:
            names[alias.name] = node.module or ""
    lazy = {name: module for name, module in chainrule._LAZY.items()}
    assert {n: m for n, m in names.items() if m} == lazy
    assert {n for n, m in names.items() if not m} == set(chainrule._SUBMODULES)


def _mypy(path: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    mypy = shutil.which("mypy") or str(Path(sys.executable).parent / "mypy")
    if not Path(mypy).exists():
        pytest.skip("mypy is not installed (it is in the dev extra)")
    return subprocess.run(
        [mypy, "--follow-imports=silent", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
         "--python-executable", sys.executable, str(path)],
        cwd=tmp_path, capture_output=True, text=True,
    )


def test_a_user_script_type_checks_clean(tmp_path):
    out = _mypy(SCRIPT, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_reads_chainrule_types(tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "import chainrule as cr\n"
        "x = cr.Tensor([1.0], requires_grad=True)\n"
        "x.sum().no_such_method()\n"
        "n: int = (x * 2).exp()\n"
        "g: int = x.grad\n"
        "cr.grad(1, 2, 3, 4, 5, 6)\n"
    )
    out = _mypy(wrong, tmp_path)
    report = out.stdout
    assert '"Tensor" has no attribute "no_such_method"' in report
    assert 'expression has type "Tensor", variable has type "int"' in report
    assert 'expression has type "Tensor | None", variable has type "int"' in report
    assert re.search('Too many (positional )?arguments for "grad"', report)  # (positional: grad has keyword-only ones)
