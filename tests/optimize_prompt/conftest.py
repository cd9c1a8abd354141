"""Fixtures for optimize-prompt: demo sessions with chosen backends, ledgers and budgets."""

from __future__ import annotations

import pytest


@pytest.fixture
def demo_session():
    """``demo_session(method, budget_usd=None, budget_tokens=None, target=None, optimizer=None, **settings)``."""
    from mlx26.core.llm import Ledger
    from mlx26.core.optimize_prompt import session
    from mlx26.core.optimize_prompt.harness import Settings

    def run(method="mrpea", *, budget_usd=None, budget_tokens=None, target=None, optimizer=None, ledger_path=None,
            seed=0, **settings):
        setup = session.demo_setup(seed)
        if target is not None:
            setup.target = target
        if optimizer is not None:
            setup.optimizer = optimizer
        book = Ledger(ledger_path, prices=session.demo_prices(), budget_usd=budget_usd, budget_tokens=budget_tokens)
        rounds = []
        summary = session.run_session(setup, method, Settings(seed=seed, **settings), book, on_round=rounds.append)
        return summary, rounds, book

    return run
