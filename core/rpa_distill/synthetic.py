"""``synthetic/*``: an in-process DOM-like GUI simulator with MiniWoB++-style task families.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). The paper
evaluates on browser tasks; this simulator is our own fast stand-in for unit tests and the
demo. Every episode shuffles the element order, the layout (bounding boxes), the element refs
and the ``id`` attributes (deliberately unstable, as generated ids are on real sites), and
draws new parameter values. Families (instructions follow MiniWoB++ wording):

click-button, click-link, enter-text, enter-text-2 (type in lower case: a transform),
login-user (a cookie banner, modal, appears in half of the episodes: a conditional step),
click-checkboxes (1–4 targets: a loop), click-option (radio), choose-list (a <select>),
click-tab (open a tab, then click a button shown only there), click-dialog-2.
"""

from __future__ import annotations

import json
import random
from typing import Any

from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.rpa_distill.dom import element
from mlx26.core.rpa_distill.env import InvalidAction

WORDS = ("amber", "basil", "cedar", "delta", "ember", "fjord", "grove", "harbor", "iris", "jasper", "kelp",
         "lumen", "maple", "nectar", "onyx", "pearl", "quartz", "raven", "sable", "tundra", "umber", "violet",
         "willow", "xenon", "yarrow", "zephyr", "birch", "coral", "dune", "flint", "garnet", "hazel", "indigo",
         "juniper", "lotus", "meadow", "nova", "orchid", "pine", "river")
BUTTONS = ("OK", "Cancel", "Next", "Previous", "Yes", "No", "Save", "Delete", "Reset", "Apply", "Close",
           "Open", "Send", "Edit", "Copy", "Share")
NAMES = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "oscar",
         "peggy", "trent", "victor", "walter")
TABS = ("Home", "Profile", "Settings", "Billing", "Help", "Reports", "Team", "Files")

FAMILIES = ("click-button", "click-link", "enter-text", "enter-text-2", "login-user", "click-checkboxes",
            "click-option", "choose-list", "click-tab", "click-dialog-2")


def _rid(rng: random.Random) -> str:
    return "w" + "".join(rng.choice("0123456789abcdef") for _ in range(6))


class _Page:
    """Nodes in document order; refs, ids and boxes are assigned when the episode is laid out."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.nodes: list[dict[str, Any]] = []

    def add(self, key: str, tag: str, text: str = "", group: str = "main", **kw: Any) -> dict[str, Any]:
        node = {"key": key, "tag": tag, "text": text, "group": group, **kw}
        self.nodes.append(node)
        return node

    def layout(self) -> None:
        refs = self.rng.sample(range(1, 1000), len(self.nodes))
        y = self.rng.randint(0, 30)
        for node, ref in zip(self.nodes, refs, strict=True):
            node["ref"] = f"e{ref}"
            node.setdefault("attrs", {})
            if node.pop("random_id", True):
                node["attrs"]["id"] = _rid(self.rng)
            height = 20 + self.rng.randint(0, 8)
            node["bbox"] = (self.rng.randint(4, 60), y, 60 + len(node["text"]) * 7, height)
            y += height + self.rng.randint(2, 12)


class SyntheticEnv:
    """One family; ``reset(seed, params)`` draws an episode, ``params`` overrides field values."""

    def __init__(self, family: str):
        if family not in FAMILIES:
            raise InputError(f"Unknown synthetic family '{family}'.", "choose one of: " + ", ".join(FAMILIES))
        self.family = family
        self.name = f"synthetic/{family}"
        self.state: dict[str, Any] = {}
        self.done = True

    # ------------------------------------------------------------------ protocol
    def reset(self, seed: int, params: dict[str, Any] | None = None) -> dict[str, Any]:
        rng = random.Random(f"{self.family}:{seed}")
        page = _Page(rng)
        builder = getattr(self, "_build_" + self.family.replace("-", "_"))
        if params:
            self._check_params(builder, params)
        instruction, fields, state = builder(rng, page, dict(params or {}))
        page.layout()
        self.state = {"page": page, "instruction": instruction, "fields": fields, "open_group": None, **state}
        self.done = False
        return self.observe()

    def _check_params(self, builder: Any, params: dict[str, Any]) -> None:
        """ValueError for a field this family does not have, or a value of the wrong shape."""
        probe = random.Random(0)
        fields = builder(probe, _Page(probe), {})[1]
        allowed = set(fields) | ({"banner"} if self.family == "login-user" else set())
        unknown = sorted(set(params) - allowed)
        if unknown:
            raise InputError(f"{self.name} has no field {', '.join(map(repr, unknown))}.",
                             "its fields: " + ", ".join(sorted(allowed)))
        for key, value in params.items():
            scalar = (str, int, float, bool)
            ok = (isinstance(value, list) and all(isinstance(v, scalar) for v in value)
                  if isinstance(fields.get(key), list) else isinstance(value, scalar))
            if not ok:
                kind = "a list of strings" if isinstance(fields.get(key), list) else "a string"
                raise InputError(f"{self.name}: field '{key}' must be {kind}, got {json.dumps(value)}.")

    def observe(self) -> dict[str, Any]:
        page: _Page = self.state["page"]
        visible = [n for n in page.nodes if self._visible(n)]
        elements = [element(n["ref"], n["tag"], n["text"], attrs=n["attrs"], bbox=n["bbox"],
                            value=n.get("value"), checked=n.get("checked"), label=n.get("label", ""),
                            options=n.get("options")) for n in visible]
        return {"task": self.name, "instruction": self.state["instruction"], "fields": self.state["fields"],
                "elements": elements}

    def step(self, action: dict[str, Any]) -> tuple[dict[str, Any], float, bool]:
        if self.done:
            raise RunFailure(f"{self.name}: step after the episode ended.")
        page: _Page = self.state["page"]
        node = next((n for n in page.nodes if n["ref"] == action["ref"] and self._visible(n)), None)
        if node is None:
            raise InvalidAction(f"{self.name}: no visible element {action['ref']} in the current observation.")
        reward = self._apply(node, action)
        if reward != 0:
            self.done = True
        return self.observe(), reward, self.done

    def close(self) -> None:
        self.state = {}

    # ------------------------------------------------------------------ mechanics
    def _visible(self, node: dict[str, Any]) -> bool:
        group = node["group"]
        if self.state.get("modal") and group != "modal":
            return False
        if group == "modal":
            return bool(self.state.get("modal"))
        if group.startswith("tab:"):
            return group == f"tab:{self.state.get('active_tab')}"
        return True

    def _apply(self, node: dict[str, Any], action: dict[str, Any]) -> float:
        op = action["op"]
        if op == "type":
            if node["tag"] not in ("input", "textarea") or node["attrs"].get("type") in ("checkbox", "radio"):
                return 0.0
            node["value"] = action["text"]
            return 0.0
        if op == "select":
            if node["tag"] != "select" or action["text"] not in node.get("options", []):
                return 0.0
            node["value"] = action["text"]
            return 0.0
        kind = node["attrs"].get("type")
        if node["tag"] == "input" and kind == "checkbox":
            node["checked"] = not node.get("checked", False)
            return 0.0
        if node["tag"] == "input" and kind == "radio":
            for other in self.state["page"].nodes:
                if other["attrs"].get("type") == "radio":
                    other["checked"] = other is node
            return 0.0
        check = self.state["on_click"]
        return check(node)

    # ------------------------------------------------------------------ families
    def _draw(self, rng: random.Random, params: dict[str, Any], key: str, pool: tuple[str, ...]) -> str:
        return str(params[key]) if key in params else rng.choice(pool)

    def _buttons(self, rng, page, labels, target_key=None):
        for label in labels:
            page.add(f"button:{label}", "button", label)

    def _build_click_button(self, rng, page, params):
        target = self._draw(rng, params, "target", BUTTONS)
        labels = [target] + rng.sample([b for b in BUTTONS if b != target], rng.randint(2, 5))
        rng.shuffle(labels)
        page.add("p", "div", f"Pick one of {len(labels)} buttons.")
        decoy = rng.choice(labels)
        page.add("decoy", "span", decoy)  # the same text in a non-button: the tag must be in the selector
        self._buttons(rng, page, labels)
        rng.shuffle(page.nodes)

        def on_click(node):
            return 0.0 if node["tag"] != "button" else (1.0 if node["text"] == target else -1.0)

        return f'Click on the "{target}" button.', {"target": target}, {"on_click": on_click}

    def _build_click_link(self, rng, page, params):
        target = self._draw(rng, params, "target", WORDS)
        words = rng.sample([w for w in WORDS if w != target], 7)
        links = set(rng.sample(words, 2)) | {target}
        text = words + [target]
        rng.shuffle(text)
        for word in text:
            page.add(f"w:{word}", "a" if word in links else "span", word)
        page.add("decoy", "span", target)

        def on_click(node):
            return 0.0 if node["tag"] != "a" else (1.0 if node["text"] == target else -1.0)

        return f'Click on the link "{target}".', {"target": target}, {"on_click": on_click}

    def _text_and_submit(self, rng, page, expected):
        page.add("label", "div", "Type here:")
        box = page.add("input", "input", attrs={"type": "text"}, value="")
        page.add("submit", "button", "Submit")

        def on_click(node):
            if node["text"] != "Submit":
                return 0.0
            return 1.0 if box["value"] == expected else -1.0

        return on_click

    def _build_enter_text(self, rng, page, params):
        target = self._draw(rng, params, "target", WORDS + NAMES)
        on_click = self._text_and_submit(rng, page, target)
        return (f'Enter "{target}" into the text field and press Submit.', {"target": target},
                {"on_click": on_click})

    def _build_enter_text_2(self, rng, page, params):
        target = self._draw(rng, params, "target", tuple(w.upper() for w in WORDS))
        on_click = self._text_and_submit(rng, page, target.lower())
        return (f'Type "{target}" in all lower case letters in the text input and press Submit.',
                {"target": target}, {"on_click": on_click})

    def _build_login_user(self, rng, page, params):
        user = self._draw(rng, params, "username", NAMES)
        password = params.get("password") or "".join(rng.choice("abcdefghjkmnpqrstuvwxyz23456789")
                                                     for _ in range(rng.randint(6, 10)))
        banner = bool(params["banner"]) if "banner" in params else rng.random() < 0.5
        inputs = [("username", "Username", "text"), ("password", "Password", "password")]
        rng.shuffle(inputs)
        boxes = {}
        for name, label, kind in inputs:
            page.add(f"label:{name}", "label", label)
            boxes[name] = page.add(f"input:{name}", "input", attrs={"type": kind, "name": name}, value="",
                                   label=label)
        page.add("login", "button", "Login")
        page.add("forgot", "a", "Forgot password?")
        if banner:
            page.add("banner", "div", "We use cookies to run this site.", group="modal")
            page.add("accept", "button", "Accept cookies", group="modal")

        def on_click(node):
            if node["key"] == "accept":
                self.state["modal"] = False
                return 0.0
            if node["key"] == "forgot":
                return -1.0
            if node["key"] != "login":
                return 0.0
            ok = boxes["username"]["value"] == user and boxes["password"]["value"] == password
            return 1.0 if ok else -1.0

        instruction = (f'Enter the username "{user}" and the password "{password}" into the text fields and '
                       "press login.")
        return instruction, {"username": user, "password": password}, {"on_click": on_click, "modal": banner}

    def _build_click_checkboxes(self, rng, page, params):
        if "targets" in params:
            targets = [str(t) for t in params["targets"]]
        else:
            targets = rng.sample(WORDS, rng.randint(1, 4))
        others = rng.sample([w for w in WORDS if w not in targets], rng.randint(2, 4))
        labels = targets + others
        rng.shuffle(labels)
        boxes = [page.add(f"cb:{w}", "input", attrs={"type": "checkbox"}, checked=False, label=w) for w in labels]
        page.add("submit", "button", "Submit")

        def on_click(node):
            if node["text"] != "Submit":
                return 0.0
            chosen = {b["label"] for b in boxes if b["checked"]}
            return 1.0 if chosen == set(targets) else -1.0

        listed = ", ".join(targets)
        return f"Select {listed} and click Submit.", {"targets": targets}, {"on_click": on_click}

    def _build_click_option(self, rng, page, params):
        target = self._draw(rng, params, "target", WORDS)
        labels = [target] + rng.sample([w for w in WORDS if w != target], rng.randint(2, 4))
        rng.shuffle(labels)
        radios = [page.add(f"r:{w}", "input", attrs={"type": "radio", "name": "opt"}, checked=False, label=w)
                  for w in labels]
        page.add("submit", "button", "Submit")

        def on_click(node):
            if node["text"] != "Submit":
                return 0.0
            chosen = [r["label"] for r in radios if r["checked"]]
            return 1.0 if chosen == [target] else -1.0

        return f"Select {target} and click Submit.", {"target": target}, {"on_click": on_click}

    def _build_choose_list(self, rng, page, params):
        target = self._draw(rng, params, "target", WORDS)
        options = [target] + rng.sample([w for w in WORDS if w != target], rng.randint(3, 6))
        rng.shuffle(options)
        box = page.add("select", "select", attrs={"name": "choice"}, options=options, value=options[0])
        page.add("submit", "button", "Submit")

        def on_click(node):
            if node["text"] != "Submit":
                return 0.0
            return 1.0 if box["value"] == target else -1.0

        return f"Select {target} from the list and click Submit.", {"target": target}, {"on_click": on_click}

    def _build_click_tab(self, rng, page, params):
        tabs = rng.sample(TABS, 3)
        tab = str(params["tab"]) if "tab" in params else rng.choice(tabs)
        if tab not in tabs:
            tabs[0] = tab
        pool = rng.sample(BUTTONS, 6)
        target = str(params["target"]) if "target" in params else pool[0]
        pool = [target] + [b for b in pool if b != target][:5]
        panels = {t: [] for t in tabs}
        panels[tab].append(target)
        rest = [b for b in pool if b != target]
        for i, label in enumerate(rest):
            panels[tabs[i % 3]].append(label)
        for t in tabs:
            page.add(f"tab:{t}", "li", t, attrs={"role": "tab"})
        for t in tabs:
            labels = panels[t]
            rng.shuffle(labels)
            for label in labels:
                page.add(f"btn:{t}:{label}", "button", label, group=f"tab:{t}")
        self.state["active_tab"] = rng.choice([t for t in tabs if t != tab])

        def on_click(node):
            if node["key"].startswith("tab:"):
                self.state["active_tab"] = node["text"]
                return 0.0
            return 1.0 if node["text"] == target else -1.0

        state = {"on_click": on_click, "active_tab": self.state["active_tab"]}
        return f'Open the "{tab}" tab and click the "{target}" button.', {"tab": tab, "target": target}, state

    def _build_click_dialog_2(self, rng, page, params):
        target = self._draw(rng, params, "target", ("OK", "Cancel", "x"))
        page.add("body", "div", " ".join(rng.sample(WORDS, 6)))
        page.add("title", "div", rng.choice(("Confirm", "Notice", "Attention")), attrs={"role": "dialog"})
        buttons = ["OK", "Cancel"]
        rng.shuffle(buttons)
        page.add("close", "button", "x", attrs={"aria-label": "close", "class": "ui-dialog-titlebar-close"})
        for label in buttons:
            page.add(f"button:{label}", "button", label)

        def on_click(node):
            return 0.0 if node["tag"] != "button" else (1.0 if node["text"] == target else -1.0)

        return (f'Click the button in the dialog box labeled "{target}".', {"target": target},
                {"on_click": on_click})
