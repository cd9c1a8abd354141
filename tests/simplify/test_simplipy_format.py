"""Import of SimpliPy-format rule files (reconstructed format): parsed, re-verified, used with AC matching."""

import json

from mlx26.core.simplify import load_rules, parse_infix, simplify, to_infix

RULES = {"rules": [
    [["+", "pow2", "sin", "_0", "pow2", "cos", "_0"], ["1"]],
    [["sin", "neg", "_0"], ["sin", "_0"]],  # false (sin is odd): must be rejected
    ["exp log x1", "x1"],  # x-style pattern variable, string sides; holds only for x > 0: lossy
    [["*", "<constant>", "<constant>"], ["<constant>"]],
    [["/", "_0", "float('inf')"], ["0"]],
    [["sin"], ["x"]],  # malformed
]}


def test_import_verifies_and_labels(tmp_path):
    f = tmp_path / "simplipy_rules.json"
    f.write_text(json.dumps(RULES))
    rs = load_rules(f)
    st = rs.provenance["import_stats"]
    assert st["read"] == 6 and st["rejected"] == 1 and st["malformed"] == 1
    got = {(r["lhs"], r["rhs"]): (r["sound"], r["masked"]) for r in rs.raw}
    assert got[("+ pow2 sin _0 pow2 cos _0", "1")] == (True, False)
    assert got[("exp log _0", "_0")] == (False, False)
    assert got[("* <constant> <constant>", "<constant>")] == (True, True)
    assert ("sin neg _0", "sin _0") not in got
    out = simplify(parse_infix("x2 + cos(x1)**2 + x3 + sin(x1)**2"), rules=rs)
    assert to_infix(out) == "x2 + x3 + 1"
    assert simplify(parse_infix("exp(log(x1))"), rules=rs) != ["x1"]
    assert simplify(parse_infix("exp(log(x1))"), rules=rs, mode="lossy") == ["x1"]


def test_cli_rules_file_in_simplipy_format(run_cli, tmp_path):
    f = tmp_path / "simplipy_rules.json"
    f.write_text(json.dumps(RULES["rules"]))
    r = run_cli("simplify", "-", "--rules", f, stdin="sin(x1 + x2)**2 + x3 + cos(x1 + x2)**2\n")
    assert r.code == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[0])["simplified"] == "x3 + 1"
