"""Progress on stderr (issue 31, cli/_progress.py): the job's total and unit, rate, ETA; off when not a terminal or -q.

Unit tests draw on a rich Console writing to a StringIO (``_progress.TEST_CONSOLE``, as if stderr were a
terminal); the end-to-end ``train rl`` case runs the CLI with stderr on a pseudo-terminal and stdout on a pipe.
"""

from __future__ import annotations

import io
import json
import os
import re
import select
import subprocess
import sys
import time

import pytest
from mlx26.cli import _io, _progress

COLOUR = re.compile(r"\x1b\[[0-9;]*m")
CURSOR = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _lines(text: str) -> list[str]:
    """The frames drawn (carriage returns and cursor moves split them; colours removed)."""
    plain = CURSOR.sub("\n", COLOUR.sub("", text))
    return [line.strip() for line in re.split(r"[\r\n]", plain) if line.strip()]


@pytest.fixture
def screen(monkeypatch):
    """A terminal-like console for bars and spinners; its text is ``screen.getvalue()``."""
    from rich.console import Console

    buffer = io.StringIO()
    monkeypatch.setattr(_progress, "TEST_CONSOLE", Console(file=buffer, force_terminal=True, width=160,
                                                           color_system=None))
    return buffer


def test_bar_shows_count_of_total_rate_in_unit_and_eta(screen):
    with _progress.Bar("dqn CartPole-v1", total=600, unit="steps") as bar:
        assert bar.active
        for step in range(1, 601):
            bar.update(step, status="loss 0.5" if step > 300 else None)
            if step % 100 == 0:
                time.sleep(0.02)
    frames = _lines(screen.getvalue())
    last = [f for f in frames if "600/600" in f][-1]
    assert last.startswith("dqn CartPole-v1")
    assert re.search(r"\d[\d,.]* steps/s", last), last
    assert "eta 0:00:00" in last and "loss 0.5" in last
    assert any("/600" in f and "eta" in f for f in frames)


def test_bar_without_total_pulses_then_takes_one(screen):
    with _progress.Bar("zoo train", total=None, unit="steps", status="loading…") as bar:
        bar.update(3, total=10, status="loss 1.0")
        bar.advance(2)
        bar.update(10)
    text = "\n".join(_lines(screen.getvalue()))
    assert "0/?" in text and "loading…" in text
    assert "10/10" in text and "loss 1.0" in text


def test_phase_restarts_the_count(screen):
    with _progress.Bar("train grpo · warm-up", total=4) as bar:
        bar.update(4)
        bar.phase("train grpo · GRPO", 2, status="generating…")
        bar.update(1)
    frames = _lines(screen.getvalue())
    assert any(f.startswith("train grpo · GRPO") and "1/2" in f for f in frames)


def test_track_moves_to_each_records_step(screen):
    records = [{"step": s, "train_loss": 1.0 / s} for s in range(1, 6)]
    seen = list(_progress.track(iter(records), total=5, unit="steps", description="select-batch",
                                at=lambda r: r["step"], status=lambda r: f"loss {r['train_loss']:.2f}"))
    assert seen == records
    assert any("5/5" in f and "loss 0.20" in f for f in _lines(screen.getvalue()))


def test_io_progress_still_iterates_and_counts_records(screen):
    assert list(_io.progress(range(3), total=3, description="rows")) == [0, 1, 2]
    assert any("3/3" in f and "records/s" in f for f in _lines(screen.getvalue()))


def test_spinner_says_what_is_happening(screen):
    with _progress.spinner("loading tiny-moe…") as say:
        time.sleep(0.15)
        say("calibrating…")
        time.sleep(0.15)
    text = screen.getvalue()
    assert "loading tiny-moe…" in text and "calibrating…" in text


def test_spinner_inside_a_bar_becomes_its_status(screen):
    with _progress.Bar("job", total=2) as bar:
        with _progress.spinner("evaluating…"):
            assert bar.status == "evaluating…"
            time.sleep(0.3)  # a redraw (4 a second)
        assert bar.status == ""
        bar.update(2)
    assert "evaluating…" in screen.getvalue()


def test_quiet_draws_nothing(screen):
    with _progress.Bar("job", total=5, quiet=True) as bar:
        bar.update(5)
        assert not bar.active
    with _progress.spinner("loading…", quiet=True) as say:
        say("more")
    token = _io._QUIET.set(True)  # -q given to the command (the run state read by notice() too)
    try:
        with _progress.Bar("job", total=5) as bar:
            bar.update(5)
            assert not bar.active
        assert list(_progress.track([1, 2], total=2)) == [1, 2]
    finally:
        _io._QUIET.reset(token)
    assert screen.getvalue() == ""


def test_not_a_terminal_draws_nothing(capsys):
    assert _progress.TEST_CONSOLE is None
    with _progress.Bar("job", total=5) as bar:
        bar.update(5)
        assert not bar.active
    with _progress.spinner("loading…"):
        pass
    assert list(_progress.track(range(2), total=2)) == [0, 1]
    assert capsys.readouterr() == ("", "")


def test_rate_text_in_the_unit():
    assert _progress._rate_text(None, "steps") == "– steps/s"
    assert _progress._rate_text(250.4, "steps") == "250 steps/s"
    assert _progress._rate_text(12.34, "records") == "12.3 records/s"
    assert _progress._rate_text(0.7, "epochs") == "0.70 epochs/s"
    assert _progress._rate_text(0.01, "models") == "0.60 models/min"


def test_help_imports_no_rich():
    code = ("import sys; from mlx26.cli.main import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "import mlx26.cli._progress\n"
            "print(sorted(m for m in sys.modules if m == 'rich' or m.startswith('rich.progress')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def _pty_run(args: list[str], cwd, timeout: float = 60) -> tuple[int, str, str]:
    """Run the CLI with stderr on a pseudo-terminal and stdout on a pipe: (exit code, stdout, stderr)."""
    import pty

    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "160", "TERM": "xterm", "MLX26_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "mlx26.cli.main", *args], stdout=subprocess.PIPE, stderr=slave,
                            stdin=subprocess.DEVNULL, cwd=cwd, env=env)
    os.close(slave)
    err = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                err += chunk
            elif proc.poll() is not None:
                break
        out = proc.stdout.read()  # type: ignore[union-attr]
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return code, out.decode(), err.decode(errors="replace")


RL = ["train", "rl", "--algo", "dqn", "--env", "CartPole-v1", "--steps", "600", "--set", "learning_starts=200",
      "--set", "train_freq=100", "--eval-episodes", "2", "--out", "r1", "--force"]


def test_train_rl_on_a_terminal_counts_env_steps_of_the_total(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("gymnasium")
    code, out, err = _pty_run(RL, tmp_path)
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]  # stdout stays clean JSONL
    assert records[-1]["phase"] == "eval" and records[-1]["step"] == 600
    frames = _lines(err)
    bars = [f for f in frames if f.startswith("dqn CartPole-v1 ")]
    assert bars and all(re.search(r"\b\d+/600\b", f) for f in bars), bars[:3]
    assert any(re.search(r"\d[\d,.]* steps/s", f) and re.search(r"eta \d+:\d\d:\d\d", f) for f in bars), bars
    assert "run folder: r1" in err


def test_train_rl_quiet_on_a_terminal_writes_nothing_to_stderr(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("gymnasium")
    code, out, err = _pty_run([*RL, "-q"], tmp_path)
    assert code == 0
    assert err.strip() == ""
    assert json.loads(out.splitlines()[-1])["step"] == 600


def test_train_rl_with_stderr_not_a_terminal_has_no_bar(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("gymnasium")
    proc = subprocess.run([sys.executable, "-m", "mlx26.cli.main", *RL], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "MLX26_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr
    assert "steps/s" not in proc.stderr and "\x1b[" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "run folder: r1"
    assert all(json.loads(line) for line in proc.stdout.splitlines())


def test_zoo_train_shows_the_steps_total_from_the_start(run_cli, screen, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    result = run_cli("zoo", "train", "micro-llama", "--steps", "4", "--max-train-bytes", "20000",
                     "--eval-bytes", "2000", "--out", str(tmp_path / "m"), "--format", "json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["steps"] == 4  # stdout: the summary only
    frames = [f for f in _lines(screen.getvalue()) if f.startswith("zoo train micro-llama ")]
    assert frames and all(re.search(r"\b\d/4\b", f) for f in frames), frames[:3]  # never 0/?
    assert "0/4" in frames[0] and "loading" in frames[0]
    assert any("4/4" in f and "steps/s" in f for f in frames)
