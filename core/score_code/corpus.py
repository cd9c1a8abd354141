"""Synthetic training corpus: Python files with source→sink vulnerabilities (SecCodePRM reconstruction).

The paper trains on step labels derived from analyzers over real code. We cannot download
data, so we generate it (reconstruction): each file holds one pattern from six CWE families —
command injection (CWE-78), SQL injection (CWE-89), unsafe deserialization (CWE-502), weak
hashing (CWE-328), path traversal (CWE-22) and hard-coded secrets (CWE-798) — with the source
and the sink separated by irrelevant code (filler functions and blocks, or a helper function
for inter-procedural distance), and a safe counterpart for each (parameterised query, argv
list, safe loader, strong hash, basename/realpath check, environment secret; some safe files
keep the sink but sanitise earlier, so the context decides).

The pattern's position is drawn per file (seeded, the same for vulnerable and safe files, so
position says nothing about the label): ``early`` (the handler right after the imports, the
irrelevant code after it), ``middle`` (filler functions on both sides, filler blocks around the
sink) or ``late`` (the sink near the end of the file), so that line prefixes of every length
contain vulnerable code in some files (partial-code detection). Some filler functions use the
patterns' APIs benignly, and the sink's result variable is named at random, so that neither an
API name nor a variable name alone is a cue.

Labels come from the templates' ground truth (``#!V`` marks on the lines a fix changes), not
from an analyzer. Some variants (``hard``) are written so that bandit misses them (aliases,
module-level constants, positional secrets, unflagged loaders, any path traversal); our local
semgrep rules miss them too except two (a module-level SQL template and hash name, which
semgrep's constant propagation resolves). The benchmark measures what is really missed.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from mlx26.core.common.errors import InputError

CWES = {"CWE-78": "command injection", "CWE-89": "SQL injection", "CWE-502": "unsafe deserialization",
        "CWE-328": "weak hash", "CWE-22": "path traversal", "CWE-798": "hard-coded secret"}
MARK = "  #!V"

# (cwe, name, hard, module-level lines, setup lines before the sink, sink lines); {v} is the tainted value.
VULN = [
    ("CWE-78", "os-system-concat", False, [], [], ["os.system(\"ping -c 1 \" + {v})" + MARK]),
    ("CWE-78", "subprocess-shell", False, [], ["cmd = \"tar czf /tmp/out.tgz \" + {v}"],
     ["subprocess.run(cmd, shell=True, check=True)" + MARK]),
    ("CWE-78", "popen-format", False, [], [], ["proc = os.popen(\"grep {{}} /var/log/app.log\".format({v}))" + MARK]),
    ("CWE-78", "aliased-shell", True, ["{alias} = os.system"], [], ["{alias}(\"convert \" + {v} + \" out.png\")" + MARK]),
    ("CWE-89", "execute-percent", False, [], [],
     ["cur.execute(\"SELECT * FROM users WHERE name = '%s'\" % {v})" + MARK]),
    ("CWE-89", "fstring-query", False, [], ["query = f\"DELETE FROM items WHERE id = {{{v}}}\"" + MARK],
     ["cur.execute(query)" + MARK]),
    ("CWE-89", "constant-template", True, ["QUERY = \"SELECT * FROM orders WHERE owner = '%s'\""], [],
     ["cur.execute(QUERY % {v})" + MARK]),
    ("CWE-89", "joined-query", True, [], [], ["cur.execute(\" \".join([\"SELECT id FROM t WHERE tag =\", repr({v})]))" + MARK]),
    ("CWE-502", "pickle-loads", False, [], [], ["obj = pickle.loads({v})" + MARK]),
    ("CWE-502", "yaml-load", False, [], [], ["obj = yaml.load({v}, Loader=yaml.Loader)" + MARK]),
    ("CWE-502", "yaml-unsafe-load", True, [], [], ["obj = yaml.unsafe_load({v})" + MARK]),
    ("CWE-502", "numpy-allow-pickle", True, [], [], ["obj = numpy.load({v}, allow_pickle=True)" + MARK]),
    ("CWE-328", "md5-digest", False, [], [], ["digest = hashlib.md5({v}.encode()).hexdigest()" + MARK]),
    ("CWE-328", "sha1-digest", False, [], [], ["digest = hashlib.sha1({v}.encode()).hexdigest()" + MARK]),
    ("CWE-328", "algo-constant", True, ["HASH_ALGO = \"md5\""], [],
     ["h = hashlib.new(HASH_ALGO)" + MARK, "h.update({v}.encode())", "digest = h.hexdigest()"]),
    ("CWE-22", "open-join", True, ["UPLOAD_DIR = \"/srv/uploads\""], [],
     ["with open(os.path.join(UPLOAD_DIR, {v}), \"rb\") as fh:" + MARK, "    obj = fh.read()"]),
    ("CWE-22", "concat-path", True, ["BASE = \"/var/data\""], [], ["obj = open(BASE + \"/\" + {v}).read()" + MARK]),
    ("CWE-798", "password-literal", False, [], [], ["password = \"{secret}\"" + MARK, "obj = login(USER, password)"]),
    ("CWE-798", "password-kwarg", False, [], [], ["obj = connect(host=HOST, user=\"admin\", password=\"{secret}\")" + MARK]),
    ("CWE-798", "bearer-header", True, [], [], ["headers = {{\"Authorization\": \"Bearer {token}\"}}" + MARK,
                                                 "obj = fetch(URL, headers=headers)"]),
    ("CWE-798", "positional-key", True, [], [], ["obj = Client(\"AKIA{ak}\", \"{secret}\")" + MARK]),
]
SAFE = [
    ("CWE-78", "argv-list", [], [], ["subprocess.run([\"ping\", \"-c\", \"1\", {v}], check=True)"]),
    ("CWE-78", "quoted-shell", [], ["{v} = shlex.quote({v})"], ["os.system(\"ping -c 1 \" + {v})"]),
    ("CWE-78", "constant-command", [], [], ["subprocess.run([\"tar\", \"czf\", \"/tmp/out.tgz\", {v}], check=True)"]),
    ("CWE-89", "parameterised", [], [], ["cur.execute(\"SELECT * FROM users WHERE name = ?\", ({v},))"]),
    ("CWE-89", "constant-param", ["QUERY = \"SELECT * FROM orders WHERE owner = ?\""], [], ["cur.execute(QUERY, ({v},))"]),
    ("CWE-89", "int-cast", [], ["{v} = int({v})"], ["cur.execute(\"DELETE FROM items WHERE id = ?\", ({v},))"]),
    ("CWE-502", "json-loads", [], [], ["obj = json.loads({v})"]),
    ("CWE-502", "yaml-safe-load", [], [], ["obj = yaml.safe_load({v})"]),
    ("CWE-502", "numpy-no-pickle", [], [], ["obj = numpy.load({v}, allow_pickle=False)"]),
    ("CWE-328", "sha256-digest", [], [], ["digest = hashlib.sha256({v}.encode()).hexdigest()"]),
    ("CWE-328", "md5-not-security", [], [], ["digest = hashlib.md5({v}.encode(), usedforsecurity=False).hexdigest()"]),
    ("CWE-328", "algo-constant-strong", ["HASH_ALGO = \"sha256\""], [],
     ["h = hashlib.new(HASH_ALGO)", "h.update({v}.encode())", "digest = h.hexdigest()"]),
    ("CWE-22", "basename", ["UPLOAD_DIR = \"/srv/uploads\""], ["{v} = os.path.basename({v})"],
     ["with open(os.path.join(UPLOAD_DIR, {v}), \"rb\") as fh:", "    obj = fh.read()"]),
    ("CWE-22", "realpath-check", ["BASE = \"/var/data\""],
     ["{v} = os.path.realpath(os.path.join(BASE, {v}))", "if not {v}.startswith(BASE + os.sep):",
      "    raise PermissionError({v})"], ["obj = open({v}).read()"]),
    ("CWE-798", "password-env", [], [], ["password = os.environ[\"DB_PASSWORD\"]", "obj = login(USER, password)"]),
    ("CWE-798", "kwarg-env", [], [], ["obj = connect(host=HOST, user=\"admin\", password=os.environ[\"DB_PASS\"])"]),
    ("CWE-798", "bearer-env", [], [], ["headers = {{\"Authorization\": \"Bearer \" + os.environ[\"API_TOKEN\"]}}",
                                      "obj = fetch(URL, headers=headers)"]),
]
SOURCES = ["request.args.get(\"{key}\")", "request.form[\"{key}\"]", "input(\"{key}: \")", "sys.argv[1]",
           "payload.get(\"{key}\", \"\")", "await_message(sock)"]
IMPORTS = ["import hashlib", "import json", "import os", "import pickle", "import shlex", "import sqlite3",
           "import subprocess", "import sys", "import numpy", "import yaml", "from flask import request"]
NAMES = ["user", "name", "item", "path", "target", "host", "data", "blob", "token_in", "fname", "query_arg",
         "record", "value", "entry", "key_in", "label", "doc", "arg"]
KEYS = ["name", "file", "q", "id", "host", "cmd", "doc", "user"]
RESULTS = ["obj", "result", "res", "parsed", "ret", "loaded"]
ALIASES = ["run_shell", "sh", "execute", "shell_out", "do_cmd", "runner"]
FILLER_FUNCS = [
    ["def {f}(values):", "    total = 0", "    for v in values:", "        total += v * v", "    return total"],
    ["def {f}(text):", "    words = text.split()", "    counts = {{}}", "    for w in words:",
     "        counts[w] = counts.get(w, 0) + 1", "    return counts"],
    ["def {f}(items, key):", "    return sorted(items, key=lambda x: x.get(key, 0))"],
    ["def {f}(a, b):", "    if a > b:", "        return a - b", "    return b - a"],
    ["def {f}(rows):", "    out = []", "    for row in rows:", "        out.append(\",\".join(str(c) for c in row))",
     "    return \"\\n\".join(out)"],
    ["class {F}:", "    def __init__(self, size):", "        self.size = size", "        self.items = []", "",
     "    def add(self, item):", "        if len(self.items) < self.size:", "            self.items.append(item)"],
    ["def {f}(config):", "    timeout = config.get(\"timeout\", 30)", "    retries = config.get(\"retries\", 3)",
     "    return timeout * retries"],
    ["def {f}(n):", "    a, b = 0, 1", "    for _ in range(n):", "        a, b = b, a + b", "    return a"],
    ["def {f}(msg):", "    log.info(\"processing %s\", msg)", "    return msg.strip().lower()"],
    # benign uses of the same APIs as the patterns (real code is full of them; no analyzer flags them)
    ["def {f}(raw):", "    data = json.loads(raw)", "    return data.get(\"items\", [])"],
    ["def {f}(text):", "    return hashlib.sha256(text.encode()).hexdigest()"],
    ["def {f}(stream):", "    doc = yaml.safe_load(stream)", "    return doc or {{}}"],
    ["def {f}(cur, key):", "    cur.execute(\"SELECT value FROM settings WHERE key = ?\", (key,))",
     "    return cur.fetchone()"],
    ["def {f}(name):", "    return os.path.join(\"/srv/static\", os.path.basename(name))"],
]
FILLER_BLOCKS = [
    ["count = len({w})", "log.debug(\"count=%d\", count)"],
    ["items = [x for x in range(10) if x % 2]", "total = sum(items)"],
    ["config = {{\"retries\": 3, \"timeout\": 10}}", "limit = config[\"timeout\"] * 2"],
    ["now = time.time()", "elapsed = now - START"],
    ["parts = str({w}).split(\"/\")", "depth = len(parts)"],
    ["if not {w}:", "    log.warning(\"empty input\")", "    return None"],
    ["stats = {{\"n\": 0}}", "stats[\"n\"] += 1"],
    ["msg = \"hello %s\" % USER", "log.info(msg)"],
]


@dataclass
class Example:
    """One generated file: its text, the 1-based lines a fix would change, and its pattern."""

    id: str
    text: str
    vulnerable_lines: list[int]
    cwe: str
    pattern: str
    vulnerable: bool
    hard: bool = False
    meta: dict = field(default_factory=dict)

    def to_record(self) -> dict:
        return {"id": self.id, "code": self.text, "vulnerable_lines": self.vulnerable_lines, "cwe": self.cwe,
                "pattern": self.pattern, "vulnerable": self.vulnerable, "hard": self.hard, **self.meta}


def _fill(lines: list[str], **kw: str) -> list[str]:
    return [line.format(**kw) for line in lines]


def _filler_functions(rng: random.Random, n: int, used: set[str]) -> list[list[str]]:
    out = []
    for _ in range(n):
        name = rng.choice(["compute", "helper", "process", "parse", "render", "update", "summarise", "check"])
        name = f"{name}_{rng.choice(['rows', 'items', 'stats', 'config', 'values', 'text', 'cache'])}"
        while name in used:
            name += "_2"
        used.add(name)
        out.append(_fill(rng.choice(FILLER_FUNCS), f=name, F=name.title().replace("_", "")))
    return out


PLACEMENTS = ("early", "middle", "late")


def _layout(rng: random.Random, placement: str, inter: bool, minimal: bool, n_blocks: int
            ) -> tuple[int, int, int, int, bool]:
    """Filler functions (before the helper, between helper and handler, after the handler), filler
    blocks before the sink inside the handler, and whether the helper follows the handler.

    ``late``: the sink closes the handler near the end of the file (little code after it);
    ``middle``: filler functions on both sides and filler blocks around the sink; ``early``: the
    handler comes right after the imports and everything irrelevant follows it. The helper keeps
    the source one call away; in ``early`` files it is sometimes defined after the handler that
    calls it (legal Python, and the inter-procedural distance stays without pushing the sink down).
    """
    helper_after = inter and placement == "early" and rng.random() < 0.5
    if placement == "late":
        n_pre, n_mid, n_post, k = rng.randint(0, 3), rng.randint(0, 3), rng.randint(0, 2), n_blocks
    elif placement == "middle":
        n_pre, n_mid, n_post, k = rng.randint(0, 2), rng.randint(0, 2), rng.randint(3, 6), rng.randint(0, n_blocks)
    else:
        n_pre, n_mid, n_post, k = 0, rng.randint(0, 1), rng.randint(7, 12), 0
    if minimal:  # short files: no filler functions (the filler blocks still follow the placement)
        n_pre = n_mid = n_post = 0
    return n_pre, n_mid if inter else 0, n_post, k, helper_after


def generate_one(rng: random.Random, index: int, vulnerable: bool) -> Example:
    if vulnerable:
        cwe, pattern, hard, module, setup, sink = rng.choice(VULN)
    else:
        cwe, pattern, module, setup, sink = rng.choice(SAFE)
        hard = False
    v = rng.choice(NAMES)
    kw = {"v": v, "key": rng.choice(KEYS), "alias": rng.choice(ALIASES), "w": v,
          "secret": "".join(rng.choice("abcdefghijkmnpqrstuvwxyz0123456789") for _ in range(rng.randint(10, 18))),
          "token": "".join(rng.choice("ABCDEFabcdef0123456789") for _ in range(24)),
          "ak": "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(16))}
    used: set[str] = set()
    source = _fill([rng.choice(SOURCES)], **kw)[0]
    inter = rng.random() < 0.5
    placement = rng.choice(PLACEMENTS)  # where the source→sink pattern sits in the file
    minimal = rng.random() < 0.2  # short files: no preamble, no filler functions
    fn = rng.choice(["handle", "serve", "process_request", "run_job", "do_work", "endpoint"])
    helper = f"get_{v}"
    blocks = [_fill(b, **kw) for b in rng.sample(FILLER_BLOCKS, rng.randint(0, 4))]
    n_pre, n_mid, n_post, k, helper_after = _layout(rng, placement, inter, minimal, len(blocks))
    fn_args = rng.choice(["cur, payload, sock", "cur, payload, sock, " + v])
    body: list[list[str]] = [[f"{v} = {helper}()" if inter else f"{v} = {source}"]]
    pre = _fill(setup, **kw)
    if pre and rng.random() < 0.5:  # a sanitiser / query builder right after the source, or just before the sink
        body[0] += pre
        pre = []
    body += blocks[:k]
    result = rng.choice(RESULTS)  # the name of the sink's result varies: no name is a cue
    sink_lines = [re.sub(r"\bobj\b", result, line) for line in _fill(sink, **kw)]
    # `return <expr>` instead of `obj = <expr>` … `return obj` (only when no filler follows the sink)
    returns = k == len(blocks) and rng.random() < 0.3 and sink_lines[-1].startswith(f"{result} = ")
    if returns:
        sink_lines[-1] = "return " + sink_lines[-1][len(f"{result} = "):]
    body.append(pre + sink_lines)
    body += blocks[k:]
    if not returns:
        body.append([f"return {result}" if any("obj =" in s for s in sink) else "return None"])
    imports = set(rng.sample(IMPORTS, rng.randint(1, 6)) + ["import logging", "import time"])
    parts: list[list[str]] = [[]]  # the imports, filled in once every line is known
    if not minimal:
        parts.append(["log = logging.getLogger(__name__)", "START = time.time()",
                      "USER, HOST, URL = \"svc\", \"db.local\", \"https://api.local\""])
    if module:
        parts.append(_fill(module, **kw))
    parts += _filler_functions(rng, n_pre, used)
    helper_part = [f"def {helper}():", f"    return {source}"]
    if inter and not helper_after:
        parts.append(helper_part)
        parts += _filler_functions(rng, n_mid, used)
    func = [f"def {fn}({fn_args}):"]
    compact = rng.random() < 0.3  # no blank lines inside the function: one block
    for i, block in enumerate(body):
        if i and not compact:
            func.append("")
        func += ["    " + line if line else "" for line in block]
    parts.append(func)
    if helper_after:
        parts += _filler_functions(rng, n_mid, used)
        parts.append(helper_part)
    parts += _filler_functions(rng, n_post, used)
    parts[0] = sorted(imports | _needed_imports([line for part in parts[1:] for line in part]))
    lines: list[str] = []
    for i, part in enumerate(parts):
        if i:
            lines += ["", ""] if part[0].startswith(("def ", "class ")) else [""]
        lines += part
    marked = [n for n, line in enumerate(lines, 1) if line.endswith(MARK)]
    text = "\n".join(line[: -len(MARK)] if line.endswith(MARK) else line for line in lines) + "\n"
    return Example(f"ex{index:05d}", text, marked, cwe, pattern, vulnerable, hard,
                   {"inter_procedural": inter, "placement": placement, "helper_after_handler": helper_after,
                    "filler_blocks": len(blocks), "filler_blocks_after_sink": len(blocks) - k,
                    "filler_functions_after": n_post, "minimal": minimal, "compact": compact})


def _needed_imports(lines: list[str]) -> set[str]:
    text = "\n".join(lines)
    mods = {"os.": "import os", "subprocess.": "import subprocess", "pickle.": "import pickle",
            "yaml.": "import yaml", "numpy.": "import numpy", "hashlib.": "import hashlib", "shlex.": "import shlex",
            "json.": "import json", "sys.": "import sys", "request.": "from flask import request"}
    return {imp for prefix, imp in mods.items() if prefix in text}


def generate(n: int, seed: int = 0, vulnerable_fraction: float = 0.5) -> list[Example]:
    """``n`` files, deterministic for ``seed``; about ``vulnerable_fraction`` of them vulnerable."""
    if n < 1:
        raise InputError(f"--n must be ≥ 1, got {n}.")
    if not 0 <= vulnerable_fraction <= 1:
        raise InputError(f"vulnerable fraction must be in [0, 1], got {vulnerable_fraction}.")
    rng = random.Random(seed)
    return [generate_one(rng, i, rng.random() < vulnerable_fraction) for i in range(n)]
