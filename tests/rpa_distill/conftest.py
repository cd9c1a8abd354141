"""Fixtures for rpa-distill: recorded demos, the scripted ReAct backend, and the browser marker."""

from __future__ import annotations

import os

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "browser: needs headless Chromium + chromedriver (skipped only where absent)")


@pytest.fixture(scope="session")
def react_backend():
    from mlx26.core.llm import get_backend
    from mlx26.core.rpa_distill.rules import default_spec

    return get_backend(default_spec())


@pytest.fixture(scope="session")
def oracle_demos():
    """family → 3 oracle demos (seeds 0..2), recorded once per session."""
    from mlx26.core.rpa_distill import make_env, record_episode
    from mlx26.core.rpa_distill.oracle import OracleAgent
    from mlx26.core.rpa_distill.synthetic import FAMILIES

    return {f: [record_episode(make_env(f"synthetic/{f}"), OracleAgent(f), s) for s in range(3)] for f in FAMILIES}


@pytest.fixture
def browser():
    from mlx26.core.rpa_distill.miniwob_env import browser_problem

    problem = browser_problem()
    if problem and os.environ.get("CI"):  # .ci/run installs Chromium: its absence there is a broken setup
        pytest.fail(f"browser absent under CI: {problem}")
    if problem:
        pytest.skip(f"browser absent: {problem}")
