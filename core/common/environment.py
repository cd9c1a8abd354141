"""What this installation can do: version, Python, optional extras, accelerators, data directory.

Used by ``mlx26 info``. Optional packages are located with ``importlib.util.find_spec`` and
their versions read from package metadata, so nothing heavy is imported: the torch device is
told from torch's build file (``torch/version.py``: CUDA/ROCm build or CPU-only) and the kernel
driver (``/proc/driver/nvidia/version``), which keeps ``mlx26 info`` well under half a second
(importing torch alone takes 1.5–2 s on our machines). ``--probe`` asks torch itself.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from mlx26.core._version import __version__

# extra name → (import name, distribution name)
OPTIONAL_PACKAGES: dict[str, tuple[str, str]] = {
    "torch": ("torch", "torch"),
    "transformers": ("transformers", "transformers"),
    "onnxruntime": ("onnxruntime", "onnxruntime"),
    "dp-accounting": ("dp_accounting", "dp-accounting"),
    "sympy": ("sympy", "sympy"),
}


def data_dir() -> Path:
    """Cache/data directory: ``$MLX26_HOME``, else ``$XDG_CACHE_HOME/mlx26``, else ``~/.cache/mlx26``."""
    if os.environ.get("MLX26_HOME"):
        return Path(os.environ["MLX26_HOME"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mlx26"


def package_version(import_name: str, dist_name: str) -> str | None:
    """Installed version of an optional package, or None when it is absent."""
    if importlib.util.find_spec(import_name) is None:
        return None
    try:
        return importlib.metadata.version(dist_name)
    except importlib.metadata.PackageNotFoundError:
        return "present"


def torch_build() -> dict[str, str | None] | None:
    """The accelerator fields of torch's generated ``version.py`` (cuda, hip, …), read, not imported."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "version.py"
    fields: dict[str, str | None] = {}
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return fields
    for node in tree.body:
        target: ast.expr
        if isinstance(node, ast.AnnAssign):
            target, constant = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, constant = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and isinstance(constant, ast.Constant):
            value = constant.value
            fields[target.id] = value if isinstance(value, str) or value is None else str(value)
    return fields


def nvidia_driver() -> str | None:
    try:
        first = Path("/proc/driver/nvidia/version").read_text(encoding="utf-8").splitlines()[0]
    except (OSError, IndexError):
        return None
    return first.split("Kernel Module", 1)[-1].split()[0] if "Kernel Module" in first else "present"


def torch_device(probe: bool = False) -> str | None:
    """``cpu`` or the accelerator torch would use; ``probe`` imports torch to ask it (slow, exact)."""
    if importlib.util.find_spec("torch") is None:
        return None
    if probe:
        import torch

        if torch.cuda.is_available():
            return f"cuda ({torch.cuda.get_device_name(0)})"
        return "cpu"
    build = torch_build() or {}
    if build.get("cuda"):
        driver = nvidia_driver()
        if driver:
            return f"cuda (CUDA {build['cuda']} build, NVIDIA driver {driver}; --probe to confirm)"
        return f"cpu (CUDA {build['cuda']} build, no NVIDIA driver found)"
    if build.get("hip"):
        return f"rocm? (HIP {build['hip']} build; --probe to confirm)"
    return "cpu"


def gxx_version() -> str | None:
    """g++ is what compiles the HLS kernels for software emulation."""
    gxx = shutil.which("g++")
    if gxx is None:
        return None
    try:
        out = subprocess.run([gxx, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "present"
    return out.splitlines()[0] if out else "present"


def xrt_status() -> str:
    """Xilinx runtime: the ``pyxrt`` module and an XRT install (``$XILINX_XRT``)."""
    has_pyxrt = importlib.util.find_spec("pyxrt") is not None
    xrt_home = os.environ.get("XILINX_XRT")
    if has_pyxrt and xrt_home:
        return f"pyxrt + XRT at {xrt_home}"
    if has_pyxrt:
        return "pyxrt (no XILINX_XRT set)"
    return "absent (FPGA paths run in software emulation)"


def describe(probe: bool = False) -> dict[str, Any]:
    """One flat mapping, suitable for a key/value table or JSON (``probe``: import torch to ask it)."""
    result: dict[str, Any] = {
        "version": __version__,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "executable": sys.executable,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
    }
    for label, (import_name, dist_name) in OPTIONAL_PACKAGES.items():
        result[label] = package_version(import_name, dist_name) or "not installed"
    result["torch_device"] = torch_device(probe) or "n/a (torch not installed)"
    result["fpga"] = xrt_status()
    result["g++ (fpga emulation)"] = gxx_version() or "not found"
    result["data_dir"] = str(data_dir())
    return result
