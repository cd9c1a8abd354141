"""Soft-coded selectors and the translator that replaces hard-coded element refs with them.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). The paper's
translator turns an action on "element 17" into a description that survives a re-rendered
page. Our rule (from the issue, our own ordering): the shortest key set, tried in this order —
tag + visible text; tag + label / name / placeholder / aria-label; then stable attributes
(type, role, class, id, which must be equal in every demonstration) — that matches exactly one
element in every snapshot it is built from. Coordinates (``xy``) are the last resort and are
flagged. Before coordinates, an element whose text is shared by
others of its tag gets an ordinal (``nth``, 0-based in page order). A selector is a JSON object, e.g. ``{"tag": "button", "text": "Login"}``.
"""

from __future__ import annotations

from typing import Any

from mlx26.core.rpa_distill.dom import center

TEXT_KEYS = ("text", "label", "name", "placeholder", "aria-label")
STABLE_KEYS = ("type", "role", "class", "id")
# Candidate key sets, shortest first within each tier; the first unique one wins.
CANDIDATES: tuple[tuple[str, ...], ...] = (
    *(("tag", k) for k in TEXT_KEYS),
    *(("tag", k) for k in STABLE_KEYS),
    *(("tag", k, s) for k in TEXT_KEYS for s in STABLE_KEYS),
    *(("tag", a, b) for i, a in enumerate(STABLE_KEYS) for b in STABLE_KEYS[i + 1:]),
)
VARIABLE_KEYS = frozenset(TEXT_KEYS)  # may differ between demos (parameters); attributes may not


def value_of(el: dict[str, Any], key: str) -> Any:
    if key == "tag":
        return el["tag"]
    if key == "text":
        return (el.get("text") or "").strip() or None
    if key == "label":
        return el.get("label") or None
    return el["attrs"].get(key) or None


def matches(el: dict[str, Any], selector: dict[str, Any]) -> bool:
    if "xy" in selector:
        x, y = selector["xy"]
        left, top, width, height = el["bbox"]
        return left <= x <= left + width and top <= y <= top + height
    return all(value_of(el, k) == v for k, v in selector.items())


def find(elements: list[dict[str, Any]], selector: dict[str, Any]) -> list[dict[str, Any]]:
    if "nth" in selector:  # the nth (0-based, document order) of the elements matching the other keys
        rest = {k: v for k, v in selector.items() if k != "nth"}
        hits = find(elements, rest)
        n = selector["nth"]
        return [hits[n]] if isinstance(n, int) and 0 <= n < len(hits) else []
    hits = [el for el in elements if matches(el, selector)]
    if "xy" in selector and hits:  # the innermost (smallest) box under the point
        hits = [min(hits, key=lambda e: e["bbox"][2] * e["bbox"][3])]
    return hits


def _selector(el: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any] | None:
    sel = {k: value_of(el, k) for k in keys}
    return sel if all(v is not None for v in sel.values()) else None


def joint_selectors(cases: list[tuple[list[dict[str, Any]], dict[str, Any]]]
                    ) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """One selector per (snapshot, target element), all over the same key set.

    The key set is the first candidate whose selector matches exactly its own target in every
    snapshot, with attribute values equal across the cases; else coordinates (key set ``("xy",)``).
    """
    for keys in CANDIDATES:
        sels = [_selector(el, keys) for _, el in cases]
        if any(s is None for s in sels):
            continue
        fixed = [k for k in keys if k not in VARIABLE_KEYS]
        if any(len({s[k] for s in sels}) > 1 for k in fixed):  # type: ignore[index]
            continue
        if all(find(elements, s) == [el] for (elements, el), s in zip(cases, sels, strict=True)):  # type: ignore[arg-type]
            return sels, keys  # type: ignore[return-value]
    for key in TEXT_KEYS:  # duplicates (two "OK" buttons): the first, second, … of them, in page order
        ordinal: list[dict[str, Any]] = []
        for elements, el in cases:
            base = _selector(el, ("tag", key))
            if base is None:
                break
            ordinal.append({**base, "nth": find(elements, base).index(el)})
        else:
            return ordinal, ("tag", key, "nth")
    return [{"xy": list(center(el))} for _, el in cases], ("xy",)


def describe(selector: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in selector.items())
