"""Start-up stays cheap: `mlx26 --help` builds no command module, `mlx26 X` imports only X's module,
`mlx26 info` does not import torch, and early input errors are reported before torch loads (issue 31)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from mlx26.cli import main as cli_main


def _run_and_list_modules(argv: list[str]) -> tuple[int, set[str]]:
    code = (
        "import sys, contextlib, io\n"
        "from mlx26.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        f"    rc = main({argv!r})\n"
        "print(rc)\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('mlx26.cli.') or m in ('torch', 'numpy'))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rc, modules = proc.stdout.splitlines()
    return int(rc), set(modules.split())


COMMAND_MODULES = {target.partition(":")[0] for _, target, *_ in cli_main.COMMANDS + cli_main.GROUPS}


def test_root_help_imports_no_command_module():
    rc, modules = _run_and_list_modules(["--help"])
    assert rc == 0
    assert not modules & COMMAND_MODULES, sorted(modules & COMMAND_MODULES)


def test_a_subcommand_imports_its_own_module_only():
    rc, modules = _run_and_list_modules(["sr", "--help"])
    assert rc == 0
    assert modules & COMMAND_MODULES == {"mlx26.cli.sr"}


def test_root_help_lists_the_same_one_liners_as_the_built_commands():
    """The short helps in main.py's tables are what each command (or group) itself says."""
    import typer

    root = typer.main.get_command(cli_main.app)
    helps = cli_main.short_helps()
    assert list(helps) == cli_main.command_names() == list(root.list_commands(None))  # type: ignore[attr-defined]
    for name, text in helps.items():
        command = root.commands[name]  # type: ignore[attr-defined]
        assert (command.help or "").strip().split("\n\n")[0].replace("\n", " ") == text, name


@pytest.mark.parametrize("argv, message", [
    (["info", "--format", "json"], None),
    (["train", "rl", "--algo", "nosuch"], "Unknown algorithm 'nosuch'"),
    (["train", "rl", "--env", "NoSuchEnv-v0", "--steps", "10"], "Unknown env"),
    (["train", "rl", "--resume", "--out", "no/such/run"], "nothing to resume"),
    (["quantize-moe", "--model", "nosuch"], "Unknown model 'nosuch'"),
    (["select-batch", "train", "--checkpoint", "no/such.pt", "--resume"], "nothing to resume"),
])
def test_early_answers_do_not_import_torch(argv, message):
    code = (
        "import sys, contextlib, io\n"
        "from mlx26.cli.main import main\n"
        "err = io.StringIO()\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):\n"
        f"    rc = main({argv!r})\n"
        "print(rc, 'torch' in sys.modules)\n"
        "print(err.getvalue())\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    first, *rest = proc.stdout.splitlines()
    rc, torch_loaded = first.split()
    assert torch_loaded == "False", (argv, proc.stdout)
    if message is None:
        assert rc == "0"
    else:
        assert rc == "2" and message in "\n".join(rest), proc.stdout


def test_argument_metavars_are_plain():
    """`INPUT` / `[INPUT]` on the usage line and no `<str>` after a metavar (typer 0.29 writes {INPUT})."""
    from mlx26.cli._reference import walk

    pages = walk()
    usages = [line for _, text in pages for line in text.splitlines() if line.startswith("Usage:")]
    assert len(usages) > 50
    assert not [u for u in usages if "{" in u or "......" in u]
    assert any(u.endswith(" INPUT") for u in usages)
    listed = [line for _, text in pages for line in text.splitlines() if line.startswith("  ") and " <str> " in line]
    assert not listed, listed[:3]


def test_group_help_names_the_default_subcommand_and_has_examples():
    from mlx26.cli._reference import subcommands, walk

    groups = [(path, text) for path, text in walk() if path and subcommands(text)]
    assert len(groups) >= 20
    for path, text in groups:
        assert "Examples:\n    " in text, f"mlx26 {' '.join(path)} --help has no examples"
    for group, default in cli_main.DEFAULT_SUBCOMMANDS.items():
        text = dict((" ".join(p), t) for p, t in groups)[group]
        assert f"`mlx26 {group} ARGS` runs `mlx26 {group} {default} ARGS`" in " ".join(text.split())


def test_torch_device_is_read_from_the_build_file_without_importing_torch(tmp_path, monkeypatch):
    import importlib.machinery
    import importlib.metadata
    import importlib.util

    from mlx26.core.common import environment

    if importlib.util.find_spec("torch") is not None:
        build = environment.torch_build()
        assert build is not None and build["__version__"] == importlib.metadata.version("torch")
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "version.py").write_text("from typing import Optional\n__version__ = '9.9.9+cu124'\n"
                                     "cuda: Optional[str] = '12.4'\nhip: Optional[str] = None\n")
    spec = importlib.machinery.ModuleSpec("torch", None, is_package=True)
    spec.submodule_search_locations = [str(fake)]
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: spec if name == "torch" else None)
    monkeypatch.setattr(environment, "nvidia_driver", lambda: None)
    assert environment.torch_device() == "cpu (CUDA 12.4 build, no NVIDIA driver found)"
    monkeypatch.setattr(environment, "nvidia_driver", lambda: "560.35.03")
    assert environment.torch_device().startswith("cuda (CUDA 12.4 build, NVIDIA driver 560.35.03")
