"""File permissions for atomic writes (no paper).

``tempfile.mkstemp`` creates files with mode 0600, and ``os.replace`` keeps that mode, so a file
written atomically would lose the permissions an ordinary ``open(..., "w")`` gives it. These
helpers restore them: an existing file keeps its permission bits, a new one gets 0666 minus umask.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mlx26.core.common.errors import InputError


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
    """ValueError unless ``path`` is, or can be created as, a folder: found before any work is done."""
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
