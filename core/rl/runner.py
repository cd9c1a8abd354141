"""A training run's folder and stream: ``config.json``, ``metrics.jsonl``, ``checkpoint.pt``.

* :func:`build_config` — algorithm + env + overrides → a validated :class:`TrainConfig`
  (unknown hyperparameters fail here, before any work);
* :func:`prepare_out` — refuses a non-empty run folder unless ``force`` (which removes only
  the files a run writes) or ``resume`` (which reloads ``config.json``; a folder without a
  checkpoint — a run stopped before its first one — restarts from step 0 with that config);
* :func:`trim_logs` — on resume, drops the records written after the checkpoint's step;
* :func:`run` — iterates the algorithm's ``train(cfg)``, appends each record to
  ``metrics.jsonl`` and stops with :class:`Divergence` (exit 1) at the first non-finite loss,
  leaving the last good checkpoint in place. On SIGINT/SIGTERM (``cfg.stop``) the algorithm writes a
  checkpoint of the step it finished and raises ``Interrupted`` (exit 130); an algorithm without
  ``HANDLES_STOP`` is stopped at its next record and the message names its last checkpoint.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.common.files import atomic_write
from mlx26.core.rl import checkpoint, registry
from mlx26.core.rl.hparams import TrainConfig, apply_overrides

RUN_FILES = ("config.json", "metrics.jsonl", "metrics.csv", checkpoint.NAME)
RUN_DIRS = ("tb",)  # TensorBoard event files (see :mod:`.logs`)


def build_config(algo: str, env: str, overrides: Mapping[str, Any] | None = None, **common: Any) -> TrainConfig:
    mod = registry.module(algo)
    overrides = {str(k).replace("-", "_"): v for k, v in dict(overrides or {}).items()}
    table = mod.env_defaults(env) if hasattr(mod, "env_defaults") else {}
    applied = {k: v for k, v in table.items() if k not in overrides}  # the user's values win
    hp = apply_overrides(mod.Hyperparams(), {**applied, **overrides})
    if common.get("reach_avoid") is not None:
        from mlx26.core.rl.reach_avoid.user_sets import normalize

        common = {**common, "reach_avoid": normalize(common["reach_avoid"])}
    cfg = TrainConfig(algo=algo, env=env, hp=hp, **common)
    cfg.env_defaults = applied
    if cfg.steps < 1:
        raise InputError(f"--steps must be ≥ 1, got {cfg.steps}")
    if cfg.eval_every < 0:
        raise InputError(f"--eval-every must be ≥ 0, got {cfg.eval_every}")
    if cfg.eval_episodes < 1:
        raise InputError(f"--eval-episodes must be ≥ 1, got {cfg.eval_episodes}")
    if cfg.device not in ("cpu", "cuda"):
        raise registry.unknown("device", cfg.device, ["cpu", "cuda"])
    if hasattr(mod, "check_config"):
        cfg.warnings = list(mod.check_config(cfg) or [])
    return cfg


def prepare_out(out: str, *, force: bool = False, resume: bool = False,
                hint: str = "add --force to start over, or --resume to continue it") -> dict[str, Any] | None:
    """Make the run folder ready; on ``resume`` return the stored config dict (see :func:`resume_point`)."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--out {out} exists and is not a folder")
    present = [n for n in RUN_FILES if (folder / n).exists()]
    if resume:
        if not folder.is_dir():
            raise InputError(f"nothing to resume: the run folder {out} does not exist",
                             "give the folder of an earlier run with --out DIR, or start a new run without --resume")
        if not (folder / "config.json").is_file():
            raise InputError(f"nothing to resume in {out}: it has no config.json, so it is not a `train rl` run folder",
                             "start a new run there without --resume" + (" (add --force to replace "
                                                                         + ", ".join(present) + ")" if present else ""))
        try:
            return json.loads((folder / "config.json").read_text())
        except ValueError as exc:
            raise InputError(f"cannot read {folder / 'config.json'}: {exc}",
                             "start over with --force (without --resume)") from None
    if present and not force:
        raise InputError(f"refusing to overwrite the run in {out} ({', '.join(present)})", hint)
    for name in present:
        (folder / name).unlink()
    if force:
        import shutil

        for name in RUN_DIRS:
            if (folder / name).is_dir():
                shutil.rmtree(folder / name)
    folder.mkdir(parents=True, exist_ok=True)
    return None


def _after(value: str, step: int) -> bool:
    try:
        return float(value) > step
    except ValueError:
        return False


def trim_logs(out: str, step: int) -> int:
    """Drop the records after ``step`` from ``metrics.jsonl`` and ``metrics.csv`` (a run killed after its
    last checkpoint wrote them; the resumed run writes them again). Returns how many were dropped."""
    import csv
    import io

    from mlx26.core.rl.logs import CSV_NAME

    dropped = 0
    path = Path(out) / "metrics.jsonl"
    if path.is_file():
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [ln for ln in lines if ln.strip() and (json.loads(ln).get("step") or 0) <= step]
        dropped = len([ln for ln in lines if ln.strip()]) - len(kept)
        if dropped:
            atomic_write(path, "".join(kept))
    path = Path(out) / CSV_NAME
    if path.is_file():
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
        kept_rows = rows[:1] + [r for r in rows[1:] if r and not _after(r[0], step)]
        if len(kept_rows) != len(rows):
            buf = io.StringIO()
            csv.writer(buf).writerows(kept_rows)
            atomic_write(path, buf.getvalue())
    return dropped


def config_from_stored(stored: dict[str, Any], **changes: Any) -> TrainConfig:
    cfg = build_config(stored["algo"], stored["env"], stored.get("hp", {}),
                       **{k: stored[k] for k in ("steps", "seed", "eval_every", "eval_episodes", "device",
                                                 "dataset", "rescale", "reach_avoid") if k in stored})
    cfg.env_defaults = dict(stored.get("env_defaults") or {})  # the stored hp already holds their values
    for key, value in changes.items():
        if value is not None:
            setattr(cfg, key, value)
    return cfg


def write_config(out: str, cfg: TrainConfig, extra: Mapping[str, Any] | None = None) -> None:
    from mlx26.core._version import __version__

    data = {**cfg.to_dict(), "mlx26_version": __version__, **(extra or {})}
    atomic_write(Path(out) / "config.json", json.dumps(data, indent=2, default=str) + "\n")


def _non_finite(record: Mapping[str, Any]) -> str | None:
    for key, value in record.items():
        if isinstance(value, float) and not math.isfinite(value):
            return key
    return None


def run(cfg: TrainConfig, tensorboard: bool = True) -> Iterator[dict[str, Any]]:
    """Stream the algorithm's metric records; also append them to ``<out>/metrics.jsonl``, ``metrics.csv``
    and TensorBoard event files in ``<out>/tb`` (when the tensorboard package is installed)."""
    from mlx26.core.rl.logs import RunLogger

    train = registry.train_fn(cfg.algo)
    handles_stop = getattr(registry.module(cfg.algo), "HANDLES_STOP", False)
    log = open(Path(cfg.out) / "metrics.jsonl", "a", encoding="utf-8") if cfg.out else None
    logger = RunLogger(cfg.out, tensorboard=tensorboard) if cfg.out else None
    ckpt = Path(cfg.out or ".") / checkpoint.NAME

    def kept() -> str:
        if not cfg.out:
            return ""
        if not ckpt.exists():
            return "; no checkpoint had been written yet"
        from mlx26.core.rl.checkpoint import safe_torch_load

        step = safe_torch_load(ckpt).get("step")
        return f"; last good checkpoint kept: {ckpt} (step {step})"

    try:
        for record in train(cfg):
            bad = _non_finite(record)
            if bad is not None:
                raise checkpoint.Divergence(
                    f"training diverged at step {record.get('step')}: {bad} = {record[bad]}{kept()}")
            if log is not None:
                log.write(json.dumps(record) + "\n")
                log.flush()
            if logger is not None:
                logger.write(record)
            yield record
            if not handles_stop and cfg.stop is not None and cfg.stop():  # an algorithm that cannot checkpoint
                raise checkpoint.interrupted(cfg, int(record.get("step") or 0), cfg.steps)  # on demand
    except checkpoint.Divergence as exc:
        if "checkpoint kept" in str(exc) or "no checkpoint" in str(exc):
            raise
        raise checkpoint.Divergence(str(exc).split("; the last good")[0] + kept()) from None
    finally:
        if log is not None:
            log.close()
        if logger is not None:
            logger.close()
