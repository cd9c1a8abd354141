"""``--engine local|ray`` of the record-stream commands (issue 41): core/common/engine.py and cli/_engine.py.

One Ray session (local mode, 2 CPUs) is shared by the module: the commands run in-process and
reuse it. Byte identity of ``--engine ray`` and ``--engine local`` is checked on 10k records for
simplify run, simplify decontam, dp-mix noise and judge-audit judge; on 300 files for score-code
score/detect (10k files in the slow test); on the 50 real StatCan tables (HTML + XLSX, 100 files,
``../shared/data/hitab-statcan``) for table-decompose run.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from functools import partial

import pytest
from mlx26.core.common.engine import check_address, map_batches, record_rng
from mlx26.core.common.errors import InputError, RunFailure

from tests._data import shared_data

N = 10_000


# --------------------------------------------------------------------------- without Ray

def test_local_engine_keeps_order_and_names_the_failing_record():
    from mlx26.core.simplify.records import simplify_records

    batch = [(i + 1, {"value": "x1 + x1"}) for i in range(9)]
    batch[6] = (7, {"prefix": 5})  # " ".join(map(str, 5)): a TypeError inside the batch function
    fn = partial(simplify_records, mode="sound")
    with pytest.raises(RunFailure, match=r"internal error: TypeError: .* \(record 7, in the batch of records 5-8\)"):
        list(map_batches(fn, batch, batch_size=4))
    good = [r for r in batch if r[0] != 7]
    out = list(map_batches(fn, good, batch_size=3))
    assert [r["id"] for r in out] == [n for n, _ in good] and out[0]["simplified"] == "2*x1"


def test_record_rng_depends_on_seed_and_index_only():
    a = record_rng(3, 17).random(4)
    assert (a == record_rng(3, 17).random(4)).all()
    assert not (a == record_rng(3, 18).random(4)).any() and not (a == record_rng(4, 17).random(4)).any()


@pytest.mark.parametrize("address", ["nonsense", "host:", "host:99999", ":6379"])
def test_malformed_ray_address_is_an_input_error(address):
    with pytest.raises(InputError, match="--ray-address"):
        check_address(address)


def test_unreachable_ray_address_fails_fast_naming_it(run_cli):
    start = time.monotonic()
    r = run_cli("simplify", "run", "-", "--engine", "ray", "--ray-address", "127.0.0.1:9", stdin="x1+x1\n")
    assert r.code == 1 and "127.0.0.1:9" in r.error_lines[0] and r.stdout == ""
    assert "Traceback" not in r.stderr and time.monotonic() - start < 15


def test_ray_with_stdin_on_a_terminal_is_refused_up_front(run_cli):
    r = run_cli("dp-mix", "noise", "-", "-e", "1", "-d", "1e-5", "-s", "1", "--engine", "ray", stdin=None)
    assert r.code == 2 and "nothing is piped" in r.error_lines[0]


def test_ray_options_need_the_ray_engine(run_cli):
    r = run_cli("simplify", "run", "-", "--ray-address", "auto", stdin="x1\n")
    assert r.code == 2 and "--engine ray" in r.stderr
    r = run_cli("simplify", "run", "-", "--engine", "spark", stdin="x1\n")
    assert r.code == 2 and "engine" in r.error_lines[0]


def test_without_ray_the_engine_exits_3_with_the_pip_line(run_cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # find_spec("ray") then fails as if it were not installed
    r = run_cli("simplify", "run", "-", "--engine", "ray", stdin="x1\n")
    assert r.code == 3 and "pip install 'mlx26[ray]'" in r.stderr


def test_judge_refuses_ray_for_methods_with_state(run_cli):
    r = run_cli("judge-audit", "judge", "-", "--method", "tfidf", "--engine", "ray", stdin='{"response": "x"}\n')
    assert r.code == 2 and "refusal judge only" in r.error_lines[0]


def test_unreachable_address_through_the_entry_point(mlx26_exe, subprocess_env):
    start = time.monotonic()
    p = subprocess.run([mlx26_exe, "dp-mix", "noise", "-", "-e", "1", "-d", "1e-5", "-s", "1", "--engine", "ray",
                        "--ray-address", "127.0.0.1:9"], input="1\n2\n", capture_output=True, text=True,
                       env=subprocess_env, timeout=60)
    assert p.returncode == 1 and p.stdout == "" and "Traceback" not in p.stderr
    assert p.stderr.startswith("Error: cannot reach the Ray cluster at 127.0.0.1:9")
    assert time.monotonic() - start < 20


# --------------------------------------------------------------------------- on one shared Ray session

@pytest.fixture(scope="module")
def ray_session():
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    yield ray
    ray.shutdown()


def _same(run_cli, *args, stdin: str = "", ray_args: tuple[str, ...] = ()):
    local = run_cli(*args, "--engine", "local", stdin=stdin)
    on_ray = run_cli(*args, "--engine", "ray", *ray_args, stdin=stdin)
    assert local.code == 0, local.stderr
    assert on_ray.code == 0, on_ray.stderr
    assert on_ray.stdout == local.stdout and local.stdout
    return local, on_ray


def test_map_batches_on_ray_matches_local_exactly(ray_session):
    records = [{"i": i, "x": [i, {"k": None}], "f": i / 3, "s": "é" * (i % 3)} for i in range(2000)]
    # `list` is the identity batch function: records come back exactly as sent (types, key order), in order
    on_ray = list(map_batches(list, records, engine="ray", batch_size=300))
    assert on_ray == records and [list(r) for r in on_ray] == [list(r) for r in records]
    assert list(map_batches(list, records, batch_size=300)) == records


@pytest.fixture(scope="module")
def expressions(tmp_path_factory):
    from mlx26.core.simplify import random_expressions

    folder = tmp_path_factory.mktemp("engine")
    train = folder / "train.jsonl"
    train.write_text("".join(json.dumps({"id": i, "prefix": " ".join(e)}) + "\n"
                             for i, e in enumerate(random_expressions(N, seed=1, max_ops=6))))
    return folder, train


def test_simplify_run_10k_identical(run_cli, ray_session, expressions):
    _, train = expressions
    local, _ = _same(run_cli, "simplify", "run", train, "-q", ray_args=("--batch-size", "1000"))
    assert len(local.stdout.splitlines()) == N and '"error"' in local.stdout  # per-record errors kept, in order


def test_simplify_run_failing_record_is_named_on_both_engines(run_cli, ray_session, tmp_path):
    text = "".join(json.dumps({"prefix": "x1 + x1"} if i != 6 else {"prefix": 5}) + "\n" for i in range(9))
    out = tmp_path / "out.jsonl"
    for engine in ("local", "ray"):
        r = run_cli("simplify", "run", "-", "--engine", engine, "--batch-size", "4", "-o", out, stdin=text)
        assert r.code == 1, (engine, r.stderr)
        assert r.error_lines[0].startswith("Error: internal error: TypeError: ")
        assert r.error_lines[0].endswith("(record 7, in the batch of records 5-8)")
        assert not out.exists() and list(tmp_path.iterdir()) == []  # atomic: no partial file, no temp file


def test_simplify_decontam_10k_identical(run_cli, ray_session, expressions):
    folder, train = expressions
    ok = [json.loads(x) for x in run_cli("simplify", "run", train, "-q").stdout.splitlines()[:400]]
    test = folder / "test.jsonl"
    test.write_text("".join(json.dumps({"prefix": r["input"]}) + "\n" for r in ok if "error" not in r))
    local, on_ray = _same(run_cli, "simplify", "decontam", "--train", train, "--test", test)
    assert on_ray.stderr == local.stderr and "dropped" in local.stderr


def test_dp_mix_noise_10k_identical_and_seeded(run_cli, ray_session):
    numbers = "".join(f"{i}\n" for i in range(N))
    local, _ = _same(run_cli, "dp-mix", "noise", "-", "-e", "1", "-d", "1e-5", "-s", "1", "--seed", "5", "-q",
                     stdin=numbers, ray_args=("--batch-size", "777"))
    values = [float(x) for x in local.stdout.split()]
    assert len(values) == N and values != [float(i) for i in range(N)]
    other_batches = run_cli("dp-mix", "noise", "-", "-e", "1", "-d", "1e-5", "-s", "1", "--seed", "5", "-q",
                            "--batch-size", "100", stdin=numbers)
    assert other_batches.stdout == local.stdout  # noise depends on (seed, index), never on batching


def test_judge_refusal_10k_identical(run_cli, ray_session):
    sim = run_cli("judge-audit", "simulate", "--n", str(N), "-q")
    _same(run_cli, "judge-audit", "judge", "-", "--format", "csv", stdin=sim.stdout, ray_args=("--num-cpus", "2"))


def _code_files(folder, n):
    for i in range(n):
        risky = "os.system('ls ' + p)" if i % 3 else "print(p)"
        (folder / f"m{i:05d}.py").write_text(f"import os\n\n\ndef f{i}(p):\n    {risky}\n\n\nx = {i}\n")
    return folder


def test_score_code_score_and_detect_identical(run_cli, ray_session, tmp_path):
    folder = _code_files(tmp_path, 300)
    _same(run_cli, "score-code", "score", folder, ray_args=("--batch-size", "40"))
    _same(run_cli, "score-code", "detect", folder, "--unit", "function", ray_args=("--batch-size", "40"))


@pytest.mark.slow
def test_score_code_10k_files_identical(run_cli, ray_session, tmp_path):
    folder = _code_files(tmp_path, N)
    _same(run_cli, "score-code", "score", folder, "-q")
    _same(run_cli, "score-code", "detect", folder, "-q")


# --------------------------------------------------------------------------- table-decompose run: a table a record

def test_table_decompose_statcan_folder_identical(run_cli, ray_session):
    folder = shared_data("hitab-statcan")  # 50 real StatCan tables, each as .html and .xlsx; LICENSE, SOURCE.md
    args = ("table-decompose", "run", folder, "--emit", "lineage", "--format", "jsonl")
    local, on_ray = _same(run_cli, *args, ray_args=("--num-cpus", "2", "--batch-size", "7"))
    assert on_ray.stderr == local.stderr
    assert f"skipped {folder / 'SOURCE.md'} (no Markdown pipe table)" in local.stderr
    records = [json.loads(x) for x in local.stdout.splitlines()]
    names = list(dict.fromkeys(r["table"] for r in records))
    assert names == sorted(str(p) for p in folder.iterdir() if p.suffix in (".html", ".xlsx")) and len(names) == 100
    assert all(next(iter(r)) == "table" for r in records)
    # one input: today's output (no "table" field), the same records as that table's share of the stream
    one = folder / "statcan_12.xlsx"
    alone = run_cli("table-decompose", "run", one, "--emit", "lineage", "--format", "jsonl", "-q")
    assert alone.code == 0 and '"table"' not in alone.stdout
    share = [{k: v for k, v in r.items() if k != "table"} for r in records if r["table"] == str(one)]
    assert [json.loads(x) for x in alone.stdout.splitlines()] == share and share
    _same(run_cli, "table-decompose", "run", folder / "statcan_3.html", folder / "statcan_4.xlsx", "-q",
          ray_args=("--batch-size", "1"))  # --emit lines: "TABLE: row path | col path = value"


def test_table_decompose_broken_table_is_named_on_both_engines(run_cli, ray_session, tmp_path):
    folder = tmp_path / "tables"
    folder.mkdir()
    source = shared_data("hitab-statcan")
    for n in (1, 2, 3, 5):
        (folder / f"statcan_{n}.html").write_bytes((source / f"statcan_{n}.html").read_bytes())
    (folder / "statcan_4.html").write_text("<p>a page without its table</p>")
    (folder / "README.md").write_text("# notes\n")
    out = tmp_path / "out.jsonl"
    for engine in ("local", "ray"):
        r = run_cli("table-decompose", "run", folder, "--emit", "lineage", "--engine", engine, "--batch-size", "2",
                    "-o", out)
        assert r.code == 2, (engine, r.stderr)
        assert "README.md (no Markdown pipe table)" in r.stderr  # skipped with a notice
        assert [x for x in r.stderr.splitlines() if x.startswith("Error:")] == [(f"Error: record 4 (in the batch of records 3-4) failed: no <table> found in "
                                    f"{folder / 'statcan_4.html'}")]
        assert not out.exists()  # atomic: no partial file


def _fails_with(exc_factory, records=3):
    from mlx26.core.common import engine

    def fn(batch):
        raise exc_factory()

    return list(engine.map_batches(fn, list(range(records)), engine="local", batch_size=8))


def test_engine_keeps_the_exit_code_and_the_missing_extra(capsys):
    """A record's typed error keeps its exit code (BackendMissing 3, an InputError subclass 2); a missing
    module reaches the CLI as itself, so the user gets the pip line, not 'internal error'."""
    from mlx26.cli._errors import handle
    from mlx26.core.common.errors import BackendMissing, InputError

    class Budget(InputError):
        pass

    for factory, code in ((lambda: BackendMissing("needs foo"), 3), (lambda: Budget("over budget"), 2),
                          (lambda: ModuleNotFoundError("No module named 'sympy'", name="sympy"), 3)):
        with pytest.raises(Exception) as info:
            _fails_with(factory)
        assert handle(info.value) == code
        err = capsys.readouterr().err
        assert "internal error" not in err
    assert "pip install" in err
