"""One torch thread for every profile-memory test (the machine is shared); a shared tiny model; the check that
every strided kernel of a backend (emulation or XRT) refuses a bad view."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("MLX26_THREADS", "1")


@pytest.fixture(scope="session")
def torch1():
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    return torch


@pytest.fixture(scope="session")
def tiny_model(torch1):
    pytest.importorskip("transformers")
    from mlx26.core.zoo import load_model

    return load_model("tiny-llama")


def assert_every_kernel_refuses(kernels, view, needle: str) -> None:
    """page_minmax, page_score and gather each raise an InputError matching ``needle`` for ``view``."""
    import numpy as np
    from mlx26.core.common.errors import InputError

    dim = view.shape[-1]
    with pytest.raises(InputError, match=needle):
        kernels.page_minmax(view, 16)
    with pytest.raises(InputError, match=needle):
        kernels.page_score(np.zeros((3, dim), np.float32), view, view)
    with pytest.raises(InputError, match=needle):
        kernels.gather(view, np.zeros((3, 1), np.int32))
