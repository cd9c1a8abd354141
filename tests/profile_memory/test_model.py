"""Device specs, roofline bounds on every built-in, the placement model, spec files, the pyxrt host path."""

from __future__ import annotations

import json
import sys
import types

import numpy as np
import pytest
from mlx26.core.profile_memory.costs import CostBook, StageCost
from mlx26.core.profile_memory.devices import BUILTIN, DeviceSpec, load_specs, measured_spec
from mlx26.core.profile_memory.placement import plan

from .conftest import assert_every_kernel_refuses


@pytest.fixture(scope="module")
def profiled(tiny_model):
    from mlx26.core.profile_memory.ops import TorchOps
    from mlx26.core.profile_memory.profiler import ProfileOptions, profile

    out = {}
    for name in ("quest", "indexer", "rag", "memory"):
        out[name] = profile(ProfileOptions(pipeline=name, model="tiny-llama", context=800, decode_steps=2,
                                           budget=256), tiny_model, TorchOps())
    return out


def _specs():
    return [*BUILTIN.values(), measured_spec(50e9, 10e9, 1)]


def test_relevancy_and_retrieval_memory_bound_everywhere(profiled):
    for name, result in profiled.items():
        for stage in ("relevancy", "retrieval"):
            cost = result["costs"][stage]
            for spec in _specs():
                assert spec.bound(cost) == "memory", (name, stage, spec.name, cost.intensity, spec.ridge)


def test_prefill_apply_compute_bound_everywhere(profiled):
    for name in ("rag", "memory"):  # their apply is the prefill of the augmented / memory prompt
        cost = profiled[name]["costs"]["apply"]
        assert cost.pinned
        for spec in _specs():
            assert spec.bound(cost) == "compute", (name, spec.name, cost.intensity, spec.ridge)


def test_stage_times_sum_to_end_to_end(profiled):
    for name, result in profiled.items():
        assert result["stage_sum_s"] == pytest.approx(result["end_to_end_s"], rel=0.05), name
        assert 0 < result["memory_share"] < 1


def test_kernel_bandwidth_is_derived_from_ports_width_and_clock():
    """U55C: 64 B/cycle × 300 MHz = 19.2 GB/s per 512-bit port, capped by one HBM pseudo-channel (460/32 GB/s),
    times the ports that stream together; topk_select's chain takes 4 B/cycle. The datasheet 460 GB/s stays on
    the spec, labelled idealised, and GPUs have no kernel model."""
    from dataclasses import replace

    u55c = BUILTIN["U55C"]
    channel = 460e9 / 32
    assert u55c.mem_bw == 460e9 and u55c.kernel_clock_hz == 300e6
    assert u55c.kernel_bw("page_minmax") == pytest.approx(channel)
    assert u55c.kernel_bw("page_score") == pytest.approx(2 * channel)
    assert u55c.kernel_bw("gather_rows") == pytest.approx(2 * channel)
    assert u55c.kernel_bw("topk_select") == pytest.approx(4 * 300e6)
    uncapped = replace(u55c, hbm_channels=0)
    assert [uncapped.kernel_bw(k) / 1e9 for k in ("page_minmax", "page_score", "topk_select", "gather_rows")] == \
        pytest.approx([19.2, 38.4, 1.2, 38.4])
    narrow = replace(u55c, hbm_channels=0, mem_bw=30e9)  # HBM slower than two ports: the HBM caps the kernel
    assert narrow.kernel_bw("page_score") == pytest.approx(30e9)
    summary = u55c.bandwidth_summary()
    assert "DERIVED" in summary and "page_score 28.75 GB/s" in summary and "460 GB/s" in summary
    assert "idealised" in summary and "idealised" in u55c.source
    table = {row["kernel"]: row for row in u55c.kernel_table()}
    assert table["page_minmax"]["port_gb_s"] == pytest.approx(19.2) and table["gather_rows"]["ports"] == 2
    assert BUILTIN["MI210"].kernel_bw("page_score") is None and BUILTIN["MI210"].kernel_table() == []
    assert replace(u55c, kernel_clock_hz=0).kernel_bw("page_score") is None  # a spec without a kernel model


def test_kernel_table_matches_the_hls_sources():
    """Ports of 64 B are 512-bit beat_t pointers in the kernel's signature; the 4-byte port is a plain pointer;
    the chain length and lane count agree with hls_shim.h."""
    import re
    from pathlib import Path

    import mlx26.fpga
    from mlx26.core.profile_memory.kernel_bw import KERNELS
    from mlx26.fpga import emu

    hls = Path(mlx26.fpga.__file__).resolve().parent / "hls"
    for src in hls.glob("*.cpp"):
        name, params = re.search(r'extern "C" int (\w+)\(([^)]*)\)', src.read_text()).groups()
        wide = len(re.findall(r"beat_t\*", params))
        spec = KERNELS[name]
        if spec.port_bytes == 64:
            assert wide >= spec.ports, name
        else:
            assert wide == 0 and spec.port_bytes == 4, name
    shim = (hls / "hls_shim.h").read_text()
    assert int(re.search(r"#define \w+_TOPK_CELLS (\d+)", shim).group(1)) == emu.TOPK_CELLS
    assert int(re.search(r"#define \w+_LANES (\d+)", shim).group(1)) == emu.LANES == 64 // 4
    assert set(KERNELS) == {p.stem for p in hls.glob("*.cpp")}


def test_fpga_stage_time_uses_the_kernel_bandwidth():
    u55c = BUILTIN["U55C"]
    plain = StageCost(bytes=1e9, calls=1)
    through_kernel = StageCost(bytes=1e9, calls=1, kernel_bytes={"page_minmax": 1e9})
    assert u55c.time(plain) == pytest.approx(1e9 / (460e9 * 0.8) + 20e-6)  # datasheet roofline
    assert u55c.time(through_kernel) == pytest.approx(1e9 / (460e9 / 32 * 0.8) + 20e-6)
    gather = StageCost(bytes=1e9, irregular=1e9, calls=1, kernel_bytes={"gather_rows": 1e9})
    assert u55c.time(gather) == pytest.approx(1e9 / (2 * 460e9 / 32 * 0.7) + 20e-6)
    # two passes of the 512-cell chain read the row twice
    from mlx26.core.profile_memory.kernel_bw import topk_passes, topk_traffic

    assert topk_passes(512) == 1 and topk_passes(513) == 2 and topk_traffic(3, 100, 1024) == 3 * 100 * 4 * 2
    assert BUILTIN["MI210"].time(through_kernel) == BUILTIN["MI210"].time(plain)  # GPUs ignore the kernel table


def test_profiled_stages_name_their_kernels(profiled):
    quest = profiled["quest"]["costs"]
    assert set(quest["prepare"].kernel_bytes) == {"page_minmax"}
    assert set(quest["relevancy"].kernel_bytes) == {"page_score"}
    assert set(quest["retrieval"].kernel_bytes) == {"topk_select", "gather_rows"}
    assert quest["relevancy"].kernel_bytes["page_score"] == quest["relevancy"].bytes
    assert quest["apply"].kernel_bytes == {}  # no HLS kernel: the datasheet roofline
    assert set(profiled["rag"]["costs"]["retrieval"].kernel_bytes) == {"topk_select"}
    assert set(profiled["memory"]["costs"]["retrieval"].kernel_bytes) == {"topk_select", "gather_rows"}
    assert profiled["indexer"]["costs"]["relevancy"].kernel_bytes == {}


def test_roofline_time_formula():
    spec = DeviceSpec("x", "gpu", peak_flops=1e12, mem_bw=1e11, active_w=1, idle_w=0, launch_s=1e-6,
                      flop_eff=0.5, bw_eff=0.5, irregular_eff=0.25)
    cost = StageCost(flops=1e9, bytes=2e8, irregular=1e8, launches=3, calls=1)
    # memory: 1e8/(5e10) + 1e8/(2.5e10) = 6 ms; compute: 1e9/5e11 = 2 ms; + 3 launches
    assert spec.time(cost) == pytest.approx(6e-3 + 3e-6)
    assert spec.bound(cost) == "memory" and spec.ridge == 10


def _book(memory_bytes: float) -> dict[str, StageCost]:
    book = CostBook()
    book["other"].add(2e9, 4e9, launches=200)  # the model: dominant when memory_bytes is 0
    if memory_bytes:
        book["prepare"].add(memory_bytes * 0.01, memory_bytes * 0.1, launches=4, in_bytes=1e4)
        book["relevancy"].add(memory_bytes * 0.25, memory_bytes, launches=3)
        book["retrieval"].add(memory_bytes * 0.001, memory_bytes, irregular=memory_bytes, launches=5)
        book["apply"].add(memory_bytes * 0.25, memory_bytes * 0.5, launches=4, out_bytes=1e4)
    return book.stages


@pytest.mark.parametrize("gpu", ["MI210", "A100"])
def test_hetero_speedup_follows_the_memory_share(gpu):
    high = plan(_book(4e10), BUILTIN[gpu], BUILTIN["U55C"], "auto", True)
    none = plan(_book(0.0), BUILTIN[gpu], BUILTIN["U55C"], "auto", True)
    assert high["speedup"] > 1 and high["on_fpga"]
    assert none["speedup"] <= 1 and none["on_fpga"] == []
    assert none["energy_ratio"] < 1  # an idle FPGA still draws power
    forced = plan(_book(0.0), BUILTIN[gpu], BUILTIN["U55C"], "hetero", False)
    assert forced["speedup"] <= 1
    assert "MODELLED" in high["label"] and high["paper_speedup_range"] == [1.04, 2.2]
    assert any("overlap ON" in a for a in high["assumptions"])


def test_overlap_off_is_never_faster():
    book = _book(4e10)
    on = plan(book, BUILTIN["MI210"], BUILTIN["U55C"], "hetero", True)
    off = plan(book, BUILTIN["MI210"], BUILTIN["U55C"], "hetero", False)
    assert off["hetero_s"] >= on["hetero_s"] and off["on_fpga"] == on["on_fpga"]
    gpu = plan(book, BUILTIN["MI210"], BUILTIN["U55C"], "gpu", True)
    assert gpu["speedup"] == 1 and gpu["on_fpga"] == []


def test_pinned_stays_on_gpu(profiled):
    p = plan(profiled["rag"]["costs"].stages, BUILTIN["MI210"], BUILTIN["U55C"], "auto", True)
    assert "apply" not in p["on_fpga"]


def test_spec_file_round_trip(tmp_path):
    path = tmp_path / "specs.json"
    path.write_text(json.dumps({"gpu": "A100", "fpga": {"base": "U55C", "active_w": 75}}))
    specs = load_specs(str(path))
    assert specs["gpu"] is BUILTIN["A100"] and specs["fpga"].active_w == 75 and specs["fpga"].mem_bw == 460e9
    assert specs["fpga"].kernel_clock_hz == 300e6  # the base's kernel model comes along
    path.write_text(json.dumps({"fpga": {"base": "U55C", "kernel_clock_hz": 250e6, "hbm_channels": 0}}))
    assert load_specs(str(path))["fpga"].kernel_bw("page_minmax") == pytest.approx(64 * 250e6)
    full = dict(BUILTIN["U55C"].to_dict(), name="mine")
    path.write_text(json.dumps({"fpga": full}))
    assert load_specs(str(path))["fpga"].name == "mine"


@pytest.mark.parametrize(("text", "needle"), [
    ("{not json", "cannot parse"),
    ("[1, 2]", "keys 'gpu'"),
    ('{"tpu": "A100"}', "keys 'gpu'"),
    ('{"gpu": "H999"}', "unknown device"),
    ('{"gpu": {"base": "A100", "mem_bw": -1}}', "mem_bw"),
    ('{"gpu": {"base": "A100", "colour": 1}}', "unknown field"),
    ('{"gpu": {"name": "x", "kind": "gpu"}}', "missing field"),
    ('{"fpga": "A100"}', "is a gpu"),
    ('{"gpu": {"base": "A100", "bw_eff": 5}}', "must be ≤ 1"),
])
def test_malformed_specs(tmp_path, text, needle):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=needle):
        load_specs(str(path))


def test_pyxrt_host_sequence_with_a_fake_module(monkeypatch, tmp_path):
    """The XRT path follows device → load_xclbin → kernel → bo write/sync → run → wait → sync/read."""
    calls = []
    store: dict[int, bytes] = {}

    class Bo:
        normal = 0

        def __init__(self, device, size, flags, group):
            self.id, self.size = len(store), size
            store[self.id] = b"\0" * size
            calls.append(("bo", size, group))

        def write(self, data, offset):
            store[self.id] = store[self.id][:offset] + bytes(data) + store[self.id][offset + len(data):]
            calls.append(("write", len(data)))

        def sync(self, direction, size=None, offset=0):
            calls.append(("sync", direction))

        def read(self, size, offset):
            return store[self.id][:size]

    class Kernel:
        def __init__(self, device, uuid, name):
            self.name = name
            calls.append(("kernel", name))

        def group_id(self, arg):
            return arg

        def __call__(self, *args):
            calls.append(("run", self.name))
            scores = np.frombuffer(store[args[0].id][:args[1] * args[2] * 4], np.float32).reshape(args[1], args[2])
            import torch
            from mlx26.core.profile_memory.reference import topk_stable

            idx = topk_stable(torch.from_numpy(scores.copy()), args[3]).numpy().astype(np.int32)
            store[args[4].id] = idx.tobytes()
            return types.SimpleNamespace(wait=lambda: calls.append(("wait",)))

    class Device:
        def __init__(self, index):
            calls.append(("device", index))

        def load_xclbin(self, path):
            calls.append(("load_xclbin", path))
            return "uuid"

    fake = types.SimpleNamespace(device=Device, kernel=Kernel, bo=Bo, xclBOSyncDirection=types.SimpleNamespace(
        XCL_BO_SYNC_BO_TO_DEVICE="to", XCL_BO_SYNC_BO_FROM_DEVICE="from"))
    monkeypatch.setitem(sys.modules, "pyxrt", fake)
    from mlx26.fpga.xrt_host import XrtKernels

    xclbin = tmp_path / "k.xclbin"
    xclbin.write_bytes(b"x")
    k = XrtKernels(str(xclbin))
    scores = np.random.default_rng(0).standard_normal((2, 30)).astype(np.float32)
    got = k.topk(scores, 5)
    assert got.shape == (2, 5) and got[0].tolist() == sorted(range(30), key=lambda i: -scores[0, i])[:5]
    names = [c[0] for c in calls]
    assert names[:3] == ["device", "load_xclbin", "kernel"]
    assert names.index("write") < names.index("run") < names.index("wait") < len(names) - 1
    assert ("sync", "to") in calls and calls[-1] == ("sync", "from")


class _Synced(list):
    """The fake card's syncs as (direction, bytes, offset, "kernel:arg"), and the buffers it allocated."""

    allocated = 0

    def to_device(self, group=None):
        return sum(size for d, size, _, g in self if d == "to" and group in (None, g))


def _fake_pyxrt(monkeypatch, state="done", code=None):
    """A pyxrt stand-in whose buffers honour offsets and whose runs report a state and a return code; a run
    executes the g++ emulation of the named kernel on the buffers' bytes (``code`` forces the return code).
    A fresh buffer holds garbage (0xA5), as card memory may: a host that skips bytes it never sent fails."""
    synced = _Synced()
    store: dict[int, bytearray] = {}

    class Bo:
        normal = 0

        def __init__(self, *args):
            if len(args) == 3:  # pyxrt.bo(parent, size, offset): a sub-buffer, no memory of its own
                parent, size, offset = args
                assert offset % 64 == 0 and offset + size <= len(store[parent.id]), "a 512-bit port needs whole beats"
                self.id, self.group, self.offset = parent.id, parent.group, parent.offset + offset
                return
            _, size, _, group = args
            self.id, self.group, self.offset = len(store), group, 0
            store[self.id] = bytearray(b"\xa5" * size)
            synced.allocated += 1

        def write(self, data, offset):
            store[self.id][offset:offset + len(data)] = data

        def sync(self, direction, size=None, offset=0):
            synced.append((direction, len(store[self.id]) if size is None else size, offset, self.group))

        def read(self, size, offset):
            return bytes(store[self.id][offset:offset + size])

    class Kernel:
        def __init__(self, device, uuid, name):
            self.name = name

        def group_id(self, arg):
            return f"{self.name}:{arg}"

        def __call__(self, *args):
            import ctypes
            import shutil

            from mlx26.fpga import emu

            if shutil.which(emu.compiler()) is None:
                pytest.skip("g++ not installed: the fake card runs the emulated kernels")
            fn = getattr(emu.kernels()._lib, self.name)
            ptr = [ctypes.cast(np.frombuffer(store[a.id], np.uint8).ctypes.data + a.offset, t) if isinstance(a, Bo)
                   else a for a, t in zip(args, fn.argtypes, strict=True)]
            ran = fn(*ptr)
            return types.SimpleNamespace(wait=lambda: state, return_code=lambda: ran if code is None else code)

    class Device:
        def __init__(self, index):
            pass

        def load_xclbin(self, path):
            return "uuid"

    fake = types.SimpleNamespace(device=Device, kernel=Kernel, bo=Bo, xclBOSyncDirection=types.SimpleNamespace(
        XCL_BO_SYNC_BO_TO_DEVICE="to", XCL_BO_SYNC_BO_FROM_DEVICE="from"),
        ert_cmd_state=types.SimpleNamespace(ERT_CMD_STATE_COMPLETED="done"))
    monkeypatch.setitem(sys.modules, "pyxrt", fake)
    return synced


def _xrt(tmp_path):
    from mlx26.fpga.xrt_host import XrtKernels

    xclbin = tmp_path / "k.xclbin"
    xclbin.write_bytes(b"x")
    return XrtKernels(str(xclbin))


def test_xrt_buffers_stay_resident_and_only_changed_bytes_move(monkeypatch, tmp_path):
    synced = _fake_pyxrt(monkeypatch)
    k = _xrt(tmp_path)
    scores = np.random.default_rng(1).standard_normal((1, 40)).astype(np.float32)
    first = k.topk(scores, 4)
    assert k.bytes_to_device == 160
    again = k.topk(scores, 4)  # the same view: nothing to send
    assert k.bytes_to_device == 160 and np.array_equal(first, again)
    longer = np.concatenate([scores, np.full((1, 5), 9.0, np.float32)], axis=1)  # 5 appended tokens
    got = k.topk(longer, 4)
    assert k.bytes_to_device == 160 + 20  # only the appended 20 bytes, at their offset
    assert ("to", 20, 160, "topk_select:0") in synced and got[0].tolist()[:4] == [40, 41, 42, 43]
    assert len(k._resident) == 2  # one input and one output buffer, reused


@pytest.mark.parametrize("state, code, needle", [("error", 0, "did not complete"),
                                                 ("done", -1, "rejected its arguments")])
def test_xrt_run_state_and_return_code_are_checked(monkeypatch, tmp_path, state, code, needle):
    _fake_pyxrt(monkeypatch, state=state, code=code)
    k = _xrt(tmp_path)
    with pytest.raises(RuntimeError, match=needle):
        k.topk(np.zeros((1, 8), np.float32), 2)


@pytest.mark.parametrize("kernel, code, needle", [("page_minmax", -1, "page_minmax kernel rejected"),
                                                  ("page_score", -1, "page_score kernel rejected"),
                                                  ("gather", -2, "gather_rows kernel found an index out of range")])
def test_xrt_checks_every_kernels_return_code(monkeypatch, tmp_path, kernel, code, needle):
    from mlx26.core.common.errors import RunFailure

    _fake_pyxrt(monkeypatch, code=code)
    k = _xrt(tmp_path)
    rows = np.zeros((2, 4, 16), np.float32)
    call = {"page_minmax": lambda: k.page_minmax(rows, 2),
            "page_score": lambda: k.page_score(np.zeros((2, 16), np.float32), rows, rows),
            "gather": lambda: k.gather(rows, np.zeros((2, 3), np.int32))}[kernel]
    with pytest.raises(RunFailure, match=needle):
        call()


def test_xrt_runs_every_kernel_as_the_emulation_does(monkeypatch, tmp_path):
    """The host passes every kernel its arguments in the C++ order (the fake runs the emulated C++ on the
    buffers): the four results equal the emulation's, and a second round reuses every buffer."""
    from mlx26.fpga import emu

    _fake_pyxrt(monkeypatch)
    k, ref = _xrt(tmp_path), emu.kernels()
    rng = np.random.default_rng(5)
    keys = rng.standard_normal((2, 45, 32)).astype(np.float32)
    q = rng.standard_normal((2, 32)).astype(np.float32)
    scores = np.round(rng.standard_normal((2, 700)), 1).astype(np.float32)
    idx = rng.integers(0, 45, (2, 7)).astype(np.int32)
    for _ in range(2):
        lo, hi = k.page_minmax(keys, 16)
        want_lo, want_hi = ref.page_minmax(keys, 16)
        assert np.array_equal(lo, want_lo) and np.array_equal(hi, want_hi)
        assert np.array_equal(k.page_score(q, lo, hi).view(np.uint32), ref.page_score(q, lo, hi).view(np.uint32))
        assert np.array_equal(k.topk(scores, 600), ref.topk(scores, 600))  # two passes of the chain
        assert np.array_equal(k.gather(keys, idx), ref.gather(keys, idx))
        assert len(k._resident) == 3 + 4 + 2 + 3  # one bo per pointer argument, kept across rounds


def test_xrt_enforces_the_hls_limits_before_any_transfer(monkeypatch, tmp_path):
    from mlx26.fpga.emu import MAX_DIM, MAX_TOPK

    _fake_pyxrt(monkeypatch)
    k = _xrt(tmp_path)
    with pytest.raises(ValueError, match="top-k"):
        k.topk(np.zeros((1, MAX_TOPK + 10), np.float32), MAX_TOPK + 1)
    with pytest.raises(ValueError, match="registers"):
        k.page_minmax(np.zeros((1, 4, MAX_DIM + 1), np.float32), 2)
    with pytest.raises(ValueError, match="multiple of 16"):
        k.page_score(np.zeros((1, 24), np.float32), np.zeros((1, 3, 24), np.float32), np.zeros((1, 3, 24), np.float32))
    with pytest.raises(ValueError, match="multiple of 16"):
        k.gather(np.zeros((1, 4, 40), np.float32), np.zeros((1, 2), np.int32))
    assert k.bytes_to_device == 0


def _decode(ops, torch, heads, capacity, dim, n0, steps, one_storage, page=16):
    """A decode loop over preallocated [heads][capacity][dim] K/V caches and [heads][pages][dim] page bounds, as
    Quest runs it: per step append one token, then page_minmax, page_score and gather (K and V) on the caches'
    [:, :n] views. ``one_storage``: K and V (and kmin, kmax) are halves of one tensor, else separate tensors
    (as LlamaRunner allocates them). Yields (n, n_full grew?, the results, the kernels' results on dense copies)."""
    from mlx26.fpga import emu

    gen = torch.Generator().manual_seed(capacity)
    def pair(*shape):
        return torch.zeros(2, *shape).unbind(0) if one_storage else (torch.zeros(shape), torch.zeros(shape))

    k_cache, v_cache = pair(heads, capacity, dim)
    kmin, kmax = pair(heads, capacity // page, dim)
    k_cache[:, :n0 - 1], v_cache[:, :n0 - 1] = torch.randn(2, heads, n0 - 1, dim, generator=gen)
    idx = torch.tensor([[0, 3, 1]] * heads)  # fixed token indices: after the first step they never move
    dense = emu.kernels()
    n_full = None
    for n in range(n0, n0 + steps):
        k_cache[:, n - 1], v_cache[:, n - 1] = torch.randn(2, heads, dim, generator=gen)
        lo, hi = ops.page_minmax(k_cache[:, :n], page)
        pages = lo.shape[1]
        kmin[:, :pages], kmax[:, :pages] = lo, hi  # the full pages' bounds are rewritten unchanged
        grew, n_full = n_full is not None and pages - 1 > n_full, pages - 1
        q = torch.randn(heads, dim, generator=gen)
        scores = ops.page_score(q, kmin[:, :n_full], kmax[:, :n_full])
        k_sel, v_sel = ops.gather(k_cache[:, :n], idx), ops.gather(v_cache[:, :n], idx)
        keys = k_cache[:, :n].contiguous().numpy()
        want = (*dense.page_minmax(keys, page),
                dense.page_score(q.numpy(), kmin[:, :n_full].contiguous().numpy(), kmax[:, :n_full].contiguous().numpy()),
                dense.gather(keys, idx.int().numpy()), dense.gather(v_cache[:, :n].contiguous().numpy(), idx.int().numpy()))
        yield n, grew, (lo, hi, scores, k_sel, v_sel), want


@pytest.mark.parametrize("one_storage", [False, True])
def test_xrt_decode_moves_only_the_appended_rows(monkeypatch, tmp_path, torch1, one_storage):
    """The device-resident KV cache: each buffer holds a cache's storage, and after the first call a decode step
    that appends one token moves exactly heads x dim x 4 bytes per K/V argument (one sync per head), the new
    query, and the bounds of a page only when it fills; results equal the dense emulation bit for bit, and no
    buffer is allocated after the first step."""
    from mlx26.core.profile_memory.ops import FpgaOps

    synced = _fake_pyxrt(monkeypatch)
    (tmp_path / "k.xclbin").write_bytes(b"x")
    ops = FpgaOps("xrt", str(tmp_path / "k.xclbin"))
    heads, capacity, dim, n0 = 4, 640, 32, 30  # heads' page bounds 40 x 128 B apart: more than COALESCE_GAP
    row = heads * dim * 4
    grew_seen = 0
    for n, grew, got, want in _decode(ops, torch1, heads, capacity, dim, n0, 12, one_storage):
        for g, w in zip(got, want, strict=True):
            assert np.array_equal(g.numpy().view(np.uint32), np.asarray(w).view(np.uint32))
        moved = {g: synced.to_device(g) for g in ("page_minmax:0", "page_score:0", "page_score:1", "page_score:2",
                                                  "gather_rows:0", "gather_rows:5")}
        syncs = sum(1 for d, _, _, g in synced if d == "to" and g == "page_minmax:0")
        if n == n0:  # the first step: the views' rows only, never the caches' unused tails
            assert moved["page_minmax:0"] == heads * n0 * dim * 4 and moved["gather_rows:0"] == 2 * heads * n0 * dim * 4
            allocated = synced.allocated
        else:
            assert moved["page_minmax:0"] == row and syncs == heads  # one run per head: the new row
            assert moved["gather_rows:0"] == 2 * row  # K and V, each resident in its own buffer
            assert moved["page_score:0"] == row  # a new query
            assert moved["page_score:1"] == moved["page_score:2"] == (row if grew else 0)
            assert moved["gather_rows:5"] == 0  # the same indices
            assert synced.allocated == allocated  # every buffer reused
            grew_seen += grew
        synced.clear()
    assert grew_seen == 1  # a page filled during the loop (n = 33), and only its bounds moved
    # one src buffer per storage: K and V apart, or both in the buffer of their common storage
    assert len(ops.kernels._resident) == 3 + 4 + (3 if one_storage else 4)


def test_xrt_decode_on_dense_copies_moves_most_of_the_view(monkeypatch, tmp_path, torch1):
    """The contrast that motivates the strides: the same step on dense copies shifts every later head's rows, so
    nearly the whole view moves (what the host did before the kernels took a head stride)."""
    synced = _fake_pyxrt(monkeypatch)
    k = _xrt(tmp_path)
    heads, capacity, dim = 4, 256, 32
    cache = np.random.default_rng(0).standard_normal((heads, capacity, dim)).astype(np.float32)
    k.page_minmax(np.ascontiguousarray(cache[:, :40]), 16)
    before = synced.to_device()
    k.page_minmax(np.ascontiguousarray(cache[:, :41]), 16)
    assert synced.to_device() - before > (heads - 1) * 40 * dim * 4  # heads 1..3 all shifted
    strided = k.page_minmax(emu_strided(cache, 42), 16)
    before = synced.to_device()
    k.page_minmax(emu_strided(cache, 43), 16)
    assert synced.to_device() - before == heads * dim * 4
    assert np.array_equal(strided[0], k.page_minmax(np.ascontiguousarray(cache[:, :42]), 16)[0])


def emu_strided(cache, n):
    from mlx26.fpga import emu

    heads, capacity, dim = cache.shape
    return emu.Strided(cache.reshape(-1), (heads, n, dim), capacity * dim)


def test_xrt_strided_views_equal_the_emulation(monkeypatch, tmp_path):
    """Strided views with offsets through the fake card equal the emulation on dense copies, for every strided
    kernel; a view at a new offset of the same storage reuses its buffer."""
    from mlx26.fpga import emu

    synced = _fake_pyxrt(monkeypatch)
    k, ref = _xrt(tmp_path), emu.kernels()
    storage = np.random.default_rng(2).standard_normal(3 * 90 * 16).astype(np.float32)
    cache = storage.reshape(3, 90, 16)
    q = np.random.default_rng(3).standard_normal((3, 16)).astype(np.float32)
    idx = np.array([[0, 4], [3, 3], [2, 1]], np.int32)
    for first, n in [(0, 90), (0, 37), (32, 5), (16, 20)]:
        view = emu.Strided(storage, (3, n, 16), 90 * 16, first * 16)
        copy = np.ascontiguousarray(cache[:, first:first + n])
        for got, want in zip(k.page_minmax(view, 16), ref.page_minmax(copy, 16), strict=True):
            assert np.array_equal(got, want)
        assert np.array_equal(k.page_score(q, view, view).view(np.uint32), ref.page_score(q, copy, copy).view(np.uint32))
        assert np.array_equal(k.gather(view, idx), ref.gather(copy, idx))
    assert synced.allocated == len(k._resident) == 3 + 4 + 3  # one buffer per argument for this one storage


def test_xrt_refuses_bad_strides_before_any_transfer(monkeypatch, tmp_path):
    from mlx26.fpga import emu

    synced = _fake_pyxrt(monkeypatch)
    k = _xrt(tmp_path)
    storage = np.zeros(3 * 20 * 16, np.float32)
    for stride, offset, needle in [(15 * 16, 0, "overlap"), (-320, 0, "non-negative"), (328, 0, "whole number"),
                                   (320, 336, "past its storage"), (320, 8, "start on a 512-bit beat")]:
        assert_every_kernel_refuses(k, emu.Strided(storage, (3, 16, 16), stride, offset), needle)
    assert k.bytes_to_device == 0 and not synced and not k._resident


def test_xrt_resident_buffers_are_bounded(monkeypatch, tmp_path):
    """Storage-keyed buffers beyond RESIDENT_BYTES drop the least recently used; results stay right."""
    from mlx26.fpga import emu, xrt_host

    _fake_pyxrt(monkeypatch)
    k = _xrt(tmp_path)
    caches = [np.random.default_rng(i).standard_normal((2, 64, 16)).astype(np.float32) for i in range(3)]
    monkeypatch.setattr(xrt_host, "RESIDENT_BYTES", 2 * caches[0].nbytes)
    for cache in (*caches, caches[0]):
        got = k.page_minmax(emu.Strided(cache.reshape(-1), (2, 20, 16), 64 * 16), 16)
        assert np.array_equal(got[0], emu.kernels().page_minmax(np.ascontiguousarray(cache[:, :20]), 16)[0])
    keyed = [key for key in k._resident if key[2] is not None]
    assert keyed == [("page_minmax", 0, caches[2].ctypes.data), ("page_minmax", 0, caches[0].ctypes.data)]


def test_changed_runs_rule():
    """Per 32-bit word, only the groups' rows, runs under COALESCE_GAP bytes apart merged."""
    from mlx26.fpga.xrt_host import COALESCE_GAP, changed_runs

    words = np.arange(4000, dtype=np.uint32)
    mirror, known = words.copy(), np.ones(4000, bool)
    assert changed_runs(mirror, known, words, 2, 2000, 100) == []
    mirror[[5, 7, 1950, 2050]] = 0  # 5 and 7: two words apart; 1950 lies between the rows: never compared
    assert changed_runs(mirror, known, words, 2, 2000, 100) == [(5, 8), (2050, 2051)]
    gap = COALESCE_GAP // 4
    mirror[:] = words
    mirror[[10, 11 + gap]] = 0  # COALESCE_GAP bytes between the runs: two syncs
    assert changed_runs(mirror, known, words, 1, 4000, 4000) == [(10, 11), (11 + gap, 12 + gap)]
    mirror[10 + gap] = 0  # now 4 bytes less apart: one run, the words between move too
    assert changed_runs(mirror, known, words, 1, 4000, 4000) == [(10, 12 + gap)]
    known[:] = False  # nothing sent yet: the rows, whole, and nothing else
    assert changed_runs(mirror, known, words, 3, 1100, 16) == [(0, 16), (1100, 1116), (2200, 2216)]
    assert changed_runs(mirror, known, words, 3, 1000, 16) == [(0, 2016)]  # 3936 bytes apart: one run


def test_u55c_link_config_covers_every_kernel_and_bundle():
    """fpga/hls/u55c.cfg: one compute unit per kernel, every m_axi bundle of every kernel mapped to HBM, and no
    pseudo-channel shared between two bundles (the v++ link itself cannot run here)."""
    import re
    from pathlib import Path

    import mlx26.fpga

    hls = Path(mlx26.fpga.__file__).resolve().parent / "hls"
    bundles = set()
    for src in hls.glob("*.cpp"):
        name = re.search(r'extern "C" \w+ (\w+)\(', src.read_text()).group(1)
        bundles |= {(name, b) for b in re.findall(r"m_axi port = \w+ offset = slave bundle = (\w+)", src.read_text())}
    cfg = (hls / "u55c.cfg").read_text()
    kernels = set(re.findall(r"^nk=(\w+):1$", cfg, re.M))
    mapped = {(k, b): (int(lo), int(hi or lo)) for k, b, lo, hi in
              re.findall(r"^sp=(\w+)_1\.m_axi_(\w+):HBM\[(\d+)(?::(\d+))?\]$", cfg, re.M)}
    assert kernels == {k for k, _ in bundles} and set(mapped) == bundles
    channels = [c for lo, hi in mapped.values() for c in range(lo, hi + 1)]
    assert len(channels) == len(set(channels)) and max(channels) < 32
