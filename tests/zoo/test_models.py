"""Shipped models: load offline, round-trip bit-exactly, generate valid text, beat the compressors."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from mlx26.core.zoo import load_model, load_tokenizer, registry, resolve_model_path  # noqa: E402
from mlx26.core.zoo.evaluate import compressor_bits_per_byte  # noqa: E402

SHIPPED = ("tiny-llama", "tiny-llama-pkgs", "tiny-llama-draft", "tiny-llama-1k", "tiny-llama-draft-1k", "tiny-moe",
           "tiny-moe-upcycled", "tiny-moe-fine")


def test_the_shipped_models_are_small():
    assert set(registry.shipped_names()) == set(SHIPPED)
    total = sum(registry.folder_size(registry.MODELS_DIR / n) for n in SHIPPED)
    assert total < 37e6  # a few MB each (eight models: 35.0 MB)
    for name in SHIPPED:
        folder = registry.MODELS_DIR / name
        for required in ("config.json", "model.safetensors", "tokenizer.json", "manifest.json", "MODEL_CARD.md"):
            assert (folder / required).is_file(), f"{name}/{required}"


@pytest.mark.parametrize("name", SHIPPED)
def test_manifest_records_how_the_model_was_made(name):
    m = registry.read_manifest(name)
    tr, ev = m["training"], m["eval"]
    assert tr["command"].startswith(f"mlx26 zoo train {name} ") and f"--out core/zoo/models/{name}" in tr["command"]
    assert tr["steps"] > 0 and tr["wall_time_s"] > 0 and isinstance(tr["seed"], int)
    assert all(c["hash"].startswith("sha256:") and c["bytes_used"] > 0 for c in m["corpora"])
    # scored on the held-out split of its first training corpus
    assert ev["corpus"] == m["corpora"][0]["id"] and ev["split"] == "heldout" and ev["bytes"] > 200_000
    assert set(ev["baselines"]) == {"xz -9e", "bz2 -9", "gzip -9"}
    assert m["random_init"] is False and m["parameters"] > 0


def test_acceptance_figures_in_manifests():
    """tiny-llama < xz -9e; tiny-llama-draft < gzip -9; tiny-moe < gzip -9 with no dead expert."""
    ev = {n: registry.read_manifest(n)["eval"] for n in SHIPPED}
    assert ev["tiny-llama"]["bits_per_byte"] < ev["tiny-llama"]["baselines"]["xz -9e"]
    assert ev["tiny-llama-draft"]["bits_per_byte"] < ev["tiny-llama-draft"]["baselines"]["gzip -9"]
    assert ev["tiny-moe"]["bits_per_byte"] < ev["tiny-moe"]["baselines"]["gzip -9"]
    assert ev["tiny-moe"]["dead_experts"] == 0


def _same_heldout_text(manifest: dict) -> tuple[bool, str]:
    """The held-out text of this machine's stdlib, and whether it is the one the manifest scored.

    The stdlib corpus is the running interpreter's (pyenv's CPython and Debian's python3.11 ship
    different file sets, e.g. Debian has no tkinter/idlelib), so exact figures only reproduce there.
    """
    import hashlib

    from mlx26.core.zoo import corpus

    text = corpus("stdlib-code").text("heldout", manifest["eval"]["bytes"] + 1)
    digest = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    return digest == manifest["eval"]["text_hash"], text


def test_baselines_in_manifest_match_the_compressors_on_the_same_text():
    m = registry.read_manifest("tiny-llama-draft")
    same, text = _same_heldout_text(m)
    if not same:
        pytest.skip("this interpreter's stdlib differs from the one the manifest was scored on")
    assert len(text.encode()) == m["eval"]["bytes"]
    assert compressor_bits_per_byte(text) == pytest.approx(m["eval"]["baselines"], abs=1e-9)


@pytest.mark.skipif(__import__("shutil").which("xz") is None, reason="xz binary not installed")
def test_lzma_baseline_equals_the_xz_binary(tmp_path):
    from mlx26.core.zoo import corpus

    text = corpus("stdlib-code").text("heldout", 50_000)
    (tmp_path / "t").write_bytes(text.encode())
    out = subprocess.run(["xz", "-9e", "-c", str(tmp_path / "t")], capture_output=True, check=True).stdout
    assert compressor_bits_per_byte(text)["xz -9e"] == pytest.approx(8 * len(out) / len(text.encode()), rel=2e-3)


@pytest.mark.parametrize("name", ["tiny-llama-draft", "tiny-moe", pytest.param("tiny-llama", marks=pytest.mark.slow)])
def test_fresh_eval_reproduces_the_manifest_figure(name):
    from mlx26.core.zoo.report import evaluate_rows

    m = registry.read_manifest(name)
    rows = evaluate_rows(name, max_bytes=m["eval"]["bytes"] + 1)
    same, _ = _same_heldout_text(m)
    if not same:
        # Another stdlib: the acceptance property must still hold on the text actually scored.
        by_method = {r["method"]: r["bits_per_byte"] for r in rows}
        assert by_method[name] < by_method["gzip -9"]
        assert by_method[name] == pytest.approx(m["eval"]["bits_per_byte"], rel=0.1)
        return
    assert rows[0]["bytes"] == m["eval"]["bytes"] and rows[0]["tokens"] == m["eval"]["tokens"]
    # tiny-llama-draft was scored before the last, partial chunk got a full-length window; its figure
    # differs from today's protocol by 2e-5 relative. The other two were scored as now.
    assert rows[0]["bits_per_byte"] == pytest.approx(m["eval"]["bits_per_byte"],
                                                     rel=1e-4 if name == "tiny-llama-draft" else 1e-6)


def test_moe_routes_to_every_expert_on_heldout_text():
    from mlx26.core.zoo.report import evaluate_rows

    row = evaluate_rows("tiny-moe", max_bytes=32_768, baselines=False)[0]
    config = load_model("tiny-moe").config
    assert len(row["expert_load"]) == config.num_hidden_layers
    for layer in row["expert_load"]:
        assert len(layer) == config.num_local_experts and min(layer) > 0
        assert sum(layer) == row["routed_positions"] * config.num_experts_per_tok
    # every scored token was routed; the last window re-routes some context positions
    assert row["tokens"] <= row["routed_positions"] < row["tokens"] + 128
    assert row["dead_experts"] == 0


def test_save_load_round_trip_is_bit_exact(tmp_path):
    from transformers import AutoModelForCausalLM

    model = load_model("tiny-llama-draft")
    model.save_pretrained(tmp_path)
    again = AutoModelForCausalLM.from_pretrained(tmp_path, local_files_only=True)
    a, b = model.state_dict(), again.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    ids = torch.tensor([[1, 300, 301, 302, 77, 5]])
    with torch.inference_mode():
        assert torch.equal(model(ids).logits, again.eval()(ids).logits)


@pytest.mark.parametrize("name", ["tiny-llama-draft", "tiny-moe"])
def test_greedy_generation_decodes_to_valid_utf8(name):
    model, tok = load_model(name), load_tokenizer(name)
    prompt = tok("import os\n\ndef ", return_tensors="pt")
    with torch.inference_mode():
        out = model.generate(**prompt, max_new_tokens=40, do_sample=False, pad_token_id=tok.pad_token_id)
    text = tok.decode(out[0, prompt["input_ids"].shape[1]:], skip_special_tokens=True)
    assert text and "\ufffd" not in text
    assert text.encode("utf-8").decode("utf-8") == text


def test_shipped_models_load_with_plain_transformers_offline():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = resolve_model_path("tiny-llama")
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
    tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    assert type(model).__name__ == "LlamaForCausalLM" and model.config.hidden_size == 128
    assert model.config.num_hidden_layers == 4 and len(tok) == model.config.vocab_size


def test_loading_never_touches_the_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for name in SHIPPED:
        assert load_model(name) is not None and len(load_tokenizer(name)) == 4096


def test_hf_hub_offline_subprocess(tmp_path):
    code = ("import json; from mlx26.core.zoo import load_model, load_tokenizer;"
            "m = load_model('tiny-llama'); t = load_tokenizer('tiny-llama');"
            "print(json.dumps([type(m).__name__, len(t)]))")
    env = {"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HF_HOME": str(tmp_path / "hf")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == ["LlamaForCausalLM", 4096]
    assert not (tmp_path / "hf").exists()  # nothing was fetched or cached


def test_resolution_of_names_paths_and_hub_ids(monkeypatch, tmp_path):
    assert resolve_model_path("tiny-llama") == str(registry.MODELS_DIR / "tiny-llama")
    path = str(registry.MODELS_DIR / "tiny-llama-draft")
    assert resolve_model_path(path) == path
    with pytest.raises(ValueError, match="Did you mean 'tiny-llama'"):
        resolve_model_path("tiny-lama")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="not a model folder"):
        resolve_model_path(str(tmp_path / "empty"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    assert resolve_model_path("someone/some-model") == "someone/some-model"  # only named, never fetched here
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ValueError, match="hub is off"):
        resolve_model_path("someone/some-model")


def test_long_preset_is_random_init_and_labelled(monkeypatch, tmp_path):
    from mlx26.core.zoo.presets import build_config, get_preset

    preset = get_preset("tiny-llama-long")
    config = build_config(preset, load_tokenizer("bpe-4096"))
    assert config.hidden_size >= 512 and config.head_dim == 64 and config.max_position_embeddings >= 16384
    m = registry.read_manifest("tiny-llama-long")
    assert m["random_init"] is True and "RANDOM INIT" in m["note"]
    from mlx26.core.zoo.presets import build_model, count_parameters

    with torch.device("meta"):  # shapes only: the closed-form count matches the real module
        assert count_parameters(build_model(preset, load_tokenizer("bpe-4096"), 0)) == m["parameters"]
    rows = {r["name"]: r for r in registry.list_models()}
    assert rows["tiny-llama-long"]["kind"].startswith("random-init")
    # each bits/byte says what it was scored on, so rows with different contexts or corpora are not compared blind
    assert (rows["tiny-llama"]["bpb_context"], rows["tiny-llama-1k"]["bpb_context"]) == (128, 1024)
    assert rows["tiny-llama-pkgs"]["bpb_corpus"] != rows["tiny-llama"]["bpb_corpus"] == "stdlib-code"


@pytest.mark.slow
def test_long_preset_materialises_once_with_identical_weights(monkeypatch, tmp_path):
    monkeypatch.setenv("MLX26_HOME", str(tmp_path))
    folder = resolve_model_path("tiny-llama-long")
    assert folder.startswith(str(tmp_path))
    manifest = json.loads((registry.Path(folder) / "manifest.json").read_text())
    assert manifest["random_init"] is True
    a = load_model(folder).state_dict()
    b = load_model("tiny-llama-long").state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_the_broad_corpus_model_codes_unseen_packages_in_fewer_bits():
    """Generalisation: on distributions held out of packages-code (whole packages no zoo model trained on),
    tiny-llama-pkgs — tiny-llama's shape and CPU budget, trained on the other packages and the stdlib — needs
    fewer bits per byte than tiny-llama, trained on the stdlib alone."""
    from mlx26.core.zoo import corpus
    from mlx26.core.zoo.evaluate import bits_per_byte

    text = corpus("packages-code").text("heldout", 32_768)
    if len(text.encode()) < 30_000:
        pytest.skip("fewer than 30 KB of held-out package code is installed here")
    scores = {name: bits_per_byte(load_model(name), load_tokenizer(name), text, context=128)["bits_per_byte"]
              for name in ("tiny-llama", "tiny-llama-pkgs")}
    assert scores["tiny-llama-pkgs"] < scores["tiny-llama"], scores


@pytest.mark.parametrize(("name", "source"), [("tiny-llama-1k", "tiny-llama"), ("tiny-llama-draft-1k", "tiny-llama-draft")])
def test_continued_preset_builds_from_its_source_and_records_which_weights(name, source):
    """Wiring: a continued preset starts from the shipped source weights (not a fresh init), and the shipped
    manifest pins the source file it was trained from by its hash, with the 1,024-token window."""
    import hashlib

    from mlx26.core.zoo.presets import build_model, get_preset

    start = build_model(get_preset(name), load_tokenizer(name), seed=123).state_dict()
    weights = load_model(source).state_dict()
    assert start.keys() == weights.keys()
    assert all(torch.equal(start[k], weights[k]) for k in weights)
    m = registry.read_manifest(name)
    blob = (registry.MODELS_DIR / source / "model.safetensors").read_bytes()
    assert m["continued_from"]["model"] == source
    assert m["continued_from"]["weights_sha256"] == hashlib.sha256(blob).hexdigest()
    assert m["training"]["context"] == 1024 and m["eval"]["context"] == 1024
    assert registry.read_manifest(source)["training"]["context"] == 128


def test_continued_preset_refuses_another_tokenizer(tmp_path):
    from mlx26.core.common.errors import InputError
    from mlx26.core.zoo.train import TrainOptions, validate

    with pytest.raises(InputError, match="keeps its tokenizer"):
        validate(TrainOptions("tiny-llama-1k", str(tmp_path / "m"), tokenizer="byte"))


def test_context_extension_scores_better_than_its_source_past_128_tokens():
    """Both models on the same held-out bytes at a 1,024-token context: tiny-llama, trained on 128-token windows,
    extrapolates there; tiny-llama-1k was trained on such windows and needs fewer bits per byte."""
    from mlx26.core.zoo.corpora import corpus
    from mlx26.core.zoo.evaluate import bits_per_byte

    text = corpus("stdlib-code").text("heldout", 12_000)
    score = {name: bits_per_byte(load_model(name), load_tokenizer(name), text, context=1024, routing=False)["bits_per_byte"]
             for name in ("tiny-llama", "tiny-llama-1k", "tiny-llama-draft", "tiny-llama-draft-1k")}
    assert score["tiny-llama-1k"] < score["tiny-llama"] - 0.1, score
    assert score["tiny-llama-draft-1k"] < score["tiny-llama-draft"] - 0.1, score
