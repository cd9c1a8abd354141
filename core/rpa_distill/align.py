"""Checking the demonstration set and aligning its trajectories step by step.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). The paper
aligns several trajectories of one task before anti-unifying them; we align by action
signature (op, target tag, target ``type``): consecutive steps with the same signature form a
run (a loop candidate), and the run sequences of all demos are merged by progressive
longest-common-subsequence alignment, so a run missing from some demos becomes an optional
(conditional) slot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.rpa_distill.dom import by_ref


def check_demos(trajs: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """(the successful demos, warnings); ValueError for mixed tasks or an empty set.

    Every kept step's action must name an element of its own snapshot (the error names the step).
    """
    tasks = sorted({t["task"] for t in trajs})
    if len(tasks) > 1:
        raise InputError(f"the demonstrations mix task ids ({', '.join(tasks)}); distil one task at a time.",
                         "split the file by its 'task' field")
    warnings, kept = [], []
    for i, traj in enumerate(trajs, 1):
        if not traj.get("success"):
            warnings.append(f"trajectory {i} (seed {traj.get('seed')}) failed (reward {traj.get('reward')}); "
                            "excluded from the demonstrations.")
            continue
        for j, step in enumerate(traj["steps"], 1):
            action = step.get("action") if isinstance(step, dict) else None
            if not isinstance(action, dict) or "op" not in action or "ref" not in action:
                raise InputError(f"trajectory {i} step {j}: no action recorded.")
            elements = step.get("elements") or []
            if not isinstance(elements, list) or not all(_well_formed(el) for el in elements):
                raise InputError(f"trajectory {i} step {j}: malformed snapshot (each element needs a string ref, "
                                 "tag and text, an attrs object and a 4-number bbox).")
            if by_ref(step.get("elements") or [], action["ref"]) is None:
                raise InputError(f"trajectory {i} step {j}: action {action['op']}({action['ref']}) references "
                                 f"element {action['ref']}, which is missing from its snapshot.")
        kept.append(traj)
    if not kept:
        raise InputError("no successful trajectory to distil from.", "record more episodes")
    return kept, warnings


def _well_formed(el: Any) -> bool:
    return (isinstance(el, dict) and all(isinstance(el.get(k), str) for k in ("ref", "tag", "text"))
            and isinstance(el.get("attrs"), dict) and isinstance(el.get("bbox"), list) and len(el["bbox"]) == 4
            and all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in el["bbox"]))


def target(step: dict[str, Any]) -> dict[str, Any]:
    el = by_ref(step["elements"], step["action"]["ref"])
    assert el is not None  # checked by check_demos
    return el


def signature(step: dict[str, Any]) -> tuple[str, str, str]:
    el = target(step)
    return step["action"]["op"], el["tag"], el["attrs"].get("type", "")


@dataclass
class Slot:
    """One aligned position: the run of step indices it covers in each demo that has it."""

    sig: tuple[str, str, str]
    members: dict[int, list[int]] = field(default_factory=dict)

    def optional(self, n_demos: int) -> bool:
        return len(self.members) < n_demos


def runs(steps: list[dict[str, Any]]) -> list[tuple[tuple[str, str, str], list[int]]]:
    out: list[tuple[tuple[str, str, str], list[int]]] = []
    for j, step in enumerate(steps):
        sig = signature(step)
        if out and out[-1][0] == sig:
            out[-1][1].append(j)
        else:
            out.append((sig, [j]))
    return out


def _lcs_pairs(a: list[Any], b: list[Any]) -> list[tuple[int, int]]:
    n, m = len(a), len(b)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if a[i] == b[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def align(demos: list[dict[str, Any]]) -> list[Slot]:
    """Slots in execution order; ``slot.members[d]`` lists demo ``d``'s step indices."""
    consensus: list[Slot] = []
    for d, traj in enumerate(demos):
        mine = runs(traj["steps"])
        pairs = _lcs_pairs([s.sig for s in consensus], [sig for sig, _ in mine])
        matched = dict((j, i) for i, j in pairs)
        merged: list[Slot] = []
        ci = 0
        for j, (sig, idx) in enumerate(mine):
            if j in matched:
                while ci < matched[j]:
                    merged.append(consensus[ci])
                    ci += 1
                slot = consensus[ci]
                slot.members[d] = idx
                merged.append(slot)
                ci += 1
            else:
                merged.append(Slot(sig, {d: idx}))
        merged.extend(consensus[ci:])
        consensus = merged
    return consensus
