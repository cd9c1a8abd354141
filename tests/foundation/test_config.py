"""--config FILE: keys are option names, the command line wins, unknown keys are errors."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def records(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n')
    return path


def test_config_sets_defaults(run_cli, records, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("format: csv\n")
    assert run_cli("io", "convert", records, "--config", cfg).stdout == "a\n1\n"


def test_command_line_wins_over_config(run_cli, records, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("format: csv\n")
    result = run_cli("io", "convert", records, "--format", "json", "--config", cfg)
    assert json.loads(result.stdout) == [{"a": 1}]


def test_kebab_and_snake_keys_and_json_config(run_cli, tmp_path):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"input-format": "lines", "detect_types": True, "format": "jsonl"}))
    result = run_cli("io", "convert", "-", "--config", cfg, stdin="a,1\n")
    assert result.stdout == '{"value": "a,1"}\n'


def test_unknown_key_is_rejected_with_suggestion(run_cli, records, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("fromat: csv\n")
    result = run_cli("io", "convert", records, "--config", cfg)
    assert result.code == 2
    assert "unknown key 'fromat'" in result.error_lines[0] and "Did you mean 'format'?" in result.error_lines[0]
    assert result.error_lines[1].startswith("Hint: valid keys:")


@pytest.mark.parametrize(("content", "needle"), [("format: [unclosed\n", "cannot parse"),
                                                 ("- a\n- b\n", "must hold a mapping"),
                                                 ("format: xml\n", "xml")])
def test_malformed_config(run_cli, records, tmp_path, content, needle):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(content)
    result = run_cli("io", "convert", records, "--config", cfg)
    assert result.code == 2 and needle in result.error_lines[0]


def test_missing_config_file(run_cli, records, tmp_path):
    result = run_cli("io", "convert", records, "--config", tmp_path / "nope.yaml")
    assert result.code == 2 and "config file not found" in result.stderr


def test_print_config_shows_resolved_options(run_cli, records, tmp_path):
    import yaml

    cfg = tmp_path / "c.yaml"
    cfg.write_text("format: csv\ndetect-types: true\n")
    result = run_cli("io", "convert", records, "--config", cfg, "--format", "tsv", "--print-config")
    assert result.code == 0
    resolved = yaml.safe_load(result.stdout)
    assert resolved["format"] == "tsv" and resolved["detect-types"] is True and resolved["input"] == str(records)
