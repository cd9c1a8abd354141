"""Observations: a flat list of visible elements (the DOM tree the agent sees) and its text rendering.

Part of the AutoRPA reconstruction (Chen, Hu, Yu, Yin, ICML 2026, arXiv 2605.21082; no public
code). The paper's agents read a DOM tree with element ids, tags, text, attributes and bounding
boxes; the element schema and the one-line-per-element rendering below are our own choices.

An element is a dict ``{"ref", "tag", "text", "attrs", "bbox", "value", "checked", "label",
"parent"}``: ``ref`` is the episode-local handle actions use (shuffled per episode, never
stable), ``label`` is the text of an enclosing ``<label>`` (how checkboxes and radios are
named), ``bbox`` is ``[left, top, width, height]``.
"""

from __future__ import annotations

from typing import Any

# Attributes rendered (in this order) and usable by selectors; anything else is ignored.
RENDERED_ATTRS = ("type", "id", "name", "placeholder", "aria-label", "role", "class")


def element(ref: str, tag: str, text: str = "", *, attrs: dict[str, str] | None = None,
            bbox: tuple[float, float, float, float] = (0, 0, 0, 0), value: Any = None,
            checked: bool | None = None, label: str = "", options: list[str] | None = None,
            parent: str | None = None) -> dict[str, Any]:
    el: dict[str, Any] = {"ref": str(ref), "tag": tag.lower(), "text": text, "attrs": dict(attrs or {}),
                          "bbox": [float(b) for b in bbox]}
    if value is not None:
        el["value"] = value
    if checked is not None:
        el["checked"] = bool(checked)
    if label:
        el["label"] = label
    if options is not None:
        el["options"] = list(options)
    if parent is not None:
        el["parent"] = parent
    return el


def _quote(text: str) -> str:
    return '"' + str(text).replace('"', "'").replace("\n", " ") + '"'


def render_element(el: dict[str, Any]) -> str:
    """``[ref] tag "text" type=… id=… label="…" value="…" checked=…`` on one line."""
    parts = [f"[{el['ref']}] {el['tag']}"]
    if el.get("text"):
        parts.append(_quote(el["text"]))
    for key in RENDERED_ATTRS:
        if el["attrs"].get(key):
            parts.append(f"{key}={el['attrs'][key]}")
    if el.get("label"):
        parts.append(f"label={_quote(el['label'])}")
    if "options" in el:
        parts.append("options=" + _quote("|".join(el["options"])))
    if "value" in el:
        parts.append(f"value={_quote(el['value'])}")
    if "checked" in el:
        parts.append(f"checked={'true' if el['checked'] else 'false'}")
    return " ".join(parts)


def render(elements: list[dict[str, Any]]) -> str:
    """The observation as the agent's prompt shows it: one element a line, in document order."""
    return "\n".join(render_element(el) for el in elements if _interesting(el))


def _interesting(el: dict[str, Any]) -> bool:
    # Containers without text, name or state add tokens but nothing an action can target.
    return bool(el.get("text") or el.get("label") or "value" in el or "checked" in el or "options" in el
                or el["tag"] in ("button", "a", "input", "select", "textarea"))


def by_ref(elements: list[dict[str, Any]], ref: str) -> dict[str, Any] | None:
    return next((el for el in elements if el["ref"] == str(ref)), None)


def center(el: dict[str, Any]) -> tuple[float, float]:
    left, top, width, height = el["bbox"]
    return left + width / 2, top + height / 2
