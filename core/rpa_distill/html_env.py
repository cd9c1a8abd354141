"""``html/<name>``: a user's own web page (``--html FILE`` or ``--url URL``) plus a ``task.yaml``, in Chromium.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code): the paper distils RPA
functions for real web tasks, not only a benchmark's. The page is driven through Selenium in headless
Chromium (the same offline browser as :mod:`.miniwob_env`); the task file is ours:

    name: subscribe                      # optional; default: the task file's stem
    instruction: 'Subscribe "{name}" with the email "{email}".'
    fields:                              # each instance draws one value per field (seeded)
      name: [alice, bob, carol]
      email: [a@example.org, b@example.org]
    success:                             # checked after every action; required
      selector: {tag: div, id: result}   # exactly one element must match (keys as in selectors)
      text: 'Thanks, {name}!'            # optional: and its text must equal this
      # or: python: mymodule:check       # check(observation, fields) -> bool
    max_steps: 12                        # optional

An episode reloads the page, draws the fields (``random.Random(seed)``; ``--params`` overrides
them), and is solved (reward +1) the first time the success check holds after an action; there is
no failure signal from an arbitrary page, so an unsolved episode simply runs out of steps. The
elements an agent sees are the page's visible interactive elements and text-bearing leaves, each
tagged with a ``data-mlx26-ref`` for the duration of one observation.
"""

from __future__ import annotations

import importlib
import random
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.rpa_distill.dom import element
from mlx26.core.rpa_distill.env import InvalidAction
from mlx26.core.rpa_distill.miniwob_env import BrowserSession
from mlx26.core.rpa_distill.selectors import find

_OBSERVE = r"""
var keep = /^(A|BUTTON|INPUT|SELECT|TEXTAREA|LABEL|LI|TD|TH|H1|H2|H3|H4|P|SPAN|DIV)$/;
var leafy = ['DIV', 'SPAN', 'P', 'LI', 'TD', 'TH', 'H1', 'H2', 'H3', 'H4'];
document.querySelectorAll('[data-mlx26-ref]').forEach(function (e) { e.removeAttribute('data-mlx26-ref'); });
var out = [], n = 0;
document.body.querySelectorAll('*').forEach(function (el) {
  if (!keep.test(el.tagName)) return;
  var r = el.getBoundingClientRect(), st = window.getComputedStyle(el);
  if (st.display === 'none' || st.visibility === 'hidden' || (r.width === 0 && r.height === 0)) return;
  var text;
  if (leafy.indexOf(el.tagName) >= 0) {
    text = Array.prototype.filter.call(el.childNodes, function (c) { return c.nodeType === 3; })
      .map(function (c) { return c.textContent; }).join(' ').replace(/\s+/g, ' ').trim();
    if (!text) return;
  } else {
    text = (el.innerText || '').replace(/\s+/g, ' ').trim();
  }
  var ref = 'h' + (n++);
  el.setAttribute('data-mlx26-ref', ref);
  var label = '';
  if (el.id) { var l = document.querySelector('label[for="' + el.id + '"]'); if (l) label = l.innerText.trim(); }
  if (!label && el.tagName !== 'LABEL' && el.closest('label')) label = el.closest('label').innerText.trim();
  var attrs = {};
  ['id', 'class', 'type', 'name', 'placeholder', 'aria-label', 'role'].forEach(function (k) {
    var v = el.getAttribute(k); if (v) attrs[k] = v; });
  var item = {ref: ref, tag: el.tagName, text: text.slice(0, 200), attrs: attrs,
              bbox: [r.left, r.top, r.width, r.height], label: label};
  if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') {
    if (el.type === 'checkbox' || el.type === 'radio') item.checked = el.checked; else item.value = el.value;
  }
  if (el.tagName === 'SELECT') {
    item.options = Array.prototype.map.call(el.options, function (o) { return o.text.trim(); });
    item.value = el.selectedIndex >= 0 ? el.options[el.selectedIndex].text.trim() : '';
  }
  out.push(item);
});
return out;
"""


@dataclass
class PageTask:
    name: str
    instruction: str
    fields: dict[str, list[str]]
    selector: dict[str, Any] | None = None
    text: str | None = None
    python: str | None = None
    max_steps: int = 12
    source: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def draw(self, seed: int, params: dict[str, Any] | None = None) -> dict[str, Any]:
        rng = random.Random(seed)
        values: dict[str, Any] = {k: rng.choice(v) for k, v in self.fields.items()}
        for k, v in (params or {}).items():
            if k not in self.fields:
                raise InputError(f"--params names '{k}', which {self.source} does not define.",
                                 "fields: " + ", ".join(self.fields))
            if not isinstance(v, str):
                raise InputError(f"--params '{k}' must be a string (the text a page field takes), got {v!r}.")
            values[k] = v
        return values


def _placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def load_task(path: str, *, default_name: str | None = None) -> PageTask:
    """A task.yaml, checked: every problem names the file and the key."""
    import yaml

    p = Path(path)
    if not p.is_file():
        raise InputError(f"task file not found: {path}", "write a task.yaml (see docs/rpa-distill.md)")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not YAML ({' '.join(str(exc).split())[:160]})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: a task file is a mapping with instruction, fields and success")
    unknown = set(data) - {"name", "instruction", "fields", "success", "max_steps"}
    if unknown:
        raise InputError(f"{path}: unknown key(s) {', '.join(sorted(unknown))}",
                         "keys: name, instruction, fields, success, max_steps")
    instruction = data.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise InputError(f"{path}: 'instruction' (a template such as 'Subscribe \"{{name}}\".') is missing")
    raw = data.get("fields")
    if not isinstance(raw, dict) or not raw:
        raise InputError(f"{path}: 'fields' must map each field name to a list of values")
    fields: dict[str, list[str]] = {}
    for k, v in raw.items():
        if not (isinstance(v, list) and v and all(isinstance(x, (str, int, float)) for x in v)):
            raise InputError(f"{path}: field '{k}' needs a non-empty list of values")
        fields[str(k)] = [str(x) for x in v]
    missing = _placeholders(instruction) - set(fields)
    if missing:
        raise InputError(f"{path}: the instruction uses {{{', '.join(sorted(missing))}}}, which 'fields' lacks")
    success = data.get("success")
    if not isinstance(success, dict) or not ({"selector", "python"} & set(success)):
        raise InputError(f"{path}: no success check: give success.selector (and optionally success.text) or "
                         "success.python (module:function)")
    selector = success.get("selector")
    if selector is not None and not (isinstance(selector, dict) and selector
                                     and all(isinstance(k, str) for k in selector)):
        raise InputError(f"{path}: success.selector must be a mapping such as {{tag: div, id: result}}")
    text = success.get("text")
    if text is not None and (not isinstance(text, str) or _placeholders(text) - set(fields)):
        raise InputError(f"{path}: success.text must be a string whose {{placeholders}} are fields")
    python = success.get("python")
    if python is not None and not (isinstance(python, str) and ":" in python):
        raise InputError(f"{path}: success.python must be 'module:function'")
    steps = data.get("max_steps", 12)
    if not isinstance(steps, int) or isinstance(steps, bool) or not 1 <= steps <= 200:
        raise InputError(f"{path}: max_steps must be an integer in [1, 200]")
    name = str(data.get("name") or default_name or p.stem)
    if "/" in name or not name.strip():
        raise InputError(f"{path}: name must be non-empty and without '/'")
    return PageTask(name, instruction, fields, selector, text, python, steps, source=str(path))


def _checker(entry: str) -> Any:
    module, _, func = entry.partition(":")
    try:
        fn = getattr(importlib.import_module(module), func)
    except (ImportError, AttributeError) as exc:
        raise InputError(f"success.python '{entry}' cannot be loaded ({type(exc).__name__}: {exc})",
                         "put the module on PYTHONPATH") from None
    if not callable(fn):
        raise InputError(f"success.python '{entry}' is not a function")
    return fn


class PageEnv(BrowserSession):
    """A user's page and task file in one headless Chromium (started on first reset, ended by close)."""

    def __init__(self, task: PageTask, *, url: str, step_timeout: float = 10.0):
        self.task = task
        self.name = f"html/{task.name}"
        self.url = url
        self.step_timeout = step_timeout
        self.max_steps = task.max_steps
        self.driver: Any = None
        self.fields: dict[str, Any] = {}
        self.instruction = ""
        self.check = _checker(task.python) if task.python else None

    def _load(self) -> None:
        from selenium.common.exceptions import TimeoutException, WebDriverException

        if self.driver is None:
            from mlx26.core.rpa_distill.miniwob_env import start_chromium

            self.driver = start_chromium(self.step_timeout, self.step_timeout, "the page's browser")
        try:
            self.driver.get(self.url)
        except TimeoutException:
            raise RunFailure(f"{self.url}: the page did not load within {self.step_timeout:g} s "
                             "(--step-timeout)") from None
        except WebDriverException as exc:
            raise RunFailure(f"{self.url}: the page cannot be opened "
                             f"({' '.join(str(exc.msg or exc).split())[:160]})") from None
        if str(self.driver.execute_script("return document.URL")).startswith("chrome-error://"):
            # Chromium's own error page (current_url still shows the requested URL), not the user's page
            code = self.driver.execute_script(
                "var e = document.querySelector('.error-code'); return e ? e.innerText : '';") or "a network error"
            raise RunFailure(f"{self.url}: the page cannot be opened (Chromium: {' '.join(str(code).split())})")

    def reset(self, seed: int, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.fields = self.task.draw(seed, params)
        self.instruction = self.task.instruction.format(**self.fields)
        self._load()
        return self.observe()

    def observe(self) -> dict[str, Any]:
        raw = self.driver.execute_script(_OBSERVE) or []
        elements = []
        for item in raw:
            el = element(item["ref"], item["tag"], item.get("text", ""), attrs=item.get("attrs"),
                         bbox=tuple(item.get("bbox", (0, 0, 0, 0))), value=item.get("value"),
                         checked=item.get("checked"), label=item.get("label", ""), options=item.get("options"))
            elements.append(el)
        return {"task": self.name, "instruction": self.instruction, "fields": self.fields, "elements": elements}

    def solved(self, obs: dict[str, Any]) -> bool:
        if self.check is not None:
            return bool(self.check(obs, dict(self.fields)))
        hits = find(obs["elements"], self.task.selector or {})
        if len(hits) != 1:
            return False
        return self.task.text is None or (hits[0].get("text") or "").strip() == self.task.text.format(**self.fields)

    def step(self, action: dict[str, Any]) -> tuple[dict[str, Any], float, bool]:
        from mlx26.core.rpa_distill.miniwob_env import perform
        from selenium.common.exceptions import NoSuchElementException
        from selenium.webdriver.common.by import By

        ref = str(action["ref"])
        try:
            target = self.driver.find_element(By.CSS_SELECTOR, f'[data-mlx26-ref="{ref}"]')
        except NoSuchElementException:
            raise InvalidAction(f"{self.name}: no element {ref} in the current observation.") from None
        perform(target, action, self.name)
        obs = self.observe()
        if self.solved(obs):
            return obs, 1.0, True
        return obs, 0.0, False



def page_env(*, html: str | None, url: str | None, task_file: str, step_timeout: float = 10.0) -> PageEnv:
    """The environment for ``--html FILE`` or ``--url URL`` with ``--task task.yaml``."""
    if bool(html) == bool(url):
        raise InputError("give exactly one of --html FILE and --url URL (with --task task.yaml)")
    if html:
        p = Path(html)
        if not p.is_file():
            raise InputError(f"page not found: {html}")
        target = p.resolve().as_uri()
    else:
        assert url is not None
        if not url.startswith(("http://", "https://", "file://")):
            raise InputError(f"--url {url}: expected an http(s):// or file:// URL")
        target = url
    return PageEnv(load_task(task_file), url=target, step_timeout=step_timeout)
