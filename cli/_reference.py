"""Generate the CLI reference and the README's command table from the app itself.

    python -m mlx26.cli._reference --write   # (make docs) rewrite docs/cli-reference.md + README's table
    python -m mlx26.cli._reference --check   # exit 1 when either is stale (a test runs this)

``--root DIR`` names the repository root (default: the current folder). The reference is every
command's ``--help`` text, so it cannot drift from the code: ``docs/cli-reference.md`` is
generated whole (a hand edit makes it stale), and README.md's command table lives between
``<!-- commands:start -->`` / ``<!-- commands:end -->``. A command the app has but ``METHODS``
lacks is an error, so a new command cannot go missing from the table.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import re
import sys
from pathlib import Path

# (command path, one-line purpose, docs page, paper). Status is computed: a command the app has is
# listed in the table, the others on the "planned" line.
METHODS: list[tuple[str, str, str, str]] = [
    ("info", "installation report: version, extras, backends", "docs/cli-contract.md", "— (infrastructure)"),
    ("io convert", "records between JSON / JSONL / CSV / TSV / lines", "docs/cli-contract.md", "— (infrastructure)"),
    ("claims", "the ledger of every paper claim: what we measured, on which data, reproduced or not",
     "docs/claims.md", "— (all of them)"),
    ("dp-mix", "Gaussian-mixture noise for (ε, δ)-DP; optimised mixtures, PLD accounting, budgets", "docs/dp-mix.md",
     "Liu, Selvi & Wiesemann, *Mind the Gap*"),
    ("zoo", "small models and corpora trained and shipped by mlx26", "docs/zoo.md", "— (ours)"),
    ("llm", "one chat interface + OpenAI-compatible server", "docs/llm.md", "— (ours)"),
    ("simplify", "SimpliPy rule-based simplification of expressions", "docs/simplify.md",
     "Saegert & Köthe, *Breaking the Simplification Bottleneck*"),
    ("table-decompose", "header trees and cell lineage of complex tables (OHD)", "docs/table-decompose.md",
     "Cao et al., *Orthogonal Hierarchical Decomposition*"),
    ("quantize-moe", "TileQ low-rank quantization of MoE experts", "docs/quantize-moe.md", "Gu et al., *TileQ*"),
    ("profile-memory", "memory-processing pipeline, cpu/gpu/fpga", "docs/profile-memory.md",
     "He et al., *Understand and Accelerate Memory Processing Pipeline …*"),
    ("select-batch", "PartitionSel minibatch selection", "docs/select-batch.md", "Agrawal et al., *PartitionSel*"),
    ("score-code", "step-level security scores (SecCodePRM); ONNX export, streaming", "docs/score-code.md",
     "Yu et al., *SecCodePRM*"),
    ("rpa-distill", "ReAct trajectories → RPA functions (AutoRPA)", "docs/rpa-distill.md", "Chen et al., *AutoRPA*"),
    ("train rl", "DQN, PPO, FQL, DFQL; RAPC reach-avoid", "docs/rl.md",
     "*Direct Flow Q-Learning*; Pan et al., *Stochastic minimum-cost reach-avoid RL*"),
    ("rl", "offline datasets (make; OGBench/D4RL/Minari info, convert), eval, sweep, plot, reach-avoid certify",
     "docs/rl.md", "as `train rl`"),
    ("rationality", "exact rational risk, its gap and W1 bounds (toy-text MDPs)", "docs/rationality.md",
     "Qian, Storkey & He, *Rationality measures for RL agents* ([2602.04737](https://arxiv.org/abs/2602.04737))"),
    ("spike", "spiking transformer classifiers: DAS, Spike2Max, modelled energy vs the ANN twin, ONNX export",
     "docs/spike.md", "*SpikingLM* (reconstruction from the abstract; no public code)"),
    ("spec-bench", "speculative decoding by domain and concurrency: diversity split, 3 engines, server sweep",
     "docs/spec-bench.md", "NVIDIA, *SPEED-Bench* ([2604.09557](https://arxiv.org/abs/2604.09557))"),
    ("judge-audit", "LLM-as-a-judge reliability: metrics, corrected ASR, ReliableBench, JudgeStressTest",
     "docs/judge-audit.md", "Schwinn et al., *A Coin Flip for Safety* ([2603.06594](https://arxiv.org/abs/2603.06594))"),
    ("optimize-prompt", "MR.PEA label-free prompt optimisation under a hard budget; SPO/APE baselines, eval",
     "docs/optimize-prompt.md", "*MR.PEA: Prompt Optimization with Minimal Unlabeled Input via Meta-Reasoning* "
     "(reconstruction; no public code)"),
    ("train grpo", "GRPO (TRL) with a length reward, after an SFT warm-up", "docs/smartthinker.md",
     "*SmartThinker* ([2603.08000](https://arxiv.org/abs/2603.08000))"),
    ("vuln-games", "vulnerability games (compliance, self-grading, proxy, tampering): GRPO/REINFORCE/TRL, persistence, "
     "transcript auditor", "docs/vuln-games.md",
     "*Capability-Oriented Training Induced Alignment Risk* ([2602.12124](https://arxiv.org/abs/2602.12124))"),
    ("reward length", "per-group length rewards: SmartThinker, Kimi, Arora, L1, ThinkPrune",
     "docs/smartthinker.md", "*SmartThinker* ([2603.08000](https://arxiv.org/abs/2603.08000))"),
    ("data arith", "synthetic arithmetic prompts, gold answers, concise/verbose chains", "docs/smartthinker.md",
     "— (ours; task of `train grpo`)"),
    ("fmri", "atlas-free fMRI tokens: dynamic patching, tiny MAE, embeddings, linear probe", "docs/fmri.md",
     "*Omni-fMRI* ([2601.23090](https://arxiv.org/abs/2601.23090))"),
    ("wifi-pose", "WiFi CSI 3D multi-person pose: csiread I/O, sanitisation, dual-stream selective SSM, ONNX",
     "docs/wifi-pose.md", "*WiFi-Mamba* (reconstruction; no public code)"),
    ("sr", "Flash-ANSR symbolic regression: prior, tiny bit-encoded model, LM constants, Pareto front",
     "docs/sr.md", "Saegert & Köthe, *Flash-ANSR* ([2602.08885](https://arxiv.org/abs/2602.08885))"),
]

TABLE_MARK = "commands"
README = "README.md"
REFERENCE = "docs/cli-reference.md"
RESULTS = "benchmarks/results"
REFERENCE_HEADER = """\
# mlx26 CLI reference

Every command's `--help`, generated by `make docs` (`python -m mlx26.cli._reference --write`).
Do not edit this file: a test fails when it differs from the app. The I/O contract shared by
every command is in [cli-contract.md](cli-contract.md).
"""


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
            if not line.strip():
                inside = False  # the list ends at a blank line (group epilogs, e.g. Examples, follow)
                continue
            match = re.match(r"^  (\S+)", line)
            if match:
                names.append(match.group(1))
            elif not line.startswith("    "):
                inside = False
    return names


def walk(path: list[str] | None = None) -> list[tuple[list[str], str]]:
    """Every help page under ``path``, depth first. Rendering all of them takes ~15 s, and the app
    cannot change inside one process, so the pages are computed once per process and copied out."""
    return [(list(p), text) for p, text in _walk(tuple(path or ()))]


@functools.cache
def _walk(path: tuple[str, ...]) -> tuple[tuple[tuple[str, ...], str], ...]:
    _, text = help_text(list(path))
    pages = [(path, text)]
    for name in subcommands(text):
        pages += _walk((*path, name))
    return tuple(pages)


def unlisted(available: set[str]) -> list[str]:
    """Top-level commands of the app that no ``METHODS`` row names."""
    tops = sorted({command.split()[0] for command in available})
    return [top for top in tops
            if not any(row == top or row.startswith(top + " ") for row, *_ in METHODS)]


def render_table(available: set[str]) -> str:
    rows = ["| command | what it does | docs | paper |", "|---|---|---|---|"]
    planned = []
    for command, what, doc, paper in METHODS:
        if command not in available:
            planned.append(f"`{command}` ({what})")
            continue
        link = f"[{Path(doc).stem}]({doc})" if doc else "—"
        rows.append(f"| `mlx26 {command}` | {what} | {link} | {paper or '—'} |")
    text = "\n".join(rows) + "\n"
    if planned:
        text += "\nPlanned, not yet available: " + ", ".join(planned) + ".\n"
    return text


def render_reference(pages: list[tuple[list[str], str]]) -> str:
    tops = [path[0] for path, _ in pages if len(path) == 1]
    index = " · ".join(f"[`{name}`](#mlx26-{name})" for name in tops)
    parts = [REFERENCE_HEADER, f"Commands: {index}\n"]
    for path, text in pages:
        parts.append(f"## `{' '.join(['mlx26', *path])}`\n\n```text\n{text}```\n")
    return "\n".join(parts)


def replace_block(document: str, mark: str, body: str, where: str = README) -> str:
    """The generated block between ``<!-- mark:start -->`` and ``<!-- mark:end -->`` (one implementation,
    shared with the claims ledger's views)."""
    from mlx26.core.claims.render import replace_block as replace

    return replace(document, mark, body, where)


def render(root: Path) -> tuple[dict[Path, str], list[str]]:
    """{file: its up-to-date text} for README.md, docs/cli-reference.md and the claims ledger's views
    (docs/claims.md, each ported page's claims block, core/claims/ledger.json), and unlisted commands."""
    from mlx26.core.claims.render import generated_files

    pages = walk()
    available = {" ".join(p) for p, _ in pages if p}
    readme = root / README
    readme_text = replace_block(readme.read_text(encoding="utf-8"), TABLE_MARK, render_table(available))
    results = root / RESULTS if (root / RESULTS).is_dir() else Path(__file__).resolve().parents[1] / RESULTS
    return ({root / REFERENCE: render_reference(pages), **generated_files(root, results, readme_text)},
            unlisted(available))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate or check the CLI reference and README's table.")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="rewrite the generated files")
    group.add_argument("--check", action="store_true", help="exit 1 when a generated file is stale")
    parser.add_argument("--root", type=Path, default=Path("."), help="the repository root")
    args = parser.parse_args(argv)
    wanted, missing = render(args.root)
    if missing:
        print(f"commands missing from METHODS in cli/_reference.py: {', '.join(missing)}", file=sys.stderr)
    stale = [path for path, text in wanted.items()
             if not path.exists() or path.read_text(encoding="utf-8") != text]
    if args.write:
        for path in stale:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(wanted[path], encoding="utf-8")
        for path in wanted:
            print(f"{path}: {'updated' if path in stale else 'already current'}", file=sys.stderr)
        return 1 if missing else 0
    for path in stale:
        print(f"{path} is stale: run `make docs`", file=sys.stderr)
    return 1 if stale or missing else 0


if __name__ == "__main__":
    sys.exit(main())
