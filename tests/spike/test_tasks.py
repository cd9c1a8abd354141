"""Task data: the salient labels re-derived from the tokens, GLUE TSV formats and their error paths."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from mlx26.core.common.errors import InputError  # noqa: E402
from mlx26.core.spike import tasks  # noqa: E402


def test_salient_label_is_the_value_of_the_unique_top_level_token():
    d = tasks.salient(300, seed=5)
    V = tasks.SALIENT_VALUES
    for row, label in zip(d.ids.tolist(), d.labels.tolist(), strict=True):
        items = [t - 1 for t in row if t != 0]
        levels = [t // V for t in items]
        top = max(levels)
        assert levels.count(top) == 1
        assert items[levels.index(top)] % V == label
    assert d.synthetic and "SYNTHETIC" in d.source
    assert torch.equal(tasks.salient(300, seed=5).ids, d.ids)  # seeded
    assert not torch.equal(tasks.builtin("salient", "heldout", 300, 5).ids[:, :8], d.ids[:, :8])


def test_salient_query_label_is_the_top_token_of_the_query_colour():
    d = tasks.salient_query(400, seed=7)
    C, L, V = tasks.QUERY_COLOURS, tasks.QUERY_LEVELS, tasks.QUERY_VALUES
    other_colour_wins = 0
    for row, label in zip(d.ids.tolist(), d.labels.tolist(), strict=True):
        toks = [t - 1 for t in row if t != 0]
        queries = [t - C * L * V for t in toks if t >= C * L * V]
        assert len(queries) == 1  # exactly one query token
        items = [(t // V // L, t // V % L, t % V) for t in toks if t < C * L * V]
        mine = [(lv, v) for c, lv, v in items if c == queries[0]]
        top = max(lv for lv, _ in mine)
        assert [lv for lv, _ in mine].count(top) == 1 and dict(mine)[top] == label
        other_colour_wins += max(lv for _, lv, _ in items) > top
    # often a token of the other colour ranks higher: the query, not the global maximum, decides
    assert other_colour_wins > 50
    assert d.synthetic and "SYNTHETIC" in d.source
    assert torch.equal(tasks.salient_query(400, seed=7).ids, d.ids)
    assert not torch.equal(tasks.builtin("salient-query", "heldout", 400, 7).ids, tasks.builtin(
        "salient-query", "train", 400, 7).ids)


def _write(tmp_path, name, lines):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(p)


def test_glue_formats(tmp_path):
    sst = _write(tmp_path, "sst.tsv", ["sentence\tlabel", "a gripping film \t1", "dull and \"long\"\t0"])
    assert tasks.read_glue("sst2", sst) == ([("a gripping film ",), ('dull and "long"',)], [1, 0])
    mrpc = _write(tmp_path, "mrpc.tsv", ["Quality\t#1 ID\t#2 ID\t#1 String\t#2 String", "1\t7\t8\tHe said.\tHe told."])
    assert tasks.read_glue("mrpc", mrpc) == ([("He said.", "He told.")], [1])
    rte = _write(tmp_path, "rte.tsv", ["index\tsentence1\tsentence2\tlabel", "0\tA cat.\tAn animal.\tentailment",
                                        "1\tA cat.\tA dog.\tnot_entailment"])
    assert tasks.read_glue("rte", rte)[1] == [1, 0]
    qnli = _write(tmp_path, "qnli.tsv", ["index\tquestion\tsentence\tlabel", "0\tWho?\tHim.\tentailment"])
    assert tasks.read_glue("qnli", qnli) == ([("Who?", "Him.")], [1])


def test_glue_file_errors(tmp_path):
    with pytest.raises(InputError, match="is a folder"):
        tasks.read_glue("sst2", str(tmp_path))
    p = tmp_path / "bin.tsv"
    p.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(InputError, match=f"{p} is not UTF-8"):
        tasks.read_glue("sst2", str(p))


@pytest.mark.parametrize("lines,where", [
    (["sentence\tlabel", "good\t1", "bad\t0\textra"], ":3: expected 2"),
    (["sentence\tlabel", "good\tpositive"], ":2: unknown label 'positive'"),
    (["text\tlabel", "good\t1"], ":1: the header lacks 'sentence'"),
    (["sentence\tlabel"], "no examples"),
    ([""], "the header lacks"),
])
def test_glue_errors_name_the_line(tmp_path, lines, where):
    p = _write(tmp_path, "x.tsv", lines)
    with pytest.raises(InputError, match=where.replace("(", r"\(")):
        tasks.read_glue("sst2", p)


def test_truncation_is_counted_once_per_sequence():
    d = tasks._pack([[1] * 10, [1] * 3, [1] * 7], [0, 1, 0], ("a", "b"), 5, 6, synthetic=True, source="t")
    assert d.truncated == 2 and d.ids.shape == (3, 6)
    assert d.mask.sum(1).tolist() == [6, 3, 6]
    # a pair already cut by the encoder (and still over the limit) counts once
    d = tasks._pack([[1] * 9, [1] * 3], [0, 1], ("a", "b"), 5, 2, synthetic=True, source="t", cut=[True, True])
    assert d.truncated == 2


def test_builtin_text_tasks_are_balanced_and_real():
    pytest.importorskip("transformers")
    d = tasks.builtin("source", "heldout", 61, 0, 32)
    assert not d.synthetic and d.labels.bincount().tolist() == [21, 20, 20]  # exactly n, as balanced as n allows
    p = tasks.builtin("pair", "heldout", 40, 0, 32)
    assert p.labels.bincount().tolist() == [20, 20]
    with pytest.raises(InputError):
        tasks.load("sst2", "train", data=None, n=10, seed=0, max_len=8)
    with pytest.raises(InputError):
        tasks.load("salient", "train", data="x.tsv", n=10, seed=0, max_len=8)


def test_pairs_are_truncated_longest_segment_first():
    pytest.importorskip("transformers")
    tok = tasks._tokenizer()
    rows, cut = tasks._encode(tok, [("word " * 40, "short line"), ("a b", "c d")], max_len=12)
    sep = tok.eos_token_id
    assert cut == [True, False] and len(rows[0]) == 12 and sep in rows[0]
    tail = rows[0][rows[0].index(sep) + 1:]
    from mlx26.core.zoo.tokenization import encode_plain

    assert tail == encode_plain(tok, "short line")  # the short segment survives whole
    assert rows[1] == encode_plain(tok, "a b") + [sep] + encode_plain(tok, "c d")
