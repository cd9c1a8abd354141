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

Buffers are device-resident, and the KV cache with them. The kernels that read K/V-derived arrays
(``page_minmax``'s keys, ``page_score``'s kmin/kmax, ``gather_rows``'s src) take a stride between
heads (rows) in 512-bit beats, so a :class:`mlx26.fpga.emu.Strided` view — a preallocated
[heads][capacity][dim] cache read as its first n tokens, which is what
:class:`mlx26.core.profile_memory.ops.FpgaOps` passes for ``cache[:, :n]`` — is read where it lies.
Such an input gets one ``bo`` per (kernel, argument, storage), the size of the whole storage and
never reallocated while the storage keeps its size; the kernel receives the sub-buffer
(``pyxrt.bo(parent, size, offset)``) that starts at the view's first value, so views at any offset
of one storage (the last page's tokens, K and V halves of one tensor) share it. Storage-keyed
buffers beyond ``RESIDENT_BYTES`` drop the least recently used. A dense input (the query, indices,
scores, or any array not given as a view) keeps one ``bo`` per (kernel, argument), grown
geometrically (twice the first size, so appends fit).

What moves: the host keeps a mirror of what the card holds (per 32-bit word, and which words it has
ever written) and compares only the rows the kernel will read. Differing words form runs, runs less
than ``COALESCE_GAP`` (4 KiB) apart merge into one (the words between move too: a sync is one DMA
request with a fixed cost), and each run is one ``bo.write`` + ``bo.sync(TO_DEVICE, size, offset)``.
So a decode step that appends one token to an H-head cache moves H × dim × 4 bytes per K/V argument
(H syncs when the heads lie more than 4 KiB apart), a repeated query moves nothing, and a cache's
unused tail never moves. This is verified with a fake ``pyxrt`` only (exact bytes per step in
``tests/profile_memory``); nothing has run on a card, so neither the sub-buffer alignment rules of a
real XRT nor the cost of many small syncs are confirmed. K is held twice on the card (the
``page_minmax`` and ``gather_rows`` ports lie in different HBM banks, see ``u55c.cfg``). A view of a
temporary (Quest's GQA path expands K/V per query head every step) is new bytes every step, and
moves whole.

``run.wait()``'s state is checked (anything but COMPLETED is an error naming the kernel), and so is
every kernel's return value (``run.return_code()``: -1 a shape or stride the kernel refuses, -2 a
``gather_rows`` index out of range). The dim / width / k limits of the HLS kernels (dim ≤ 256, rows
in whole 512-bit beats of 16 floats, k ≤ 4096) and the stride rules (a non-negative whole number of
beats, at least one head's extent, a view that starts on a beat and ends inside its storage) are
enforced before any transfer, as in the emulation. The kernels' wide ports (``hls::vector<float,
16>``) take the same bytes as float arrays, so the buffers are the same; a bo starts 4 KiB aligned
and every view offset and row stride is a multiple of 64 bytes, as the 512-bit ports need.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import RunFailure
from mlx26.fpga.emu import (
    LANES,
    Strided,
    as_strided_input,
    bounds_pair,
    check_code,
    check_dim,
    check_page,
    check_topk,
    check_width,
    gather_indices,
    query,
)

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


COALESCE_GAP = 4096  # bytes: changed runs closer than this move as one sync (the gap's bytes too)
RESIDENT_BYTES = 8 << 30  # storage-keyed buffers beyond this (half the U55C's 16 GB HBM) drop the least
# recently used: views of short-lived storages would otherwise pile up on the card


class _Resident:
    """One bo and, once it serves an input, what the card is known to hold in it (as 32-bit words)."""

    def __init__(self, bo: Any, capacity: int):
        self.bo, self.capacity = bo, capacity
        self.mirror: Any = None  # the card's words where ``known``; outputs never need one
        self.known: Any = None

    def tracked(self) -> _Resident:
        import numpy as np

        if self.mirror is None:
            self.mirror = np.zeros(self.capacity // 4, np.uint32)
            self.known = np.zeros(self.capacity // 4, bool)  # a fresh bo holds nothing we wrote
        return self


class XrtKernels:
    """The same interface as :class:`mlx26.fpga.emu.EmuKernels`, run on the card through pyxrt."""

    def __init__(self, xclbin: str, device_index: int = 0):
        import numpy as np

        self._np = np
        self.pyxrt = importlib.import_module("pyxrt")
        self.device = self.pyxrt.device(device_index)
        self.uuid = self.device.load_xclbin(str(xclbin))
        self._kernels: dict[str, Any] = {}
        # (kernel, arg, storage address or None) -> buffer; a Strided input keeps a buffer per storage,
        # so the K and V caches of every layer stay on the card side by side
        self._resident: OrderedDict[tuple[str, int, int | None], _Resident] = OrderedDict()
        self.bytes_to_device = 0  # what the syncs actually moved, for the benchmark and the tests

    def _kernel(self, name: str) -> Any:
        if name not in self._kernels:
            self._kernels[name] = self.pyxrt.kernel(self.device, self.uuid, name)
        return self._kernels[name]

    def _bo(self, name: str, arg: int, nbytes: int, storage: int | None = None) -> _Resident:
        """The resident buffer of (kernel, arg[, storage]); reallocated when ``nbytes`` does not fit.

        A dense input gets twice its size, so appends fit; a storage's buffer is the storage's size.
        """
        key = (name, arg, storage)
        held = self._resident.get(key)
        if held is None or held.capacity < nbytes:
            old = held.capacity if held else 0
            capacity = max(4, nbytes) if storage is not None else max(4, 2 * nbytes, 2 * old)
            bo = self.pyxrt.bo(self.device, capacity, self.pyxrt.bo.normal, self._kernel(name).group_id(arg))
            held = _Resident(bo, capacity)
            self._resident[key] = held
        self._resident.move_to_end(key)
        self._evict(keep=key)
        return held

    def _evict(self, keep: tuple[str, int, int | None]) -> None:
        """Drop the least recently used storage-keyed buffers while they hold more than RESIDENT_BYTES."""
        keyed = [key for key in self._resident if key[2] is not None and key != keep]
        total = sum(self._resident[key].capacity for key in (*keyed, keep) if key[2] is not None)
        for key in keyed:
            if total <= RESIDENT_BYTES:
                break
            total -= self._resident.pop(key).capacity

    def _bo_in(self, name: str, arg: int, array: Any) -> Any:
        """A dense input (q, indices, scores, or a K/V array given as such): one run of its words."""
        words = self._np.ascontiguousarray(array).reshape(-1).view(self._np.uint32)
        held = self._bo(name, arg, words.nbytes)
        self._sync_changed(held, words, 1, words.size, words.size)
        return held.bo

    def _bo_strided(self, name: str, arg: int, view: Strided) -> Any:
        """A Strided input: the buffer mirrors its whole storage (so views at any offset, K and V in one storage,
        share it), and the kernel gets the sub-buffer that starts at the view's first value."""
        words = view.storage.view(self._np.uint32)
        held = self._bo(name, arg, words.nbytes, view.storage.ctypes.data)
        self._sync_changed(held, words, view.shape[0], view.stride, view.extent, view.offset)
        if not view.offset or not view.span:
            return held.bo
        return self.pyxrt.bo(held.bo, 4 * view.span, 4 * view.offset)  # offset: whole beats, checked

    def _sync_changed(self, held: _Resident, words: Any, groups: int, stride: int, extent: int,
                      first: int = 0) -> None:
        """Write and sync only the words of the kernel's rows that the card does not already hold.

        ``words`` lies in the buffer from word 0; the kernel reads ``groups`` rows of ``extent`` words,
        ``stride`` apart, from word ``first``.
        """
        to_device = self.pyxrt.xclBOSyncDirection.XCL_BO_SYNC_BO_TO_DEVICE
        held = held.tracked()
        runs = changed_runs(held.mirror[first:], held.known[first:], words[first:], groups, stride, extent)
        for start, end in ((first + a, first + b) for a, b in runs):
            held.bo.write(words[start:end].tobytes(), 4 * start)
            held.bo.sync(to_device, 4 * (end - start), 4 * start)
            held.mirror[start:end] = words[start:end]
            held.known[start:end] = True
            self.bytes_to_device += 4 * (end - start)

    def _bo_out(self, name: str, arg: int, nbytes: int) -> Any:
        return self._bo(name, arg, nbytes).bo

    def _launch(self, name: str, *args: Any) -> int:
        """Run, wait, check the completion state; the kernel's return value (0 when XRT cannot give one)."""
        run = self._kernel(name)(*args)
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

    def _rows_in(self, name: str, arg: int, x: Any, view: Strided) -> Any:
        """A K/V-derived input: resident per storage when the caller gave a Strided view, else dense."""
        if isinstance(x, Strided):
            return self._bo_strided(name, arg, view)
        return self._bo_in(name, arg, view.storage)

    def page_minmax(self, keys: Any, page: int) -> tuple[Any, Any]:
        np = self._np
        view = as_strided_input(keys, "keys", check_dim)
        heads, n, dim = view.shape
        check_page(page)
        pages = -(-n // page)
        b_keys = self._rows_in("page_minmax", 0, keys, view)
        b_min = self._bo_out("page_minmax", 6, heads * pages * dim * 4)
        b_max = self._bo_out("page_minmax", 7, heads * pages * dim * 4)
        check_code("page_minmax", self._launch("page_minmax", b_keys, heads, n, dim, view.stride // LANES, page,
                                               b_min, b_max))
        shape = (heads, pages, dim)
        return self._read(b_min, shape, np.float32), self._read(b_max, shape, np.float32)

    def page_score(self, q: Any, kmin: Any, kmax: Any) -> Any:
        np = self._np
        lo, hi = bounds_pair(kmin, kmax)
        heads, pages, dim = lo.shape
        q = query(q, heads, dim)
        b_q = self._bo_in("page_score", 0, q)
        b_lo, b_hi = self._rows_in("page_score", 1, kmin, lo), self._rows_in("page_score", 2, kmax, hi)
        b_out = self._bo_out("page_score", 7, heads * pages * 4)
        check_code("page_score", self._launch("page_score", b_q, b_lo, b_hi, heads, pages, dim, lo.stride // LANES,
                                              b_out))
        return self._read(b_out, (heads, pages), np.float32)

    def topk(self, scores: Any, k_: int) -> Any:
        np = self._np
        rows, n = scores.shape
        check_topk(k_, n)
        b_s = self._bo_in("topk_select", 0, np.asarray(scores, np.float32))
        b_out = self._bo_out("topk_select", 4, rows * k_ * 4)
        check_code("topk_select", self._launch("topk_select", b_s, rows, n, k_, b_out))
        return self._read(b_out, (rows, k_), np.int32)

    def gather(self, src: Any, idx: Any) -> Any:
        np = self._np
        view = as_strided_input(src, "src", check_width)
        rows, n, width = view.shape
        idx = gather_indices(idx, rows)
        b_src = self._rows_in("gather_rows", 0, src, view)
        b_idx = self._bo_in("gather_rows", 5, idx)
        b_out = self._bo_out("gather_rows", 7, rows * idx.shape[1] * width * 4)
        check_code("gather_rows", self._launch("gather_rows", b_src, rows, n, width, view.stride // LANES, b_idx,
                                               idx.shape[1], b_out))
        return self._read(b_out, (rows, idx.shape[1], width), np.float32)


def changed_runs(mirror: Any, known: Any, words: Any, groups: int, stride: int, extent: int) -> list[tuple[int, int]]:
    """Word ranges [start, end) of ``words`` to send: the groups' rows (group g covers words
    [g * stride, g * stride + extent)) where the card's copy (``mirror`` where ``known``) differs.

    Only the rows the kernel reads are compared, so a cache's unused tail never moves. A value moves
    whole (the comparison is per 32-bit word), and runs less than COALESCE_GAP bytes apart merge into
    one, carrying the words between them: every sync is one DMA request with a fixed cost, which a few
    KiB of extra bytes undercut. Runs come back in increasing order and never overlap.
    """
    import numpy as np

    if groups <= 0 or extent <= 0:
        return []
    rows = (groups, extent)
    steps = (4 * stride, 4)
    new = np.lib.stride_tricks.as_strided(words, rows, steps, writeable=False)
    held = np.lib.stride_tricks.as_strided(mirror, rows, steps, writeable=False)
    ok = np.lib.stride_tricks.as_strided(known, rows, (stride, 1), writeable=False)
    changed = np.zeros((groups, extent + 1), bool)  # a False column ends every group's last run
    changed[:, :extent] = (new != held) | ~ok
    flat = changed.reshape(-1)
    edges = np.flatnonzero(np.diff(np.concatenate([[False], flat]).astype(np.int8)))
    starts, ends = edges[0::2], edges[1::2]
    # flat index i = g * (extent + 1) + j  ->  word g * stride + j of the span
    starts = starts // (extent + 1) * stride + starts % (extent + 1)
    ends = ends // (extent + 1) * stride + ends % (extent + 1)
    return _coalesce(starts.tolist(), ends.tolist(), COALESCE_GAP // 4)


def _coalesce(starts: list[int], ends: list[int], gap: int) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for start, end in zip(starts, ends, strict=True):
        if runs and start - runs[-1][1] < gap:
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((start, end))
    return runs
