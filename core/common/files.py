"""Atomic writes of files and folders, and the permissions they get (no paper).

Every file mlx26 writes goes through one of these, so an interrupted or failed run leaves any
previous file intact and no temporary file behind:

- ``atomic_writer(target, "w" | "wb")`` yields a file object on a temporary file beside ``target``
  (``mkstemp``, named ``.{name}.XXXX.tmp``); on success it is flushed, fsynced and renamed onto
  ``target`` with ``os.replace``; on any failure, KeyboardInterrupt included, it is removed.
- ``atomic_write(target, data)`` writes ``str`` or ``bytes`` that way.
- ``atomic_path(target)`` yields the temporary file's *path*, for libraries that open the file
  themselves (``torch.save``, ``safetensors``, a compiler's ``-o``).
- ``atomic_folder(target)`` / ``replace_folder(tmp_dir, target)`` do the same for a whole folder.

Rules shared by all of them:

- permissions: ``tempfile.mkstemp`` creates files with mode 0600 and ``os.replace`` keeps it, so
  the temporary file is given what an ordinary ``open(..., "w")`` would give: an existing file keeps
  its permission bits, a new one gets 0666 minus umask (``replacement_mode``), unless ``perms``
  says otherwise;
- a symlink is written *through*: the file it names is replaced and the link kept;
- a FIFO, character device or socket (``/dev/null``, ``/dev/stdout``, a named pipe) is opened and
  written directly: renaming onto it would replace it with a regular file.

Only the standard library is imported: this module is on the ``--help`` path.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal

from mlx26.core.common.errors import InputError, Mlx26Error, RunFailure

PathLike = str | os.PathLike[str]


def umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def replacement_mode(target: str | os.PathLike[str]) -> int:
    """Permission bits for a file about to replace ``target``."""
    try:
        return stat.S_IMODE(Path(target).stat().st_mode)
    except OSError:
        return 0o666 & ~umask()


def check_creatable_folder(path: str | os.PathLike[str]) -> None:
    """InputError unless ``path`` is, or can be created as, a folder: found before any work is done."""
    p = Path(path).expanduser()
    if p.exists():
        if not p.is_dir():
            raise InputError(f"{path} exists and is not a directory.")
        return
    ancestor = p.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InputError(f"cannot create {path}: {ancestor} is a file, not a folder.")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise InputError(f"cannot create {path}: {ancestor} is not writable.")


def is_special(path: PathLike) -> bool:
    """An existing path that is not a regular file or folder (device, FIFO, socket), links followed."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _resolved(target: PathLike) -> Path:
    """Through a symlink (or a chain of them): the file it names, so the rename keeps the link."""
    return Path(os.path.realpath(target))


@contextlib.contextmanager
def atomic_path(target: PathLike, *, suffix: str = ".tmp", perms: int | None = None) -> Iterator[Path]:
    """The path of a new temporary file beside ``target``, renamed onto it only on success.

    For a library that opens the file itself (``torch.save``, ``safetensors``, a compiler's ``-o``).
    Whatever it leaves there is fsynced, given ``perms`` (by default ``replacement_mode(target)``)
    and renamed onto ``target`` with ``os.replace``; on any failure, KeyboardInterrupt included, the
    temporary file is removed. ``suffix`` serves libraries that insist on one (``numpy.savez``
    appends ``.npz`` otherwise). A device or FIFO ``target`` is yielded itself, to be written through.
    """
    if is_special(target):  # renaming onto a device or FIFO would replace it: write through
        try:
            yield Path(target)
        except OSError as exc:
            if exc.errno in _WRITE_ERRNOS and exc.filename in (None, str(target)):
                raise _write_error(target, exc) from None
            raise
        return
    real = _resolved(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=suffix, dir=real.parent)
    except OSError as exc:  # name the file the user asked for, not our temporary one
        raise _write_error(target, exc) from None
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb") as written:  # any descriptor flushes the file's data to disk
            os.fsync(written.fileno())
        os.chmod(tmp, replacement_mode(real) if perms is None else perms)  # not mkstemp's 0600
        os.replace(tmp, real)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno in _WRITE_ERRNOS and exc.filename in (None, tmp, str(real)):
            raise _write_error(target, exc) from None
        raise


# Failures of writing the file itself (full disk, read-only or vanished folder), reported as such.
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOENT, errno.EFBIG}


def _write_error(target: PathLike, exc: OSError) -> Mlx26Error:
    reason = exc.strerror or type(exc).__name__
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return RunFailure(f"cannot write {target}: {reason}.", "free some space or write elsewhere")
    return InputError(f"cannot write {target}: {reason}.", "choose a writable folder")


@contextlib.contextmanager
def atomic_writer(target: PathLike, mode: Literal["w", "wb"] = "w", *, encoding: str | None = "utf-8",
                  newline: str | None = None, perms: int | None = None) -> Iterator[IO[Any]]:
    """A file object on a temporary file beside ``target``, renamed onto it only on success.

    ``mode`` is ``"w"`` (text; ``encoding`` and ``newline`` as for ``open``) or ``"wb"``; the rest
    as ``atomic_path``: fsynced, ``perms`` or ``replacement_mode(target)``, links kept, a device or
    FIFO written through, nothing left behind on failure.
    """
    binary = mode == "wb"
    text = {} if binary else {"encoding": encoding, "newline": newline}
    with atomic_path(target, perms=perms) as tmp, open(tmp, "wb" if binary else "w", **text) as handle:
        yield handle


def atomic_write(target: PathLike, data: str | bytes, *, encoding: str = "utf-8", newline: str | None = None,
                 perms: int | None = None) -> None:
    """Write ``data`` (text or bytes) to ``target`` atomically; see ``atomic_writer``."""
    if isinstance(data, bytes):
        with atomic_writer(target, "wb", perms=perms) as handle:
            handle.write(data)
    else:
        with atomic_writer(target, "w", encoding=encoding, newline=newline, perms=perms) as handle:
            handle.write(data)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def replace_folder(tmp_dir: PathLike, target: PathLike, *, replace: bool = True) -> bool:
    """Move the finished folder ``tmp_dir`` onto ``target`` (same file system); True once it is there.

    A missing (or empty) ``target`` is a single rename. An existing one is renamed aside, the new
    folder renamed in and the old one removed; should the second rename fail, the old folder is put
    back, so ``target`` is always either the old folder or the new one, complete. With
    ``replace=False`` an existing ``target`` is kept and False returned (another process finished
    first); the caller removes ``tmp_dir``. A symlink ``target`` keeps the link and replaces the
    folder it names.
    """
    tmp, dest = Path(tmp_dir), _resolved(target)
    try:
        os.replace(tmp, dest)  # rename(2) onto a missing or empty folder
        return True
    except OSError:
        if not os.path.lexists(dest):
            raise
    if not replace:
        return False
    old = dest.parent / f".{dest.name}.{os.urandom(4).hex()}.old"
    os.replace(dest, old)
    try:
        os.replace(tmp, dest)
    except BaseException:
        os.replace(old, dest)  # put the old folder back
        raise
    _remove(old)
    return True


@contextlib.contextmanager
def atomic_folder(target: PathLike, *, replace: bool = True) -> Iterator[Path]:
    """An empty temporary folder beside ``target``, moved onto it by ``replace_folder`` on success.

    The folder gets the mode ``os.mkdir`` would give (0777 minus umask); it, and whatever was
    written into it, is removed on any failure, or when ``replace=False`` finds ``target`` already
    there. A temporary folder that cannot be created is a ``RunFailure`` naming ``target``.
    """
    real = _resolved(target)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent))
    except OSError as exc:
        raise RunFailure(f"cannot create {target}: {exc.strerror}.") from None
    try:
        os.chmod(tmp, 0o777 & ~umask())
        yield tmp
        replace_folder(tmp, real, replace=replace)
    finally:
        if os.path.lexists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
