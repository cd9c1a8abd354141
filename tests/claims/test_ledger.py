"""The claims ledger: results provenance, figure keys, criteria, generated views, the JSON schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from mlx26.core.claims import ledger as L
from mlx26.core.claims.render import claims_table
from mlx26.core.common.errors import InputError

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "benchmarks" / "results"


def _results(figures: dict, **over) -> dict:
    base = {"benchmark": "toy", "command": "python benchmarks/toy.py", "commit": "abc123", "dirty": False,
            "date": "2026-12-02T10:00:00+00:00", "machine": {"cores": 2, "cpu": "x", "python": "3.11"},
            "data": [{"name": "synthetic", "source": "generated"}], "figures": figures}
    base.update(over)
    return base


def _method(**claim) -> dict:
    c = {"id": "c1", "claim": "faster", "source": "abstract", "data": "synthetic", "data_kind": "synthetic",
         "results": "toy", "figures": {"r": "speed.ratio"}, "measured": "{r:.1f}×", "criterion": "r >= 100"}
    c.update(claim)
    return {"method": "toy", "paper": "P", "docs": "docs/toy.md", "claims": [c]}


def _ledger(tmp_path: Path, method: dict, results: dict | None, strict: bool = True) -> dict:
    if results is not None:
        (tmp_path / "toy.json").write_text(json.dumps(results))
    return L.build_ledger([L.parse_method(method, "toy.yaml")], tmp_path, strict=strict)


@pytest.mark.parametrize("ratio,status", [(295.0, "reproduced"), (12.0, "not reproduced")])
def test_status_follows_the_criterion(tmp_path, ratio, status):
    row = _ledger(tmp_path, _method(), _results({"speed": {"ratio": ratio}}))["claims"][0]
    assert row["status"] == status and row["measured"] == f"{ratio:.1f}×"
    assert row["benchmark"]["commit"] == "abc123"


def test_direction_partial_and_untestable(tmp_path):
    res = _results({"speed": {"ratio": 3.0}})
    assert _ledger(tmp_path, _method(kind="direction", criterion="r > 1"), res)["claims"][0]["status"] \
        == "reproduced in direction"
    assert _ledger(tmp_path, _method(partial="r > 2"), res)["claims"][0]["status"] == "partly reproduced"
    row = _ledger(tmp_path, _method(testable=False, why="needs a GPU", results=None, figures={}, measured="",
                                    criterion=None), None)["claims"][0]
    assert row["status"] == "not testable here" and "needs a GPU" in row["measured"]


def test_missing_figure_key_fails_strict_and_is_reported_otherwise(tmp_path):
    res = _results({"speed": {"other": 1.0}})
    with pytest.raises(InputError, match="no figure 'speed.ratio'"):
        _ledger(tmp_path, _method(), res)
    assert _ledger(tmp_path, _method(), res, strict=False)["claims"][0]["status"] == "no figure"


def test_missing_results_file_fails_strict(tmp_path):
    with pytest.raises(InputError, match="no results file"):
        _ledger(tmp_path, _method(), None)


@pytest.mark.parametrize("drop", ["command", "commit", "machine", "date", "data"])
def test_results_without_provenance_fail(tmp_path, drop):
    res = _results({"speed": {"ratio": 300.0}})
    del res[drop]
    with pytest.raises(InputError, match=drop):
        _ledger(tmp_path, _method(), res)


def test_nan_figure_is_not_reproduced(tmp_path):
    row = _ledger(tmp_path, _method(), _results({"speed": {"ratio": None}}))["claims"][0]
    assert row["status"] == "not reproduced"


@pytest.mark.parametrize("bad,match", [
    ({"criterion": "__import__('os').system('true')"}, "not allowed"),
    ({"criterion": "q > 1"}, "undeclared figures"),
    ({"colour": "red"}, "unknown keys"),
    ({"data_kind": "realistic"}, "Unknown data kind"),
    ({"measured": ""}, "needs 'measured'"),
])
def test_malformed_claims_are_refused(tmp_path, bad, match):
    with pytest.raises(InputError, match=match):
        _ledger(tmp_path, _method(**bad), _results({"speed": {"ratio": 300.0}}))


def test_evaluate_whitelist():
    assert L.evaluate("abs(a - 0.3576) < 5e-4 and b", {"a": 0.35755, "b": True})
    assert L.evaluate("min(xs) >= 0.9", {"xs": [0.91, 0.95]})
    assert not L.evaluate("0 < a <= 1", {"a": 1.5})
    with pytest.raises(InputError):
        L.evaluate("a.__class__", {"a": 1})


def test_lookup_lists_and_errors():
    assert L.lookup({"rows": [{"x": 1}, {"x": 2}]}, "rows.1.x") == 2
    assert L.lookup({"g": {"first_er_0.9": 46, "first_er_0": 1}}, "g.first_er_0.9") == 46
    assert L.figure_value({"a": [3, 4]}, ["a.0", "a.1"]) == [3, 4]
    with pytest.raises(KeyError):
        L.lookup({"rows": []}, "rows.0.x")


def test_every_shipped_claim_resolves_against_the_committed_results():
    """The ledger in the repository: every claim file parses and every figure key exists (strict)."""
    methods = L.load_methods()
    assert methods, "no claims files"
    ledger = L.build_ledger(methods, RESULTS, strict=True)
    for row in ledger["claims"]:
        assert row["status"] != "no figure", row
    for m in methods:
        assert (REPO / m.docs).exists(), m.docs
        assert "<!-- claims:start -->" in (REPO / m.docs).read_text(encoding="utf-8"), m.docs


def test_shipped_snapshot_equals_a_fresh_build():
    ledger = L.build_ledger(L.load_methods(), RESULTS, strict=True)
    assert json.loads(L.SNAPSHOT.read_text(encoding="utf-8")) == json.loads(json.dumps(ledger)), \
        "core/claims/ledger.json is stale: run `make docs`"


def test_claims_json_matches_the_schema(run_cli):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "core" / "claims" / "schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    r = run_cli("claims", "--format", "json")
    assert r.code == 0, r.stderr
    payload = json.loads(r.stdout)
    jsonschema.validate(payload, schema)
    assert sum(payload["summary"].values()) == len(payload["claims"]) > 0
    broken = {**payload, "claims": [{**payload["claims"][0], "status": "sort of"}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_cli_filters_and_errors(run_cli, tmp_path):
    r = run_cli("claims", "dp-mix", "--format", "jsonl")
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.code == 0 and rows and {x["method"] for x in rows} == {"dp-mix"}
    r = run_cli("claims", "dp-mx")
    assert r.code == 2 and "Did you mean 'dp-mix'" in r.stderr
    r = run_cli("claims", "--status", "sorta")
    assert r.code == 2 and "Unknown status" in r.stderr
    r = run_cli("claims", "--results", str(tmp_path / "nowhere"))
    assert r.code == 2 and "not a folder" in r.stderr
    # an empty results folder: the listing still works, every testable claim says why it has no figure
    r = run_cli("claims", "dp-mix", "--results", str(tmp_path), "--format", "jsonl")
    assert r.code == 0 and all(json.loads(x)["status"] in ("no figure", "not testable here")
                               for x in r.stdout.splitlines())
    r = run_cli("claims", "dp-mix", "--format", "md")
    assert r.code == 0 and r.stdout.startswith("| paper claim |")


def test_docs_views_go_stale_when_a_figure_changes(tmp_path):
    """Changing a figure in a results file changes the generated page: the reference check catches it."""
    from mlx26.core.claims.render import generated_files

    shutil.copytree(RESULTS, tmp_path / "results")
    (tmp_path / "docs").mkdir()
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    shutil.copy(REPO / "docs" / "dp-mix.md", tmp_path / "docs" / "dp-mix.md")
    before = generated_files(tmp_path, tmp_path / "results")
    payload = json.loads((tmp_path / "results" / "dp_mix.json").read_text())
    payload["figures"]["multi_l1_ratio_max"] = 1.2
    (tmp_path / "results" / "dp_mix.json").write_text(json.dumps(payload))
    after = generated_files(tmp_path, tmp_path / "results")
    page = tmp_path / "docs" / "claims.md"
    assert before[page] != after[page] and "120%" in after[page]
    row = [r for r in claims_table([]).splitlines()]
    assert row[0].startswith("| paper claim")
