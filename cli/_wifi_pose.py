"""Options and loaders shared by the ``mlx26 wifi-pose`` commands (kept out of cli/wifi_pose.py to keep it thin)."""

from __future__ import annotations

from typing import Annotated

import typer
from mlx26.cli._errors import InputError, require, unknown_name
from mlx26.cli._io import check_output, notice
from mlx26.core.wifi_pose.spec import CHIPS, MODELS, PIW3D_LAYOUT, PIW3D_SHAPE, PRESETS

CaptureArg = Annotated[str, typer.Argument(help="A raw CSI capture (.dat) from the Intel 5300 or Atheros CSI tool.",
                                           metavar="CAPTURE")]
ClipsArg = Annotated[str, typer.Argument(help="Clips: an NPZ from `wifi-pose synth`, or a Person-in-WiFi-3D folder "
                                         "(csi/*.mat + keypoint/*.npy).", metavar="CLIPS")]
ChipOpt = Annotated[str, typer.Option("--chip", help="intel5300 | atheros (parsed by csiread).", metavar="TEXT")]
LayoutOpt = Annotated[str, typer.Option("--layout", help="Axis order of csi_out in .mat files, names joined by '-'.", metavar="TEXT")]
LinksOpt = Annotated[int | None, typer.Option("--links", help="Expected links (Rx NICs) in .mat files.", min=1, metavar="N")]
AntOpt = Annotated[int | None, typer.Option("--antennas", help="Expected antennas per link in .mat files.", min=1, metavar="N")]
SubOpt = Annotated[int | None, typer.Option("--subcarriers", help="Expected subcarriers in .mat files.", min=1, metavar="N")]
PktOpt = Annotated[int | None, typer.Option("--packets", help="Expected packets per frame in .mat files.", min=1, metavar="N")]
ModelOpt = Annotated[str, typer.Option("--model", "-m", help="Checkpoint from `wifi-pose train --save`.",
                                       metavar="PATH")]
ArchOpt = Annotated[str, typer.Option("--arch", help="mamba (WiFi-Mamba) | transformer (PiW3D-style baseline).", metavar="TEXT")]
PresetOpt = Annotated[str, typer.Option("--preset", help="Model size: tiny | small.", metavar="TEXT")]
MemoryOpt = Annotated[bool, typer.Option("--memory/--no-memory", help="Persistent SSM memory across frames.")]


def start(output: str | None, force: bool, *files: str | None, torch: bool = False) -> None:
    """Check every output path before any work starts, and that the wifi extra is installed."""
    check_output(output, force)
    for f in files:
        if f:
            check_output(f, force)
    require("csiread", "wifi")
    require("pywt", "wifi")
    if torch:
        require("torch", "wifi")


def check_choice(kind: str, value: str, choices) -> str:
    if value not in choices:
        raise unknown_name(kind, value, choices)
    return value


def check_model(arch: str, preset: str) -> None:
    check_choice("arch", arch, MODELS)
    check_choice("preset", preset, PRESETS)


def chip(value: str) -> str:
    return check_choice("chip", value, CHIPS)


def expect(links, antennas, subcarriers, packets, layout: str = PIW3D_LAYOUT) -> dict:
    from mlx26.core.wifi_pose.io import parse_layout

    parse_layout(layout)
    return {"link": links, "ant": antennas, "sub": subcarriers, "pkt": packets}


def clips(source: str, quiet: bool, layout: str = PIW3D_LAYOUT, exp: dict | None = None):
    """Clips from an NPZ or a PiW3D folder; notices (dropped clips, mm → m) on stderr."""
    from pathlib import Path

    from mlx26.core.wifi_pose import io

    if source == "-":
        raise InputError("wifi-pose reads files, not stdin", "pass an NPZ or a PiW3D folder")
    p = Path(source)
    c = io.load_piw3d(p, layout, exp) if p.is_dir() else io.load_clips(p, exp)
    for n in c.notices:
        notice(f"wifi-pose: {n}", quiet)
    return c


def tag(synthetic: bool) -> dict:
    return {"data": "SYNTHETIC"} if synthetic else {}


DEFAULT_SHAPE = PIW3D_SHAPE
