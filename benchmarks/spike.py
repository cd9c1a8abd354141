"""``make bench-spike``: ANN vs plain SNN vs SpikingLM (DAS + Spike2Max) on the same tasks, in one run.

For each task (salient: SYNTHETIC; source, pair: REAL stdlib / arithmetic text) the three architectures are
trained with the same budget (steps, batch, learning rate, width, depth, seed) and reported side by side:
held-out accuracy and MODELLED energy per sequence (45 nm table, counted from the spikes each model fires),
with each model's energy relative to its ANN twin. Ablations on top:

* attention at equal DAS on the salient task: softmax-free (linear) vs softmax vs Spike2Max;
* a query-dependent retrieval probe (salient-query, SYNTHETIC, one block, 800 steps): the same attentions,
  and Spike2Max with exact as well as power-of-two normalisation;
* DAS: dead-neuron fraction at init and after 200 steps, and the first layer's gradient norm at init, for
  SpikingLM with and without DAS on the source task;
* fused DAS vs unfused (the model's logits and every DASLinear's output), onnxruntime vs torch on 100 held-out
  inputs, and per-sequence latency torch vs onnxruntime (batch 1, 1 thread; a ratio, the machine is shared);
* the attention normalisation alone: Spike2Max (pow2 / exact) vs softmax energy.

No reference implementation of SpikingLM exists to run beside ours (its code is unreachable), so the anchors
are the ANN twin and the plain SNN, as in the paper's comparison.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
from _results import record  # noqa: E402
from mlx26.core.common.threads import apply_torch_threads  # noqa: E402
from mlx26.core.spike import export as X  # noqa: E402
from mlx26.core.spike import tasks  # noqa: E402
from mlx26.core.spike import train as TR  # noqa: E402
from mlx26.core.spike.das import DASLinear  # noqa: E402
from mlx26.core.spike.energy import DEFAULT_TABLE, normalisation_energy  # noqa: E402

ARCHS = {"ann": dict(arch="ann", attn="softmax", das=False),
         "snn": dict(arch="snn", attn="linear", das=False),
         "spikinglm": dict(arch="spikinglm", attn="spike2max", das=True)}
ABLATION = {"snn_das_linear": dict(arch="snn", attn="linear", das=True),
            "snn_das_softmax": dict(arch="snn", attn="softmax", das=True)}
# The query-dependent retrieval probe: every attention at equal DAS, and Spike2Max with both normalisations.
QUERY = {**ABLATION, "spikinglm": dict(arch="spikinglm", attn="spike2max", das=True, norm="pow2"),
         "spikinglm_exact": dict(arch="spikinglm", attn="spike2max", das=True, norm="exact")}


def run(task, opts, a, data, test, log, steps=None, layers=None):
    torch.manual_seed(a.seed)
    m = TR.build(data, layers=layers or a.layers, **opts)
    t0 = time.perf_counter()
    info = TR.fit(m, data, steps=steps or a.steps, batch=a.batch, lr=a.lr, seed=a.seed)
    acc = TR.accuracy(TR.predict(m, test), test.labels)
    e = TR.count_energy(m, test.subset(slice(0, a.energy_n)))
    ann = TR.count_energy(TR.ann_twin(m), test.subset(slice(0, a.energy_n)))
    row = {"accuracy": acc, "train_seconds": time.perf_counter() - t0, "energy_pj": e["total_pj"],
           "ann_twin_energy_pj": ann["total_pj"], "energy_vs_ann": e["total_pj"] / ann["total_pj"],
           "dead_fraction_init": info["init"].get("dead_fraction"),
           "dead_fraction_final": info["final"].get("dead_fraction"),
           "firing_rate": info["final"].get("firing_rate"),
           "grad_norm_init": info["init"]["first_layer_grad_norm"], "params": info["params"]}
    log(f"{task:8s} {opts['arch']:9s} attn={opts['attn']:9s} das={opts['das']!s:5s} acc={acc:.3f} "
        f"E={e['total_pj'] / 1e6:.3f} µJ ({row['energy_vs_ann']:.3f}× ANN) dead={row['dead_fraction_final']} "
        f"{row['train_seconds']:.0f}s")
    return m, row


def fusion_check(model, test):
    fused, n = X.fused_copy(model)
    with torch.no_grad():
        logits = float((fused(test.ids) - model(test.ids)).abs().max())
        x = (torch.rand(256, model.config.d_model) < 0.3).float()
        lin = 0.0
        for (_, a), (_, b) in zip(((k, v) for k, v in model.named_modules() if isinstance(v, DASLinear)),
                                  ((k, v) for k, v in fused.named_modules() if isinstance(v, DASLinear)), strict=True):
            if a.linear.in_features == x.shape[1]:
                lin = max(lin, float((a(x) - b(x)).abs().max()))
    return {"fused_layers": n, "logits_max_abs_diff": logits, "linear_max_abs_diff": lin}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--n-train", type=int, default=4000)
    p.add_argument("--n-test", type=int, default=1000)
    p.add_argument("--energy-n", type=int, default=200)
    p.add_argument("--max-len", type=int, default=32)
    p.add_argument("--tasks", default="salient,source,pair")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--query-steps", type=int, default=800, help="salient-query probe: steps (one block); 0 = skip")
    p.add_argument("--query-n-train", type=int, default=20000)
    p.add_argument("--no-record", action="store_true", help="Print only; write no results file.")
    a = p.parse_args()
    apply_torch_threads(torch)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    log(f"bench-spike: {os.cpu_count()} cores, {torch.get_num_threads()} torch thread(s), steps {a.steps}")
    figures: dict = {"tasks": {}, "config": {k: getattr(a, k) for k in ("steps", "batch", "lr", "layers", "n_train",
                                                                          "n_test", "max_len", "seed")}}
    models = {}
    for task in a.tasks.split(","):
        data = tasks.builtin(task, "train", a.n_train, a.seed, a.max_len)
        test = tasks.builtin(task, "heldout", a.n_test, a.seed, a.max_len)
        rows = {}
        for name, opts in ARCHS.items():
            models[(task, name)], rows[name] = run(task, opts, a, data, test, log)
        if task == "salient":
            for name, opts in ABLATION.items():
                _, rows[name] = run(task, opts, a, data, test, log)
        figures["tasks"][task] = {"synthetic": data.synthetic, "data": data.source, "truncated": data.truncated,
                                  **rows}
    if "salient" in figures["tasks"]:
        s = figures["tasks"]["salient"]
        figures["attention"] = {"spike2max_minus_linear": s["spikinglm"]["accuracy"] - s["snn_das_linear"]["accuracy"],
                                "softmax_minus_spike2max": s["snn_das_softmax"]["accuracy"] - s["spikinglm"]["accuracy"]}
    if a.query_steps:
        # One block, so the query's colour and the ranking must meet in a single attention step.
        data = tasks.builtin("salient-query", "train", a.query_n_train, a.seed, a.max_len)
        test = tasks.builtin("salient-query", "heldout", a.n_test, a.seed, a.max_len)
        rows = {name: run("salient-query", opts, a, data, test, log, steps=a.query_steps, layers=1)[1]
                for name, opts in QUERY.items()}
        figures["query"] = {"synthetic": True, "data": data.source, "layers": 1, "steps": a.query_steps,
                            "n_train": len(data), **rows}
    # DAS ablation on real text, 200 steps.
    das_task = "source" if "source" in figures["tasks"] else a.tasks.split(",")[0]
    data = tasks.builtin(das_task, "train", a.n_train, a.seed, a.max_len)
    test = tasks.builtin(das_task, "heldout", a.n_test, a.seed, a.max_len)
    _, with_das = run(das_task, dict(arch="spikinglm", attn="spike2max", das=True), a, data, test, log, steps=200)
    _, no_das = run(das_task, dict(arch="spikinglm", attn="spike2max", das=False), a, data, test, log, steps=200)
    figures["das"] = {"task": das_task, "steps": 200, "with": with_das, "without": no_das,
                      "dead_init_ratio": with_das["dead_fraction_init"] / no_das["dead_fraction_init"]
                      if no_das["dead_fraction_init"] else None,
                      "dead_final_ratio": with_das["dead_fraction_final"] / no_das["dead_fraction_final"]
                      if no_das["dead_fraction_final"] else None,
                      "grad_init_ratio": with_das["grad_norm_init"] / no_das["grad_norm_init"]
                      if no_das["grad_norm_init"] else None}
    # Fusion, ONNX parity and latency on the SpikingLM model of the DAS task.
    model = models.get((das_task, "spikinglm"))
    figures["fusion"] = fusion_check(model, test.subset(slice(0, 100)))
    with tempfile.TemporaryDirectory() as tmp:
        h = TR.model_hash(model)
        path = str(Path(tmp, "m.onnx"))
        X.export_onnx(model, path, h)
        sess = X.session(path, h)
        figures["onnx"] = {**X.compare(model, sess, test.ids[:100]), **X.latency(model, sess, test.ids[:50])}
    lengths = test.mask.sum(1).tolist()
    c = model.config
    figures["normalisation"] = normalisation_energy(lengths, c.heads, c.steps, c.layers, DEFAULT_TABLE)
    log(f"bench-spike: DAS dead {with_das['dead_fraction_init']:.3f}/{no_das['dead_fraction_init']:.3f} at init, "
        f"{with_das['dead_fraction_final']:.3f}/{no_das['dead_fraction_final']:.3f} after 200 steps; grad ×"
        f"{figures['das']['grad_init_ratio']:.2f}; fused diff {figures['fusion']['linear_max_abs_diff']:.2e}; "
        f"onnx diff {figures['onnx']['max_abs_diff']:.2e}, latency ×{figures['onnx']['onnx_over_torch']:.2f}; "
        f"Spike2Max pow2 / softmax energy {figures['normalisation']['spike2max_pow2_over_softmax']:.4f}")
    if "query" in figures:
        q = figures["query"]
        print("salient-query (SYNTHETIC, 1 block): " + ", ".join(f"{n} acc {q[n]['accuracy']:.3f}" for n in QUERY))
    for task, rows in figures["tasks"].items():
        print(f"{task} ({'SYNTHETIC' if rows['synthetic'] else 'REAL text'}): " + ", ".join(
            f"{n} acc {r['accuracy']:.3f} E {r['energy_vs_ann']:.3f}×ANN" for n, r in rows.items() if isinstance(r, dict)))
    if not a.no_record:
        out = record("spike", figures, data=[
            {"name": "salient", "source": "SYNTHETIC (core/spike/tasks.py, seeded)"},
            {"name": "salient-query", "source": "SYNTHETIC (core/spike/tasks.py, seeded)"},
            {"name": "zoo stdlib-code / stdlib-prose / arithmetic", "source": "the running Python's standard library "
             "and the zoo's seeded arithmetic problems (core/zoo/corpora.py)"}])
        print(f"bench-spike: wrote {out}")


if __name__ == "__main__":
    main()
