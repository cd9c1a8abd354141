"""bits/byte measure: window layout, a closed-form check with a uniform model, compressor figures."""

from __future__ import annotations

import bz2
import lzma
import math
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from mlx26.core.zoo.evaluate import bits_per_byte, compressor_bits_per_byte, windows  # noqa: E402
from mlx26.core.zoo.tokenization import byte_tokenizer  # noqa: E402


@pytest.mark.parametrize(("n", "context", "stride"), [(0, 4, 4), (3, 4, 4), (10, 4, 4), (10, 4, 2), (257, 64, 64),
                                                      (257, 64, 16), (1000, 128, 1)])
def test_windows_score_every_token_once_with_enough_history(n, context, stride):
    spans = windows(n, context, stride)
    scored = [i for _, end, first in spans for i in range(first, end)]
    assert scored == list(range(n))
    for start, end, first in spans:
        assert end - start <= context and start <= first < end
        if start > 0:
            assert first - start >= context - stride


def test_windows_reject_bad_parameters():
    with pytest.raises(ValueError, match="context"):
        windows(10, 1, 1)
    with pytest.raises(ValueError, match="stride"):
        windows(10, 4, 5)


class _Uniform(torch.nn.Module):
    """A 'model' whose next-token distribution is uniform over the vocabulary."""

    def __init__(self, vocab: int):
        super().__init__()
        self.vocab = vocab
        self.config = SimpleNamespace()

    def forward(self, input_ids):
        return SimpleNamespace(logits=torch.zeros(*input_ids.shape, self.vocab))


@pytest.mark.parametrize("stride", [None, 16])
def test_uniform_model_costs_log2_vocab_bits_per_token(stride):
    tok = byte_tokenizer()
    text = "naïve code — ✓\n" * 40
    result = bits_per_byte(_Uniform(len(tok)), tok, text, context=32, stride=stride)
    n_bytes = len(text.encode("utf-8"))
    assert result["tokens"] == n_bytes  # byte tokenizer: one token per byte
    assert result["bits_per_byte"] == pytest.approx(math.log2(len(tok)), rel=1e-6)


def test_compressor_figures_match_the_standard_library():
    text = "def f(x):\n    return x + 1\n" * 200
    data = text.encode()
    got = compressor_bits_per_byte(text)
    assert got["xz -9e"] == 8 * len(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME)) / len(data)
    assert got["bz2 -9"] == 8 * len(bz2.compress(data, 9)) / len(data)
    assert 0 < got["gzip -9"] < 8
    with pytest.raises(ValueError, match="empty"):
        compressor_bits_per_byte("")
