"""CSI I/O: raw captures through ``csiread``, Person-in-WiFi-3D ``.mat``/``.npy`` folders, our NPZ of clips.

* :func:`read_capture` parses an Intel 5300 (linux-80211n-csitool) or Atheros CSI Tool file with csiread and
  checks it against an independent walk of the file's length-prefixed records (:func:`walk_records`: framing
  only, the CSI payload is left to csiread), so a truncated capture reports the packets parsed and the first
  bad offset instead of silently stopping where csiread stops.
* :func:`load_piw3d` reads a PiW3D folder (``csi/NAME.mat`` holding ``csi_out``; MATLAB v5 through scipy.io,
  v7.3 through h5py, whose axes come reversed) with ``keypoint/NAME.npy`` (persons × 14 × 3, metres);
  :func:`write_piw3d` writes one (v5).
* :class:`Clips` is the in-memory and NPZ layout of processed clips: csi (N, link, ant, sub, pkt) complex64,
  keypoints (N, P, 14, 3) metres NaN-padded, sequence and frame ids, a SYNTHETIC flag.

An array's axes are named by a layout string over ``link``, ``ant``, ``sub``, ``pkt`` (PiW3D: link-ant-sub-pkt);
a size that does not match the expected one names the axis and the layout in the error.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.wifi_pose.spec import AXES, INTEL5300_SUBCARRIERS, JOINTS, PIW3D_LAYOUT

INTEL_BFEE = 0xBB


@dataclass
class Walk:
    records: int  # CSI records whose framing is complete
    other: int  # complete records of other kinds (e.g. Intel 0xC1 frames)
    bytes: int
    first_bad_offset: int | None  # byte offset of the first record that runs past the end or is malformed


def walk_records(path: str | Path, chip: str, endian: Literal["little", "big"] = "little") -> Walk:
    """Count the length-prefixed records of a capture without decoding CSI (an independent packet count).

    Intel 5300: [u16 big-endian length][code][length-1 bytes], CSI records have code 0xBB and a payload whose
    size follows from Nrx·Ntx (20-byte header + ceil(30·(16·Nrx·Ntx + 3) / 8)). Atheros: [u16 length][length
    bytes] with a 25-byte header whose csi_len and payload_len must add up to the length.
    """
    buf = Path(path).read_bytes()
    n, off, csi, other, bad = len(buf), 0, 0, 0, None
    order: Literal["little", "big"] = "big" if chip == "intel5300" else endian
    while off < n:
        if off + 2 > n:
            bad = off
            break
        size = int.from_bytes(buf[off:off + 2], order)
        end = off + 2 + size
        if size == 0 or end > n:
            bad = off
            break
        if chip == "intel5300":
            if buf[off + 2] == INTEL_BFEE:
                nrx, ntx = buf[off + 11], buf[off + 12]
                calc = (30 * (nrx * ntx * 8 * 2 + 3) + 7) // 8
                if not (1 <= nrx <= 3 and 1 <= ntx <= 3) or size - 1 < 20 + calc:
                    bad = off
                    break
                csi += 1
            else:
                other += 1
        else:
            if size < 25:
                bad = off
                break
            csi_len = int.from_bytes(buf[off + 10:off + 12], order)
            pl_len = int.from_bytes(buf[off + 25:off + 27], order)
            if 25 + csi_len + pl_len != size:
                bad = off
                break
            csi += 1
        off = end
    return Walk(csi, other, n, bad)


@dataclass
class Capture:
    """A parsed capture: csi (P, link = Tx stream, ant = Rx antenna, sub) complex64 and per-packet timing."""

    path: str
    chip: str
    csi: np.ndarray
    time_s: np.ndarray
    subcarriers: np.ndarray
    parsed: int  # csiread's count
    walked: int  # the independent record count
    first_bad_offset: int | None
    channel_mhz: float | None = None
    dropped: dict = field(default_factory=dict)

    def summary(self) -> dict:
        dt = np.diff(self.time_s) if len(self.time_s) > 1 else np.array([np.nan])
        return {"path": self.path, "chip": self.chip, "packets": int(self.csi.shape[0]),
                "packets_csiread": self.parsed, "packets_walked": self.walked,
                "truncated": self.first_bad_offset is not None, "first_bad_offset": self.first_bad_offset,
                "links": int(self.csi.shape[1]), "antennas": int(self.csi.shape[2]),
                "subcarriers": int(self.csi.shape[3]), "duration_s": float(self.time_s[-1] - self.time_s[0])
                if len(self.time_s) else 0.0, "rate_hz": float(1.0 / np.median(dt)) if np.isfinite(dt).all()
                and np.median(dt) > 0 else None, "channel_mhz": self.channel_mhz, **self.dropped}


def _quiet_csiread(fn):
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        return fn()


def read_capture(path: str | Path, chip: str, *, perm: bool = True,
                 endian: Literal["little", "big"] | None = None) -> Capture:
    """Parse ``path`` with csiread (Intel 5300 or Atheros) and check it against :func:`walk_records`.

    csiread is called with the largest antenna counts (3×3) and each packet is cut to its own Nrx×Ntx;
    packets whose counts differ from the capture's most common ones are dropped with a count. ``perm``
    undoes the Intel NIC's antenna→RF-chain permutation (csi[:, perm] = csi, as in the csitool FAQ).
    """
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{path} is a folder, not a capture file")
    if not p.is_file():
        raise InputError(f"capture not found: {path}")
    if p.stat().st_size == 0:
        raise InputError(f"{path} is empty")
    try:
        import csiread
    except ImportError as exc:  # pragma: no cover - the CLI checks require() first
        from mlx26.core.common.errors import BackendMissing

        raise BackendMissing("csiread is not installed", "pip install 'mlx26[wifi]'") from exc
    if chip == "intel5300":
        walk = walk_records(p, chip)
        if walk.records == 0:
            raise InputError(f"{path}: no Intel 5300 CSI (0xBB) records found",
                             "is this a linux-80211n-csitool log (connector_log 0x1/0x4/0x5)? else try --chip atheros")
        c = csiread.Intel(str(p), nrxnum=3, ntxnum=3, if_report=False)
        try:
            _quiet_csiread(c.read)
        except ValueError as exc:
            raise InputError(f"{path}: csiread could not parse it ({exc})") from exc
        n = int(c.count)
        nrx, ntx = np.asarray(c.Nrx[:n]), np.asarray(c.Ntx[:n])
        raw = np.asarray(c.csi[:n])  # (P, 30, 3, 3): sub, rx, tx
        time_s = np.asarray(c.timestamp_low[:n], np.float64) / 1e6
        time_s = np.concatenate([[0.0], np.cumsum(np.mod(np.diff(time_s), 2**32 / 1e6))]) if n else time_s
        perms = np.asarray(c.perm[:n]) if perm else None
        subs = np.array(INTEL5300_SUBCARRIERS)
        channel = None
    elif chip == "atheros":
        walk = walk_records(p, chip, endian or "little")
        if endian is None and walk.first_bad_offset is not None:
            big = walk_records(p, chip, "big")
            if big.records > walk.records:
                walk, endian = big, "big"
        endian = endian or "little"
        if walk.records == 0:
            raise InputError(f"{path}: no Atheros CSI records found", "is this an Atheros CSI Tool log? try --chip intel5300")
        c = csiread.Atheros(str(p), nrxnum=3, ntxnum=3, tones=56, if_report=False)
        _quiet_csiread(lambda: c.read(endian=endian))
        n = int(c.count)
        nrx, ntx = np.asarray(c.nr[:n]), np.asarray(c.nc[:n])
        raw = np.asarray(c.csi[:n])  # (P, 56, 3, 3)
        time_s = np.asarray(c.timestamp[:n], np.float64) / 1e6
        perms = None
        subs = np.r_[-28:0, 1:29]  # HT20: 56 tones, no DC
        channel = float(np.median(c.tx_channel[:n])) if n else None
    else:
        raise InputError(f"--chip {chip}: only intel5300 and atheros captures are wired to csiread here",
                         "convert other captures to our NPZ layout (docs/wifi-pose.md)")
    if n == 0:
        raise InputError(f"{path}: csiread parsed no packets")
    pairs, counts = np.unique(np.stack([nrx, ntx], 1), axis=0, return_counts=True)
    r, t = (int(v) for v in pairs[counts.argmax()])
    keep = (nrx == r) & (ntx == t)
    csi = raw[keep][:, :, :r, :t]
    if perms is not None and r == 3:
        pk = perms[keep]
        out = np.empty_like(csi)
        rows = np.arange(len(csi))[:, None]
        out[rows, :, pk] = np.moveaxis(csi, 2, 1)  # csi[:, :, perm[i]] = csi[:, :, i]
        csi = out
    csi = np.ascontiguousarray(np.transpose(csi, (0, 3, 2, 1))).astype(np.complex64)  # (P, tx, rx, sub)
    dropped = {"dropped_antenna_mismatch": int((~keep).sum())}
    return Capture(str(path), chip, csi, time_s[keep], subs, n, walk.records, walk.first_bad_offset, channel,
                   dropped)


# --------------------------------------------------------------------------- layouts and PiW3D folders

def parse_layout(layout: str) -> tuple[str, ...]:
    axes = tuple(layout.split("-"))
    if sorted(axes) != sorted(AXES):
        raise InputError(f"--layout {layout!r} must name each of {', '.join(AXES)} once, joined by '-'",
                         f"PiW3D's csi_out is {PIW3D_LAYOUT}")
    return axes


def to_canonical(arr: np.ndarray, layout: str, expect: dict[str, int | None], source: str) -> np.ndarray:
    """Reorder a 4-D CSI array given in ``layout`` to link-ant-sub-pkt, checking each axis size."""
    axes = parse_layout(layout)
    if arr.ndim != 4:
        raise InputError(f"{source}: CSI has {arr.ndim} axes {list(arr.shape)}, expected 4 ({layout})",
                         "pass --layout naming its axes")
    for i, (ax, size) in enumerate(zip(axes, arr.shape, strict=True)):
        want = expect.get(ax)
        if want is not None and size != want:
            noun = {"link": "links", "ant": "antennas", "sub": "subcarriers", "pkt": "packets"}[ax]
            raise InputError(f"{source}: {size} {noun} on axis {i} ('{ax}' of --layout {layout}), expected {want}",
                             f"pass --layout matching the file's axis order, or --{noun} {size}")
    return np.transpose(arr, [axes.index(a) for a in AXES])


def read_mat_csi(path: Path, key: str = "csi_out") -> np.ndarray:
    """``csi_out`` of a PiW3D .mat file as complex (MATLAB v5 via scipy.io; v7.3/HDF5 via h5py, axes reversed)."""
    import scipy.io

    try:
        import h5py

        hdf5 = h5py.is_hdf5(str(path))
    except ImportError:
        hdf5 = False
    if hdf5:  # MATLAB v7.3 is HDF5 with a 512-byte user block
        with h5py.File(path, "r") as f:
            if key not in f:
                raise InputError(f"{path}: no '{key}' dataset (has: {', '.join(f.keys())})")
            raw = f[key][()]
        arr = raw["real"] + 1j * raw["imag"] if raw.dtype.names else np.asarray(raw)
        return np.transpose(arr, tuple(range(arr.ndim))[::-1])
    try:
        data = scipy.io.loadmat(str(path))
    except NotImplementedError as exc:
        raise InputError(f"{path}: a MATLAB v7.3 file, and h5py is not installed", "pip install 'mlx26[wifi]'") from exc
    except Exception as exc:  # scipy raises several types for a non-MAT file
        raise InputError(f"{path}: not a readable .mat file ({' '.join(str(exc).split())[:120]})") from exc
    if key not in data:
        raise InputError(f"{path}: no '{key}' variable (has: {', '.join(k for k in data if not k.startswith('__'))})")
    return np.asarray(data[key])


def keypoints_to_m(kp: np.ndarray) -> tuple[np.ndarray, str | None]:
    """Keypoints in metres; millimetres (|coordinate| over 20) are detected and converted with a notice."""
    finite = kp[np.isfinite(kp)]
    if finite.size and np.abs(finite).max() > 20.0:
        return kp / 1000.0, f"keypoints look like millimetres (max |x| = {np.abs(finite).max():.0f}): divided by 1000"
    return kp, None


@dataclass
class Clips:
    csi: np.ndarray  # (N, link, ant, sub, pkt) complex64
    keypoints: np.ndarray  # (N, P, 14, 3) float32 metres, NaN rows for absent persons
    seq: np.ndarray  # (N,) int
    frame: np.ndarray  # (N,) int
    subcarriers: np.ndarray  # (sub,) subcarrier indices
    synthetic: bool = False
    notices: list[str] = field(default_factory=list)

    @property
    def persons(self) -> np.ndarray:
        return np.isfinite(self.keypoints[..., 0, 0]).sum(1)

    def take(self, idx) -> Clips:
        return Clips(self.csi[idx], self.keypoints[idx], self.seq[idx], self.frame[idx], self.subcarriers,
                     self.synthetic, list(self.notices))

    def summary(self) -> dict:
        n, l_, a, s, t = self.csi.shape
        return {**({"data": "SYNTHETIC"} if self.synthetic else {}), "clips": int(n), "links": int(l_),
                "antennas": int(a), "subcarriers": int(s), "packets": int(t), "sequences": int(len(np.unique(self.seq))),
                "persons_max": int(self.persons.max()) if n else 0, "persons_mean": float(self.persons.mean()) if n else 0.0}


def pad_persons(kps: list[np.ndarray], pmax: int | None = None) -> np.ndarray:
    pmax = pmax or max((len(k) for k in kps), default=1)
    out = np.full((len(kps), max(pmax, 1), JOINTS, 3), np.nan, np.float32)
    for i, k in enumerate(kps):
        out[i, :len(k)] = k[:pmax]
    return out


def save_clips(clips: Clips, path: str | Path) -> None:
    from mlx26.core.common.files import atomic_path

    with atomic_path(path, suffix=".npz") as tmp:
        np.savez_compressed(tmp, csi=clips.csi, keypoints=clips.keypoints, seq=clips.seq, frame=clips.frame,
                            subcarriers=clips.subcarriers, synthetic=np.array(clips.synthetic),
                            layout=np.array(PIW3D_LAYOUT), format=np.array("mlx26-wifi-pose-clips-1"))


def load_clips(path: str | Path, expect: dict[str, int | None] | None = None) -> Clips:
    p = Path(path)
    if p.is_dir():
        return load_piw3d(p, expect=expect)
    if not p.is_file():
        raise InputError(f"input not found: {path}")
    try:
        with np.load(p, allow_pickle=False) as f:
            d = {k: f[k] for k in f.files}
    except Exception as exc:  # numpy raises several types for a non-NPZ file
        raise InputError(f"{path}: not a readable NPZ ({type(exc).__name__})",
                         "make one with `mlx26 wifi-pose synth` or `read -o`") from exc
    if "csi" not in d or "keypoints" not in d:
        raise InputError(f"{path}: not a wifi-pose clips NPZ (needs 'csi' and 'keypoints'; has {', '.join(d)})",
                         "`mlx26 wifi-pose synth FILE.npz` writes one")
    csi = d["csi"]
    if csi.ndim != 5:
        raise InputError(f"{path}: csi has shape {list(csi.shape)}, expected (clips, link, ant, sub, pkt)")
    for i, ax in enumerate(AXES):
        want = (expect or {}).get(ax)
        if want is not None and csi.shape[i + 1] != want:
            raise InputError(f"{path}: {csi.shape[i + 1]} on axis '{ax}' (layout {PIW3D_LAYOUT}), expected {want}",
                             "the model was trained on another layout; retrain or resample")
    kp, note = keypoints_to_m(d["keypoints"].astype(np.float32))
    n = len(csi)
    clips = Clips(csi.astype(np.complex64), kp, d.get("seq", np.arange(n)).astype(int),
                  d.get("frame", np.zeros(n)).astype(int), d.get("subcarriers", np.array(INTEL5300_SUBCARRIERS)),
                  bool(d.get("synthetic", False)), [note] if note else [])
    return drop_bad(clips)


def drop_bad(clips: Clips) -> Clips:
    """Drop clips holding a NaN/Inf or an all-zero packet, with a count in the notices."""
    c = clips.csi
    nan = ~np.isfinite(c.real).all(axis=(1, 2, 3, 4)) | ~np.isfinite(c.imag).all(axis=(1, 2, 3, 4))
    zero = (np.abs(np.nan_to_num(c)) == 0).all(axis=(1, 2, 3)).any(axis=-1) & ~nan
    bad = nan | zero
    if not bad.any():
        return clips
    out = clips.take(np.flatnonzero(~bad))
    out.notices.append(f"dropped {int(nan.sum())} clips with NaN/Inf CSI and {int(zero.sum())} with an all-zero packet")
    if len(out.csi) == 0:
        raise RunFailure("every clip was dropped (NaN/Inf or all-zero CSI)")
    return out


def load_piw3d(root: str | Path, layout: str = PIW3D_LAYOUT, expect: dict[str, int | None] | None = None,
               list_file: str | None = None) -> Clips:
    """A PiW3D folder: ``csi/*.mat`` (+ ``keypoint/*.npy``); names from ``*_data_list.txt`` when present."""
    root = Path(root)
    csi_dir, kp_dir = root / "csi", root / "keypoint"
    if not csi_dir.is_dir():
        raise InputError(f"{root}: no csi/ folder (a PiW3D folder holds csi/NAME.mat and keypoint/NAME.npy)")
    lists = [root / list_file] if list_file else sorted(root.glob("*_data_list.txt"))
    if lists and lists[0].is_file():
        names = [ln.split()[0] for ln in lists[0].read_text().splitlines() if ln.strip()]
    else:
        names = sorted(q.stem for q in csi_dir.glob("*.mat"))
    if not names:
        raise InputError(f"{csi_dir}: no .mat files")
    arrays, kps, seqs, frames, notes = [], [], [], [], []
    seq_ids: dict[str, int] = {}
    for name in names:
        arr = read_mat_csi(csi_dir / f"{name}.mat")
        arrays.append(to_canonical(arr, layout, expect or {}, f"{name}.mat"))
        kpath = kp_dir / f"{name}.npy"
        k = np.load(kpath).astype(np.float32) if kpath.is_file() else np.full((0, JOINTS, 3), np.nan, np.float32)
        if k.ndim != 3 or k.shape[1:] != (JOINTS, 3):
            raise InputError(f"{kpath}: keypoints have shape {list(k.shape)}, expected (persons, {JOINTS}, 3)")
        kps.append(k)
        stem, _, idx = name.rpartition("_")
        seqs.append(seq_ids.setdefault(stem or name, len(seq_ids)))
        frames.append(int(idx) if idx.isdigit() else 0)
    if len({a.shape for a in arrays}) > 1:
        raise InputError(f"{root}: the .mat files differ in shape ({sorted({a.shape for a in arrays})[:2]} …)")
    kp, note = keypoints_to_m(pad_persons(kps))
    notes += [note] if note else []
    synthetic = (root / "SYNTHETIC").exists()
    clips = Clips(np.stack(arrays).astype(np.complex64), kp, np.array(seqs), np.array(frames),
                  np.array(INTEL5300_SUBCARRIERS[:arrays[0].shape[2]]) if arrays[0].shape[2] <= 30 else
                  np.arange(arrays[0].shape[2]), synthetic, notes)
    return drop_bad(clips)


def write_piw3d(clips: Clips, root: str | Path, split: str = "train") -> list[str]:
    """Write clips as a PiW3D folder (MATLAB v5 .mat with csi_out link-ant-sub-pkt, keypoint .npy, a list file)."""
    import scipy.io

    root = Path(root)
    (root / "csi").mkdir(parents=True, exist_ok=True)
    (root / "keypoint").mkdir(parents=True, exist_ok=True)
    names = []
    for i in range(len(clips.csi)):
        name = f"seq{int(clips.seq[i]):04d}_{int(clips.frame[i]):04d}"
        scipy.io.savemat(str(root / "csi" / f"{name}.mat"), {"csi_out": clips.csi[i].astype(np.complex128)})
        k = clips.keypoints[i]
        np.save(root / "keypoint" / f"{name}.npy", k[np.isfinite(k[:, 0, 0])])
        names.append(name)
    (root / f"{split}_data_list.txt").write_text("".join(n + "\n" for n in names))
    if clips.synthetic:
        (root / "SYNTHETIC").write_text("made by mlx26 wifi-pose synth: not a measurement\n")
    return names


def file_size(path: str | Path) -> int:
    return os.path.getsize(path)
