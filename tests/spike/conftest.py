"""One torch thread on small machines (core/common/threads.py): two contending threads made these tests ~50× slower."""

import pytest

torch = pytest.importorskip("torch")

from mlx26.core.common.threads import apply_torch_threads  # noqa: E402

apply_torch_threads(torch)
