"""Uniform options (issue 31): every command that produces output takes -o/--output, --format,
--field, -q/--quiet and --force; --force reads MLX26_FORCE and names options the command has;
help metavars are plain words. The walk reads each command's --help (the generated reference's
source), so it covers every registered command, present and future."""

from __future__ import annotations

import json
import re

import pytest
from mlx26.cli._reference import subcommands, walk

UNIFORM = ("-o", "--output", "--format", "--field", "-q", "--quiet", "--force")

PENDING: dict[str, set[str]] = {}  # commands still missing a uniform option (none)
PENDING_FORCE_ENV: set[str] = set()
PENDING_METAVARS: set[str] = set()


def _leaves() -> list[tuple[str, str]]:
    return [(" ".join(path), text) for path, text in walk() if path and not subcommands(text)]


def options(text: str) -> dict[tuple[str, ...], str]:
    """Option names → help text (continuation lines joined), from the Options section of a help page."""
    entries: dict[tuple[str, ...], str] = {}
    current: tuple[str, ...] | None = None
    for line in text.split("\nOptions:\n", 1)[1].splitlines():
        m = re.match(r"^  (-\S.*?)(?:  +(.*))?$", line)
        if m:
            head = re.split(r" (?=[A-Z<{\[])", m.group(1))[0]
            current = tuple(re.findall(r"(?<![\w-])(--?\w[\w-]*)", head))
            entries[current] = m.group(2) or ""
        elif current and line.startswith("    "):
            entries[current] += " " + line.strip()
    return entries


def _names(text: str) -> set[str]:
    return {name for names in options(text) for name in names}


def test_the_option_parser_reads_a_help_page():
    text = "Usage: x\n\nOptions:\n  -o, --output PATH  Write here.\n  --force            Overwrite\n" \
           "                     an existing --output file.  [env var: MLX26_FORCE]\n  -h, --help  Help.\n"
    assert options(text) == {("-o", "--output"): "Write here.",
                             ("--force",): "Overwrite an existing --output file.  [env var: MLX26_FORCE]",
                             ("-h", "--help"): "Help."}


@pytest.mark.parametrize(("command", "text"), _leaves())
def test_every_command_takes_the_uniform_options(command, text):
    missing = {name for name in UNIFORM if name not in _names(text)}
    assert missing == PENDING.get(command, set()), f"mlx26 {command}: missing {sorted(missing)}"


@pytest.mark.parametrize(("command", "text"), _leaves())
def test_force_reads_mlx26_force_and_names_options_the_command_has(command, text):
    entries = options(text)
    force = next(h for names, h in entries.items() if "--force" in names)
    if command in PENDING_FORCE_ENV:
        assert "MLX26_FORCE" not in force
        return
    assert "[env var: MLX26_FORCE]" in force, f"mlx26 {command}: --force ignores MLX26_FORCE"
    named = set(re.findall(r"(?<![\w<>/-])(--?[a-z][\w-]*)", force.split("[env var")[0]))
    assert named <= _names(text), f"mlx26 {command}: --force help names {sorted(named - _names(text))}"
    if "--out" in _names(text) and command not in PENDING:
        assert "--out" in named, f"mlx26 {command}: --force help does not say it replaces --out"


TYPE_METAVAR = re.compile(r"<(?:int|float|str|path|int range|float range|list\[[^\]]*\])>")


@pytest.mark.parametrize(("command", "text"), _leaves())
def test_help_metavars_are_plain_words(command, text):
    usage = text.splitlines()[0]
    option_lines = "\n".join(f"{' '.join(names)} {h}" for names, h in options(text).items())
    option_heads = [line for line in text.split("\nOptions:\n", 1)[1].splitlines() if line.startswith("  -")]
    bad = [m for line in option_heads for m in TYPE_METAVAR.findall(line)]
    bad += re.findall(r"\{[a-z_]+\}|\[\[", usage)
    if command.split()[0] in PENDING_METAVARS:
        return
    assert not bad, f"mlx26 {command}: type-name metavars {bad} (give metavar='N', 'FILE', …)"
    assert option_lines


# ------------------------------------------------------------------ behaviour

def test_field_prints_one_field_a_line(run_cli):
    names = run_cli("zoo", "list", "--field", "name").stdout.splitlines()
    records = json.loads(run_cli("zoo", "list", "--format", "json").stdout)
    assert names == [r["name"] for r in records] and len(names) >= 3


def test_field_on_a_single_result_and_with_a_file(run_cli, tmp_path):
    result = run_cli("dp-mix", "calibrate", "-e", "1", "-d", "1e-5", "--field", "sigma")
    assert result.code == 0
    sigma = float(result.stdout)
    full = json.loads(run_cli("dp-mix", "calibrate", "-e", "1", "-d", "1e-5", "--format", "json").stdout)
    assert sigma == full["sigma"]
    out = tmp_path / "sigma.txt"
    assert run_cli("dp-mix", "calibrate", "-e", "1", "-d", "1e-5", "--field", "sigma", "-o", out).code == 0
    assert float(out.read_text()) == sigma


def test_unknown_field_is_a_usage_error_with_the_names(run_cli):
    result = run_cli("zoo", "list", "--field", "nmae")
    assert result.code == 2
    assert result.error_lines[0].startswith("Error: no field 'nmae'") and "Did you mean 'name'?" in result.error_lines[0]
    assert result.error_lines[1].startswith("Hint: fields: name")


def test_field_does_not_leak_into_the_next_run(run_cli):
    assert run_cli("zoo", "list", "--field", "name").code == 0
    assert json.loads(run_cli("zoo", "list", "--format", "json").stdout)[0]["name"]


@pytest.mark.parametrize("argv", [
    ["io", "convert", "-", "--format", "csv", "-q"],
    ["simplify", "equiv", "x1", "x1", "-q"],
    ["zoo", "path", "tiny-llama", "-q", "--format", "json"],
])
def test_quiet_and_format_are_accepted_where_they_failed(run_cli, argv):
    result = run_cli(*argv, stdin='{"a": 1}\n')
    assert result.code == 0, result.stderr
    assert result.stdout.strip()


def test_quiet_silences_notices_of_commands_that_do_not_pass_it_on(run_cli):
    loud = run_cli("simplify", "mine", "--max-len", "2", "--n-vars", "1", "--operator", "neg")
    quiet = run_cli("simplify", "mine", "--max-len", "2", "--n-vars", "1", "--operator", "neg", "-q")
    assert "verified rules" in loud.stderr and quiet.stderr == ""
    assert quiet.stdout == loud.stdout


def test_zoo_path_is_bare_by_default_and_a_record_on_request(run_cli):
    bare = run_cli("zoo", "path", "tiny-llama").stdout.strip()
    record = json.loads(run_cli("zoo", "path", "tiny-llama", "--format", "json").stdout)
    assert record == {"name": "tiny-llama", "path": bare}


def test_mlx26_force_replaces_like_force(run_cli, tmp_path, monkeypatch):
    out = tmp_path / "cal.json"
    argv = ("dp-mix", "calibrate", "-e", "1", "-d", "1e-5", "-o", out)
    assert run_cli(*argv).code == 0
    refused = run_cli(*argv)
    assert refused.code == 2 and "refusing to overwrite" in refused.stderr
    out.write_text("stale")
    monkeypatch.setenv("MLX26_FORCE", "1")
    assert run_cli(*argv).code == 0
    assert json.loads(out.read_text())["sigma"] > 0
    monkeypatch.setenv("MLX26_FORCE", "0")
    assert run_cli(*argv).code == 2
