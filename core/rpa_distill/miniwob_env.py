"""``miniwob/*``: the real MiniWoB++ tasks (PyPI ``miniwob``) in headless Chromium via Selenium.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code); the paper's web
benchmark is MiniWoB++ (Liu et al., 2018; Farama ``miniwob`` 1.x ships the HTML tasks). We
load a task's HTML from the installed package with a ``file://`` URL, seed it with
``Math.seedrandom``, start episodes with ``core.startEpisodeReal()``, read the DOM with the
task page's own ``core.getDOMInfo()`` and the instruction fields with ``miniwob.fields``, and
act on elements through Selenium (``core.previousDOMInfo[ref]``). Reward is MiniWoB's raw
reward (``WOB_RAW_REWARD_GLOBAL``, not time-discounted); success is reward > 0.

Chromium and chromedriver come from the system (Debian ``chromium`` and ``chromium-driver``):
``MINIWOB_CHROME_BINARY`` (default /usr/bin/chromium) and ``MINIWOB_CHROMEDRIVER`` (default
/usr/bin/chromedriver). The driver path is always given to Selenium, so Selenium Manager never
tries to download a driver.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import time
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.rpa_distill.dom import element
from mlx26.core.rpa_distill.env import InvalidAction

# The tasks with a scripted oracle (demos without an LLM) and scripted ReAct rules; every other task the
# package ships is selectable by name too (``all_tasks``), with demos from ``--agent react --llm SPEC``.
TASKS = ("click-button", "click-link", "enter-text", "login-user", "click-checkboxes", "click-option",
         "choose-list", "click-dialog-2", "click-test", "click-test-2", "click-test-transfer", "click-button-sequence",
         "focus-text", "focus-text-2", "enter-password", "enter-text-dynamic", "enter-text-2", "click-dialog",
         "click-tab", "click-checkboxes-large", "click-checkboxes-transfer", "unicode-test", "click-widget",
         "click-collapsible")
DEFAULT_CHROME = "/usr/bin/chromium"
DEFAULT_DRIVER = "/usr/bin/chromedriver"
_SELECT_INFO = """
var out = {};
for (var ref in core.previousDOMInfo) {
  var el = core.previousDOMInfo[ref];
  if (el.tagName === 'SELECT') {
    out[ref] = {options: Array.from(el.options).map(function (o) { return o.text.trim(); }),
                value: el.selectedIndex >= 0 ? el.options[el.selectedIndex].text.trim() : ''};
  }
}
return out;
"""


def browser_paths() -> tuple[str, str]:
    chrome = os.environ.get("MINIWOB_CHROME_BINARY") or shutil.which("chromium") or DEFAULT_CHROME
    driver = os.environ.get("MINIWOB_CHROMEDRIVER") or shutil.which("chromedriver") or DEFAULT_DRIVER
    return chrome, driver


def browser_problem() -> str | None:
    """Why the browser environment cannot run here, or None when it can."""
    for module in ("selenium", "miniwob"):
        if importlib.util.find_spec(module) is None:
            return f"the Python package '{module}' is not installed (pip install 'mlx26[rpa]')"
    chrome, driver = browser_paths()
    for what, path in (("Chromium", chrome), ("chromedriver", driver)):
        if not (Path(path).is_file() and os.access(path, os.X_OK)):
            return f"{what} not found at {path} (apt-get install chromium chromium-driver, or set " \
                   "MINIWOB_CHROME_BINARY / MINIWOB_CHROMEDRIVER)"
    return None


def start_chromium(script_timeout: float, page_timeout: float, what: str) -> Any:
    """A headless Chromium under Selenium, offline (the system's browser and driver; never a download)."""
    problem = browser_problem()
    if problem:
        raise RunFailure(f"cannot start {what}: {problem}.")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must never fetch a driver or browser
    chrome, driver_path = browser_paths()
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=600,600", "--disable-extensions", "--mute-audio"):
        options.add_argument(arg)
    options.binary_location = chrome
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_script_timeout(script_timeout)
    driver.set_page_load_timeout(page_timeout)
    return driver


def perform(target: Any, action: dict[str, Any], where: str) -> None:
    """Click, type into (click, clear, keys) or select on a Selenium element; a driver error is an InvalidAction."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import Select

    try:
        if action["op"] == "click":
            target.click()
        elif action["op"] == "type":
            target.click()
            target.clear()
            target.send_keys(action["text"])
        else:
            Select(target).select_by_visible_text(action["text"])
    except WebDriverException as exc:
        raise InvalidAction(f"{where}: {action['op']} on {action['ref']} failed "
                            f"({' '.join(str(exc.msg or exc).split())[:120]}).") from None


class BrowserSession:
    """A ``driver`` attribute that ``close`` (or, as a last resort, garbage collection) always quits."""

    driver: Any = None

    def close(self) -> None:
        if self.driver is not None:
            try:
                self.driver.quit()
            finally:
                self.driver = None

    def __del__(self) -> None:  # a last resort: never leave a browser behind
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def html_dir() -> Path:
    spec = importlib.util.find_spec("miniwob")
    if spec is None or not spec.submodule_search_locations:
        raise RunFailure("the 'miniwob' package is not installed.")
    return Path(next(iter(spec.submodule_search_locations))) / "html" / "miniwob"


def all_tasks() -> tuple[str, ...]:
    """Every MiniWoB++ task the installed package ships (its HTML files), sorted; () without the package."""
    if importlib.util.find_spec("miniwob") is None:
        return ()
    return tuple(sorted(p.stem for p in html_dir().glob("*.html")))


def parse_fields(task: str, utterance: str) -> dict[str, Any]:
    """MiniWoB's own field extractor, with numbered ``target i`` keys folded into one list, ``targets``; a
    task the package has no extractor for gets ``{"utterance": …}``."""
    from miniwob.fields import get_field_extractor

    try:
        pairs = list(get_field_extractor(task)(utterance))
    except (ValueError, KeyError):
        return {"utterance": utterance}
    numbered = [v for k, v in pairs if k.startswith("target ")]
    if numbered or task.startswith("click-checkboxes"):
        return {"targets": numbered, **{k: v for k, v in pairs if not k.startswith("target ") and k != "button"}}
    return {k: v for k, v in pairs}


def _flatten(node: dict[str, Any], out: list[dict[str, Any]], parent: dict[str, Any] | None,
             siblings: list[dict[str, Any]]) -> None:
    tag = str(node["tag"])
    kind = ""
    if tag.startswith("INPUT_"):
        tag, kind = "INPUT", tag[6:]
    attrs = {"type": kind} if kind else {}
    if node.get("id"):
        attrs["id"] = str(node["id"])
    if node.get("classes"):
        attrs["class"] = str(node["classes"]).strip()
    label = ""
    if tag == "INPUT" and parent is not None and parent["tag"] == "LABEL":
        label = " ".join(c.get("text", "") for c in parent["children"] if c["tag"] == "t").strip()
    elif tag == "INPUT":
        index = next((i for i, s in enumerate(siblings) if s is node), 0)
        before = siblings[index - 1] if index > 0 else None
        if before is not None and before["tag"] == "LABEL":
            label = str(before.get("text", "")).strip()
    text = str(node.get("text") or "")
    if not text and tag in ("BUTTON", "A", "LABEL"):  # e.g. an icon button whose caption is a child text node
        text = " ".join(str(c.get("text", "")) for c in node.get("children", []) if c["tag"] == "t").strip()
    value = node.get("value")
    checked = value if kind in ("checkbox", "radio") else None
    el = element(str(node["ref"]), tag, text, attrs=attrs,
                 bbox=(node["left"], node["top"], node["width"], node["height"]),
                 value=None if kind in ("checkbox", "radio") or value is None else str(value), checked=checked,
                 label=label)
    if tag != "BODY":
        out.append(el)
    for child in node.get("children", []):
        _flatten(child, out, node, node.get("children", []))


class MiniWobEnv(BrowserSession):
    """One MiniWoB++ task in one headless Chromium (started on first reset, ended by close)."""

    def __init__(self, task: str, *, step_timeout: float = 10.0):
        if task not in TASKS and task not in all_tasks():
            raise InputError(f"Unknown MiniWoB task '{task}'.", "the miniwob package ships: " + ", ".join(all_tasks()))
        self.task = task
        self.name = f"miniwob/{task}"
        self.step_timeout = step_timeout
        self.driver: Any = None
        self.fields: dict[str, Any] = {}
        self.utterance = ""

    def _start(self) -> None:
        self.driver = start_chromium(self.step_timeout, max(30.0, self.step_timeout), "the MiniWoB++ browser")
        self.driver.get((html_dir() / f"{self.task}.html").as_uri())
        self._wait(lambda: self.driver.execute_script("return typeof core !== 'undefined' && "
                                                      "document.getElementById('sync-task-cover') !== null;"),
                   "the task page did not load")

    def _wait(self, ready: Any, what: str) -> None:
        deadline = time.monotonic() + self.step_timeout
        while not ready():
            if time.monotonic() > deadline:
                raise RunFailure(f"{self.name}: {what} within {self.step_timeout:g} s.")
            time.sleep(0.02)

    def reset(self, seed: int, params: dict[str, Any] | None = None) -> dict[str, Any]:
        if params:
            raise InputError("MiniWoB++ tasks draw their own parameters; --params works with synthetic/* only.")
        if self.driver is None:
            self._start()
        self.driver.execute_script("core.endEpisode(0);")
        self.driver.execute_script(f"Math.seedrandom({int(seed)!r}); core.setDataMode('train');")
        self.driver.execute_script("core.startEpisodeReal();")
        self._wait(lambda: self.driver.execute_script("return WOB_TASK_READY;"), "the episode did not start")
        response = self.driver.execute_script("return core.getUtterance();")
        self.utterance = response["utterance"] if isinstance(response, dict) else str(response)
        self.fields = parse_fields(self.task, self.utterance)
        return self.observe()

    def observe(self) -> dict[str, Any]:
        root = self.driver.execute_script("return core.getDOMInfo();")
        elements: list[dict[str, Any]] = []
        if root:
            _flatten(root, elements, None, [root])
        selects = self.driver.execute_script(_SELECT_INFO) or {}
        for el in elements:
            if el["ref"] in selects:
                el["options"] = selects[el["ref"]]["options"]
                el["value"] = selects[el["ref"]]["value"]
        return {"task": self.name, "instruction": self.utterance, "fields": self.fields, "elements": elements}

    def step(self, action: dict[str, Any]) -> tuple[dict[str, Any], float, bool]:
        try:
            ref = int(action["ref"])
        except ValueError:
            raise InvalidAction(f"{self.name}: '{action['ref']}' is not an element ref.") from None
        target = self.driver.execute_script("return core.previousDOMInfo[arguments[0]] || null;", ref)
        if target is None:
            raise InvalidAction(f"{self.name}: no element {action['ref']} in the current observation.")
        perform(target, action, self.name)
        done = bool(self.driver.execute_script("return WOB_DONE_GLOBAL;"))
        if done:
            reward = float(self.driver.execute_script("return WOB_RAW_REWARD_GLOBAL;"))
            return {"task": self.name, "instruction": self.utterance, "fields": self.fields, "elements": []}, \
                reward if reward != 0 else -1.0, True
        return self.observe(), 0.0, False

