"""ONNX export of the step scorers, with a manifest inside the file (SecCodePRM reconstruction).

SecCodePRM (Yu et al., ICML 2026, arXiv 2602.10418) scores steps during interactive coding
and streaming generation; an editor or server embeds such a scorer through a runtime like
onnxruntime. What goes into the graph is what is numeric; the featurisation (regex tokens,
CRC32 hashing, the causal context window, taint state) stays in Python and is shared with the
numpy/torch paths, never duplicated:

* ``linear``: inputs ``own`` (B, K1) and ``delta`` (B, K2) feature indices (padded with the
  index ``dim``, a zero weight), ``sign`` (B, K2) = +1 for a context feature that entered, −1
  for one that left, and ``ctx0`` (1,) the context sum carried in from earlier steps. The graph
  gathers the weights, sums the deltas cumulatively over steps (``CumSum``: the context sum of
  step t is ctx0 + Σ_{≤t} delta) and returns ``score`` = −tanh((own + ctx)/2) and ``ctx``.
  Weights stay float32 as shipped, sums are float64, so scores match the numpy path to ~1e-12.
* ``transformer``: ``ids`` (1, L) token ids of one window → ``score`` (L,) = p(safe) − p(vuln)
  at every position (torch.onnx, TorchScript exporter); windowing stays in Python.

The manifest (``metadata_props``): format version, kind, opset, the feature hash (a
fingerprint of what the featuriser computes on fixed probe code, so an ONNX file is refused
when the featuriser it was exported for differs from this one), the source model's hash and
the model settings. This module is ours; the paper ships no ONNX path.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.common.files import atomic_writer

FORMAT = "mlx26.score-code.onnx/1"
DEFAULT_OPSET = 17
# Opsets each graph can be written in: the linear graph needs ReduceSum with axes as an input (13);
# the transformer needs Trilu (14), and torch's TorchScript exporter writes up to 20.
MIN_OPSET = {"linear": 13, "transformer": 14}
MAX_TORCHSCRIPT_OPSET = 20

# Probe steps for the feature fingerprint: calls, taint through a def, SQL built from inputs,
# scope changes, a long line; what the featuriser does on these identifies its behaviour.
_PROBE = (
    "import os\nimport sqlite3",
    "def run(cmd, user):\n    q = \"SELECT * FROM t WHERE name = '%s'\" % user",
    "    os.system(\"ls \" + cmd)\n    conn.execute(q)",
    "class Box:\n    def get(self, k):\n        return pickle.loads(k)",
    "x = [i ** 2 for i in range(10)]  # 3.14 'str' \"s\" \\n é",
)


def feature_hash(model) -> str:
    """A fingerprint of the featurisation ``model`` expects, computed by running it on fixed code."""
    h = hashlib.sha256()
    if model.kind == "linear":
        h.update(json.dumps(model_settings(model), sort_keys=True).encode())
        fz = model.featurizer()
        for text in _PROBE * 2:  # twice: the context part of the rows is exercised too
            h.update(json.dumps(fz(text)).encode())
    else:
        from mlx26.core.score_code.transformer import encode_steps

        h.update(json.dumps({"vocab": model.config.vocab, "max_len": model.config.max_len}).encode())
        h.update(json.dumps(encode_steps(list(_PROBE), model.config.vocab)).encode())
    return h.hexdigest()[:16]


def model_hash(model) -> str:
    """Hash of the model's arrays (names, dtypes, bytes): the same weights give the same hash."""
    import numpy as np

    h = hashlib.sha256()
    for name, value in sorted(model.to_arrays().items()):
        arr = np.asarray(value)
        h.update(f"{name}:{arr.dtype.str}:{arr.shape}".encode())
        h.update(arr.tobytes())
    return h.hexdigest()[:16]


def model_settings(model) -> dict[str, Any]:
    if model.kind == "linear":
        settings = {"dim": model.dim, "window": model.window, "scope": model.scope, "taint": model.taint}
        if model.layout != "mixed":  # absent for the earlier layout, so earlier exports keep their hashes
            settings["layout"] = model.layout
        return settings
    from dataclasses import asdict

    settings = asdict(model.config)
    if not settings["function_scope"]:  # absent for the window-only models, so earlier exports still match
        del settings["function_scope"]
    return settings


def graph_hash(proto) -> str:
    """Hash of the graph itself (nodes and weights; the manifest lives outside it, on the model)."""
    return hashlib.sha256(proto.graph.SerializeToString(deterministic=True)).hexdigest()[:16]


def opset_range(kind: str) -> tuple[int, int]:
    import onnx

    top = onnx.defs.onnx_opset_version()
    return MIN_OPSET[kind], top if kind == "linear" else min(top, MAX_TORCHSCRIPT_OPSET)


def manifest_of(model, opset: int) -> dict[str, Any]:
    return {"format": FORMAT, "kind": model.kind, "opset": opset, "feature_hash": feature_hash(model),
            "source_model_hash": model_hash(model), "settings": model_settings(model)}


GRAPH_DOC = {
    "linear": (
        "mlx26 score-code linear PRM. Per step t (in file order): own[t] = the step's feature indices, "
        "delta[t] = context features that entered (sign +1, listed first) then left (sign -1) since step t-1; "
        "pad both with index dim (a zero weight) and sign 0. ctx0 = the context sum carried in (0 at file start; "
        "when streaming, the previous call's last ctx). score = -tanh((sum w[own] + ctx)/2) with ctx = ctx0 + "
        "cumsum(sum sign*w[delta]). Indices come from mlx26.core.score_code.features.StepFeaturizer(dim, window, "
        "scope=, taint=, layout=).delta(step_text) with the settings in the metadata (layout absent: mixed)."),
    "transformer": (
        "mlx26 score-code transformer PRM. ids (1, L): token ids of one window (encode_steps in "
        "mlx26.core.score_code.transformer: regex tokens CRC32-hashed into vocab buckets + 3, NEWLINE=1 between "
        "lines, SEP=2 after each step). score (L,): p(safe) - p(vulnerable) at every position; a step's score is "
        "read at its SEP position p, in the window starting at max(0, p // h - 1) * h, h = max_len // 2."),
}


def _linear_graph(model, opset: int):
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    weights = np.zeros(model.dim + 1, dtype=np.float32)  # index dim: the padding slot, weight 0
    weights[:model.dim] = np.asarray(model.weights, dtype=np.float32)
    f64 = TensorProto.DOUBLE
    nodes = [
        helper.make_node("Gather", ["weights", "own"], ["w_own32"], axis=0),
        helper.make_node("Cast", ["w_own32"], ["w_own"], to=f64),
        helper.make_node("ReduceSum", ["w_own", "axis1"], ["own_sum"], keepdims=0),
        helper.make_node("Gather", ["weights", "delta"], ["w_delta32"], axis=0),
        helper.make_node("Cast", ["w_delta32"], ["w_delta"], to=f64),
        helper.make_node("Mul", ["w_delta", "sign"], ["signed"]),
        helper.make_node("ReduceSum", ["signed", "axis1"], ["step_delta"], keepdims=0),
        helper.make_node("CumSum", ["step_delta", "axis0"], ["running"]),
        helper.make_node("Add", ["running", "ctx0"], ["ctx"]),
        helper.make_node("Add", ["own_sum", "ctx"], ["logit"]),
        helper.make_node("Mul", ["logit", "half"], ["half_logit"]),
        helper.make_node("Tanh", ["half_logit"], ["tanh"]),
        helper.make_node("Neg", ["tanh"], ["score"]),
    ]
    inits = [numpy_helper.from_array(weights, "weights"), numpy_helper.from_array(np.array([1], np.int64), "axis1"),
             numpy_helper.from_array(np.array(0, np.int64), "axis0"),
             numpy_helper.from_array(np.array(0.5, np.float64), "half")]
    graph = helper.make_graph(
        nodes, "mlx26_score_code_linear",
        [helper.make_tensor_value_info("own", TensorProto.INT64, ["steps", "k_own"]),
         helper.make_tensor_value_info("delta", TensorProto.INT64, ["steps", "k_delta"]),
         helper.make_tensor_value_info("sign", f64, ["steps", "k_delta"]),
         helper.make_tensor_value_info("ctx0", f64, [1])],
        [helper.make_tensor_value_info("score", f64, ["steps"]),
         helper.make_tensor_value_info("ctx", f64, ["steps"])],
        inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="mlx26")


def _transformer_graph(model, opset: int):
    import io

    import onnx
    import torch

    class Scores(torch.nn.Module):
        """The PRM's forward written with plain ops, from the same weights.

        ``nn.MultiheadAttention`` traces with the example's sequence length baked into its
        reshapes, so this writes the pre-LN layers out (tested equal to the module to ~1e-6).
        """

        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, ids):
            n = self.net
            length = ids.shape[1]
            x = (n.tok(ids) + n.pos(torch.arange(length)))[0]
            mask = torch.triu(torch.full((length, length), float("-inf")), diagonal=1)
            for layer in n.body.layers:
                attn = layer.self_attn
                heads = attn.num_heads
                q, k, v = (layer.norm1(x) @ attn.in_proj_weight.T + attn.in_proj_bias).chunk(3, dim=-1)
                d = q.shape[-1] // heads
                q, k, v = (t.reshape(length, heads, d).transpose(0, 1) for t in (q, k, v))
                w = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d) + mask, dim=-1)
                x = x + attn.out_proj((w @ v).transpose(0, 1).reshape(length, heads * d))
                x = x + layer.linear2(layer.activation(layer.linear1(layer.norm2(x))))
            p = torch.softmax(n.head(n.norm(x)), dim=-1)
            return p[:, 0] - p[:, 1]

    if not all(layer.norm_first for layer in model.net.body.layers):
        raise InputError("only pre-LN transformer PRMs (norm_first) can be exported.")
    import warnings

    buf = io.BytesIO()
    dummy = torch.zeros((1, 8), dtype=torch.long)
    fastpath = torch.backends.mha.get_fastpath_enabled()
    # The fused encoder-layer kernel torch uses in eval mode has no ONNX form: trace the plain ops.
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes on python-int shapes: the lengths stay dynamic (tested)
            # a file object is accepted at run time (the stub says path only)
            torch.onnx.export(Scores(model.net).eval(), (dummy,), buf,  # type: ignore[arg-type]
                              input_names=["ids"], output_names=["score"],
                              dynamic_axes={"ids": {1: "length"}, "score": {0: "length"}}, opset_version=opset,
                              dynamo=False)
    except Exception as exc:  # the exporter's errors are long IR dumps: one line is enough
        raise InputError(f"torch could not export the transformer at opset {opset} "
                         f"({type(exc).__name__}: {str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ''}).",
                         f"use --opset {DEFAULT_OPSET}") from None
    finally:
        torch.backends.mha.set_fastpath_enabled(fastpath)
    return onnx.load_from_string(buf.getvalue())


def export_onnx(model, path: str, *, opset: int = DEFAULT_OPSET,
                operating_rule: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``model`` as an ONNX file at ``path`` (atomically); return the manifest stored in it.

    ``operating_rule``: the model folder's calibrated verdict rule (aggregate, tau, threshold), kept
    in the manifest so that a user of the bare graph can reproduce ``detect``'s verdicts.
    """
    import onnx

    low, high = opset_range(model.kind)
    if not low <= opset <= high:
        raise InputError(f"--opset {opset} is outside {low}..{high}, the opsets the {model.kind} PRM's graph can be "
                         f"written in here.", f"use --opset {DEFAULT_OPSET}")
    proto = _linear_graph(model, opset) if model.kind == "linear" else _transformer_graph(model, opset)
    proto.graph.doc_string = GRAPH_DOC[model.kind]
    info = manifest_of(model, opset)
    info["graph_hash"] = graph_hash(proto)
    if operating_rule is not None:
        info["operating_rule"] = operating_rule
    del proto.metadata_props[:]
    for key, value in info.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = f"mlx26.{key}", json.dumps(value)
    onnx.checker.check_model(proto)
    with atomic_writer(path, "wb", perms=0o644) as fh:
        fh.write(proto.SerializeToString())
    return info


def read_manifest(proto) -> dict[str, Any]:
    """The mlx26 manifest stored in an ONNX model's ``metadata_props`` (empty if none)."""
    out: dict[str, Any] = {}
    for entry in proto.metadata_props:
        if entry.key.startswith("mlx26."):
            try:
                out[entry.key[len("mlx26."):]] = json.loads(entry.value)
            except json.JSONDecodeError:
                out[entry.key[len("mlx26."):]] = entry.value
    return out
