"""Taint-like context features of a step: does data from the function's inputs reach a sink?

Part of our reconstruction of SecCodePRM (Yu et al., ICML 2026, arXiv 2602.10418), whose PRM is
"context-aware": a step is judged with the code before it. A code LLM sees the data flow; our
small models get it as features. Everything here is ours and deliberately light (regular
expressions over the step text, no parse, because a step of partial code need not parse):

* **Sources**: the enclosing function's parameters (``self``/``cls`` excepted) and names assigned
  from request/input APIs (``request.``, ``input(``, ``sys.argv``, ``os.environ``, ``.args``,
  ``.form``, ``.GET``/``.POST``, ``json.loads(request…``). Assignments propagate taint: a name
  assigned from an expression that mentions a tainted name is tainted.
* **Built strings**: a name assigned from a string built by ``%``, ``.format(``, an f-string or
  ``+`` with a tainted name.
* **Sinks** by family: SQL (``execute``, ``executemany``, ``raw``, ``executescript``, ``text(``),
  OS command (``os.system``, ``os.popen``, ``subprocess.*``, ``commands.getoutput``, ``Popen``),
  path (``open``, ``send_file``, ``send_from_directory``, ``os.path.join``, ``shutil.*``,
  ``os.remove``…), markup (``render_template_string``, ``Markup``, ``mark_safe``, ``HttpResponse``,
  ``make_response``, ``write(``, a returned HTML literal).
* **Sanitisers**: ``escape``, ``quote``, ``shlex.quote``, ``secure_filename``, ``basename``,
  ``realpath``/``abspath`` + ``startswith``, ``int(``/``float(``, ``bleach.clean``, ``re.match``.

The step's features name the sink family and how its argument is built: ``fmt`` (formatted in
place), ``tainted`` (a tainted name in the call), ``built`` (a built-string name in the call),
``params`` (an SQL call with a second, parameter argument), ``sqlbuilt`` (a name holding an SQL
statement formatted by hand), ``shell`` (``shell=True``), and ``sanitised`` (a sanitiser ran
earlier in the function on a tainted name); and, wherever it occurs, an SQL statement literal
that is formatted (``sqlstr:fmt``, as bandit's B608 reads it), also with a tainted name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEF = re.compile(r"^\s*(?:async\s+)?def\s+[A-Za-z_]\w*\s*\((.*)", re.DOTALL)
_ASSIGN = re.compile(r"^\s*([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*)\s*(?:\+=|=(?!=))\s*(.+)$", re.DOTALL)
_SOURCE = re.compile(r"\brequest\.|\binput\s*\(|\bsys\.argv|\bos\.environ|\.args\b|\.form\b|\.GET\b|\.POST\b|"
                     r"\.get_argument\s*\(|\.values\b|\.cookies\b|\.headers\b|\.json\b|\braw_input\s*\(")
_FORMAT = re.compile(r"""(?:["']\s*%\s*[\w(]|\.format\s*\(|\bf["']|["']\s*\+|\+\s*["']|%\s*\()""")
_SANITISER = re.compile(r"\b(?:escape|quote|shlex\.quote|pipes\.quote|secure_filename|basename|realpath|abspath|"
                        r"normpath|bleach\.clean|int|float|re\.match|re\.fullmatch|re\.search|isalnum|isdigit|"
                        r"startswith|sanitize\w*|clean\w*|validate\w*)\s*\(")
SINKS = {
    "sql": re.compile(r"\b(?:execute|executemany|executescript|raw|mogrify)\s*\(|\btext\s*\(\s*[\"'f]"),
    "cmd": re.compile(r"\b(?:os\.system|os\.popen|popen\d?|subprocess\.\w+|Popen|check_output|check_call|"
                      r"getoutput|getstatusoutput|spawn\w*|execv\w*)\s*\("),
    "path": re.compile(r"(?<![\w.])(?:open|send_file|send_from_directory|os\.path\.join|shutil\.\w+|os\.remove|"
                       r"os\.unlink|os\.rename|os\.makedirs|os\.listdir|io\.open|codecs\.open)\s*\("),
    "markup": re.compile(r"\b(?:render_template_string|Markup|mark_safe|HttpResponse|make_response|Response|"
                         r"SafeString|format_html)\s*\(|\.write\s*\(|return\s+[fr]?[\"'][^\"']*<\w+"),
}
_SHELL = re.compile(r"shell\s*=\s*True")
# origin=True models: an f-string formats only if it has a replacement field (f"... %s" does not),
# and calls with command-like names are told apart by the shape of their first argument.
_FORMAT_NO_F = re.compile(r"""(?:["']\s*%\s*[\w(]|\.format\s*\(|["']\s*\+|\+\s*["']|%\s*\()""")
_FSTRING_FIELD = re.compile(r"""\b[rR]?[fF][rR]?("{3}|'{3}|"|')(?:(?!\1)[\s\S])*?\{(?!\{)""")
_CALL_START = re.compile(r"([A-Za-z_][\w.]*)\s*\(")
_COMMAND_LIKE = re.compile(r"run|exec|call|spawn|system|popen|cli|cmd|command|shell|ssh", re.IGNORECASE)
_STRING_START = re.compile(r"""^[rRbBuUfF]{0,2}["']""")
# An SQL statement in a string literal (bandit's B608 reads the same thing): formatting it is the
# classic injection, wherever it happens, and a name holding it is an SQL string built by hand.
_SQL_LITERAL = re.compile(r"[fFrRbBuU]{0,2}[\"']{1,3}\s*(?:SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|"
                          r"WITH|MERGE)\b", re.IGNORECASE)
_IGNORED = frozenset({"self", "cls", "None", "True", "False", "str", "int", "len", "print", "return", "if", "for",
                      "in", "not", "and", "or", "is", "def", "lambda", "await", "async"})


def _names(text: str) -> set[str]:
    return set(_IDENT.findall(text)) - _IGNORED


def _call_args(text: str, start: int) -> str:
    """The text of a call's arguments from the '(' at or after ``start`` to its matching ')'."""
    i = text.find("(", start)
    if i < 0:
        return ""
    depth = 0
    for j in range(i, len(text)):
        ch = text[j]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return text[i + 1:j]
    return text[i + 1:]


def _top_level_commas_at(args: str) -> list[int]:
    """Offsets of the commas outside brackets and string literals (the argument separators)."""
    depth, quote, out = 0, "", []
    for i, ch in enumerate(args):
        if quote:
            if ch == quote:
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(i)
    return out


def _first_argument(args: str) -> str:
    commas = _top_level_commas_at(args)
    return (args[:commas[0]] if commas else args).strip()


def _top_level_commas(args: str) -> int:
    return len(_top_level_commas_at(args))


@dataclass
class TaintState:
    """What the function so far has tainted, built and sanitised (reset at each new function)."""

    tainted: set[str] = field(default_factory=set)
    built: set[str] = field(default_factory=set)
    sql_built: set[str] = field(default_factory=set)
    sanitised: bool = False
    # origin=True (models of the split feature layout): also tell names that carry data from an
    # input API (request, argv, environ, input()) from names that only come from parameters.
    origin: bool = False
    from_input: set[str] = field(default_factory=set)

    def reset(self) -> None:
        self.from_input.clear()
        self.tainted.clear()
        self.built.clear()
        self.sql_built.clear()
        self.sanitised = False

    def formatted(self, text: str) -> bool:
        if not self.origin:
            return bool(_FORMAT.search(text))
        return bool(_FORMAT_NO_F.search(text) or _FSTRING_FIELD.search(text))

    def _command_calls(self, text: str) -> list[str]:
        """``call:list`` / ``call:fmt`` / ``call:str`` for calls with command-like names, by first argument."""
        feats = []
        for m in _CALL_START.finditer(text):
            if not _COMMAND_LIKE.search(m.group(1).rsplit(".", 1)[-1]):
                continue
            first = _first_argument(_call_args(text, m.end() - 1))
            if first[:1] in "[(":
                feats.append("call:list")
            elif _STRING_START.match(first) or _FORMAT_NO_F.search(first):
                feats.append("call:fmt" if self.formatted(first) else "call:str")
        return feats

    def step(self, text: str) -> list[str]:
        """The step's taint features, then the state updated with its assignments (causal)."""
        feats: list[str] = self._command_calls(text) if self.origin else []
        for family, pattern in SINKS.items():
            for m in pattern.finditer(text):
                args = _call_args(text, m.start()) if "(" in m.group(0) else text[m.end():m.end() + 200]
                names = _names(args)
                tags = [family]
                if self.formatted(args):
                    tags.append("fmt")
                if names & self.tainted:
                    tags.append("tainted")
                if self.origin and (names & self.from_input or _SOURCE.search(args)):
                    tags.append("input")
                if names & self.built:
                    tags.append("built")
                if family == "sql" and _top_level_commas(args) >= 1:
                    tags.append("params")
                if family == "sql" and names & self.sql_built:
                    tags.append("sqlbuilt")
                if family == "cmd" and _SHELL.search(args):
                    tags.append("shell")
                if self.sanitised:
                    tags.append("sanitised")
                base = tags[0]
                feats.append(f"sink:{base}")
                feats.extend(f"sink:{base}:{t}" for t in tags[1:])
                if "fmt" in tags and "tainted" in tags:
                    feats.append(f"sink:{base}:fmt+tainted")
                if "fmt" in tags and "input" in tags:
                    feats.append(f"sink:{base}:fmt+input")
                if "built" in tags and "params" not in tags:
                    feats.append(f"sink:{base}:built-no-params")
        if _SQL_LITERAL.search(text):
            formatted = self.formatted(text)
            feats.append("sqlstr:fmt" if formatted else "sqlstr")
            if formatted and _names(text) & self.tainted:
                feats.append("sqlstr:fmt+tainted")
            if formatted and self.origin and (_names(text) & self.from_input or _SOURCE.search(text)):
                feats.append("sqlstr:fmt+input")
        if _SANITISER.search(text) and (_names(text) & self.tainted):
            self.sanitised = True
            feats.append("sanitiser-on-tainted")
        self._update(text)
        return feats

    def _update(self, text: str) -> None:
        for line in text.splitlines():
            m = _DEF.match(line)
            if m:
                self.tainted |= {n for n in _names(m.group(1).split(")")[0]) if not n[0].isupper()}
                continue
            a = _ASSIGN.match(line)
            if not a:
                continue
            targets = {t.strip().split(".")[-1] for t in a.group(1).split(",")}
            rhs = a.group(2)
            rhs_names = _names(rhs)
            if (_SQL_LITERAL.search(rhs) and self.formatted(rhs)) or rhs_names & self.sql_built:
                self.sql_built |= targets
            if self.origin and (_SOURCE.search(rhs) or rhs_names & self.from_input):
                self.from_input |= targets
            if _SOURCE.search(rhs) or rhs_names & self.tainted:
                self.tainted |= targets
                if self.formatted(rhs):
                    self.built |= targets
            elif rhs_names & self.built:
                self.built |= targets


class ScopeTracker:
    """Function scopes over steps given in order: a step that opens a ``def``/``class`` at the previous one's
    depth or shallower starts a fresh scope (the linear model's context and the transformer's token stream)."""

    def __init__(self) -> None:
        self.def_indent: int | None = None

    def starts_scope(self, text: str) -> bool:
        indent = starts_function(text)
        if indent is None:
            return False
        fresh = self.def_indent is not None and indent <= self.def_indent
        self.def_indent = indent
        return fresh


def starts_function(text: str) -> int | None:
    """Indentation of a ``def``/``class`` that opens the step (a decorator first counts), else None."""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("@") or re.match(r"(?:async\s+)?def\s|class\s", stripped):
            return len(line) - len(line.lstrip())
        return None
    return None
