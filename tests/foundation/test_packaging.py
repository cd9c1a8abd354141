"""A regular (non-editable) install works: build the wheel, install it elsewhere, run it."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

from tests.conftest import REPO


def test_wheel_contains_mapped_subpackages_and_runs(tmp_path):
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path / "dist"), str(REPO)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    wheel = next((tmp_path / "dist").glob("mlx26-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for required in ("mlx26/cli/main.py", "mlx26/cli/_io.py", "mlx26/core/_version.py", "mlx26/kernels/__init__.py",
                     "mlx26/fpga/__init__.py", "mlx26/core/common/environment.py",
                     "mlx26/core/simplify/rules/default.json"):
        assert required in names
    assert not any(n.startswith(("tests/", "cli/", "core/")) for n in names)
    assert any(n.endswith("entry_points.txt") for n in names)

    target = tmp_path / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                              str(wheel)], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr
    # Run from an unrelated folder with only the installed copy importable (plus the deps).
    env = {**os.environ, "PYTHONPATH": str(target), "PYTHONNOUSERSITE": "1"}
    code = ("import sys; sys.path = [p for p in sys.path if '__editable__' not in p];"
            "[sys.meta_path.remove(f) for f in list(sys.meta_path) if 'editable' in type(f).__module__.lower()];"
            "import mlx26.cli.main as m; assert m.__file__.startswith(sys.argv[1]), m.__file__;"
            "sys.exit(m.main(['--version']))")
    run = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("mlx26 ")
