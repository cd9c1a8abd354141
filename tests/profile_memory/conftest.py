"""One torch thread for every profile-memory test (the machine is shared); a shared tiny model."""

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
