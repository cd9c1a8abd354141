"""The layering of mlx26, checked on the source with ast (every tracked .py under cli/ core/ kernels/ fpga/).

Rules (each has a self-test below that feeds the checker a violating source and expects a report):

* ``no-ui``: core/, kernels/ and fpga/ never import mlx26.cli, typer or rich, anywhere (functions too).
* ``common``: core/common imports no other mlx26.core package (``mlx26.core._version`` is fine).
* ``method``: a package core/<m>/ imports only mlx26.core.common, .zoo, .llm, mlx26.kernels, mlx26.fpga,
  mlx26.core._version and itself; other pairs need an entry in ``ALLOWED_CROSS`` with a reason.
* ``core-top``: core/__init__.py and core/_version.py import no mlx26 module but ``mlx26.core._version`` and
  ``mlx26.core._import_path`` (standard library only: keeps a checkout root from shadowing installed packages).
* ``backend``: kernels/ imports only mlx26.core.common and itself; fpga/ likewise (neither imports the other).
* ``private``: no module imports a ``_name`` from another module (mlx26 or third-party; the standard
  library's ``os._exit``-style names are exempt), nor reads ``module._name`` of another mlx26 module
  (relative imports count; ``__future__`` and dunders do not; a private *submodule* such as
  ``mlx26.cli._io`` is a module, not a private name).
* ``cli-top``: cli/*.py import at module level only the standard library, typer, mlx26.cli._* and
  ``CLI_TOP_ALLOWED`` (errors, files, the version, and each method's stdlib-only ``spec``); numpy,
  torch, rich and the cores load inside the command functions, so ``mlx26 --help`` stays fast.
* ``spec``: core/<m>/spec.py imports at module level only the standard library and mlx26.core.common
  (plus ``SPEC_ALLOWED``).

A fresh interpreter also imports every spec module and checks that no numpy/torch/scipy came along
(importing ``mlx26.core.<m>.spec`` runs ``core/<m>/__init__.py`` first, which must stay light).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROOTS = ("cli", "core", "kernels", "fpga")
SHARED = ("common", "zoo", "llm")  # core packages every method may use
UI = ("typer", "rich")
HEAVY = ("numpy", "torch", "scipy")

# (importing package, imported package) → why the exception is accepted. Empty: no method imports another.
ALLOWED_CROSS: dict[tuple[str, str], str] = {
    # Flash-ANSR is the other half of the SimpliPy paper: its training stream is generated, simplified
    # and decontaminated by the simplify engine, and its candidates are simplified by it (issue: sr).
    ("sr", "simplify"): "sr samples, simplifies and decontaminates skeletons with the simplify engine",
    # issue #38 builds its LM path on `train grpo`: TRL loading, the one-process check and the warm-up encoding.
    ("vuln_games", "smartthinker"): "vuln-games' LM path reuses train grpo's TRL loader and SFT encoding",
}
CLI_TOP_ALLOWED = ("mlx26.core._version", "mlx26.core.common.errors", "mlx26.core.common.files")
SPEC_ALLOWED: dict[str, tuple[str, str]] = {
    # llm's spec is also the backend chooser (get_backend → Backend); base/types/tokens are stdlib-only.
    "core/llm/spec.py": ("mlx26.core.llm.base", "the backend chooser returns llm.base.Backend (stdlib-only)"),
}


@dataclass(frozen=True)
class Imp:
    path: str
    line: int
    module: str  # the absolute module imported (a from-import of a submodule names the submodule)
    name: str | None  # the name taken from ``module`` by a from-import (None: the module itself)
    top: bool  # runs when the file is imported (not inside a function)


def module_name(path: str) -> str:
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["mlx26", *parts])


def _resolve(path: str, level: int, module: str | None) -> str:
    if not level:
        return module or ""
    base = module_name(path).split(".")
    if not path.endswith("__init__.py"):
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


class _Scan(ast.NodeVisitor):
    def __init__(self, path: str, modules: set[str]):
        self.path, self.modules, self.depth = path, modules, 0
        self.imports: list[Imp] = []
        self.aliases: dict[str, str] = {}  # local name → mlx26 module it is bound to
        self.attrs: list[tuple[int, str, str]] = []  # (line, module, attribute) for module.attr reads

    def _func(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _func

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self.imports.append(Imp(self.path, node.lineno, a.name, None, self.depth == 0))
            if a.name.startswith("mlx26"):
                self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = _resolve(self.path, node.level, node.module)
        for a in node.names:
            sub = f"{base}.{a.name}"
            if sub in self.modules:
                self.imports.append(Imp(self.path, node.lineno, sub, None, self.depth == 0))
                self.aliases[a.asname or a.name] = sub
            else:
                self.imports.append(Imp(self.path, node.lineno, base, a.name, self.depth == 0))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain, value = [], node.value
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in self.aliases:
            self.attrs.append((node.lineno, ".".join([self.aliases[value.id], *reversed(chain)]), node.attr))
        self.generic_visit(node)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def check(sources: dict[str, str]) -> list[str]:
    """Every rule violation in ``sources`` (repo-relative path → text), one line each."""
    modules = {module_name(p) for p in sources}
    out: list[str] = []
    for path, text in sorted(sources.items()):
        scan = _Scan(path, modules)
        scan.visit(ast.parse(text, filename=path))
        me = module_name(path)
        parts = path.split("/")
        package = "mlx26.core." + parts[1] if parts[0] == "core" and len(parts) > 2 else None
        for imp in scan.imports:
            where = f"{path}:{imp.line}"
            mod, root = imp.module, imp.module.split(".")[0]
            if parts[0] != "cli" and (root in UI or _within(mod, "mlx26.cli")):
                out.append(f"no-ui: {where} imports {mod}")
            if imp.name and _private(imp.name) and mod != me and root not in sys.stdlib_module_names:
                out.append(f"private: {where} imports {imp.name} from {mod}")
            if root != "mlx26":
                if parts[0] == "cli" and imp.top and root not in sys.stdlib_module_names and root != "typer":
                    out.append(f"cli-top: {where} imports {mod} at module level")
                if parts[0] == "core" and parts[-1] == "spec.py" and imp.top and root not in sys.stdlib_module_names:
                    out.append(f"spec: {where} imports {mod}")
                continue
            if parts[0] == "core" and package is None and mod not in ("mlx26.core._version",
                                                                       "mlx26.core._import_path"):
                out.append(f"core-top: {where} imports {mod}")
            if package == "mlx26.core.common" and _within(mod, "mlx26.core") and not (
                    _within(mod, package) or mod in ("mlx26.core", "mlx26.core._version")):
                out.append(f"common: {where} imports {mod}")
            elif package and _within(mod, "mlx26.core") and mod not in ("mlx26.core", "mlx26.core._version"):
                other = ".".join(mod.split(".")[:3])
                allowed = {package, *(f"mlx26.core.{s}" for s in SHARED)}
                if other not in allowed and (package.split(".")[-1], other.split(".")[-1]) not in ALLOWED_CROSS:
                    out.append(f"method: {where} imports {mod} (another method's package)")
            if parts[0] in ("kernels", "fpga") and not (_within(mod, f"mlx26.{parts[0]}")
                                                         or _within(mod, "mlx26.core.common")):
                out.append(f"backend: {where} imports {mod}")
            if parts[0] == "cli" and imp.top and not (
                    _within(mod, "mlx26.cli") and (mod == "mlx26.cli" or mod.split(".")[2].startswith("_"))
                    or mod in CLI_TOP_ALLOWED
                    or (mod.startswith("mlx26.core.") and mod.endswith(".spec") and mod.count(".") == 3)):
                out.append(f"cli-top: {where} imports {mod} at module level")
            if parts[0] == "core" and parts[-1] == "spec.py" and imp.top and not (
                    _within(mod, "mlx26.core.common") or SPEC_ALLOWED.get(path, ("",))[0] == mod):
                out.append(f"spec: {where} imports {mod}")
        for line, mod, attr in scan.attrs:
            if _private(attr) and mod != me and mod in modules and f"{mod}.{attr}" not in modules:
                out.append(f"private: {path}:{line} reads {mod}.{attr}")
    return out


def tracked_sources() -> dict[str, str]:
    # tracked files and new ones not yet added (but not ignored ones)
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *ROOTS],
                           cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    return {f: (REPO / f).read_text(encoding="utf-8") for f in files if f.endswith(".py") and (REPO / f).exists()}


def test_the_tree_follows_the_layering():
    sources = tracked_sources()
    assert len(sources) > 100 and "cli/main.py" in sources and "core/common/errors.py" in sources
    assert check(sources) == []


# method package → the cli modules that take their choices from its spec.py
SPEC_USERS = {"dp_mix": ("dp_mix",), "fmri": ("fmri", "_fmri", "_fmri_train"), "profile_memory": ("profile_memory",), "quantize_moe": ("quantize_moe",),
              "rl": ("train_rl", "rl"), "rpa_distill": ("rpa_distill",), "score_code": ("score_code",),
              "select_batch": ("select_batch",), "simplify": ("simplify",),
              "smartthinker": ("reward_length", "train_grpo", "data_arith"), "table_decompose": ("table_decompose",),
              "zoo": ("zoo",)}


def test_every_method_has_a_spec_the_cli_imports():
    sources = tracked_sources()
    for method, users in SPEC_USERS.items():
        assert f"core/{method}/spec.py" in sources, method
        for user in users:
            assert f"mlx26.core.{method}.spec import" in sources[f"cli/{user}.py"], (method, user)


def _spec_lists(text: str) -> dict[str, frozenset]:
    """Module-level NAME = tuple/dict literal of a spec module → the set of its strings (dict: keys)."""
    out = {}
    for node in ast.parse(text).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and isinstance(value, (ast.Tuple, ast.Dict)):
            items = value.keys if isinstance(value, ast.Dict) else value.elts
            if len(items) >= 2 and all(isinstance(e, ast.Constant) for e in items):
                out[target.id] = frozenset(e.value for e in items)
    return out


def copies(sources: dict[str, str]) -> list[str]:
    """Literal lists of strings in cli/ or core/<m>/ that repeat a list of some core/<m>/spec.py."""
    specs = {p: _spec_lists(t) for p, t in sources.items() if p.startswith("core/") and p.endswith("/spec.py")}
    out = []
    for path, text in sorted(sources.items()):
        if path in specs or not path.startswith(("cli/", "core/")):
            continue
        own = {p: v for p, v in specs.items() if path.startswith("cli/") or p.startswith(path.rsplit("/", 1)[0])}
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(node.elts) >= 2 and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
                found = frozenset(e.value for e in node.elts)
                for spec, lists in own.items():
                    out += [f"{path}:{node.lineno} repeats {name} of {spec}" for name, v in lists.items() if v == found]
    return out


def test_no_copies_of_spec_lists():
    assert copies(tracked_sources()) == []


def test_the_copy_checker_reports_a_copy():
    spec = "METHODS = ('a', 'b')\nTABLE = {'x': 1, 'y': 2}\n"
    assert copies({"core/m/spec.py": spec, "cli/c.py": "CHOICES = ('b', 'a')\n"})
    assert copies({"core/m/spec.py": spec, "core/m/run.py": "def f(how=['a', 'b']):\n    pass\n"})
    assert copies({"core/m/spec.py": spec, "cli/c.py": "if k not in ('x', 'y'):\n    pass\n"})
    assert not copies({"core/m/spec.py": spec, "cli/c.py": "CHOICES = ('a', 'c')\n",
                       "core/other/run.py": "X = ('a', 'b')\n"})


@pytest.mark.parametrize(("path", "source", "rule"), [
    ("core/m/a.py", "def f():\n    import typer\n", "no-ui"),
    ("core/m/a.py", "def f():\n    from rich.console import Console\n", "no-ui"),
    ("kernels/k.py", "from mlx26.cli._io import emit\n", "no-ui"),
    ("fpga/f.py", "from mlx26.cli import main\n", "no-ui"),
    ("core/common/a.py", "def f():\n    from mlx26.core.zoo import corpus\n", "common"),
    ("core/m/a.py", "def f():\n    from mlx26.core.other.x import y\n", "method"),
    ("core/m/a.py", "import mlx26.core.other\n", "method"),
    ("core/__init__.py", "from mlx26.core.zoo import corpus\n", "core-top"),
    ("kernels/k.py", "from mlx26.fpga import emu\n", "backend"),
    ("fpga/f.py", "from mlx26.core.zoo import corpus\n", "backend"),
    ("core/m/a.py", "from mlx26.core.m.b import _helper\n", "private"),
    ("core/m/a.py", "from .b import _helper\n", "private"),
    ("core/m/sub/a.py", "def f():\n    from ..b import _helper\n", "private"),
    ("cli/c.py", "def f():\n    from mlx26.core.m.b import _helper\n", "private"),
    ("core/m/a.py", "from mlx26.core.m import b\nb._helper()\n", "private"),
    ("core/m/a.py", "import mlx26.core.m.b\nmlx26.core.m.b._helper()\n", "private"),
    ("core/m/a.py", "import mlx26.core.m.b as bee\nbee._helper()\n", "private"),
    ("cli/c.py", "import numpy as np\n", "cli-top"),
    ("cli/c.py", "try:\n    import torch\nexcept ImportError:\n    torch = None\n", "cli-top"),
    ("cli/c.py", "import rich\n", "cli-top"),
    ("cli/c.py", "from mlx26.core.m import b\n", "cli-top"),
    ("cli/c.py", "from mlx26.core.m.b import thing\n", "cli-top"),
    ("cli/c.py", "from mlx26.cli.zoo import ModelOpt\n", "cli-top"),
    ("core/m/spec.py", "import numpy\n", "spec"),
    ("core/m/spec.py", "from mlx26.core.m.b import X\n", "spec"),
])
def test_the_checker_reports_each_violation(path, source, rule):
    helpers = {"core/m/__init__.py": "", "core/m/b.py": "", "core/m/sub/__init__.py": "", "core/m/spec.py": "",
               "core/other/__init__.py": "", "core/other/x.py": "", "cli/__init__.py": "", "cli/_io.py": "",
               "cli/zoo.py": "", "fpga/__init__.py": "", "fpga/emu.py": "", "core/zoo/__init__.py": ""}
    found = check({**helpers, path: source})
    assert [v for v in found if v.startswith(rule + ":")], (rule, found)


def test_the_checker_accepts_the_allowed_forms():
    sources = {
        "core/m/__init__.py": "from mlx26.core.common.lazy import lazy_exports\n",
        "core/m/b.py": "_x = 1\n",
        "core/m/spec.py": "import os\nfrom mlx26.core.common.errors import InputError\n",
        "core/m/a.py": ("from __future__ import annotations\nfrom mlx26.core.common.errors import InputError\n"
                        "from mlx26.core.m.b import __doc__\nimport mlx26.core.m.b as b\nb.__name__\n"
                        "def f():\n    import torch\n    from mlx26.core.zoo import corpus\n"
                        "    from mlx26.core.llm import get_backend\n    from mlx26.kernels import q\n"
                        "    from mlx26.fpga import emu\n    from mlx26.core import _version\n"),
        "core/common/a.py": "from mlx26.core._version import __version__\nfrom mlx26.core.common import b\n",
        "core/common/b.py": "", "core/_version.py": "__version__ = '0'\n",
        "core/__init__.py": "from mlx26.core._version import __version__\n",
        "core/zoo/__init__.py": "", "core/llm/__init__.py": "", "kernels/__init__.py": "", "kernels/q.py": "",
        "fpga/__init__.py": "", "fpga/emu.py": "from mlx26.core.common.errors import InputError\n",
        "cli/__init__.py": "", "cli/_io.py": "", "cli/_errors.py": "",
        "cli/c.py": ("import json\nimport typer\nfrom mlx26.cli import _errors\nfrom mlx26.cli._io import emit\n"
                     "from mlx26.core.m.spec import METHODS\nfrom mlx26.core.common.errors import InputError\n"
                     "def f():\n    import numpy\n    from mlx26.core.m.b import thing\n"),
    }
    assert check(sources) == []


def test_allow_lists_have_no_stale_entries():
    sources = tracked_sources()
    for (pkg, other), reason in ALLOWED_CROSS.items():
        assert reason
        assert any(f"mlx26.core.{other}" in text for p, text in sources.items() if p.startswith(f"core/{pkg}/"))
    for path, (mod, reason) in SPEC_ALLOWED.items():
        assert reason and mod in sources[path]


def test_spec_modules_load_nothing_heavy():
    """A fresh interpreter: every core/<m>/spec.py (and its package __init__) without numpy/torch/scipy."""
    specs = sorted(module_name(p) for p in tracked_sources() if p.startswith("core/") and p.endswith("/spec.py"))
    assert len(specs) >= 10
    code = ("import sys\n" + "".join(f"import {m}\n" for m in specs)
            + f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\nassert not heavy, heavy\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_registries_follow_their_spec():
    """Where a core registry or a cli enum cannot import its list from spec.py, the two are compared here."""
    from mlx26.cli.table_decompose import TableFormat
    from mlx26.core.rl import registry
    from mlx26.core.rl import spec as rl_spec
    from mlx26.core.table_decompose.spec import FORMATS
    from mlx26.core.zoo.corpora import CORPORA
    from mlx26.core.zoo.spec import CORPUS_NAMES

    assert tuple(CORPORA) == CORPUS_NAMES
    assert tuple(m.value for m in TableFormat) == FORMATS
    assert registry.ALGORITHMS is rl_spec.ALGORITHMS


def test_default_subcommands_name_registered_subcommands():
    from mlx26.cli import main

    for group, default in main.DEFAULT_SUBCOMMANDS.items():
        assert default in main.subcommand_names(group), group
