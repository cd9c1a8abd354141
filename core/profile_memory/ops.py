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

    def page_minmax(self, keys: Any, page: int) -> tuple[Any, Any]:
        import torch

        lo, hi = self.kernels.page_minmax(self._np(keys), page)
        return torch.from_numpy(lo), torch.from_numpy(hi)

    def page_score(self, q: Any, kmin: Any, kmax: Any) -> Any:
        import torch

        return torch.from_numpy(self.kernels.page_score(self._np(q), self._np(kmin), self._np(kmax)))

    def topk(self, scores: Any, k: int) -> Any:
        import torch

        return torch.from_numpy(self.kernels.topk(self._np(scores.float()), k)).long()

    def gather(self, src: Any, idx: Any) -> Any:
        import torch

        return torch.from_numpy(self.kernels.gather(self._np(src.float()), self._np(idx.int())))
