"""The scripted ReAct policy: regex rules for ``scripted:`` that answer the agent's real prompts.

Part of the AutoRPA reconstruction (Chen et al., ICML 2026; no public code). To measure the
token cost of a ReAct agent without a model download, ``scripted:`` (mlx26.core.llm.scripted)
answers the unmodified prompts of :mod:`.react` from these ordered regex rules (the first that
matches the user message wins; backreferences find the element whose text equals the
instruction's quoted value). Prompt and reply tokens are then the scripted backend's labelled
estimates of the real prompts. ``write_rules`` regenerates ``data/react-rules.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mlx26.core.rpa_distill.synthetic import WORDS

RULES_FILE = Path(__file__).resolve().parent / "data" / "react-rules.json"
_REF = r"\n\[(?P<r>[^\]\n]+)\] "
_ANY = r".*?"


def _rule(task: str, element: str, reply: str) -> dict[str, str]:
    return {"match": "Task: " + task + _ANY + _REF + element, "reply": reply}


def _click(what: str) -> str:
    return f"Thought: {what} is ${{r}}.\nAction: click(${{r}})"


def rules() -> list[dict[str, Any]]:
    q = r'"(?P<t>[^"\n]+)"'
    out = [
        _rule(r'Click on the ' + q + r' button\.', r'button "(?P=t)"', _click('the button "${t}"')),
        _rule(r'Click on the link ' + q + r'\.', r'(?:a "(?P=t)"|span "(?P=t)"[^\n]*class=[^\n]*alink)',
              _click('the link "${t}"')),
        _rule(r'Enter "(?P<t>[^"\n]*)" into the text field and press Submit\.',
              r'(?:input type=text|textarea)(?![^\n]*value="(?P=t)")',
              'Thought: the field ${r} must hold "${t}".\nAction: type(${r}, "${t}")'),
        _rule(r'Enter "[^"\n]*" into the text field and press Submit\.', r'button "Submit"',
              _click("the Submit button")),
    ]
    for word in WORDS:  # regex cannot change case: one rule per word of the vocabulary
        out.append(_rule(f'Type "{word.upper()}" in all lower case letters in the text input and press Submit\\.',
                         f'(?:input type=text|textarea)(?![^\\n]*value="{word}")',
                         f'Thought: type "{word}" in lower case into ${{r}}.\nAction: type(${{r}}, "{word}")'))
    out += [
        _rule(r'Type "[^"\n]*" in all lower case letters in the text input and press Submit\.', r'button "Submit"',
              _click("the Submit button")),
        _rule(r'Enter the username ', r'button "Accept cookies"', _click("the cookie banner's accept button")),
        _rule(r'Enter the username "(?P<t>[^"\n]*)"', r'input [^\n]*(?:name|id)=username(?![^\n]*value="(?P=t)")',
              'Thought: the username goes into ${r}.\nAction: type(${r}, "${t}")'),
        _rule(r'Enter the username "[^"\n]*" and the password "(?P<t>[^"\n]*)"',
              r'input [^\n]*(?:name|id)=password(?![^\n]*value="(?P=t)")',
              'Thought: the password goes into ${r}.\nAction: type(${r}, "${t}")'),
        _rule(r'Enter the username ', r'button "Login"', _click("the Login button")),
        _rule(r'Select [^\n]*?\b(?P<t>[\w-]+)\b[^\n]* and click Submit\.',
              r'input type=checkbox[^\n]*label="(?P=t)" checked=false', _click('the checkbox "${t}"')),
        _rule(r'Select (?P<t>[^\n]+?) and click Submit\.', r'input type=radio[^\n]*label="(?P=t)" checked=false',
              _click('the option "${t}"')),
        _rule(r'Select (?P<t>[^\n]+?) from the list and click Submit\.', r'select (?![^\n]*value="(?P=t)")',
              'Thought: choose "${t}" in ${r}.\nAction: select(${r}, "${t}")'),
        _rule(r'Select [^\n]* and click Submit\.', r'button "Submit"', _click("the Submit button")),
        _rule(r'Open the "[^"\n]+" tab and click the ' + q + r' button\.', r'button "(?P=t)"',
              _click('the button "${t}"')),
        _rule(r'Open the ' + q + r' tab', r'li "(?P=t)"', _click('the tab "${t}"')),
        _rule(r'Click the button in the dialog box labeled "x"\.', r'button "(?:x|Close)"',
              _click("the dialog's close button")),
        _rule(r'Click the button in the dialog box labeled ' + q + r'\.', r'button "(?P=t)"',
              _click('the dialog button "${t}"')),
    ]
    out += _miniwob_rules()
    out.append({"match": "", "reply": "Thought: I cannot find the element.\nAction: click(none)"})
    return out


def _miniwob_rules() -> list[dict[str, Any]]:
    """MiniWoB++ tasks with no synthetic family. Two cannot be scripted with regex: enter-text-2 (the case
    change of an unseen word) and click-collapsible (its header renders with no text to target)."""
    first = r"Previous actions:\n\(none\)"
    out = [
        _rule(r"Click the button\.", r'button "[^"\n]*"', _click("the only button")),
        _rule(r"Click button (?P<t>\w+)\.", r'button "(?P=t)"', _click('the button "${t}"')),
        {"match": r'Task: Click button ONE, then click button TWO\..*?' + _REF + r'button "ONE".*' + first,
         "reply": _click('the button "ONE"')},
        _rule(r"Click button ONE, then click button TWO\.", r'button "TWO"', _click('the button "TWO"')),
        _rule(r"Focus into the textbox\.", r"input type=text", _click("the textbox")),
        _rule(r'Enter the password "(?P<t>[^"\n]*)" into both text fields and press submit\.',
              r'input type=password(?![^\n]*value="(?P=t)")',
              'Thought: the password goes into ${r}.\nAction: type(${r}, "${t}")'),
        _rule(r"Enter the password .* and press submit\.", r'button "Submit"', _click("the Submit button")),
        _rule(r'Close the dialog box by clicking the "x"\.', r'button "(?:x|Close)"', _click("the close button")),
        _rule(r"Click on Tab #(?P<t>\d+)\.", r'a "Tab #(?P=t)"', _click('the tab "Tab #${t}"')),
        _rule(r'Click on a "textarea" widget\.', r"textarea", _click("the textarea")),
        _rule(r'Click on a "button" widget\.', r"button", _click("the button")),
    ]
    for kind in ("text", "radio", "checkbox"):
        out.append(_rule(f'Click on a "{kind}" widget\\.', f"input type={kind}", _click(f"the {kind} input")))
    for n, suffix in ((1, "st"), (2, "nd"), (3, "rd")):  # the n-th text input: skip n - 1 of them
        skip = r"(?:\n\[[^\]\n]+\] input type=text[^\n]*)" + f"{{{n - 1}}}" if n > 1 else ""
        out.append({"match": f"Task: Focus into the {n}{suffix} input textbox\\.(?:(?!\\n\\[[^\\]\\n]+\\] input "
                             f"type=text).)*?{skip}" + _REF + "input type=text",
                    "reply": _click(f"the input number {n}")})
    return out


def write_rules(path: Path = RULES_FILE) -> Path:
    path.write_text(json.dumps({"model": "scripted-react", "rules": rules()}, indent=1) + "\n", encoding="utf-8")
    return path


def default_spec() -> str:
    return f"scripted:{RULES_FILE}"


if __name__ == "__main__":
    print(write_rules())
