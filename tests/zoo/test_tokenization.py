"""Tokenizers: the byte fallback is UTF-8 itself; the shipped BPE is lossless, compact and pinned."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from mlx26.core.zoo import corpus, registry  # noqa: E402
from mlx26.core.zoo import tokenization as T  # noqa: E402

SAMPLES = ["def f(x):\n    return x ** 2  # square\n", "naïve café — 東京 ✓ 🐍\n", "\t\t  trailing  \n\n", "",
           "a\u0000b\r\n"]


@pytest.fixture(scope="module")
def bpe():
    return T.shipped_bpe()


def test_byte_tokenizer_ids_are_the_utf8_bytes():
    tok = T.byte_tokenizer()
    assert len(tok) == 256 + len(T.SPECIAL_TOKENS)
    for text in SAMPLES:
        assert T.encode_plain(tok, text) == list(text.encode("utf-8"))  # reference: Python's UTF-8 codec
        assert tok.decode(T.encode_plain(tok, text)) == text
    assert tok("hi")["input_ids"] == [tok.bos_token_id, ord("h"), ord("i")]
    assert [tok.pad_token, tok.bos_token, tok.eos_token] == list(T.SPECIAL_TOKENS[:3])


@pytest.mark.parametrize("name", ["stdlib-code", "stdlib-prose", "arithmetic"])
def test_shipped_bpe_round_trips_and_compresses(bpe, name):
    text = corpus(name).text("heldout", 30_000)
    ids = T.encode_plain(bpe, text)
    assert bpe.decode(ids) == text
    assert len(text.encode("utf-8")) / len(ids) > 2.0  # BPE merges: well over one byte per token
    for sample in SAMPLES:
        assert bpe.decode(T.encode_plain(bpe, sample)) == sample


def test_shipped_bpe_specials_template_and_size(bpe):
    assert len(bpe) == 4096
    assert bpe.bos_token == "<|bos|>" and bpe.eos_token == "<|eos|>" and bpe.pad_token == "<|pad|>"
    assert bpe("x")["input_ids"][0] == bpe.bos_token_id
    chat = bpe.apply_chat_template([{"role": "user", "content": "hello"}], tokenize=False, add_generation_prompt=True)
    assert chat == "<|user|>\nhello<|end|>\n<|assistant|>\n"
    ids = bpe.apply_chat_template([{"role": "user", "content": "hello"}], tokenize=True)
    ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
    assert bpe.convert_tokens_to_ids("<|user|>") in ids  # role markers are single special tokens


def test_every_shipped_model_carries_the_shipped_tokenizer(bpe):
    names = registry.shipped_names()
    assert names, "no shipped models"
    for name in names:
        manifest = registry.read_manifest(name)
        assert manifest["tokenizer"]["hash"] == T.tokenizer_hash(bpe)
        assert T.tokenizer_hash(registry.load_tokenizer(name)) == T.tokenizer_hash(bpe)


def test_train_bpe_is_deterministic_and_respects_the_vocab():
    texts = [corpus("stdlib-code").text("heldout", 40_000)]
    a, b = T.train_bpe(texts, vocab_size=400), T.train_bpe(texts, vocab_size=400)
    assert len(a) == 400 and T.tokenizer_hash(a) == T.tokenizer_hash(b)
    assert json.loads(a.backend_tokenizer.to_str())["model"]["type"] == "BPE"
    with pytest.raises(ValueError, match="vocab size"):
        T.train_bpe(texts, vocab_size=100)


def test_get_tokenizer_rejects_unknown():
    with pytest.raises(ValueError, match="Unknown tokenizer"):
        T.get_tokenizer("wordpiece")
