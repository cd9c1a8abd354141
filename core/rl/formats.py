"""Offline-RL dataset formats as they are released: OGBench ``.npz``, D4RL HDF5/``.npz``, Minari folders.

Every reader returns the same *canonical* rows (our ``.npz`` schema, :mod:`.datasets`):
``observations``, ``actions``, ``next_observations``, ``rewards``, ``masks`` (0 after a true
termination only), ``terminals`` (1 on the last kept row of an episode) and, where the source has
them, ``qpos``/``qvel``/``button_states`` aligned with ``observations``. The rules are the sources'
own loaders', re-implemented (nothing here imports ogbench or d4rl):

* **OGBench** (``observations, actions, terminals[, qpos, qvel, button_states]``, no
  ``next_observations``): ``ogbench.utils.load_dataset`` with ``compact_dataset=False`` —
  ``terminals[t] = 1`` marks the *final observation* of an episode, which has no transition of
  its own; rows with ``terminals = 0`` are kept, ``next_observations`` are the rows after them,
  the new ``terminals`` are the old ones shifted by one, and the info keys are filtered with the
  same mask. Official files carry no rewards: a ``-singletask-`` env relabels them from ``qpos``
  (``ogbench.relabel_utils.relabel_dataset``), as ``ogbench.make_env_and_datasets`` does.
  ``D-val.npz`` beside ``D.npz`` is the validation split, read the same way.
* **D4RL** (``observations, actions, rewards, terminals, timeouts``; HDF5 or ``.npz``):
  ``d4rl.qlearning_dataset`` with ``terminate_on_end=False`` — row ``i`` pairs with row ``i+1``,
  rows with ``timeouts[i] = 1`` (time-limit cuts) and the file's last row are dropped, and
  ``masks = 1 − terminals`` (true terminations only; a timeout never zeroes the bootstrap).
  Episode ends (``terminals`` in our schema) follow the FQL reference's D4RL loader: a row ends an
  episode when it terminates or the next kept row does not start where it ended.
* **Minari** (a local dataset folder, read with the ``minari`` package, never downloaded):
  each episode's ``observations`` has one row more than its ``actions``; transition t is
  (o_t, a_t, r_t, o_{t+1}) with ``masks = 1 − terminations[t]`` (truncations do not cut the
  bootstrap). Minari datasets have no validation split.
* **mlx26** (our own files, with the processed keys): read as they are.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
from mlx26.core.common.errors import BackendMissing, InputError

FORMATS = ("mlx26", "ogbench", "d4rl", "minari")
INFO_KEYS = ("qpos", "qvel", "button_states")
CANONICAL = ("observations", "actions", "next_observations", "rewards", "masks", "terminals")
_OGBENCH_KEYS = ("observations", "actions", "terminals")
_D4RL_KEYS = ("observations", "actions", "rewards", "terminals", "timeouts")


def _open_npz(path: Path) -> Any:
    with open(path, "rb") as fh:
        head = fh.read(6)
    if not (head.startswith(b"PK") or head.startswith(b"\x93NUMPY")):
        raise InputError(f"{path} is not an HDF5 or .npz dataset (unrecognised file contents)",
                         "give an .npz/.hdf5 dataset file or a Minari dataset folder")
    try:
        file = np.load(path, allow_pickle=False)
    except Exception as exc:  # zipfile / format errors differ by numpy version
        if "pickled" in str(exc):  # numpy's text would suggest the unsafe allow_pickle=True
            raise InputError(f"{path} holds pickled (object) arrays, which are never loaded") from None
        raise InputError(f"cannot read {path} as .npz: {' '.join(str(exc).split())}") from exc
    if not hasattr(file, "files"):  # a bare .npy array
        raise InputError(f"{path} is a single .npy array, not an .npz dataset.",
                         "make one with `mlx26 rl data make … --out D.npz`")
    return file


def _is_hdf5(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(8) == b"\x89HDF\r\n\x1a\n"


def _h5py():
    try:
        import h5py
    except ImportError as exc:
        raise BackendMissing("reading HDF5 (D4RL) datasets needs h5py", "pip install 'mlx26[rl]'") from exc
    return h5py


def _read_arrays(path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """All top-level arrays of an .npz or HDF5 file, plus its ``meta`` JSON (if any)."""
    if _is_hdf5(path):
        h5py = _h5py()
        arrays: dict[str, np.ndarray] = {}
        try:
            with h5py.File(path, "r") as f:
                for k, v in f.items():
                    if isinstance(v, h5py.Dataset):
                        arrays[k] = np.asarray(v[()])
                    elif k == "infos" and isinstance(v, h5py.Group):  # D4RL keeps qpos/qvel under infos/
                        for ik in INFO_KEYS:
                            if ik in v and isinstance(v[ik], h5py.Dataset):
                                arrays[ik] = np.asarray(v[ik][()])
        except OSError as exc:
            raise InputError(f"cannot read {path} as HDF5: {' '.join(str(exc).split())[:200]}") from exc
        return arrays, {}
    with _open_npz(path) as file:
        try:
            arrays = {k: np.asarray(file[k]) for k in file.files if k != "meta"}
        except ValueError as exc:
            if "pickle" in str(exc) or "Object arrays" in str(exc):
                raise InputError(f"{path} is not an .npz dataset (it holds pickled objects, which are never "
                                 "loaded).") from None
            raise InputError(f"cannot read {path} as .npz: {' '.join(str(exc).split())[:200]}") from exc
        meta: dict[str, Any] = {}
        if "meta" in file.files:
            try:
                meta = json.loads(str(file["meta"]))
            except (ValueError, TypeError):
                meta = {}
    return arrays, meta


def detect(path: str | os.PathLike, keys: set[str] | None = None) -> str:
    """The format of ``path`` (a file's keys decide; a folder is a Minari dataset)."""
    p = Path(path)
    if p.is_dir():
        return "minari"
    if keys is None:
        keys = set(_read_arrays(p)[0])
    if {"next_observations", "rewards", "masks"} <= keys:
        return "mlx26"
    if "timeouts" in keys or ("rewards" in keys and "masks" not in keys):
        return "d4rl"
    if {"observations", "actions", "terminals"} <= keys:
        return "ogbench"
    return "mlx26"  # not recognisably another layout: our loader names the keys it lacks


def _need(path: Path, arrays: dict[str, np.ndarray], keys: tuple[str, ...], fmt: str, hint: str) -> None:
    missing = [k for k in keys if k not in arrays]
    if missing:
        raise InputError(f"{path} ({fmt} layout) is missing required key(s): {', '.join(missing)}", hint)
    n = len(arrays[keys[0]])
    for k in keys:
        if len(arrays[k]) != n:
            raise InputError(f"{path}: '{k}' has {len(arrays[k])} rows but '{keys[0]}' has {n}",
                             "every per-step array must have one row per step")


def _ogbench(path: Path, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    _need(path, arrays, _OGBENCH_KEYS, "OGBench", "official OGBench files hold observations, actions, terminals")
    terminals = arrays["terminals"].reshape(-1).astype(np.float32)
    ob_mask = (1.0 - terminals).astype(bool)
    next_ob_mask = np.concatenate([[False], ob_mask[:-1]])
    if ob_mask.sum() != next_ob_mask.sum():  # the file does not end on an episode's final observation
        raise InputError(f"{path}: the last row has terminals = 0, so its transition has no next observation",
                         "an OGBench file ends each episode (and the file) with a terminals = 1 row")
    out = {"observations": arrays["observations"][ob_mask].astype(np.float32),
           "actions": arrays["actions"][ob_mask].astype(np.float32),
           "next_observations": arrays["observations"][next_ob_mask].astype(np.float32),
           "terminals": np.concatenate([terminals[1:], [1.0]])[ob_mask].astype(np.float32)}
    for k in INFO_KEYS:
        if k in arrays:
            if len(arrays[k]) != len(terminals):
                raise InputError(f"{path}: '{k}' has {len(arrays[k])} rows but 'terminals' has {len(terminals)}")
            out[k] = arrays[k][ob_mask]
    return out


def _d4rl(path: Path, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    _need(path, arrays, _D4RL_KEYS, "D4RL",
          "D4RL files need 'timeouts' to tell time-limit cuts from true terminations")
    obs = arrays["observations"].reshape(len(arrays["observations"]), -1).astype(np.float32)
    n = len(obs)
    timeouts = arrays["timeouts"].reshape(n).astype(bool)
    done = arrays["terminals"].reshape(n).astype(bool)
    keep = np.flatnonzero(~timeouts[: n - 1])  # d4rl.qlearning_dataset: range(N - 1), skip final timesteps
    nxt = obs[keep + 1]
    out = {"observations": obs[keep], "actions": arrays["actions"][keep].astype(np.float32),
           "next_observations": nxt, "rewards": arrays["rewards"].reshape(n)[keep].astype(np.float32),
           "masks": (1.0 - done[keep]).astype(np.float32)}
    ends = np.zeros(len(keep), np.float32)
    if len(keep):
        ends[:-1] = (done[keep[:-1]] | (np.linalg.norm(obs[keep[1:]] - nxt[:-1], axis=1) > 1e-6)).astype(np.float32)
        ends[-1] = 1.0
    out["terminals"] = ends
    for k in INFO_KEYS:
        if k in arrays and len(arrays[k]) == n:
            out[k] = arrays[k][keep]
    return out


def _minari(path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    try:
        import minari  # noqa: F401
        from minari.dataset.minari_dataset import MinariDataset
    except ImportError as exc:
        raise BackendMissing("reading Minari datasets needs the minari package", "pip install 'mlx26[rl]'") from exc
    data_dir = path / "data" if (path / "data" / "metadata.json").is_file() else path
    meta_file = data_dir / "metadata.json"
    if not meta_file.is_file():
        raise InputError(f"{path} is not a Minari dataset folder: no data/metadata.json",
                         "give the folder <root>/<dataset_id> that minari writes (it holds data/metadata.json)")
    try:
        metadata = json.loads(meta_file.read_text())
    except ValueError as exc:
        raise InputError(f"{meta_file} is not valid JSON: {exc}") from exc
    _check_minari_version(meta_file, metadata)
    try:
        dataset = MinariDataset(str(data_dir))
    except Exception as exc:  # minari raises several types for a malformed folder
        bad = data_dir / "main_data.hdf5"
        raise InputError(f"cannot read the Minari dataset {path} ({bad if bad.exists() else data_dir}): {' '.join(str(exc).split())[:200]}") from exc
    parts: dict[str, list[np.ndarray]] = {k: [] for k in CANONICAL}
    try:
        episodes = list(dataset.iterate_episodes())
    except (OSError, KeyError, ValueError) as exc:
        bad = data_dir / "main_data.hdf5"
        raise InputError(f"cannot read the Minari dataset {path}: {bad if bad.exists() else data_dir} is corrupt "
                         f"({' '.join(str(exc).split())[:150]})") from exc
    for ep in episodes:
        obs = np.asarray(ep.observations)
        if not isinstance(ep.observations, np.ndarray) or obs.dtype == object:
            raise InputError(f"{path}: episode {ep.id} has dict/tuple observations; only flat Box "
                             "observations are supported")
        T = len(ep.actions)
        if len(obs) != T + 1:
            raise InputError(f"{path}: episode {ep.id} has {len(obs)} observations for {T} actions "
                             "(Minari stores one more observation than actions)")
        obs = obs.reshape(T + 1, -1).astype(np.float32)
        parts["observations"].append(obs[:-1])
        parts["next_observations"].append(obs[1:])
        parts["actions"].append(np.asarray(ep.actions, np.float32).reshape(T, -1))
        parts["rewards"].append(np.asarray(ep.rewards, np.float32).reshape(T))
        parts["masks"].append(1.0 - np.asarray(ep.terminations, np.float32).reshape(T))
        end = np.zeros(T, np.float32)
        end[-1] = 1.0
        parts["terminals"].append(end)
    if not parts["actions"]:
        raise InputError(f"{path}: the Minari dataset holds no episodes")
    meta = {"label": "minari", "dataset_id": metadata.get("dataset_id"), "env": _minari_env(metadata),
            "minari_version": metadata.get("minari_version")}
    return {k: np.concatenate(v) for k, v in parts.items()}, meta


def minari_env_id(path: str | os.PathLike) -> str | None:
    """The env id recorded in a Minari dataset folder's metadata (None if ``path`` is not one or has none)."""
    p = Path(path)
    if not p.is_dir():
        return None
    for meta_file in (p / "data" / "metadata.json", p / "metadata.json"):
        if meta_file.is_file():
            try:
                return _minari_env(json.loads(meta_file.read_text()))
            except (ValueError, AttributeError):
                return None
    return None


def _minari_env(metadata: dict[str, Any]) -> str | None:
    spec = metadata.get("env_spec")
    if isinstance(spec, str):
        try:
            spec = json.loads(spec)
        except ValueError:
            return None
    return spec.get("id") if isinstance(spec, dict) else None


def _check_minari_version(meta_file: Path, metadata: dict[str, Any]) -> None:
    """Refuse a folder written by a Minari version that the installed one cannot read (minari's own rule)."""
    import minari

    version = metadata.get("minari_version")
    if version is None:
        raise InputError(f"{meta_file} has no 'minari_version'", "was the folder written by minari?")
    supported = getattr(minari, "supported_dataset_versions", {minari.__version__})
    if str(version) not in supported:
        raise InputError(f"{meta_file} was written by minari {version}; the installed minari "
                         f"{minari.__version__} reads datasets of versions {', '.join(sorted(supported))}",
                         f"install minari=={version} or re-create the dataset with the installed minari")


def read(path: str | os.PathLike) -> tuple[dict[str, np.ndarray], dict[str, Any], str]:
    """``(canonical arrays, meta, format)``; OGBench rows have no rewards/masks until relabelled."""
    p = Path(path)
    if p.is_dir():
        arrays, meta = _minari(p)
        return arrays, meta, "minari"
    if not p.is_file():
        raise InputError(f"dataset not found: {path}",
                         "make one with `mlx26 rl data make … --out D.npz`, or give an OGBench/D4RL file "
                         "or a Minari dataset folder")
    raw, meta = _read_arrays(p)
    fmt = detect(p, set(raw))
    if fmt == "mlx26":
        return raw, meta, fmt
    if fmt == "ogbench":
        return _ogbench(p, raw), {**meta, "label": meta.get("label", "ogbench")}, fmt
    return _d4rl(p, raw), {**meta, "label": meta.get("label", "d4rl")}, fmt


def val_path(path: str | os.PathLike) -> Path | None:
    """OGBench's rule: ``D.npz`` → ``D-val.npz`` (also ``D.hdf5`` → ``D-val.hdf5``); None if absent."""
    p = Path(path)
    if p.is_dir():
        return None
    stem, dot, ext = p.name.rpartition(".")
    vp = p.with_name(f"{stem}-val.{ext}" if dot else p.name + "-val")
    return vp if vp.is_file() else None
