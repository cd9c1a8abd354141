"""Where the offloadable kernels run: torch on the CPU/GPU, or the HLS C++ (g++ emulation / XRT).

Part of the reconstruction of He, Ma, Sun, Cong (ICML 2026): their GPU+FPGA system moves the
sparse, irregular, memory-bound stages to an Alveo U55C. Every pipeline calls the four kernels
through one of these objects, so ``--device fpga`` changes where they run, not what they compute.

* :class:`TorchOps` — fast torch (``torch.topk``, vectorised sums) on the model's device.
* :class:`FpgaOps` — the kernels of ``fpga/hls`` through ``mlx26.fpga.emu`` (g++ + ctypes,
  functional only; times are modelled elsewhere) or ``mlx26.fpga.xrt_host`` (pyxrt).
"""

from __future__ import annotations

from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.profile_memory.spec import FPGA_BACKENDS


class TorchOps:
    name = "torch"

    def page_minmax(self, keys: Any, page: int) -> tuple[Any, Any]:
        from mlx26.core.profile_memory.reference import page_minmax

        return page_minmax(keys, page)

    def page_score(self, q: Any, kmin: Any, kmax: Any) -> Any:
        import torch

        return torch.maximum(q[:, None, :] * kmin, q[:, None, :] * kmax).sum(-1)

    def topk(self, scores: Any, k: int) -> Any:
        import torch

        return torch.topk(scores, k, dim=-1, sorted=True).indices

    def gather(self, src: Any, idx: Any) -> Any:
        import torch

        rows = torch.arange(src.shape[0], device=src.device)[:, None]
        return src[rows, idx]  # advanced indexing: a row copy, much faster than torch.gather on CPU


class FpgaOps:
    """Tensors in, tensors out; the work is done by the HLS kernels (emulated or on the card)."""

    def __init__(self, backend: str = "emu", xclbin: str | None = None):
        if backend == "emu":
            from mlx26.fpga.emu import kernels

            self.kernels = kernels()
        elif backend == "xrt":
            from mlx26.fpga.xrt_host import XrtKernels

            if not xclbin:
                raise InputError("--fpga-backend xrt needs --xclbin PATH.")
            self.kernels = XrtKernels(xclbin)
        else:
            raise InputError(f"Unknown fpga backend '{backend}'.", "choose one of: " + ", ".join(FPGA_BACKENDS))
        self.name = f"fpga-{backend}"

    @staticmethod
    def _np(t: Any) -> Any:
        return t.detach().to("cpu").contiguous().numpy()

    @staticmethod
    def _rows(t: Any) -> Any:
        """A [G, N, W] kernel input: the storage and the head stride of a view into a larger buffer (a cache's
        first n tokens, read in place by the kernels and kept resident by the XRT host), else a dense copy."""
        from mlx26.fpga.emu import Strided

        t = t.detach()
        if not in_place_view(t):
            return FpgaOps._np(t)
        size = t.untyped_storage().nbytes() // t.element_size()
        storage = t.as_strided((size,), (1,), 0).numpy()
        return Strided(storage, tuple(t.shape), t.stride(0), t.storage_offset())

    def page_minmax(self, keys: Any, page: int) -> tuple[Any, Any]:
        import torch

        lo, hi = self.kernels.page_minmax(self._rows(keys), page)
        return torch.from_numpy(lo), torch.from_numpy(hi)

    def page_score(self, q: Any, kmin: Any, kmax: Any) -> Any:
        import torch

        lo, hi = self._rows(kmin), self._rows(kmax)
        if type(lo) is not type(hi) or getattr(lo, "stride", None) != getattr(hi, "stride", None):
            lo, hi = self._np(kmin), self._np(kmax)  # one head stride serves both ports
        return torch.from_numpy(self.kernels.page_score(self._np(q), lo, hi))

    def topk(self, scores: Any, k: int) -> Any:
        import torch

        return torch.from_numpy(self.kernels.topk(self._np(scores.float()), k)).long()

    def gather(self, src: Any, idx: Any) -> Any:
        import torch

        return torch.from_numpy(self.kernels.gather(self._rows(src.float()), self._np(idx.int())))


def in_place_view(t: Any) -> bool:
    """Whether the kernels can read a [G, N, W] tensor where it lies: a CPU float32 view of a larger storage
    whose groups are each contiguous, start on a 512-bit beat, lie a whole number of beats apart and never
    overlap.
    A tensor that owns its storage whole (a temporary) takes the dense way, which shares one buffer per argument
    on the card instead of one per storage."""
    import torch
    from mlx26.fpga.emu import LANES

    if t.device.type != "cpu" or t.dtype != torch.float32 or t.dim() != 3 or t.numel() == 0:
        return False
    groups, n, width = t.shape
    rows_contiguous = (t.stride(2) == 1 or width == 1) and (t.stride(1) == width or n == 1)
    stride = t.stride(0)
    span = (groups - 1) * stride + n * width
    larger = t.storage_offset() > 0 or span * t.element_size() < t.untyped_storage().nbytes()
    whole_beats = stride % LANES == 0 and t.storage_offset() % LANES == 0
    return rows_contiguous and stride >= n * width and whole_beats and larger
