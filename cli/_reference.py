"""Generate the README's command table and CLI reference from the app itself.

    python -m mlx26.cli._reference --write README.md   # (make docs) rewrite the marked blocks
    python -m mlx26.cli._reference --check README.md   # exit 1 when the README is stale

The reference is every command's ``--help`` text, so it cannot drift from the code; a test
runs ``--check``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
from pathlib import Path

# (command path, paper / purpose, issue). Status is computed: "available" when the command exists.
METHODS: list[tuple[str, str, int]] = [
    ("info", "installation report: version, extras, backends", 2),
    ("io convert", "records between JSON / JSONL / CSV / TSV / lines", 2),
    ("dp-mix", "Gaussian-mixture mechanisms for (ε, δ)-DP (Liu, Selvi & Wiesemann)", 3),
    ("zoo", "small models and corpora trained and shipped by mlx26", 4),
    ("llm", "one chat interface + OpenAI-compatible server", 5),
    ("simplify", "SimpliPy rule-based simplification + Flash-ANSR (Saegert & Köthe)", 6),
    ("table-decompose", "Orthogonal Hierarchical Decomposition of tables (Cao et al.)", 7),
    ("quantize-moe", "TileQ low-rank quantization of MoE experts (Gu et al.)", 8),
    ("profile-memory", "memory-processing pipeline, cpu/gpu/fpga (He et al.)", 9),
    ("select-batch", "PartitionSel minibatch selection (Agrawal et al.)", 10),
    ("score-code", "SecCodePRM step-level security scores (Yu et al.)", 11),
    ("rpa-distill", "AutoRPA: ReAct trajectories → RPA functions (Chen et al.)", 12),
    ("train rl", "RL training: DQN, PPO, FQL, DFQL (Direct Flow Q-Learning); RAPC reach-avoid + PPO-Lagrangian (#14)", 13),
    ("rl", "OGBench-schema datasets (`rl data`), checkpoint eval, reach-avoid certify / LP optimum", 13),
    ("rationality", "rationality measures for RL agents", 0),
    ("spike", "SpikingLM", 0),
    ("spec-bench", "SPEED-Bench speculative-decoding benchmark", 0),
    ("judge-audit", "LLM-as-a-judge reliability", 0),
    ("optimize-prompt", "MR.PEA prompt optimisation", 0),
    ("train grpo", "SmartThinker GRPO training", 0),
    ("fmri", "Omni-fMRI", 0),
    ("wifi-pose", "WiFi-Mamba pose estimation", 0),
    ("vuln-games", "capability-seeking RL vulnerability games", 0),
]

TABLE_MARK = "commands"
REFERENCE_MARK = "cli-reference"


def help_text(path: list[str]) -> tuple[int, str]:
    from mlx26.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([*path, "--help"])
    return rc, out.getvalue().rstrip() + "\n"


def subcommands(text: str) -> list[str]:
    """Command names listed under "Commands:" in a help text."""
    names, inside = [], False
    for line in text.splitlines():
        if line.strip() == "Commands:":
            inside = True
            continue
        if inside:
            match = re.match(r"^  (\S+)", line)
            if match:
                names.append(match.group(1))
            elif line.strip() and not line.startswith("    "):
                inside = False
    return names


def walk(path: list[str] | None = None) -> list[tuple[list[str], str]]:
    path = path or []
    _, text = help_text(path)
    pages = [(path, text)]
    for name in subcommands(text):
        pages += walk([*path, name])
    return pages


def render_table(available: set[str]) -> str:
    rows = ["| command | what | issue | status |", "|---|---|---|---|"]
    for command, what, issue in METHODS:
        status = "available" if command in available else "planned"
        rows.append(f"| `mlx26 {command}` | {what} | {'#' + str(issue) if issue else '—'} | {status} |")
    return "\n".join(rows) + "\n"


def render_reference(pages: list[tuple[list[str], str]]) -> str:
    parts = []
    for path, text in pages:
        parts.append(f"### `{' '.join(['mlx26', *path])}`\n\n```text\n{text}```\n")
    return "\n".join(parts)


def render_blocks() -> dict[str, str]:
    pages = walk()
    available = {" ".join(p) for p, _ in pages if p}
    return {TABLE_MARK: render_table(available), REFERENCE_MARK: render_reference(pages)}


def replace_block(document: str, mark: str, body: str) -> str:
    start, end = f"<!-- {mark}:start -->", f"<!-- {mark}:end -->"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pattern.search(document):
        raise SystemExit(f"marker {start} not found")
    return pattern.sub(lambda _: f"{start}\n{body}{end}", document)


def updated(document: str) -> str:
    for mark, body in render_blocks().items():
        document = replace_block(document, mark, body)
    return document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate or check the README's CLI blocks.")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", metavar="FILE")
    group.add_argument("--check", metavar="FILE")
    args = parser.parse_args(argv)
    path = Path(args.write or args.check)
    current = path.read_text(encoding="utf-8")
    new = updated(current)
    if args.write:
        if new != current:
            path.write_text(new, encoding="utf-8")
        print(f"{path}: CLI blocks {'updated' if new != current else 'already current'}", file=sys.stderr)
        return 0
    if new != current:
        print(f"{path} is stale: run `make docs`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
