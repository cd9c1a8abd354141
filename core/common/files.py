"""File permissions for atomic writes (no paper).

``tempfile.mkstemp`` creates files with mode 0600, and ``os.replace`` keeps that mode, so a file
written atomically would lose the permissions an ordinary ``open(..., "w")`` gives it. These
helpers restore them: an existing file keeps its permission bits, a new one gets 0666 minus umask.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


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
