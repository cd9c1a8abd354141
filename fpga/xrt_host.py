"""pyxrt host code: run the HLS kernels of ``fpga/hls/`` on an Alveo card (e.g. the U55C).

Reconstruction for ``mlx26 profile-memory --device fpga --fpga-backend xrt`` (He, Ma, Sun, Cong,
ICML 2026 run their memory-processing kernels on an Alveo U55C; no code is public). The host
sequence is the standard XRT native Python API: ``pyxrt.device(i)`` → ``load_xclbin`` →
``pyxrt.kernel(device, uuid, name)`` → one ``pyxrt.bo`` per pointer argument in the kernel's
memory bank (``kernel.group_id(arg)``) → ``bo.write`` + ``bo.sync(TO_DEVICE)`` → ``kernel(...)``
→ ``run.wait()`` → ``bo.sync(FROM_DEVICE)`` + ``bo.read``.

``pyxrt`` ships with Xilinx XRT (``source /opt/xilinx/xrt/setup.sh``); it is NOT the unrelated
PyPI package called ``xrt``. Without it, or without an ``.xclbin`` built from ``fpga/hls`` by
``v++``, :func:`availability` says why and the CLI exits 3 — it never falls back silently.
This path is untested on hardware here (no card); tests drive it with a fake ``pyxrt``.

Buffers are device-resident: each (kernel, argument) keeps one ``bo``, allocated once and grown
geometrically (twice the first size, so appends fit), and an input is transferred only where its bytes differ from what the card already
holds (``bo.sync(TO_DEVICE, size, offset)`` of the changed span), so a decode step that appends one
token to a single-head K/V view, or repeats a query, moves a few bytes instead of the whole view. With
the kernels' head-major [heads][tokens][dim] layout an appended token shifts every later head's
rows, so for several heads the changed span still covers most of the view: a per-head stride argument
in the kernels would remove that (not done). ``run.wait()``'s state is checked (anything but
COMPLETED is an error naming the kernel), and so is every kernel's return value (``run.return_code()``:
-1 a shape the kernel refuses, -2 a ``gather_rows`` index out of range). The dim / width / k limits
of the HLS kernels (dim ≤ 256, rows in whole 512-bit beats of 16 floats, k ≤ 4096) are enforced
before any transfer, as in the emulation. The kernels' wide ports (``hls::vector<float, 16>``) take the
same bytes as float arrays, so the buffers are the same; a bo starts 4 KiB aligned and every row
offset is a multiple of 64 bytes, as the 512-bit ports need.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import RunFailure
from mlx26.fpga.emu import check_code, check_dim, check_page, check_topk, check_width

XRT_HINT = ("install Xilinx XRT and `source /opt/xilinx/xrt/setup.sh` (pyxrt ships with XRT, not with PyPI; "
            "the PyPI package 'xrt' is unrelated), build an .xclbin from fpga/hls with v++ and pass --xclbin, "
            "or use --fpga-backend emu")


def availability(xclbin: str | None) -> tuple[bool, str]:
    """(usable, reason): pyxrt importable, an xclbin given and present."""
    if importlib.util.find_spec("pyxrt") is None:
        where = os.environ.get("XILINX_XRT")
        detail = f" (XILINX_XRT={where} but pyxrt is not importable)" if where else ""
        return False, f"--fpga-backend xrt needs Xilinx XRT's pyxrt module, which is not installed{detail}."
    if not xclbin:
        return False, "--fpga-backend xrt needs --xclbin PATH (the kernels of fpga/hls built with v++)."
    if not Path(xclbin).is_file():
        return False, f"xclbin not found: {xclbin}"
    return True, "ok"


class XrtKernels:
    """The same interface as :class:`mlx26.fpga.emu.EmuKernels`, run on the card through pyxrt."""

    def __init__(self, xclbin: str, device_index: int = 0):
        import numpy as np

        self._np = np
        self.pyxrt = importlib.import_module("pyxrt")
        self.device = self.pyxrt.device(device_index)
        self.uuid = self.device.load_xclbin(str(xclbin))
        self._kernels: dict[str, Any] = {}
        self._resident: dict[tuple[int, int], tuple[Any, int, bytes]] = {}  # (id(kernel), arg) -> (bo, capacity, shadow)
        self.bytes_to_device = 0  # what the syncs actually moved, for the benchmark and the tests

    def _kernel(self, name: str) -> Any:
        if name not in self._kernels:
            self._kernels[name] = self.pyxrt.kernel(self.device, self.uuid, name)
        return self._kernels[name]

    def _bo(self, kernel: Any, arg: int, nbytes: int) -> tuple[tuple[int, int], Any, bytes]:
        """(key, the resident buffer of (kernel, arg), its device shadow); grown (×2) when ``nbytes`` does not fit."""
        key = (id(kernel), arg)  # kernels are cached per name, so the object identifies the kernel
        held = self._resident.get(key)
        if held is None or held[1] < nbytes:
            capacity = max(4, 2 * nbytes, 2 * held[1] if held else 0)  # room to grow: appends then fit
            bo = self.pyxrt.bo(self.device, capacity, self.pyxrt.bo.normal, kernel.group_id(arg))
            held = (bo, capacity, b"")
            self._resident[key] = held
        return key, held[0], held[2]

    def _bo_in(self, kernel: Any, arg: int, array: Any) -> Any:
        data = self._np.ascontiguousarray(array).tobytes()
        key, bo, shadow = self._bo(kernel, arg, len(data))
        start = _first_difference(shadow, data)
        if start < len(data):  # only the span that differs from what the card holds
            tail = data[start:]
            bo.write(tail, start)
            bo.sync(self.pyxrt.xclBOSyncDirection.XCL_BO_SYNC_BO_TO_DEVICE, len(tail), start)
            self.bytes_to_device += len(tail)
        self._resident[key] = (bo, self._resident[key][1], data)
        return bo

    def _bo_out(self, kernel: Any, arg: int, nbytes: int) -> Any:
        return self._bo(kernel, arg, nbytes)[1]

    def _launch(self, name: str, kernel: Any, *args: Any) -> int:
        """Run, wait, check the completion state; the kernel's return value (0 when XRT cannot give one)."""
        run = kernel(*args)
        state = run.wait()
        done = getattr(getattr(self.pyxrt, "ert_cmd_state", None), "ERT_CMD_STATE_COMPLETED", None)
        if state is not None and done is not None and state != done:
            raise RunFailure(f"the {name} kernel did not complete on the card (state {state}).",
                             "check `xbutil examine` and the xclbin; --fpga-backend emu runs the same code on the CPU")
        code = getattr(run, "return_code", None)
        return int(code()) if callable(code) else 0

    def _read(self, bo: Any, shape: tuple[int, ...], dtype: Any) -> Any:
        np = self._np
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        bo.sync(self.pyxrt.xclBOSyncDirection.XCL_BO_SYNC_BO_FROM_DEVICE)
        return np.frombuffer(bytes(bo.read(nbytes, 0)), dtype=dtype).reshape(shape).copy()

    def page_minmax(self, keys: Any, page: int) -> tuple[Any, Any]:
        np = self._np
        keys = np.ascontiguousarray(keys, dtype=np.float32)
        heads, n, dim = keys.shape
        check_dim(dim)
        check_page(page)
        pages = -(-n // page)
        k = self._kernel("page_minmax")
        b_keys = self._bo_in(k, 0, keys)
        b_min, b_max = self._bo_out(k, 5, heads * pages * dim * 4), self._bo_out(k, 6, heads * pages * dim * 4)
        check_code("page_minmax", self._launch("page_minmax", k, b_keys, heads, n, dim, page, b_min, b_max))
        shape = (heads, pages, dim)
        return self._read(b_min, shape, np.float32), self._read(b_max, shape, np.float32)

    def page_score(self, q: Any, kmin: Any, kmax: Any) -> Any:
        np = self._np
        heads, pages, dim = kmin.shape
        check_dim(dim)
        k = self._kernel("page_score")
        b_q = self._bo_in(k, 0, np.asarray(q, np.float32))
        b_lo, b_hi = self._bo_in(k, 1, np.asarray(kmin, np.float32)), self._bo_in(k, 2, np.asarray(kmax, np.float32))
        b_out = self._bo_out(k, 6, heads * pages * 4)
        check_code("page_score", self._launch("page_score", k, b_q, b_lo, b_hi, heads, pages, dim, b_out))
        return self._read(b_out, (heads, pages), np.float32)

    def topk(self, scores: Any, k_: int) -> Any:
        np = self._np
        rows, n = scores.shape
        check_topk(k_, n)
        k = self._kernel("topk_select")
        b_s = self._bo_in(k, 0, np.asarray(scores, np.float32))
        b_out = self._bo_out(k, 4, rows * k_ * 4)
        check_code("topk_select", self._launch("topk_select", k, b_s, rows, n, k_, b_out))
        return self._read(b_out, (rows, k_), np.int32)

    def gather(self, src: Any, idx: Any) -> Any:
        np = self._np
        rows, n, width = src.shape
        check_width(width)
        k = self._kernel("gather_rows")
        b_src = self._bo_in(k, 0, np.asarray(src, np.float32))
        b_idx = self._bo_in(k, 4, np.asarray(idx, np.int32))
        b_out = self._bo_out(k, 6, rows * idx.shape[1] * width * 4)
        check_code("gather_rows", self._launch("gather_rows", k, b_src, rows, n, width, b_idx, idx.shape[1], b_out))
        return self._read(b_out, (rows, idx.shape[1], width), np.float32)


def _first_difference(old: bytes, new: bytes) -> int:
    """The first byte offset where ``new`` differs from ``old`` (``min(len)`` when one is a prefix of the other)."""
    import numpy as np

    n = min(len(old), len(new))
    diff = np.frombuffer(old, np.uint8, n) != np.frombuffer(new, np.uint8, n)
    return int(diff.argmax()) if diff.any() else n
