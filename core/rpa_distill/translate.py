"""The translator (hard-coded → soft-coded): every recorded action gets a selector.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). Trajectories of
one task are checked and aligned (:mod:`.align`); every aligned slot then gets one key set for
all its steps in all demos (:func:`.selectors.joint_selectors`), so the builder sees the same
shape of selector everywhere and only the values can differ. Each translated step carries
``selector``, ``slot`` and ``coordinates`` (true when only a point identifies the element).
"""

from __future__ import annotations

import copy
from typing import Any

from mlx26.core.rpa_distill.align import Slot, align, check_demos, target
from mlx26.core.rpa_distill.selectors import find, joint_selectors


def translate(trajs: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Slot], list[str]]:
    """(translated successful demos, slots, warnings)."""
    demos, warnings = check_demos(trajs)
    demos = copy.deepcopy(demos)
    slots = align(demos)
    for s, slot in enumerate(slots):
        cases = [(demos[d]["steps"][j]["elements"], target(demos[d]["steps"][j]))
                 for d, idx in slot.members.items() for j in idx]
        sels, keys = joint_selectors(cases)
        k = 0
        for d, idx in slot.members.items():
            for j in idx:
                step = demos[d]["steps"][j]
                step["selector"], step["slot"], step["coordinates"] = sels[k], s, keys == ("xy",)
                k += 1
        if keys == ("xy",):
            warnings.append(f"slot {s} ({slot.sig[0]} {slot.sig[1]}): no unique selector; using coordinates.")
    return demos, slots, warnings


def check_unique(demos: list[dict[str, Any]]) -> list[str]:
    """Steps whose selector does not match exactly its target in its own snapshot (should be none)."""
    bad = []
    for i, traj in enumerate(demos, 1):
        for j, step in enumerate(traj["steps"], 1):
            if "selector" in step and find(step["elements"], step["selector"]) != [target(step)]:
                bad.append(f"trajectory {i} step {j}")
    return bad
