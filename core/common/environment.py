"""What this installation can do: version, Python, optional extras, accelerators, data directory.

Used by ``mlx26 info``. Optional packages are located with ``importlib.util.find_spec`` and
their versions read from package metadata, so nothing heavy is imported, except torch when it
is installed (only importing it tells whether CUDA is usable).
"""

from __future__ import annotations

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


def torch_device() -> str | None:
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    if torch.cuda.is_available():
        return f"cuda ({torch.cuda.get_device_name(0)})"
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


def describe() -> dict[str, Any]:
    """One flat mapping, suitable for a key/value table or JSON."""
    result: dict[str, Any] = {
        "version": __version__,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "executable": sys.executable,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
    }
    for label, (import_name, dist_name) in OPTIONAL_PACKAGES.items():
        result[label] = package_version(import_name, dist_name) or "not installed"
    result["torch_device"] = torch_device() or "n/a (torch not installed)"
    result["fpga"] = xrt_status()
    result["g++ (fpga emulation)"] = gxx_version() or "not found"
    result["data_dir"] = str(data_dir())
    return result
