"""MiniWoB++ in headless Chromium (marked `browser`: skipped only where Chromium/chromedriver are absent)."""

from __future__ import annotations

import sys

import pytest
from mlx26.core.rpa_distill.miniwob_env import TASKS, browser_problem, parse_fields

ACCEPTANCE_TASKS = ("click-button", "click-link", "enter-text", "login-user", "click-checkboxes", "click-option",
                    "choose-list")


def test_field_parsing_uses_miniwob_extractors():
    pytest.importorskip("miniwob")
    assert parse_fields("click-checkboxes", "Select a,bc, d and click Submit.") == {"targets": ["a", "bc", "d"]}
    assert parse_fields("login-user", 'Enter the username "ann" and the password "x1" into the text fields and '
                                      'press login.') == {"username": "ann", "password": "x1"}


def _packages_present() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("selenium", "miniwob"))


def test_problem_is_reported_when_the_driver_path_is_wrong(monkeypatch):
    # Point the browser at an executable that exists, so the driver check is reached whether or not
    # Chromium is installed on this machine.
    monkeypatch.setenv("MINIWOB_CHROME_BINARY", sys.executable)
    monkeypatch.setenv("MINIWOB_CHROMEDRIVER", "/nonexistent/chromedriver")
    problem = browser_problem()
    if not _packages_present():
        assert problem and "not installed" in problem
    else:
        assert problem and problem.startswith("chromedriver not found at /nonexistent/chromedriver")


def test_problem_is_reported_when_the_browser_path_is_wrong(monkeypatch):
    monkeypatch.setenv("MINIWOB_CHROME_BINARY", "/nonexistent/chromium")
    monkeypatch.setenv("MINIWOB_CHROMEDRIVER", sys.executable)
    problem = browser_problem()
    assert problem and (problem.startswith("Chromium not found at /nonexistent/chromium")
                        or (not _packages_present() and "not installed" in problem))


def test_no_problem_when_both_paths_are_executables(monkeypatch):
    monkeypatch.setenv("MINIWOB_CHROME_BINARY", sys.executable)
    monkeypatch.setenv("MINIWOB_CHROMEDRIVER", sys.executable)
    assert (browser_problem() is None) == _packages_present()


def _distil_and_verify(task, n_verify):
    from mlx26.core.rpa_distill import distill, verify
    from mlx26.core.rpa_distill.oracle import OracleAgent
    from mlx26.core.rpa_distill.pipeline import opened, record

    with opened(f"miniwob/{task}", step_timeout=2.0) as env:
        demos = list(record(env, OracleAgent(task), 3, 0))
        source, program, warnings = distill(demos)
        rounds, runs, _ = verify(env, source, n_verify, agent=None, fallback=False, step_timeout=2.0, poll=True)
    return demos, source, program, rounds[0]


@pytest.mark.browser
def test_miniwob_click_button_quick(browser):
    demos, source, program, stats = _distil_and_verify("click-button", 5)
    assert all(d["success"] for d in demos) and program.needs_llm() == 0
    assert stats["success_rate"] >= 0.8 and stats["tokens"] == 0


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("task", ACCEPTANCE_TASKS)
def test_miniwob_acceptance_20_seeds(browser, task):
    demos, source, program, stats = _distil_and_verify(task, 20)
    assert all(d["success"] for d in demos)
    assert "xy" not in source and program.needs_llm() == 0
    assert stats["success_rate"] >= 0.9, source


def test_task_list_covers_acceptance():
    assert set(ACCEPTANCE_TASKS) <= set(TASKS) and len(ACCEPTANCE_TASKS) >= 6
