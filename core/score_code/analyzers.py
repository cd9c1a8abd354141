"""Static analyzers as step labellers and baselines: bandit and semgrep (SecCodePRM reconstruction).

The paper labels training steps with analyzer findings. We run the analyzers as subprocesses
on many files at once and return their findings as line ranges. semgrep only ever runs with
local rule files and ``--metrics=off`` (no registry configs: there is no network here, and a
registry config would send code out); ``--validate`` is never used (it fetches a meta-schema).
A missing analyzer raises :class:`AnalyzerMissing` (the CLI turns it into exit 3 + install hint).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.score_code.spec import ANALYZERS

RULES_DIR = Path(__file__).resolve().parent / "rules"
_REGISTRY_PREFIXES = ("p/", "r/", "s/", "auto", "http://", "https://", "gh:", "supply-chain", "secrets")


class AnalyzerMissing(RunFailure):
    def __init__(self, name: str):
        super().__init__(f"the analyzer '{name}' is not installed.")
        self.name = name


@dataclass(frozen=True)
class Finding:
    file: str
    start_line: int
    end_line: int
    analyzer: str
    rule: str
    severity: str
    message: str

    def to_record(self) -> dict:
        return {"file": self.file, "start_line": self.start_line, "end_line": self.end_line,
                "analyzer": self.analyzer, "rule": self.rule, "severity": self.severity, "message": self.message}


def _executable(name: str) -> str | None:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else shutil.which(name)


def available(name: str) -> bool:
    if name == "bandit":
        return importlib.util.find_spec("bandit") is not None
    if name == "semgrep":
        return _executable("semgrep") is not None
    raise InputError(f"unknown analyzer '{name}'.", "choose one of: " + ", ".join(ANALYZERS))


def check_rules(rules: Sequence[str]) -> list[str]:
    """Local rule paths only; a registry config is refused with the reason."""
    out = []
    for rule in rules:
        if not Path(rule).exists():
            if rule.startswith(_REGISTRY_PREFIXES) or "://" in rule:
                raise InputError(f"semgrep config '{rule}' is a registry config: it needs the network and would "
                                 "send code out, so mlx26 refuses it.",
                                 "give a local rule file or folder, e.g. the shipped rules: --rules "
                                 f"{RULES_DIR}")
            raise InputError(f"semgrep rule path not found: {rule}")
        out.append(str(Path(rule).resolve()))  # semgrep runs inside the staging folder: relative paths would miss
    return out or [str(RULES_DIR)]


def _stage(sources: dict[str, str], tmp: str) -> dict[str, str]:
    """Write sources to files under tmp; return staged path → original name."""
    staged = {}
    for i, (name, text) in enumerate(sources.items()):
        path = Path(tmp) / f"f{i:06d}.py"
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        staged[str(path)] = name
    return staged


def run_bandit(sources: dict[str, str], timeout: float = 600) -> list[Finding]:
    """bandit findings for name → source text (all severities and confidences)."""
    if not available("bandit"):
        raise AnalyzerMissing("bandit")
    if not sources:
        return []
    with tempfile.TemporaryDirectory(prefix="mlx26-bandit-") as tmp:
        staged = _stage(sources, tmp)
        proc = subprocess.run([sys.executable, "-m", "bandit", "-q", "-f", "json", "-r", tmp],
                              capture_output=True, text=True, timeout=timeout)
        try:
            data = json.loads(proc.stdout)
        except json.JSONDecodeError as exc:
            raise RunFailure(f"bandit failed (exit {proc.returncode}): {proc.stderr.strip()[:300]}") from exc
    out = []
    for r in data.get("results", []):
        lines = r.get("line_range") or [r["line_number"]]
        out.append(Finding(staged.get(r["filename"], r["filename"]), min(lines), max(lines), "bandit",
                           r["test_id"], r["issue_severity"], r["issue_text"]))
    return out


def run_semgrep(sources: dict[str, str], rules: Sequence[str] = (), timeout: float = 600) -> list[Finding]:
    """semgrep findings with local rules only, metrics off, no version check."""
    configs = check_rules(rules)
    exe = _executable("semgrep")
    if exe is None:
        raise AnalyzerMissing("semgrep")
    if not sources:
        return []
    env = {**os.environ, "SEMGREP_ENABLE_VERSION_CHECK": "0", "SEMGREP_SEND_METRICS": "off"}
    with tempfile.TemporaryDirectory(prefix="mlx26-semgrep-") as tmp:
        staged = _stage(sources, tmp)
        cmd = [exe, "scan", "--metrics=off", "--disable-version-check", "--json", "--quiet", "--no-git-ignore",
               "--jobs", "1"]
        for c in configs:
            cmd += ["--config", c]
        proc = subprocess.run(cmd + [tmp], capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp)
        try:
            data = json.loads(proc.stdout)
        except json.JSONDecodeError as exc:
            detail = " ".join(proc.stderr.split())[:300]
            if proc.returncode == 2 and rules:  # semgrep's "invalid configuration" exit, with the user's rules
                raise InputError(f"semgrep could not use --rules {' '.join(rules)} (exit 2)"
                                 + (f": {detail}" if detail else "."), "give local semgrep YAML rules") from None
            raise RunFailure(f"semgrep failed (exit {proc.returncode}): {detail}") from exc
    fatal = [e for e in data.get("errors", []) if e.get("level") == "error"]
    if fatal:  # a bad rule set would otherwise label every step 0
        message = " ".join(str(fatal[0].get("message", fatal[0].get("type", "?"))).split())[:200]
        raise InputError(f"semgrep rejected the run: {message}", "check --rules (local semgrep YAML rules)")
    out = []
    for r in data.get("results", []):
        path = r["path"] if os.path.isabs(r["path"]) else str(Path(tmp) / r["path"])
        extra = r.get("extra", {})
        out.append(Finding(staged.get(path, r["path"]), r["start"]["line"], r["end"]["line"], "semgrep",
                           r["check_id"].rsplit(".", 1)[-1], str(extra.get("severity", "")),
                           str(extra.get("message", ""))))
    return out


def run(name: str, sources: dict[str, str], rules: Sequence[str] = ()) -> list[Finding]:
    if name == "bandit":
        return run_bandit(sources)
    if name == "semgrep":
        return run_semgrep(sources, rules)
    raise InputError(f"unknown analyzer '{name}'.", "choose one of: " + ", ".join(ANALYZERS))
