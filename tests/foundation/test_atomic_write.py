"""The shared atomic writes of core/common/files.py: content, modes, failures, links, FIFOs, folders."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from mlx26.core.common import files
from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.common.files import atomic_folder, atomic_path, atomic_write, atomic_writer, replace_folder


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


@pytest.fixture
def umask_027():
    old = os.umask(0o027)
    try:
        yield 0o027
    finally:
        os.umask(old)


def test_round_trip_text_bytes_and_library_paths(tmp_path):
    text = tmp_path / "a.txt"
    atomic_write(text, "héllo\r\nworld\n", newline="")
    assert text.read_bytes() == "héllo\r\nworld\n".encode()
    raw = tmp_path / "b.bin"
    atomic_write(raw, bytes(range(256)))
    assert raw.read_bytes() == bytes(range(256))
    with atomic_writer(tmp_path / "c.txt") as handle:
        handle.write("one\n")
        handle.write("two\n")
    assert (tmp_path / "c.txt").read_text() == "one\ntwo\n"
    with atomic_path(tmp_path / "d.npz", suffix=".tmp.npz") as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".d.npz.") and tmp.name.endswith(".tmp.npz")
        tmp.write_bytes(b"written by a library")
    assert (tmp_path / "d.npz").read_bytes() == b"written by a library"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin", "c.txt", "d.npz"]


def test_temporary_file_sits_beside_the_target_and_is_fsynced(tmp_path, monkeypatch):
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    target = tmp_path / "out.json"
    with atomic_writer(target) as handle:
        handle.write("{}\n")
        (tmp,) = [p for p in tmp_path.iterdir()]
        assert tmp.name.startswith(".out.json.") and tmp.name.endswith(".tmp") and not target.exists()
    assert synced and target.read_text() == "{}\n" and not tmp.exists()


def test_existing_file_keeps_its_permission_bits(tmp_path, umask_027):
    target = tmp_path / "shared.txt"
    target.write_text("old\n")
    target.chmod(0o664)
    atomic_write(target, "new\n")
    assert target.read_text() == "new\n" and _mode(target) == 0o664
    target.chmod(0o600)
    with atomic_path(target) as tmp:
        tmp.write_text("lib\n")
    assert _mode(target) == 0o600


def test_new_file_gets_0666_minus_umask_not_mkstemps_0600(tmp_path, umask_027):
    fresh = tmp_path / "fresh.txt"
    atomic_write(fresh, "x")
    assert _mode(fresh) == 0o666 & ~0o027 == 0o640
    with atomic_path(tmp_path / "lib.bin") as tmp:
        tmp.write_bytes(b"x")
    assert _mode(tmp_path / "lib.bin") == 0o640
    atomic_write(tmp_path / "fixed.txt", "x", perms=0o644)  # an explicit mode wins
    assert _mode(tmp_path / "fixed.txt") == 0o644


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyboardInterrupt()])
def test_failure_keeps_the_old_file_and_leaves_no_temp_file(tmp_path, error):
    target = tmp_path / "keep.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    with pytest.raises(type(error)), atomic_writer(target) as handle:
        handle.write("half-written")
        raise error
    with pytest.raises(type(error)), atomic_path(target) as tmp:
        tmp.write_text("half-written")
        raise error
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
    assert target.read_text() == "old\n" and _mode(target) == 0o640


def test_failure_of_the_rename_leaves_no_temp_file(tmp_path, monkeypatch):
    def refuse(src, dst):
        raise PermissionError(13, "Permission denied", str(dst))

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(InputError, match=r"cannot write .*x\.txt: Permission denied"):  # the user's path, not ours
        atomic_write(tmp_path / "x.txt", "data")
    assert list(tmp_path.iterdir()) == []


def test_write_errors_name_the_target_not_the_temporary_file(tmp_path):
    with pytest.raises(InputError, match=r"cannot write .*/gone/x\.txt: No such file"):
        atomic_write(tmp_path / "gone" / "x.txt", "data")
    if os.path.exists("/dev/full"):  # a full disk: a runtime failure (exit 1), not an internal error
        with pytest.raises(RunFailure, match="cannot write /dev/full: No space left"):
            atomic_write("/dev/full", b"x" * 100_000)


def test_symlink_target_is_replaced_and_the_link_kept(tmp_path):
    real = tmp_path / "sub" / "real.txt"
    real.parent.mkdir()
    real.write_text("old\n")
    real.chmod(0o604)
    link = tmp_path / "link.txt"
    link.symlink_to(os.path.relpath(real, tmp_path))
    chain = tmp_path / "chain.txt"
    chain.symlink_to(link)
    atomic_write(link, "via link\n")
    assert link.is_symlink() and real.read_text() == "via link\n" and _mode(real) == 0o604
    with atomic_path(chain) as tmp:
        assert tmp.parent == real.parent  # same folder as the file renamed onto: same file system
        tmp.write_text("via chain\n")
    assert chain.is_symlink() and link.is_symlink() and real.read_text() == "via chain\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chain.txt", "link.txt", "sub"]
    assert [p.name for p in real.parent.iterdir()] == ["real.txt"]


def test_fifo_is_written_through_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    try:
        atomic_write(fifo, "through the pipe\n")
    finally:
        reader.join(10)
    assert got == [b"through the pipe\n"] and fifo.is_fifo()
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]  # no temp file was made


def test_character_device_is_written_through(tmp_path):
    atomic_write(os.devnull, "discarded\n")
    with atomic_path(os.devnull) as tmp:
        assert str(tmp) == os.devnull
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def _folder(path: Path, tag: str) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(path.iterdir())} if path.is_dir() else {"<not a folder>": tag}


def _fill(folder: Path, tag: str, n: int = 3) -> None:
    for i in range(n):
        (folder / f"part{i}.txt").write_text(f"{tag} {i}\n")


OLD = {f"part{i}.txt": f"old {i}\n" for i in range(3)}
NEW = {f"part{i}.txt": f"new {i}\n" for i in range(2)}


def test_folder_replacement_gives_the_new_folder_complete(tmp_path, umask_027):
    target = tmp_path / "model"
    with atomic_folder(target) as tmp:  # no old folder: a single rename
        assert tmp.parent == tmp_path and tmp.name.startswith(".model.") and _mode(tmp) == 0o750
        _fill(tmp, "old")
    assert _folder(target, "") == OLD
    with atomic_folder(target) as tmp:
        _fill(tmp, "new", 2)
        assert _folder(target, "") == OLD  # untouched until the new one is complete
    assert _folder(target, "") == NEW
    assert [p.name for p in tmp_path.iterdir()] == ["model"]  # neither the temp nor the old folder is left


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyboardInterrupt()])
def test_folder_failure_keeps_the_old_folder_and_no_temp(tmp_path, error):
    target = tmp_path / "model"
    target.mkdir()
    _fill(target, "old")
    with pytest.raises(type(error)), atomic_folder(target) as tmp:
        _fill(tmp, "new", 2)
        raise error
    assert _folder(target, "") == OLD and [p.name for p in tmp_path.iterdir()] == ["model"]


def test_folder_rename_failure_puts_the_old_folder_back(tmp_path, monkeypatch):
    target = tmp_path / "model"
    target.mkdir()
    _fill(target, "old")
    states: list[dict[str, str]] = []
    real_replace = os.replace
    calls = {"n": 0}

    def flaky(src, dst):
        calls["n"] += 1
        # at every step the old folder is complete somewhere (in place or set aside) or the new one in place
        seen = [_folder(p, "") for p in tmp_path.iterdir() if not p.name.endswith(".tmp")]
        states.append(seen)
        if calls["n"] == 3:  # rename onto target (1), set aside (2), the new one in (3): fail that
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(OSError), atomic_folder(target) as tmp:
        _fill(tmp, "new", 2)
    assert all(OLD in seen or NEW in seen for seen in states)
    assert _folder(target, "") == OLD and [p.name for p in tmp_path.iterdir()] == ["model"]


def test_replace_folder_onto_a_file_and_without_replacing(tmp_path):
    target = tmp_path / "out"
    target.write_text("a file\n")
    new = tmp_path / "new"
    new.mkdir()
    _fill(new, "new", 2)
    assert replace_folder(new, target) is True
    assert _folder(target, "") == NEW and sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    other = tmp_path / "other"
    other.mkdir()
    _fill(other, "old")
    assert replace_folder(other, target, replace=False) is False  # another process finished first
    assert _folder(target, "") == NEW and other.is_dir()
    with atomic_folder(target, replace=False) as tmp:
        _fill(tmp, "old")
    assert _folder(target, "") == NEW and sorted(p.name for p in tmp_path.iterdir()) == ["other", "out"]


def test_folder_through_a_symlink_keeps_the_link(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    _fill(real, "old")
    link = tmp_path / "link"
    link.symlink_to(real)
    with atomic_folder(link) as tmp:
        _fill(tmp, "new", 2)
    assert link.is_symlink() and _folder(real, "") == NEW
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]


def test_folder_that_cannot_be_created_is_a_run_failure(tmp_path):
    with pytest.raises(RunFailure, match=r"cannot create .*missing.*model"), atomic_folder(tmp_path / "missing" / "model"):
        pass


def test_common_files_imports_only_the_standard_library():
    code = ("import sys, mlx26.core.common.files; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in {'numpy', 'torch', 'typer', 'rich'} "
            "or m.startswith('mlx26.core.') and not m.startswith(('mlx26.core.common', 'mlx26.core._version', "
            "'mlx26.core._import_path'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"
    assert files.__name__ == "mlx26.core.common.files"
