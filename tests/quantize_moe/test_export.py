"""`--export`: a compressed-tensors checkpoint that transformers loads with no mlx26 code, same logits as ours."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("compressed_tensors")
torch.set_num_threads(1)

BASE = ["--bits", "4", "--symmetric", "--lowrank", "none", "--calib-bytes", "2048", "--format", "jsonl"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    from mlx26.core.quantize_moe import pipeline
    from mlx26.core.quantize_moe import run as qrun

    root = tmp_path_factory.mktemp("export")
    cfg = pipeline.Config(bits=4, lowrank="none", symmetric=True)
    records = qrun.run("tiny-moe", cfg, qrun.default_text("train", 2048), out=str(root / "ours"),
                       export_to=str(root / "ct"))
    return root, records[-1]


def test_cli_export(run_cli, tmp_path):
    result = run_cli("quantize-moe", *BASE, "--export", tmp_path / "ct")
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout.splitlines()[-1])
    assert summary["export"] == str(tmp_path / "ct") and (tmp_path / "ct" / "model.safetensors").is_file()
    again = run_cli("quantize-moe", *BASE, "--export", tmp_path / "ct")
    assert again.code == 2 and "--force" in again.stderr
    assert run_cli("quantize-moe", *BASE, "--export", tmp_path / "ct", "--force").code == 0


def test_transformers_loads_the_export_with_our_logits(exported):
    from mlx26.core.quantize_moe import storage
    from transformers import AutoModelForCausalLM

    root, summary = exported
    assert summary["export_projections"] == 2 * 8 * 3  # layers × experts × (w1, w3, w2)
    config = json.loads((root / "ct" / "config.json").read_text())
    qc = config["quantization_config"]
    assert qc["quant_method"] == "compressed-tensors" and qc["format"] == "pack-quantized"
    theirs = AutoModelForCausalLM.from_pretrained(root / "ct")  # transformers + compressed-tensors only
    ids = torch.tensor([[1, 17, 400, 33, 2048, 5, 99, 1000, 7, 64]])
    with torch.no_grad():
        got = theirs(ids).logits
        for runtime, tol in (("fp32", 1e-4), ("int4", 2e-2)):
            ours, _ = storage.load(str(root / "ours"), runtime)
            ref = ours(ids).logits
            assert (got - ref).abs().max() <= tol * ref.abs().max(), runtime
    # the dense weights went through untouched, the experts did not stay fp32 copies of the original
    from mlx26.core.zoo import load_model

    original = load_model("tiny-moe")
    with torch.no_grad():
        assert not torch.allclose(original(ids).logits, got, atol=1e-3)


def test_export_packs_our_codes(exported):
    """compressed-tensors' own unpacking of the exported codes gives back our symmetric codes exactly."""
    from compressed_tensors.compressors.pack_quantized.helpers import unpack_from_int32
    from mlx26.core.quantize_moe import quant
    from safetensors.torch import load_file

    root, _ = exported
    theirs = load_file(str(root / "ct" / "model.safetensors"))
    ours = load_file(str(root / "ours" / "experts.safetensors"))
    meta = json.loads((root / "ours" / "quantize_moe.json").read_text())
    shape = tuple(meta["layers"][0]["down_proj"]["shape"])
    codes = quant.unpack_bits(ours["0.down_proj.codes"].numpy(), 4, int(torch.tensor(shape).prod()))
    codes = torch.from_numpy(codes).reshape(shape).to(torch.int32) - 8
    key = "model.layers.0.block_sparse_moe.experts.3.w2"
    unpacked = unpack_from_int32(theirs[f"{key}.weight_packed"], 4, theirs[f"{key}.weight_shape"])
    assert torch.equal(unpacked.to(torch.int32), codes[3])
    assert torch.equal(theirs[f"{key}.weight_scale"], ours["0.down_proj.scale"][3].float())


@pytest.mark.parametrize(("args", "needle"), [
    (["--bits", "4", "--lowrank", "none"], "--symmetric"),
    (["--bits", "4", "--symmetric", "--lowrank", "lqer"], "--lowrank none"),
    (["--bits", "3", "--symmetric", "--lowrank", "none"], "--bits 4"),
    (["--bits", "4", "--symmetric", "--lowrank", "none", "--base", "hqq"], "--symmetric applies"),
])
def test_what_the_format_cannot_hold_is_refused_before_work(run_cli, tmp_path, args, needle):
    result = run_cli("quantize-moe", *args, "--calib-bytes", "1024", "--export", tmp_path / "ct")
    if result.code == 3:  # hqq not installed: its own exit 3 comes first
        pytest.skip("hqq not installed")
    assert result.code == 2, result.stderr
    assert needle in result.stderr and "Traceback" not in result.stderr and not (tmp_path / "ct").exists()


def test_export_never_replaces_user_data(run_cli, tmp_path):
    user = tmp_path / "mine"
    user.mkdir()
    (user / "notes.txt").write_text("keep me")
    result = run_cli("quantize-moe", *BASE, "--export", user, "--force")
    assert result.code == 2 and "not a quantize-moe export" in result.stderr
    assert (user / "notes.txt").read_text() == "keep me"
