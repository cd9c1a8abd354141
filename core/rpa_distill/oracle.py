"""A scripted oracle agent: per-family policies that read the observation like any agent.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). The paper
records demonstrations with an LLM ReAct agent; for tests and the demo we record them with
these hand-written policies instead (no LLM, no tokens). They see only the observation and the
parsed instruction fields, never the simulator's internals, so the same policy drives both the
synthetic family and the MiniWoB++ task of the same name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.rpa_distill.actions import make

Obs = dict[str, Any]
Policy = Callable[..., "dict[str, Any] | None"]


def _find(obs: Obs, pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    return next((el for el in obs["elements"] if pred(el)), None)


def _is(el: dict[str, Any], tag: str, kind: str | None = None) -> bool:
    return el["tag"] == tag and (kind is None or el["attrs"].get("type") == kind)


def _button(obs: Obs, text: str) -> dict[str, Any] | None:
    return _find(obs, lambda e: e["tag"] == "button" and e.get("text", "").strip().lower() == text.lower())


def _click(el: dict[str, Any] | None) -> dict[str, Any] | None:
    return make("click", el["ref"]) if el is not None else None


def _text_then_submit(obs: Obs, expected: str) -> dict[str, Any] | None:
    box = _find(obs, lambda e: _is(e, "input", "text") or e["tag"] == "textarea")
    if box is not None and box.get("value", "") != expected:
        return make("type", box["ref"], expected)
    return _click(_button(obs, "Submit"))


def click_button(obs: Obs) -> dict[str, Any] | None:
    return _click(_button(obs, obs["fields"]["target"]))


def click_link(obs: Obs) -> dict[str, Any] | None:
    target = obs["fields"]["target"]
    return _click(_find(obs, lambda e: e.get("text") == target and (
        e["tag"] == "a" or "alink" in e["attrs"].get("class", ""))))


def enter_text(obs: Obs) -> dict[str, Any] | None:
    return _text_then_submit(obs, obs["fields"]["target"])


def enter_text_2(obs: Obs) -> dict[str, Any] | None:
    f = obs["fields"]
    if "case" in f:  # MiniWoB's enter-text-2: {"text", "case": upper|lower}
        return _text_then_submit(obs, f["text"].upper() if f["case"] == "upper" else f["text"].lower())
    return _text_then_submit(obs, f["target"].lower())


def click_test(obs: Obs) -> dict[str, Any] | None:
    return _click(_find(obs, lambda e: e["tag"] == "button"))


def click_button_sequence(obs: Obs, history: list[dict[str, Any]]) -> dict[str, Any] | None:
    return _click(_button(obs, "ONE" if not history else "TWO"))


def focus_text(obs: Obs) -> dict[str, Any] | None:
    return _click(_find(obs, lambda e: _is(e, "input", "text")))


def focus_text_2(obs: Obs) -> dict[str, Any] | None:
    boxes = [e for e in obs["elements"] if _is(e, "input", "text")]
    n = int(obs["fields"]["target"]) - 1
    return _click(boxes[n]) if 0 <= n < len(boxes) else None


def enter_password(obs: Obs) -> dict[str, Any] | None:
    for box in (e for e in obs["elements"] if _is(e, "input", "password")):
        if box.get("value", "") != obs["fields"]["target"]:
            return make("type", box["ref"], obs["fields"]["target"])
    return _click(_button(obs, "Submit"))


def click_dialog(obs: Obs) -> dict[str, Any] | None:
    return _click(_find(obs, lambda e: e["tag"] == "button" and (
        e.get("text") in ("x", "Close") or "close" in e["attrs"].get("class", ""))))


def click_tab_number(obs: Obs) -> dict[str, Any] | None:
    return _click(_find(obs, lambda e: e["tag"] == "a" and e.get("text") == f"Tab #{obs['fields']['target']}"))


def click_widget(obs: Obs) -> dict[str, Any] | None:
    kind = obs["fields"]["target"]
    if kind in ("textarea", "button"):
        return _click(_find(obs, lambda e: e["tag"] == kind))
    return _click(_find(obs, lambda e: _is(e, "input", kind)))


def click_collapsible(obs: Obs, history: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not history:  # the section's header opens it
        return _click(_find(obs, lambda e: e["tag"] == "h3"))
    return _click(_button(obs, "Submit"))


def login_user(obs: Obs) -> dict[str, Any] | None:
    accept = _button(obs, "Accept cookies")
    if accept is not None:
        return _click(accept)
    def named(key: str) -> Callable[[dict[str, Any]], bool]:
        return lambda e: e["tag"] == "input" and key in (e["attrs"].get("name"), e["attrs"].get("id"))

    for key in ("username", "password"):
        box = _find(obs, named(key))
        if box is not None and box.get("value", "") != obs["fields"][key]:
            return make("type", box["ref"], obs["fields"][key])
    return _click(_button(obs, "Login"))


def click_checkboxes(obs: Obs) -> dict[str, Any] | None:
    wanted = set(obs["fields"]["targets"])
    for el in obs["elements"]:
        if _is(el, "input", "checkbox") and (el.get("label") in wanted) != bool(el.get("checked")):
            return _click(el)
    return _click(_button(obs, "Submit"))


def click_option(obs: Obs) -> dict[str, Any] | None:
    target = obs["fields"]["target"]
    radio = _find(obs, lambda e: _is(e, "input", "radio") and e.get("label") == target)
    if radio is not None and not radio.get("checked"):
        return _click(radio)
    return _click(_button(obs, "Submit"))


def choose_list(obs: Obs) -> dict[str, Any] | None:
    target = obs["fields"]["target"]
    box = _find(obs, lambda e: e["tag"] == "select")
    if box is not None and box.get("value") != target:
        return make("select", box["ref"], target)
    return _click(_button(obs, "Submit"))


def click_tab(obs: Obs) -> dict[str, Any] | None:
    button = _button(obs, obs["fields"]["target"])
    if button is not None:
        return _click(button)
    return _click(_find(obs, lambda e: e["attrs"].get("role") == "tab" and e.get("text") == obs["fields"]["tab"]))


def click_dialog_2(obs: Obs) -> dict[str, Any] | None:
    target = obs["fields"]["target"]
    if target == "x":  # the title bar's close button (its visible glyph is an icon)
        return _click(_find(obs, lambda e: e["tag"] == "button" and (
            e.get("text") in ("x", "Close") or "close" in e["attrs"].get("class", "")
            or e["attrs"].get("aria-label") == "close")))
    return _click(_button(obs, target))


POLICIES: dict[str, Policy] = {
    "click-button": click_button, "click-link": click_link, "enter-text": enter_text,
    "enter-text-2": enter_text_2, "login-user": login_user, "click-checkboxes": click_checkboxes,
    "click-option": click_option, "choose-list": choose_list, "click-tab": click_tab,
    "click-dialog-2": click_dialog_2,
    # MiniWoB++ tasks with no synthetic family (same-named policies drive the real pages only)
    "click-test": click_test, "click-test-2": click_button, "click-test-transfer": click_button,
    "click-button-sequence": click_button_sequence, "focus-text": focus_text, "focus-text-2": focus_text_2,
    "enter-password": enter_password, "enter-text-dynamic": enter_text, "click-dialog": click_dialog,
    "click-checkboxes-large": click_checkboxes, "click-checkboxes-transfer": click_checkboxes,
    "unicode-test": click_button, "click-widget": click_widget, "click-collapsible": click_collapsible,
}
# MiniWoB++'s click-tab ("Click on Tab #2.") is not the synthetic click-tab family: the env name decides.
MINIWOB_POLICIES: dict[str, Policy] = {"click-tab": click_tab_number}


class OracleAgent:
    """``act(obs) → action``; ``usage`` stays zero (no model is called)."""

    kind = "oracle"

    def __init__(self, family: str, *, miniwob: bool = False):
        if family not in POLICIES:
            raise InputError(f"no oracle policy for task family '{family}'.",
                             "families with one: " + ", ".join(POLICIES) + "; other tasks: --agent react --llm SPEC")
        self.policy = (MINIWOB_POLICIES if miniwob else {}).get(family, POLICIES[family])
        self.tokens = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}

    def start(self, obs: Obs) -> None:
        """New episode (the oracle keeps no memory)."""

    def act(self, obs: Obs, history: list[dict[str, Any]]) -> dict[str, Any]:
        # Two policies need the actions so far (a fixed sequence); the rest read the observation alone.
        action = (self.policy(obs, history) if self.policy in (click_button_sequence, click_collapsible)  # type: ignore[call-arg]
                  else self.policy(obs))  # type: ignore[call-arg]
        if action is None:
            raise RunFailure(f"oracle: no applicable action in {obs['task']}.")
        return action
