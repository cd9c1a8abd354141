"""Step labels: analyzer findings (bandit acceptance), local vs monotone, fix diffs, ruleid annotations."""

from __future__ import annotations

import pytest
from mlx26.core.score_code import analyzers
from mlx26.core.score_code.labels import annotation_ranges, covered_lines, diff_ranges, step_labels
from mlx26.core.score_code.segment import segment

# Inputs in the style of bandit's own examples/ folder (one small module per check).
BANDIT_STYLE = {
    "os_system.py": "import os\n\nos.system('/bin/echo hi')\nos.system(user_input)\n",
    "subprocess_shell.py": ("import subprocess\nfrom subprocess import Popen as pop\n\n"
                            "subprocess.Popen('/bin/ls *', shell=True)\n"
                            "pop('/bin/gcc --version', shell=True)\n"
                            "subprocess.call(['/bin/ls', '-l'], shell=False)\n"),
    "pickle_deserialize.py": ("import pickle\nimport io\n\npick = pickle.dumps({'a': 'b'})\n"
                              "print(pickle.loads(pick))\nfile_obj = io.BytesIO()\n"
                              "pickle.dump([1, 2], file_obj)\nfile_obj.seek(0)\nprint(pickle.load(file_obj))\n"),
    "hardcoded_passwords.py": ("def someFunction(user, password='Admin'):\n    print('Hi ' + user)\n\n"
                               "def someFunction2(password):\n    if password == 'root':\n        print('OK')\n\n"
                               "password = 'blerg'\nd = {'password': 'blerg'}\n"),
    "yaml_load.py": ("import json\nimport yaml\n\n\ndef test_yaml_load():\n    ystr = yaml.dump({'a': 1})\n"
                     "    y = yaml.load(ystr)\n    yaml.dump(y)\n    y = yaml.load(ystr, Loader=yaml.CSafeLoader)\n"),
    "crypto_md5.py": ("import hashlib\n\nhashlib.md5(1)\nhashlib.md5(1).hexdigest()\nabc = str.replace(hashlib.md5('1')"
                      ", 'b', 'c')\nprint(hashlib.sha256(1))\nhashlib.new('md5')\n"),
    "sql_statements.py": ("import sqlalchemy\n\nquery = \"SELECT * FROM foo WHERE id = '%s'\" % identifier\n"
                          "query = \"INSERT INTO foo VALUES ('a', 'b', '%s')\" % value\n"
                          "cur.execute(\"SELECT * FROM foo WHERE id = '%s'\" % value)\n"
                          "cur.execute(\"SELECT * FROM foo WHERE id = ?\", (value,))\n"),
    "multiline.py": ("import subprocess\n\nsubprocess.check_output(\n    'ls ' + folder,\n    shell=True,\n)\n"),
}

needs_bandit = pytest.mark.skipif(not analyzers.available("bandit"), reason="bandit not installed")
needs_semgrep = pytest.mark.skipif(not analyzers.available("semgrep"), reason="semgrep not installed")


@pytest.fixture(scope="module")
def bandit_findings():
    if not analyzers.available("bandit"):
        pytest.skip("bandit not installed")
    return analyzers.run_bandit(BANDIT_STYLE)


@needs_bandit
def test_line_labels_cover_exactly_the_lines_bandit_reports(bandit_findings):
    assert bandit_findings, "bandit reported nothing on its own example style"
    for name, text in BANDIT_STYLE.items():
        spans = [(f.start_line, f.end_line) for f in bandit_findings if f.file == name]
        reported = {n for a, b in spans for n in range(a, b + 1)}
        steps = segment(text, "line")
        assert covered_lines(steps, step_labels(steps, spans)) == reported, name


@needs_bandit
@pytest.mark.parametrize("mode", ["block", "logical", "ast"])
def test_coarser_steps_contain_reported_lines_and_nothing_unreported(bandit_findings, mode):
    for name, text in BANDIT_STYLE.items():
        spans = [(f.start_line, f.end_line) for f in bandit_findings if f.file == name]
        reported = {n for a, b in spans for n in range(a, b + 1)}
        steps = segment(text, mode)
        labels = step_labels(steps, spans)
        assert reported <= covered_lines(steps, labels)
        for s, y in zip(steps, labels, strict=True):
            assert bool(y) == bool(reported & set(range(s.start_line, s.end_line + 1)))


def test_local_and_monotone():
    steps = segment("a\n\nb\n\nc\n\nd\n", "block")
    assert step_labels(steps, [(3, 3)], "local") == [0, 1, 0, 0]
    assert step_labels(steps, [(3, 3)], "monotone") == [0, 1, 1, 1]
    assert step_labels(steps, [], "monotone") == [0, 0, 0, 0]
    with pytest.raises(ValueError, match="label mode"):
        step_labels(steps, [], "global")


def test_diff_ranges_mark_what_the_fix_changes():
    vuln = "import os\n\ndef f(p):\n    os.system('ls ' + p)\n    return 1\n"
    fixed = "import subprocess\n\ndef f(p):\n    subprocess.run(['ls', p])\n    return 1\n"
    assert diff_ranges(vuln, fixed) == [(1, 1), (4, 4)]
    # a fix that only inserts a check marks the line before the insertion
    added = "def g(p):\n    return open(p).read()\n"
    checked = "def g(p):\n    assert '..' not in p\n    return open(p).read()\n"
    assert diff_ranges(added, checked) == [(1, 1)]
    assert diff_ranges(vuln, vuln) == []


def test_ruleid_annotations():
    text = "import os\n# ruleid: shell\n\n# extra comment\nos.system(x)\n# ok: shell\nos.system('ls')\n"
    assert annotation_ranges(text) == [(5, 5)]


@needs_semgrep
def test_semgrep_local_rules_match_annotated_lines():
    text = ("import os, subprocess, pickle, hashlib\n"
            "# ruleid: os-shell-injection\nos.system('ls ' + d)\n"
            "# ok: os-shell-injection\nos.system('ls')\n"
            "# ruleid: subprocess-shell-true\nsubprocess.run(c, shell=True)\n"
            "# ruleid: unsafe-deserialization\nobj = pickle.loads(b)\n"
            "# ruleid: weak-hash\nh = hashlib.md5(b)\n"
            "# ok: weak-hash\nh = hashlib.md5(b, usedforsecurity=False)\n"
            "# ruleid: hardcoded-password\npassword = 'hunter2'\n")
    found = analyzers.run_semgrep({"t.py": text})
    assert sorted({f.start_line for f in found}) == sorted(a for a, _ in annotation_ranges(text))


def test_registry_configs_are_refused():
    for config in ("auto", "p/python", "r/python.lang.security", "https://semgrep.dev/c/p/ci"):
        with pytest.raises(ValueError, match="registry config"):
            analyzers.check_rules([config])
    with pytest.raises(ValueError, match="not found"):
        analyzers.check_rules(["no/such/rules.yaml"])
    assert analyzers.check_rules([]) == [str(analyzers.RULES_DIR)]


def test_missing_analyzer_raises(monkeypatch):
    monkeypatch.setattr(analyzers, "_executable", lambda name: None)
    with pytest.raises(analyzers.AnalyzerMissing):
        analyzers.run_semgrep({"a.py": "x = 1\n"})


def test_shipped_rules_exist():
    assert any(analyzers.RULES_DIR.glob("*.yaml"))
