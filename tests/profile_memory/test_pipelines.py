"""Quest bound and full-budget equality, the unrolled runner vs the model's own forward, RAG vs faiss."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def qkv(torch1):
    g = torch1.Generator().manual_seed(0)
    q = torch1.randn(4, 32, generator=g)
    keys = torch1.randn(4, 203, 32, generator=g)  # 13 pages, the last one partial (11 tokens)
    values = torch1.randn(4, 203, 32, generator=g)
    return q, keys, values


def test_quest_page_score_is_the_formula_and_bounds_the_true_max(torch1, qkv):
    from mlx26.core.profile_memory.ops import TorchOps
    from mlx26.core.profile_memory.reference import page_minmax, page_score_true_max

    q, keys, _ = qkv
    kmin, kmax = page_minmax(keys, 16)
    est = TorchOps().page_score(q, kmin, kmax)
    qn, kn = q.double().numpy(), keys.double().numpy()
    for h in range(4):  # the reference formula, page by page in float64
        for p in range(13):
            page = kn[h, 16 * p:16 * (p + 1)]
            formula = np.maximum(qn[h] * page.min(0), qn[h] * page.max(0)).sum()
            assert est[h, p].item() == pytest.approx(formula, rel=1e-5, abs=1e-5)
    true = page_score_true_max(q, keys, 16)
    assert (est >= true - 1e-5).all()
    assert (est > true).float().mean() > 0.5  # a real upper bound, not the max itself


@pytest.mark.parametrize("fpga", [False, True])
def test_quest_full_budget_equals_dense(torch1, qkv, fpga):
    from mlx26.core.profile_memory.ops import FpgaOps, TorchOps
    from mlx26.core.profile_memory.quest import pages_for_budget, sparse_attention
    from mlx26.core.profile_memory.reference import dense_attention, page_minmax

    q, keys, values = qkv
    ops = FpgaOps("emu") if fpga else TorchOps()
    kmin, kmax = page_minmax(keys, 16)
    k, clamped = pages_for_budget(10_000, keys.shape[1])
    assert (k, clamped) == (13, True)
    sparse = sparse_attention(q, keys, values, kmin, kmax, k, ops)
    assert (sparse - dense_attention(q, keys, values)).abs().max().item() <= 1e-5
    small = sparse_attention(q, keys, values, kmin, kmax, 2, ops)  # 2 pages only: a different answer
    assert (small - dense_attention(q, keys, values)).abs().max().item() > 1e-3


def test_quest_selects_true_top_pages_and_last(torch1):
    from mlx26.core.profile_memory.ops import TorchOps
    from mlx26.core.profile_memory.quest import select_tokens

    scores = torch1.tensor([[0.1, 5.0, 0.3, 4.0]])
    tokens = select_tokens(scores, 3, 70, TorchOps())  # pages 1 and 3, plus the last (64..69)
    assert tokens[0].tolist() == list(range(16, 32)) + list(range(48, 64)) + list(range(64, 70))


def test_budget_rules():
    from mlx26.core.profile_memory.quest import pages_for_budget

    assert pages_for_budget(64, 1000) == (4, False)
    assert pages_for_budget(5, 1000) == (1, False)
    with pytest.raises(ValueError, match="budget"):
        pages_for_budget(0, 100)


def _decode_logits(model, torch, ids, n_prompt, make_pipe):
    from mlx26.core.profile_memory.clock import LapClock
    from mlx26.core.profile_memory.costs import CostBook
    from mlx26.core.profile_memory.runner import LlamaRunner

    runner = LlamaRunner(model, len(ids))
    logits, _ = runner.prefill(ids[:n_prompt])
    pipe = make_pipe(runner)
    clock, costs = LapClock(), CostBook()
    clock.start()
    pipe.build(clock, costs)
    out = [logits]
    for t in range(n_prompt, len(ids)):  # teacher-forced: feed the true next ids
        runner.decode(ids[t:t + 1], lambda i, q, k, v, pos, h: pipe.attend(i, q, k, v, pos, h, clock, costs),
                      clock, costs)
        out.append(runner.last_logits)
    return torch.stack(out), clock


@pytest.mark.parametrize("name", ["tiny-llama", "tiny-moe"])
def test_runner_matches_the_model_forward(tiny_model, torch1, name):
    from mlx26.core.profile_memory.dense import DensePipeline
    from mlx26.core.zoo import load_model

    model = tiny_model if name == "tiny-llama" else load_model(name)
    ids = torch1.randint(0, model.config.vocab_size, (40,), generator=torch1.Generator().manual_seed(1))
    with torch1.no_grad():
        full = model(ids[None]).logits[0]
    logits, clock = _decode_logits(model, torch1, ids, 36, DensePipeline)
    assert (logits - full[35:]).abs().max().item() < 1e-4  # prefill + 4 decode steps
    assert set(clock.times) == {"prepare", "apply", "other"}


def test_quest_decode_full_budget_equals_dense_decode(tiny_model, torch1):
    from mlx26.core.profile_memory.dense import DensePipeline
    from mlx26.core.profile_memory.ops import TorchOps
    from mlx26.core.profile_memory.quest import QuestPipeline

    ids = torch1.randint(0, tiny_model.config.vocab_size, (90,), generator=torch1.Generator().manual_seed(2))
    dense, _ = _decode_logits(tiny_model, torch1, ids, 84, DensePipeline)
    full, clock = _decode_logits(tiny_model, torch1, ids, 84, lambda r: QuestPipeline(r, 4096, TorchOps()))
    assert (full - dense).abs().max().item() <= 1e-5
    assert set(clock.times) == {"prepare", "relevancy", "retrieval", "apply", "other"}
    sparse, _ = _decode_logits(tiny_model, torch1, ids, 84, lambda r: QuestPipeline(r, 32, TorchOps()))
    assert (sparse - dense)[1:].abs().max().item() > 1e-4  # a 2-page budget really drops tokens


def test_rag_topk_equals_exact_search(torch1):
    from mlx26.core.profile_memory import rag
    from mlx26.core.profile_memory.ops import FpgaOps, TorchOps

    rng = np.random.default_rng(0)
    index = rng.standard_normal((300, 48)).astype(np.float32)
    index /= np.linalg.norm(index, axis=1, keepdims=True)
    query = rng.standard_normal(48).astype(np.float32)
    brute = np.argsort(-(index.astype(np.float64) @ query), kind="stable")[:10]
    anchor, name = rag.exact_search(index, query, 10)
    assert anchor.tolist() == brute.tolist()
    scores = torch1.from_numpy(index) @ torch1.from_numpy(query)
    for ops in (TorchOps(), FpgaOps("emu")):
        assert ops.topk(scores[None], 10)[0].tolist() == brute.tolist()
    try:
        import faiss  # noqa: F401

        assert name == "faiss.IndexFlatIP"
    except ImportError:
        assert name == "numpy"


def test_rag_profile_reports_anchor_agreement(tiny_model):
    from mlx26.core.profile_memory.ops import TorchOps
    from mlx26.core.profile_memory.profiler import ProfileOptions, profile

    result = profile(ProfileOptions(pipeline="rag", context=600, decode_steps=1, budget=128), tiny_model, TorchOps())
    assert result["info"]["topk_matches_anchor"] is True and result["info"]["k"] == 2


@pytest.mark.parametrize("fpga", [False, True])
def test_page_gather_equals_token_gather(torch1, qkv, fpga):
    from mlx26.core.profile_memory.ops import FpgaOps, TorchOps
    from mlx26.core.profile_memory.quest import gather_selected, select_pages, select_tokens
    from mlx26.core.profile_memory.reference import gather

    _, keys, _ = qkv
    ops = FpgaOps("emu") if fpga else TorchOps()
    scores = torch1.randn(4, 12, generator=torch1.Generator().manual_seed(5))
    by_page = gather_selected(keys, select_pages(scores, 4, ops), 203, ops)
    by_token = gather(keys, select_tokens(scores, 4, 203, TorchOps()))
    assert by_page.shape == (4, 3 * 16 + 11, 32) and torch1.equal(by_page, by_token)


def test_indexer_score_is_the_dsa_formula(torch1):
    from mlx26.core.profile_memory.indexer import indexer_scores

    g = torch1.Generator().manual_seed(7)
    q, w, keys = torch1.randn(4, 32, generator=g), torch1.randn(4, generator=g), torch1.randn(50, 32, generator=g)
    got = indexer_scores(q, w, keys)
    qn, wn, kn = q.double().numpy(), w.double().numpy(), keys.double().numpy()
    want = [sum(wn[h] * max(0.0, float(qn[h] @ kn[s])) for h in range(4)) for s in range(50)]
    assert np.allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


def test_hmt_recall_is_softmax_over_the_topk(torch1):
    from mlx26.core.profile_memory import hmt
    from mlx26.core.profile_memory.ops import FpgaOps, TorchOps

    g = torch1.Generator().manual_seed(8)
    bank, query = torch1.randn(9, 16, generator=g), torch1.randn(16, generator=g)
    scores = hmt.memory_scores(bank, query)
    assert torch1.allclose(scores, bank @ query / 4.0)
    top = sorted(range(9), key=lambda i: -scores[i].item())[:3]
    weights = torch1.softmax(scores[top], 0)
    want = (weights[:, None] * bank[top]).sum(0)
    for ops in (TorchOps(), FpgaOps("emu")):
        recalled, idx = hmt.recall(bank, scores, 3, ops)
        assert idx.tolist() == top and torch1.allclose(recalled, want, atol=1e-6)
    assert hmt.segments_for_budget(10_000, 9) == (9, True)


def test_quest_on_fpga_reads_the_cache_in_place(tiny_model, torch1, monkeypatch):
    """Quest decode through the emulated kernels, end to end over LlamaRunner's preallocated caches: the K/V and
    page-bound views reach the kernels as storage + head stride, and the logits equal those of the dense-copy
    path bit for bit."""
    from mlx26.core.profile_memory import ops as ops_mod
    from mlx26.core.profile_memory.quest import QuestPipeline
    from mlx26.fpga import emu

    ids = torch1.randint(0, tiny_model.config.vocab_size, (100,), generator=torch1.Generator().manual_seed(3))
    strided = {"page_minmax": [], "page_score": [], "gather": []}
    for name, arg in (("page_minmax", 0), ("page_score", 1), ("gather", 0)):
        real = getattr(emu.EmuKernels, name)
        monkeypatch.setattr(emu.EmuKernels, name, lambda self, *a, _real=real, _name=name, _arg=arg:
                            strided[_name].append(isinstance(a[_arg], emu.Strided)) or _real(self, *a))
    in_place, _ = _decode_logits(tiny_model, torch1, ids, 84, lambda r: QuestPipeline(r, 32, ops_mod.FpgaOps("emu")))
    assert all(seen and all(seen) for seen in strided.values())  # tiny-llama has as many KV heads as query heads
    monkeypatch.setattr(ops_mod, "in_place_view", lambda t: False)
    for seen in strided.values():
        seen.clear()
    copied, _ = _decode_logits(tiny_model, torch1, ids, 84, lambda r: QuestPipeline(r, 32, ops_mod.FpgaOps("emu")))
    assert all(seen and not any(seen) for seen in strided.values())
    assert torch1.equal(in_place, copied)
