"""ROUGE-L and BLEU against values computed by hand from their definitions (not from our own output)."""

import math

import pytest
from mlx26.core.vuln_games.text import bleu, lcs_length, rouge_l, tokens


def test_tokens_lowercase_words_and_numbers():
    assert tokens("The Cat, sat: 42 times!") == ["the", "cat", "sat", "42", "times"]


def test_lcs_classic_example():
    # ABCBDAB vs BDCABA: LCS length 4 (CLRS 15.4)
    assert lcs_length(list("ABCBDAB"), list("BDCABA")) == 4
    assert lcs_length([], ["a"]) == 0


def test_rouge_l_by_hand():
    # candidate "the cat sat on the mat", reference "the cat is on the mat": LCS = the cat on the mat = 5
    p, r = 5 / 6, 5 / 6
    assert rouge_l("the cat sat on the mat", "the cat is on the mat") == pytest.approx(2 * p * r / (p + r))
    # a 3-token extract of a 10-token source: P = 1, R = 0.3
    src = "a b c d e f g h i j"
    assert rouge_l("a b c", src) == pytest.approx(2 * 0.3 / 1.3)
    assert rouge_l(src, src) == 1.0 and rouge_l("x y", src) == 0.0


def test_bleu_by_hand():
    src = "the quick brown fox jumps over the lazy dog"
    assert bleu(src, src) == pytest.approx(1.0)
    # candidate = first 4 tokens: p1 = 4/4, p2 = (3+1)/(3+1), p3 = (2+1)/(2+1), p4 = (1+1)/(1+1) -> 1; BP = e^(1-9/4)
    assert bleu("the quick brown fox", src) == pytest.approx(math.exp(1 - 9 / 4))
    # "the the the the": clipped unigram 2/4; 2-grams "the the" x3, none match: (0+1)/(3+1); 3: 1/3; 4: 1/2
    expect = math.exp(1 - 9 / 4) * math.exp((math.log(0.5) + math.log(0.25) + math.log(1 / 3) + math.log(0.5)) / 4)
    assert bleu("the the the the", src) == pytest.approx(expect)
    assert bleu("cat", src) == 0.0


def test_bit_parallel_lcs_equals_the_table():
    import random

    from mlx26.core.vuln_games.text import lcs_length_dp

    rng = random.Random(0)
    for _ in range(500):
        a = [str(rng.randint(0, 4)) for _ in range(rng.randint(0, 25))]
        b = [str(rng.randint(0, 4)) for _ in range(rng.randint(0, 25))]
        assert lcs_length(a, b) == lcs_length_dp(a, b)


def test_rouge_l_is_fast_on_a_long_response():
    import time

    text = " ".join(f"w{i % 997}" for i in range(16000))  # ≈ 98 KB, took 21.5 s with the table
    t = time.perf_counter()
    assert rouge_l(text, text) == 1.0
    assert time.perf_counter() - t < 2.0
