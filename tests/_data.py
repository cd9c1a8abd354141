"""Public datasets for tests: read from ``../shared/data/NAME`` beside the repository, never copied in.

``shared_data("aitqa")`` returns that folder (found from this file's location, so the current
directory does not matter). When it is missing the calling test is skipped, or fails when the
environment variable ``CI`` is set (a CI run must not pass by skipping its data tests).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def shared_data(name: str) -> Path:
    """The folder ``../shared/data/<name>`` (relative to the repository root); skip or fail without it."""
    path = SHARED_DATA / name
    if path.is_dir() and any(path.iterdir()):
        return path
    why = f"../shared/data/{name} not found: looked for {path} (public datasets stay outside the repository)"
    if os.environ.get("CI"):
        pytest.fail(why, pytrace=False)
    pytest.skip(why, allow_module_level=True)
