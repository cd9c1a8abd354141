"""Shell completion (issue 31): typer's --install-completion / --show-completion, and names completed
through the protocol the installed scripts use (``_MLX26_COMPLETE=complete_<shell>``), in a subprocess
through the real entry point."""

from __future__ import annotations

import shutil
import subprocess

import pytest


def _complete(mlx26_exe, env, shell: str, words: str) -> list[str]:
    """What the completion script of ``shell`` gets back for the command line ``words`` (cursor at the end)."""
    extra = {"_MLX26_COMPLETE": f"complete_{shell}"}
    if shell == "bash":
        parts = words.split(" ")
        extra |= {"COMP_WORDS": words, "COMP_CWORD": str(len(parts) - 1)}
    else:
        extra["_TYPER_COMPLETE_ARGS"] = words
        if shell == "fish":
            extra["_TYPER_COMPLETE_FISH_ACTION"] = "get-args"
    proc = subprocess.run([mlx26_exe], capture_output=True, text=True, env={**env, **extra}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def _names(shell: str, lines: list[str]) -> list[str]:
    if shell == "zsh":  # _arguments '*: :(("a":"help" "b"))' or compadd lines
        import re

        return re.findall(r'"([^"]+?)"(?::[^"]*"[^"]*")?', " ".join(lines))
    return [line.split("\t")[0] for line in lines]  # fish: name<TAB>help


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
@pytest.mark.parametrize(("words", "expected", "absent"), [
    ("mlx26 zoo info tiny-", {"tiny-llama", "tiny-llama-draft", "tiny-moe", "tiny-llama-long"}, {"micro-moe"}),
    ("mlx26 zoo train micro", {"micro-llama", "micro-moe"}, {"tiny-moe"}),
    ("mlx26 train rl --algo d", {"dqn", "dfql"}, {"ppo", "fql"}),
    ("mlx26 rl sweep --algo r", {"rapc"}, {"dqn"}),
    ("mlx26 dp-mix calibrate --mechanism q", {"quasi"}, {"multi"}),
    ("mlx26 dp-mix verify -m ", {"multi", "quasi", "gaussian"}, {"laplace"}),
    ("mlx26 simp", {"simplify"}, {"info"}),
])
def test_names_complete(mlx26_exe, subprocess_env, shell, words, expected, absent):
    got = set(_names(shell, _complete(mlx26_exe, subprocess_env, shell, words)))
    assert expected <= got, f"{shell}: {words!r} → {sorted(got)}"
    assert not absent & got


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_show_completion_prints_the_script_of_the_shell(mlx26_exe, subprocess_env, shell):
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed (shell detection needs it as the parent process)")
    proc = subprocess.run([shell, "-c", f"{mlx26_exe} --show-completion"], capture_output=True, text=True,
                          env=subprocess_env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"complete_{shell}" in proc.stdout and "_MLX26_COMPLETE" in proc.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not installed")
def test_install_completion_then_tab_in_bash(mlx26_exe, subprocess_env, tmp_path):
    env = {**subprocess_env, "HOME": str(tmp_path)}
    proc = subprocess.run(["bash", "-c", f"{mlx26_exe} --install-completion"], capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    script = tmp_path / ".bash_completions" / "mlx26.sh"
    assert script.is_file() and str(script) in (tmp_path / ".bashrc").read_text()
    # what bash does on TAB after `mlx26 dp-mix calibrate --mechanism ga`: the function fills COMPREPLY
    tab = (f"source {script}; COMP_WORDS=(mlx26 dp-mix calibrate --mechanism ga); COMP_CWORD=4; "
           "_mlx26_completion mlx26; printf '%s\\n' \"${COMPREPLY[@]}\"")
    proc = subprocess.run(["bash", "-c", tab], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["gaussian"]


def test_completion_options_are_on_the_root_help(run_cli):
    text = run_cli("--help").stdout
    assert "--install-completion" in text and "--show-completion" in text
