"""``mlx26 wifi-pose``: WiFi-Mamba (ICML 2026; a RECONSTRUCTION, no public code) — dual-stream selective SSMs
for WiFi CSI 3D multi-person pose, a PiW3D-style transformer baseline and ONNX edge inference. Thin wrapper
over ``mlx26.core.wifi_pose``; shared options live in ``cli/_wifi_pose.py``, the model commands in
``cli/_wifi_pose_model.py``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer
from mlx26.cli import _wifi_pose as W
from mlx26.cli import _wifi_pose_model
from mlx26.cli._errors import InputError
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    FormatOpt,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    SeedOpt,
    emit,
    notice,
)

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)
A = OutputFormat.auto


def _capture(path: str, chip: str, quiet: bool, strict: bool):
    from mlx26.core.wifi_pose import io

    cap = io.read_capture(path, W.chip(chip))
    if cap.first_bad_offset is not None:
        msg = (f"{path} is truncated or corrupt: {cap.walked} packets parsed, first bad record at byte offset "
               f"{cap.first_bad_offset} of {io.file_size(path)}")
        if strict:
            raise InputError(msg, "drop --strict to keep the packets before it")
        notice(f"wifi-pose: warning: {msg}", quiet)
    if cap.parsed != cap.walked:
        notice(f"wifi-pose: warning: csiread parsed {cap.parsed} packets, the record walk counts {cap.walked}", quiet)
    return cap


@app.command("read")
def read_cmd(capture: W.CaptureArg, chip: W.ChipOpt = "intel5300",
             strict: Annotated[bool, typer.Option("--strict", help="Fail on a truncated capture.")] = False,
             output: Annotated[str | None, typer.Option("--output", "-o", help="PATH.npz: write the parsed CSI "
                                                        "(csi, time_s, subcarriers); other paths get the summary.",
                                                        metavar="PATH")] = None,
             fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """Parse a capture with csiread: packets (checked against a walk of its records), antennas, subcarriers, timing.

    \b
    Examples:
      mlx26 wifi-pose read ../shared/data/csi/intel5300_sample_0x5_64_3000.dat --chip intel5300 -o csi.npz
    """
    W.start(output, force)
    cap = _capture(capture, chip, quiet, strict)
    rec = cap.summary()
    if output and output.endswith(".npz"):
        import numpy as np
        from mlx26.core.common.files import atomic_path

        with atomic_path(output, suffix=".npz") as tmp:
            np.savez_compressed(tmp, csi=cap.csi, time_s=cap.time_s, subcarriers=cap.subcarriers,
                                layout=np.array("pkt-link-ant-sub"), chip=np.array(cap.chip))
        emit({**rec, "npz": output}, None, fmt, title="wifi-pose read")
        return
    emit(rec, output, fmt, force=force, title="wifi-pose read")


@app.command("sanitize")
def sanitize_cmd(capture: W.CaptureArg, chip: W.ChipOpt = "intel5300",
                 weighted: Annotated[bool, typer.Option("--weighted/--unweighted", help="|CSI|²-weighted linear fit "
                                                        "(PiW3D's is unweighted).")] = True,
                 refine: Annotated[bool, typer.Option("--refine/--no-refine", help="One feasible-GLS refit with "
                                                      "per-antenna residual variances.")] = True,
                 npz: Annotated[str | None, typer.Option("--npz", help="Write sanitised phase and denoised "
                                                         "amplitude here.", metavar="PATH")] = None,
                 output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """Phase std across packets (per subcarrier, median) before and after sanitisation; NaN/zero packets dropped.

    \b
    Examples:
      mlx26 wifi-pose sanitize ../shared/data/csi/intel5300_sample_0x5_64_3000.dat --npz sanitized.npz
    """
    W.start(output, force, npz)
    from mlx26.core.wifi_pose import sanitize as S

    cap = _capture(capture, chip, quiet, False)
    csi, n_nan, n_zero = S.clean_packets(cap.csi)
    if n_nan or n_zero:
        notice(f"wifi-pose: dropped {n_nan} packets with NaN/Inf CSI and {n_zero} all-zero packets", quiet)
    if len(csi) < 2:
        raise InputError(f"{capture}: fewer than 2 usable packets")
    rec = {"path": capture, "packets": int(len(csi)), "dropped_nan": n_nan, "dropped_zero": n_zero,
           **S.capture_report(csi, cap.subcarriers, weighted=weighted, refine=refine)}
    if npz:
        import numpy as np
        from mlx26.core.common.files import atomic_path

        fit = S.sanitize_phase(csi, cap.subcarriers, weighted=weighted, refine=refine)
        with atomic_path(npz, suffix=".npz") as tmp:
            np.savez_compressed(tmp, phase=fit.phase.astype(np.float32), slope=fit.slope, offset=fit.offset,
                                amplitude=S.denoise_amplitude(np.abs(csi), axis=0).astype(np.float32))
        rec["npz"] = npz
    emit(rec, output, fmt, force=force, title="wifi-pose sanitize")


@app.command("synth")
def synth_cmd(dest: Annotated[str, typer.Argument(help="PATH.npz (our clips layout) or a folder (PiW3D layout: "
                                                  "csi/*.mat, keypoint/*.npy).", metavar="DEST")],
              sequences: Annotated[int, typer.Option("--sequences", min=1, metavar="N")] = 8,
              frames: Annotated[int, typer.Option("--frames", help="Frames per sequence.", min=1, metavar="N")] = 16,
              packets: Annotated[int, typer.Option("--packets", help="Packets per frame.", min=2, metavar="N")] = 20,
              persons: Annotated[int, typer.Option("--persons", help="At most this many persons (1-3).", min=1,
                                                   max=3, metavar="N")] = 3,
              snr: Annotated[float, typer.Option("--snr", help="SNR in dB (-30 to 100).", min=-30, max=100,
                                                 metavar="NUMBER")] = 25.0,
              sto: Annotated[float, typer.Option("--sto-ns", help="Timing offset range ± ns (0 to 1000).", min=0,
                                                 max=1000, metavar="NUMBER")] = 40.0,
              seed: SeedOpt = 0, output: OutputOpt = None, fmt: FormatOpt = A, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False,
              quiet: QuietOpt = False) -> None:
    """Write SYNTHETIC CSI from 3D poses (room, Tx/Rx arrays, body scatterers, impairments, smooth motion).

    \b
    Examples:
      mlx26 wifi-pose synth clips.npz --sequences 4 --frames 8 --force --format json
    """
    if not (math.isfinite(snr) and math.isfinite(sto)):  # typer's range check lets NaN through
        raise InputError(f"--snr and --sto-ns must be finite numbers, got {snr} and {sto}")
    if Path(dest).exists() and not force:
        raise InputError(f"refusing to overwrite existing file {dest}", "pass --force to replace it")
    W.start(output, force)
    from mlx26.core.wifi_pose import io, synth

    clips = synth.generate(sequences=sequences, frames=frames, packets=packets, max_persons=persons, snr_db=snr,
                           sto_ns=sto, seed=seed)
    if dest.endswith(".npz"):
        io.save_clips(clips, dest)
    else:
        from mlx26.core.common.files import atomic_folder

        with atomic_folder(dest) as tmp:
            io.write_piw3d(clips, tmp)
    emit({**clips.summary(), "dest": dest, "layout": "npz" if dest.endswith(".npz") else "piw3d", "seed": seed},
         output, fmt, force=force, title="wifi-pose synth (SYNTHETIC)")


_wifi_pose_model.register(app)  # train, eval, export, bench (cli/_wifi_pose_model.py)
