"""The SIMULATED test bed: its problems' answers are right, its rules behave as documented."""

from __future__ import annotations

import random

import pytest
from mlx26.core.optimize_prompt import simulator as sim
from mlx26.core.optimize_prompt.programs import evaluate


def test_problem_answers_equal_their_expression_evaluated_independently():
    rng = random.Random(3)
    for i in range(200):
        p = sim.make_problem(rng, i)
        assert evaluate(p.expr) == p.answer  # the safe evaluator, not the generator's own steps
        again = sim.parse_problem(p.text)
        assert again is not None and again.answer == p.answer and again.distractor == p.distractor


def test_unrelated_text_is_not_a_problem():
    assert sim.parse_problem("What is the capital of France?") is None


@pytest.mark.parametrize(("instruction", "expected"), [
    ("Q: {input}\nA:", set()),
    ("Think step by step.\n{input}", {"steps"}),
    ("Be concise. Think step by step.\n{input}", {"terse"}),
    ("End with a final line 'Answer: <number>'. Check the result.", {"format", "check"}),
    ("Say which quantities are not needed.", {"units"}),
])
def test_feature_detection(instruction, expected):
    assert sim.features(instruction) == expected


def _accuracy(prompt, n=300):
    target = sim.SimulatedTarget()
    from mlx26.core.optimize_prompt.harness import evaluate_prompt

    return evaluate_prompt("number", prompt, sim.demo_eval(n), target)["accuracy"]


def test_rewarded_features_raise_simulated_accuracy_and_the_full_prompt_is_best():
    base = _accuracy("Q: {input}\nA:")
    fmt = _accuracy("End with a final line 'Answer: <number>'.\nQ: {input}\nA:")
    full = _accuracy("Work step by step. Check the result. Say which quantities are not needed. "
                     "End with a final line 'Answer: <number>'.\nQ: {input}\nA:")
    assert base < fmt < full
    assert full > 0.8 and base < 0.3


def test_target_is_deterministic_at_temperature_zero_and_varies_when_sampled():
    t = sim.SimulatedTarget()
    p = "Q: " + sim.make_problem(random.Random(1), 0).text + "\nA:"
    assert t.chat(p).text == t.chat(p).text
    sampled = {t.chat(p, temperature=1.0, seed=s).text for s in range(12)}
    assert len(sampled) > 1


def test_scripted_judge_has_a_position_bias_on_ties():
    opt = sim.ScriptedOptimizer()
    text = ("### JUDGE PAIRWISE\nWhich?\nREQUIREMENTS: x\nCRITERIA: (none)\nREFERENCE: none\nINPUT: q\n"
            "RESPONSE A:\n<<<\nsame\n>>>\nRESPONSE B:\n<<<\nsame\n>>>\nReply")
    assert opt.chat(text).text == "WINNER: A"
