"""The builder's LLM step: accepted only when whitelisted and reproducing every demo."""

from __future__ import annotations

import copy
import json

import pytest
from mlx26.core.llm import get_backend
from mlx26.core.rpa_distill import distill
from mlx26.core.rpa_distill.rag import RagResolver


def _demos(oracle_demos):
    demos = copy.deepcopy(oracle_demos["enter-text"])
    for traj in demos:  # a value the rules cannot explain: upper case plus a suffix
        traj["steps"][0]["action"]["text"] = traj["fields"]["target"].upper() + "!"
    return demos


def _backend(tmp_path, reply):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"match": "Write one Python expression", "reply": reply}]))
    return get_backend(f"scripted:{rules}")


def test_rules_alone_leave_needs_llm(oracle_demos):
    assert distill(_demos(oracle_demos))[1].needs_llm() == 1


def test_llm_expression_accepted_when_it_reproduces_every_demo(oracle_demos, tmp_path):
    resolver = RagResolver(_backend(tmp_path, 'Expression: fields["target"].upper() + "!"'))
    source, program, _ = distill(_demos(oracle_demos), resolver)
    assert program.needs_llm() == 0 and 'fields["target"].upper() + "!"' in source
    assert resolver.tokens["calls"] == 1 and resolver.tokens["prompt_tokens"] > 0


@pytest.mark.parametrize("reply", ['Expression: fields["target"]', 'Expression: __import__("os").getcwd()',
                                   "I do not know"])
def test_llm_expression_rejected_otherwise(oracle_demos, tmp_path, reply):
    source, program, _ = distill(_demos(oracle_demos), RagResolver(_backend(tmp_path, reply)))
    assert program.needs_llm() == 1 and "NeedsLLM(" in source
