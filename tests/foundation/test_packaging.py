"""A regular (non-editable) install works: the wheel holds every tracked file, and each method runs from it.

The editable install used for development maps ``mlx26.*`` onto the source folders, so it cannot show a
package that the wheel drops (a folder without ``__init__.py`` once shipped without its modules). Here the
wheel is built with ``pip wheel``, its file list is compared with ``git ls-files``, and it is installed into
a fresh venv whose only view of the dev environment is a plain path entry for the third-party packages
(the editable finder's ``.pth`` is not processed there), so every ``mlx26`` module comes from the wheel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

ROOTS = ("cli", "core", "kernels", "fpga")


def _tracked_package_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", *ROOTS], cwd=REPO, capture_output=True, text=True, check=True)
    return [f for f in out.stdout.split() if not f.endswith((".gitignore", ".gitattributes"))]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(dist), str(REPO)], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    return next(dist.glob("mlx26-*.whl"))


@pytest.fixture(scope="module")
def wheel_venv(wheel, tmp_path_factory) -> Path:
    """A venv with the wheel installed; third-party packages come from the dev env as a plain path."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # A bare path line: the dev env's own .pth files (the editable finder among them) are not run.
    Path(site, "_mlx26_dev_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps",
                              "--no-index", "-q", str(wheel)], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr[-3000:]
    return venv


def test_wheel_holds_every_tracked_module_and_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"mlx26/{f}" for f in _tracked_package_files()}
    missing = sorted(expected - names)
    assert not missing, f"{len(missing)} tracked files are not in the wheel, e.g. {missing[:8]}"
    shipped_py = {n for n in names if n.startswith("mlx26/") and n.endswith(".py")}
    assert shipped_py <= expected, f"the wheel ships untracked modules: {sorted(shipped_py - expected)[:8]}"
    assert not any(n.startswith(("tests/", "cli/", "core/", "kernels/", "fpga/")) for n in names)
    assert any(n.endswith("entry_points.txt") for n in names)


def test_every_package_folder_has_an_init():
    folders = {str(Path(f).parent) for f in _tracked_package_files() if f.endswith(".py")}
    lacking = sorted(d for d in folders if not (REPO / d / "__init__.py").exists())
    assert not lacking, f"package folders without __init__.py (the wheel would drop them): {lacking}"


def _run(venv: Path, cwd: Path, *args: str, stdin: str | None = None, timeout: int = 240):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "MLX26_DEBUG")}
    env.update(PATH=f"{venv / 'bin'}:{env.get('PATH', '')}", PYTHONNOUSERSITE="1", MLX26_HOME=str(cwd / "home"),
               MLX26_THREADS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return subprocess.run(list(args), cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                          timeout=timeout)


def test_all_modules_import_from_the_wheel_install(wheel_venv, tmp_path):
    code = ("import importlib, pkgutil, sys, mlx26\n"
            "prefix = sys.argv[1]\n"
            "bad = []\n"
            "for sub in ('cli', 'core', 'kernels', 'fpga'):\n"
            "    pkg = importlib.import_module('mlx26.' + sub)\n"
            "    assert pkg.__file__.startswith(prefix), pkg.__file__\n"
            "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
            "        try:\n"
            "            mod = importlib.import_module(m.name)\n"
            "            assert mod.__file__.startswith(prefix), mod.__file__\n"
            "        except ModuleNotFoundError as exc:\n"
            "            if exc.name.startswith('mlx26'): bad.append(f'{m.name}: {exc}')\n"
            "print(len(sys.modules)); assert not bad, bad\n")
    run = _run(wheel_venv, tmp_path, str(wheel_venv / "bin" / "python"), "-c", code, str(wheel_venv))
    assert run.returncode == 0, run.stderr[-3000:]


# One real run per method, from the installed console script. Each checks a property of its output,
# not only the exit code, and reads the data files the wheel must carry (models, rules, examples).
def _table_csv(tmp: Path) -> str:
    path = tmp / "t.csv"
    path.write_text(",2023,2023,2024\n,Q1,Q2,Q1\nRevenue,1,2,3\nCosts,4,5,6\n")
    return str(path)


METHOD_RUNS = {
    "dp-mix": (["dp-mix", "calibrate", "--mechanism", "gaussian", "-e", "1", "-d", "1e-5", "--format", "json"],
               None, lambda out: json.loads(out)["sigma"] > 0),
    "simplify": (["simplify", "-", "--format", "jsonl"], "x1 - x1 + x2\n",
                 lambda out: json.loads(out.splitlines()[0])["len_out"] < json.loads(out.splitlines()[0])["len_in"]),
    "table-decompose": (["table-decompose", "run", "{table}", "--emit", "lineage", "--format", "jsonl"], None,
                        lambda out: json.loads(out.splitlines()[0])["col_path"] == ["2023", "Q1"]),
    "score-code": (["score-code", "detect", "-", "--format", "jsonl"], "import os\nos.system(input())\n",
                   lambda out: len(out.splitlines()) == 1 and "vulnerable" in json.loads(out)),
    "quantize-moe": (["quantize-moe", "--bits", "3", "--lowrank", "lqer", "--rank", "4", "--calib-bytes", "2048",
                      "--format", "jsonl"], None, lambda out: '"record": "projection"' in out),
    "profile-memory": (["profile-memory", "--model", "tiny-llama", "--context", "256", "--decode-steps", "1",
                        "--budget", "64", "-q", "--format", "jsonl"], None, lambda out: '"stage"' in out),
    "select-batch": (["select-batch", "demo-data", "--format", "jsonl"], None,
                     lambda out: len(out.splitlines()) > 10 and '"domain"' in out),
    "rpa-distill": (["rpa-distill", "envs", "--format", "jsonl"], None, lambda out: "synthetic/click-button" in out),
    "train rl": (["train", "rl", "--algo", "dqn", "--env", "CartPole-v1", "--steps", "120", "--set",
                  "learning_starts=100", "--eval-episodes", "1", "--out", "{tmp}/rl", "--quiet"], None,
                 lambda out: '"phase": "eval"' in out.splitlines()[-1]),
    "zoo": (["zoo", "list", "--format", "jsonl"], None, lambda out: '"tiny-moe"' in out),
    "reward length": (["reward", "length", "--demo", "--format", "jsonl"], None,
                      lambda out: len(out.splitlines()) == 20 and '"l_opt"' in out),
    "llm": (["llm", "chat", "--llm", "scripted:demo", "say: ready", "--format", "json"], None,
            lambda out: json.loads(out)["backend"].startswith("scripted")),
    "io": (["io", "convert", "-", "--input-format", "csv", "--format", "jsonl"], "a,b\n1,2\n",
           lambda out: json.loads(out) == {"a": "1", "b": "2"} or json.loads(out) == {"a": 1, "b": 2}),
}


@pytest.mark.parametrize("method", sorted(METHOD_RUNS))
def test_each_method_runs_from_the_wheel(wheel_venv, tmp_path, method):
    args, stdin, check = METHOD_RUNS[method]
    args = [a.replace("{table}", _table_csv(tmp_path)).replace("{tmp}", str(tmp_path)) for a in args]
    run = _run(wheel_venv, tmp_path, str(wheel_venv / "bin" / "mlx26"), *args, stdin=stdin)
    assert run.returncode == 0, f"mlx26 {' '.join(args)} → {run.returncode}: {run.stderr[-2000:]}"
    assert check(run.stdout), run.stdout[-2000:]
