"""DAS (calibration, fusion, dead neurons, gradients) and the model's operation counts against closed forms."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from mlx26.core.common.errors import InputError  # noqa: E402
from mlx26.core.spike import energy as E  # noqa: E402
from mlx26.core.spike import tasks  # noqa: E402
from mlx26.core.spike import train as TR  # noqa: E402
from mlx26.core.spike.das import DAS, DASLinear, fuse_linear, fuse_model  # noqa: E402
from mlx26.core.spike.model import LN_MACS, SpikeClassifier, SpikeConfig  # noqa: E402


def test_fused_das_equals_unfused_linear():
    torch.manual_seed(0)
    lin = DASLinear(48, 32, das=True)
    with torch.no_grad():
        lin.das.a.uniform_(0.1, 3.0)
        lin.das.c.normal_()
    x = (torch.rand(500, 48) < 0.3).float()
    before = lin(x)
    fused = fuse_linear(lin.linear, lin.das)
    assert float((fused(x) - before).abs().max()) <= 1e-5
    lin.fuse()
    assert lin.das is None and float((lin(x) - before).abs().max()) <= 1e-5


def test_calibration_hits_the_target_moments():
    d = DAS(16, theta=2.0)
    y = torch.randn(4000, 16) * torch.linspace(0.1, 5, 16) + torch.linspace(-3, 3, 16)
    rep = d.calibrate(y)
    out = d(y)
    assert torch.allclose(out.mean(0), torch.full((16,), 1.0), atol=1e-3)  # τθ = 0.5 · 2
    assert torch.allclose(out.std(0), torch.full((16,), 1.0), atol=1e-3)  # κθ
    assert abs(rep["mean_after"] - 1.0) < 1e-3
    with pytest.raises(InputError):
        d.calibrate(torch.randn(1, 16))


@pytest.fixture(scope="module")
def salient_small():
    return tasks.salient(64, seed=3, min_len=12, max_len=16)


def _model(data, das, **kw):
    torch.manual_seed(0)
    return TR.build(data, arch="spikinglm", attn="spike2max", das=das, d_model=32, **kw)


def test_das_at_least_halves_dead_neurons_and_raises_first_layer_gradient(salient_small):
    with_das, no_das = _model(salient_small, True), _model(salient_small, False)
    TR.calibrate(with_das, salient_small)
    a, b = TR.diagnostics(with_das, salient_small), TR.diagnostics(no_das, salient_small)
    assert b["dead_fraction"] > 0.02  # without DAS, default init leaves many channels silent
    assert a["dead_fraction"] <= 0.5 * b["dead_fraction"]
    assert a["first_layer_grad_norm"] > b["first_layer_grad_norm"]


def test_fused_model_keeps_predictions(salient_small):
    # Every fused linear matches to float rounding (test above), but a spike is a step function: a rounding
    # difference right at θ can flip one spike, so whole-model logits are compared by prediction and mean.
    m = _model(salient_small, True)
    TR.calibrate(m, salient_small)
    from mlx26.core.spike.export import fused_copy

    f, n = fused_copy(m)
    assert n == 2 * 4  # q, k, v, fc1 in each of 2 blocks
    with torch.no_grad():
        a, b = f(salient_small.ids), m(salient_small.ids)
    assert float((a.argmax(-1) == b.argmax(-1)).double().mean()) >= 0.99
    assert float((a - b).abs().mean()) <= 1e-3
    assert fuse_model(f) == 0


def test_ann_operation_counts_match_the_closed_form():
    c = SpikeConfig(vocab=20, classes=3, max_len=10, d_model=8, heads=2, layers=1, ffn=2, arch="ann",
                    attn="softmax", das=False)
    m = SpikeClassifier(c)
    ids = torch.tensor([[3, 4, 5, 6, 0, 0], [1, 2, 3, 4, 5, 6]])
    lens = [4, 6]
    counter = E.OpCounter()
    with torch.no_grad():
        m(ids, counter=counter)
    d, f, tok = 8, 16, sum(lens)
    linears = tok * (3 * d * d + d * d + d * f + f * d)
    attention = 2 * sum(n * n for n in lens) * d  # QKᵀ and AV over both heads (h · d_h = d)
    ln = LN_MACS * tok * d * 3  # ln1, ln2, ln_f
    gelu = 3 * tok * f
    head = 2 * d * 3
    assert counter["fp32_mac"] == linears + attention + ln + gelu + head
    assert counter["fp32_exp"] == tok * f + sum(n * n for n in lens) * 2  # GELU + softmax exps (2 heads)


def test_snn_accumulates_equal_spikes_times_fan_out():
    c = SpikeConfig(vocab=20, classes=3, max_len=6, d_model=8, heads=2, layers=1, ffn=2, arch="snn",
                    attn="linear", das=False, T=3)
    torch.manual_seed(1)
    m = SpikeClassifier(c)
    ids = torch.tensor([[3, 4, 5, 6, 0, 0], [1, 2, 3, 4, 5, 6]])
    mask = ids != 0
    seen = {}

    def grab(name):
        def hook(mod, inp, out):
            seen[name] = inp[0].detach()
        return hook

    blk = m.blocks[0]
    for name in ("q", "o", "fc1", "fc2"):
        getattr(blk, name).register_forward_hook(grab(name))
    counter = E.OpCounter()
    with torch.no_grad():
        m(ids, counter=counter)
    w = mask[None, :, :, None].float()
    spikes_in = {k: float(((v != 0).float() * w).sum()) for k, v in seen.items()}
    # q, k and v read the same spikes; fan-outs d, d, d (q k v), d (o), f (fc1), d (fc2)
    want = 3 * spikes_in["q"] * 8 + spikes_in["o"] * 8 + spikes_in["fc1"] * 16 + spikes_in["fc2"] * 8
    assert counter["fp32_ac"] == want
    assert counter.get("fp32_exp", 0) == 0  # no softmax, no GELU in a softmax-free SNN


def test_model_config_errors():
    for bad in (dict(T=0), dict(theta=0.0), dict(arch="cnn"), dict(attn="flash"), dict(norm="half"),
                dict(d_model=10, heads=4), dict(arch="ann", das=True)):
        with pytest.raises(InputError):
            SpikeClassifier(SpikeConfig(vocab=10, classes=2, **bad))


def test_energy_pow2_normalisation_is_under_five_percent_of_softmax():
    n = E.normalisation_energy([8, 16, 32, 64], heads=4, steps=4, layers=2)
    assert n["spike2max_pow2_over_softmax"] <= 0.05
    assert n["spike2max_exact_over_softmax"] < 1.0


def test_energy_table_override_and_errors(tmp_path):
    p = tmp_path / "t.json"
    p.write_text('{"fp32_mac": 3.0, "shift": {"pj": 0.05, "source": "my process"}}')
    t = E.load_table(str(p))
    assert t["fp32_mac"] == (3.0, str(p)) and t["shift"] == (0.05, "my process")
    assert t["fp32_ac"] == E.DEFAULT_TABLE["fp32_ac"]
    p.write_text('[{"op": "shift", "pj": 0.2, "source": "edited"}]')  # `spike energy --table` records
    assert E.load_table(str(p))["shift"] == (0.2, "edited")
    for text in ('{"fp32_macc": 1}', '{"fp32_mac": -1}', '{"fp32_mac": "x"}', "[1, 2]", "{not json"):
        p.write_text(text)
        with pytest.raises(InputError):
            E.load_table(str(p))
