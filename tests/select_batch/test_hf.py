"""PartitionSel as a transformers Trainer's batch sampler (issue 27): the Trainer trains on exactly the
selected batches, each from its own window under the per-domain budgets, features taken from the model
as it is being trained; the weighted trainer consumes the weights in order; bad arguments are refused."""

from __future__ import annotations

from collections import Counter

import pytest

pytest.importorskip("transformers")
pytest.importorskip("accelerate")


@pytest.fixture(scope="module")
def setup():
    from mlx26.core.select_batch.data import demo_rows, parse_rows
    from mlx26.core.zoo import load_tokenizer

    pool = parse_rows(enumerate(demo_rows("train", 96, 0), 1), "pool")
    val = parse_rows(enumerate(demo_rows("val", 6, 0), 1), "val")
    tok = load_tokenizer("tiny-llama")
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return pool, val, tok


def _trainer(setup, tmp_path, *, weighted=False, method="partitionsel"):
    import torch
    from mlx26.core.select_batch.hf import SelectBatchTrainer, SelectionBatchSampler
    from mlx26.core.zoo import load_model
    from transformers import DataCollatorForLanguageModeling, TrainingArguments

    pool, val, tok = setup
    torch.manual_seed(0)
    model = load_model("tiny-llama")
    enc = [tok(it.text, truncation=True, max_length=32) for it in pool]
    dataset = [{"input_ids": e["input_ids"], "attention_mask": e["attention_mask"]} for e in enc]
    sampler = SelectionBatchSampler(model, tok, [it.text for it in pool], [it.domain for it in pool],
                                    [it.text for it in val], batch=4, buffer=4, steps=3, method=method, proj_dim=64,
                                    seq_len=32, anchor_every=2)
    args = TrainingArguments(output_dir=str(tmp_path / "out"), max_steps=3, per_device_train_batch_size=4,
                             learning_rate=1e-3, report_to=[], save_strategy="no", logging_steps=1,
                             use_cpu=True, disable_tqdm=True)
    trainer = SelectBatchTrainer(model=model, args=args, train_dataset=dataset,
                                 data_collator=DataCollatorForLanguageModeling(tok, mlm=False),
                                 batch_sampler=sampler, weighted=weighted)
    return trainer, sampler, model


def test_the_trainer_trains_on_the_selected_batches(setup, tmp_path, monkeypatch):
    import torch

    trainer, sampler, model = _trainer(setup, tmp_path)
    seen = []
    real = type(trainer).training_step

    def spy(self, model, inputs, *a, **k):
        seen.append(inputs["input_ids"].shape[0])
        return real(self, model, inputs, *a, **k)

    monkeypatch.setattr(type(trainer), "training_step", spy)
    before = [p.detach().clone() for p in model.parameters()]
    trainer.train()
    assert len(sampler.log) == 3 and seen == [4, 4, 4]
    pool = setup[0]
    for entry in sampler.log:
        assert set(entry["chosen"]) <= set(entry["window"]) and len(set(entry["chosen"])) == 4
        assert Counter(pool[i].domain for i in entry["chosen"]) == Counter(
            {d: k for d, k in entry["budgets"].items() if k})
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    assert sampler.feat.model is model  # features come from the model being trained


def test_weighted_trainer_consumes_one_weight_list_per_batch(setup, tmp_path):
    trainer, sampler, _ = _trainer(setup, tmp_path, weighted=True)
    trainer.train()
    assert len(sampler.log) == 3 and len(sampler.weights) == 0  # every batch's weights used, in order


def test_sampler_arguments_are_checked(setup):
    from mlx26.core.select_batch.hf import SelectionBatchSampler
    from mlx26.core.zoo import load_model

    pool, val, tok = setup
    texts, domains = [it.text for it in pool], [it.domain for it in pool]
    model = load_model("tiny-llama")
    with pytest.raises(ValueError, match="batch × buffer"):
        SelectionBatchSampler(model, tok, texts[:10], domains[:10], ["v"], batch=4, buffer=4)
    with pytest.raises(ValueError, match="Unknown method"):
        SelectionBatchSampler(model, tok, texts, domains, ["v"], method="best")
    with pytest.raises(ValueError, match="validation texts"):
        SelectionBatchSampler(model, tok, texts, domains, [])
    with pytest.raises(ValueError, match="domain labels"):
        SelectionBatchSampler(model, tok, texts, domains[:-1], ["v"])
