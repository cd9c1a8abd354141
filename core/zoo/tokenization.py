"""Tokenizers of the zoo: a 4096-token byte-level BPE and a pure byte-level fallback.

Our own set-up of standard pieces (no paper reconstructed): the BPE is trained with the
``tokenizers`` library (GPT-2 style byte-level pre-tokenisation, so every byte string is
encodable and decoding is lossless) on the ``stdlib-code`` + ``stdlib-prose`` training
splits, and saved as ``tokenizer.json``. Both tokenizers are wrapped as transformers
``PreTrainedTokenizerFast`` with the same special tokens (pad, bos, eos and chat-role
markers), a post-processor that puts ``<|bos|>`` in front of every encoded text, and a
minimal chat template. The byte tokenizer needs no file: ids 0–255 are the bytes
themselves and the specials follow (vocab 263).

The shipped BPE lives in ``core/zoo/data/bpe-4096`` and is copied into every model folder.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError, RunFailure

SPECIAL_TOKENS = ("<|pad|>", "<|bos|>", "<|eos|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>")
PAD, BOS, EOS = SPECIAL_TOKENS[:3]
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' + message['content'] + '<|end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)
BPE_DIR = Path(__file__).resolve().parent / "data" / "bpe-4096"
DEFAULT_VOCAB = 4096
TOKENIZER_CORPORA = ("stdlib-code", "stdlib-prose")


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte → printable character map (what ``ByteLevel`` uses)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs, strict=True)}


def _finish(tok: Any) -> Any:
    """Add the specials, the bos post-processor and wrap as a ``PreTrainedTokenizerFast``."""
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    tok.add_special_tokens(list(SPECIAL_TOKENS))
    bos_id = tok.token_to_id(BOS)
    tok.post_processor = processors.TemplateProcessing(single=f"{BOS} $A", pair=f"{BOS} $A $B:1",
                                                       special_tokens=[(BOS, bos_id)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=BOS, eos_token=EOS, pad_token=PAD,
                                   additional_special_tokens=list(SPECIAL_TOKENS[3:]),
                                   clean_up_tokenization_spaces=False, model_max_length=1 << 20)
    fast.chat_template = CHAT_TEMPLATE
    return fast


def _byte_level_parts(tok: Any) -> None:
    from tokenizers import decoders, pre_tokenizers

    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()


def byte_tokenizer() -> Any:
    """Pure byte-level tokenizer built in memory: id = byte value, then the 7 specials (vocab 263)."""
    from tokenizers import Tokenizer, models

    vocab = {ch: b for b, ch in _bytes_to_unicode().items()}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    _byte_level_parts(tok)
    return _finish(tok)


def train_bpe(texts: Iterable[str], vocab_size: int = DEFAULT_VOCAB, min_frequency: int = 2) -> Any:
    """Train a byte-level BPE of ``vocab_size`` tokens (specials included) on ``texts``."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    if vocab_size < 256 + len(SPECIAL_TOKENS):
        raise InputError(f"vocab size must be ≥ {256 + len(SPECIAL_TOKENS)} (bytes + specials), got {vocab_size}.")
    tok = Tokenizer(models.BPE())
    _byte_level_parts(tok)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency, show_progress=False,
                                  special_tokens=list(SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer=trainer)
    return _finish(tok)


def tokenizer_texts(max_bytes: int | None = None) -> Iterator[str]:
    """Training text for the BPE: the code and prose training splits, interleaved by document."""
    from mlx26.core.zoo.corpora import corpus

    streams = [corpus(name).documents("train") for name in TOKENIZER_CORPORA]
    budget = max_bytes if max_bytes is not None else float("inf")
    used = 0
    while streams and used < budget:
        for stream in list(streams):
            doc = next(stream, None)
            if doc is None:
                streams.remove(stream)
                continue
            used += len(doc.text.encode("utf-8"))
            yield doc.text


def build_shipped_bpe(max_bytes: int | None = None, vocab_size: int = DEFAULT_VOCAB) -> Any:
    """The BPE as shipped: trained on :func:`tokenizer_texts` (the full code + prose training splits)."""
    return train_bpe(tokenizer_texts(max_bytes), vocab_size=vocab_size)


def load_tokenizer_dir(path: str | Path) -> Any:
    """A tokenizer saved with ``save_pretrained``, loaded without touching the network."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path), local_files_only=True)


def shipped_bpe() -> Any:
    if not (BPE_DIR / "tokenizer.json").is_file():
        raise RunFailure(f"the shipped tokenizer is missing from {BPE_DIR}; rebuild it with "
                           "`mlx26 zoo tokenizer --out DIR` and copy DIR there")
    return load_tokenizer_dir(BPE_DIR)


def get_tokenizer(spec: str) -> Any:
    """``bpe-4096`` (shipped), ``byte`` (in memory) or a folder saved with ``save_pretrained``."""
    if spec == "byte":
        return byte_tokenizer()
    if spec in ("bpe", "bpe-4096"):
        return shipped_bpe()
    path = Path(spec)
    if path.is_dir() and (path / "tokenizer.json").is_file():
        return load_tokenizer_dir(path)
    raise InputError(f"Unknown tokenizer '{spec}'.", "use bpe-4096, byte, or a folder with tokenizer.json")


def tokenizer_hash(tok: Any) -> str:
    """``sha256:<hex>`` of the tokenizer's canonical JSON (model, merges, specials)."""
    data = json.loads(tok.backend_tokenizer.to_str())
    return "sha256:" + hashlib.sha256(json.dumps(data, sort_keys=True).encode("utf-8")).hexdigest()


def encode_plain(tok: Any, text: str) -> list[int]:
    """Token ids of ``text`` without the bos the post-processor adds."""
    return list(tok.backend_tokenizer.encode(text, add_special_tokens=False).ids)


def encode_many(tok: Any, texts: list[str]) -> list[list[int]]:
    return [list(e.ids) for e in tok.backend_tokenizer.encode_batch(texts, add_special_tokens=False)]
