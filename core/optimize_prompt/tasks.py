"""Tasks: a user YAML (template with ``{input}``, unlabelled inputs, answer format) or GSM8K / BBH files.

Our own file formats (the paper fixes none). The optimiser sees only :class:`Task`, which has no
labels: :func:`load_task` reads the *input* field of each record and nothing else (a test runs the
optimiser on records whose label fields raise when touched). Labels are read only by
:func:`load_labelled`, which only ``eval`` and the benchmark call.

Task YAML::

    name: arithmetic
    description: grade-school word problems        # optional
    template: "Solve: {input}"
    answer_format: number                           # number | mc | text
    inputs: ["Tom has 3 apples ...", ...]

GSM8K JSONL (``question``/``answer`` with ``#### N``), BBH JSON (``{"examples": [{"input",
"target"}]}``) and generic JSON/JSONL with ``input`` (labels in ``target``/``answer``/``label``)
are read by path. The answer format of a BBH file is inferred without labels: options ``(A)`` in
the inputs mean ``mc``, the arithmetic/counting tasks ``number``, the rest ``text``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.optimize_prompt.spec import ANSWER_FORMATS

DEFAULT_TEMPLATE = "Q: {input}\nA:"
INPUT_KEYS = ("input", "question")
LABEL_KEYS = ("target", "answer", "label")
NUMBER_TASKS = ("multistep_arithmetic", "object_counting", "gsm8k")
TASK_KEYS = {"name", "description", "template", "answer_format", "inputs"}


@dataclass(frozen=True)
class Task:
    name: str
    template: str
    inputs: tuple[str, ...]
    answer_format: str = "text"
    description: str = ""
    source: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def render(self, template: str, value: str) -> str:
        return template.replace("{input}", value)


def check_template(template: Any, where: str) -> str:
    if not isinstance(template, str) or not template.strip():
        raise InputError(f"{where}: the prompt template must be a non-empty string.")
    if "{input}" not in template:
        raise InputError(f"{where}: the prompt template has no {{input}} placeholder.",
                         "write where each input goes, e.g. template: \"Solve: {input}\"")
    return template


def _records(path: Path) -> list[Any]:
    """Raw records of a JSON/JSONL file (the one place task files are parsed; tests wrap it)."""
    text = _read(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        out = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path} line {number}: invalid JSON ({exc.msg}).") from None
        return out
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: invalid JSON ({exc.msg}, line {exc.lineno}).") from None
    if isinstance(data, dict) and "examples" in data:
        data = data["examples"]
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a list of records or {{\"examples\": [...]}}.")
    return data


def _read(path: Path) -> str:
    if not path.is_file():
        raise InputError(f"task file not found: {path}")
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text.") from None


def _input_of(record: Any, path: Path, number: int) -> str:
    if isinstance(record, str):
        return record
    if isinstance(record, dict):
        for key in INPUT_KEYS:  # only the input field is read: never a label
            if key in record:
                value = record[key]
                if isinstance(value, str) and value.strip():
                    return value
                raise InputError(f"{path} record {number}: '{key}' must be a non-empty string.")
    raise InputError(f"{path} record {number}: no 'input' or 'question' field.")


def infer_format(name: str, inputs: tuple[str, ...]) -> str:
    if any("(A)" in x for x in inputs):
        return "mc"
    if any(key in name for key in NUMBER_TASKS):
        return "number"
    return "text"


def load_task(path: str, *, n_inputs: int = 8, template: str | None = None, answer_format: str | None = None) -> Task:
    """The label-free task of a YAML task file, or of a GSM8K/BBH/generic data file (first ``n_inputs``)."""
    p = Path(path)
    if p.suffix.lower() in (".yaml", ".yml"):
        task = _load_yaml(p)
    else:
        records = _records(p)
        inputs = tuple(_input_of(r, p, i) for i, r in enumerate(records[:n_inputs], 1))
        name = "gsm8k" if records and isinstance(records[0], dict) and "question" in records[0] else p.stem
        task = Task(name, DEFAULT_TEMPLATE, inputs, infer_format(name, inputs), source=str(p))
    if not task.inputs:
        raise InputError(f"{path}: the task has no inputs.", "give at least one unlabelled input")
    if template is not None:
        task = Task(task.name, check_template(template, "--template"), task.inputs, task.answer_format,
                    task.description, task.source)
    if answer_format is not None:
        task = Task(task.name, task.template, task.inputs, _format(answer_format, "--answer-format"),
                    task.description, task.source)
    return task


def _format(value: Any, where: str) -> str:
    if value not in ANSWER_FORMATS:
        raise InputError(f"{where}: answer_format must be one of {', '.join(ANSWER_FORMATS)}, not {value!r}.")
    return str(value)


def _load_yaml(p: Path) -> Task:
    import yaml

    try:
        data = yaml.safe_load(_read(p))
    except yaml.YAMLError as exc:
        raise InputError(f"cannot parse task file {p}: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise InputError(f"{p}: a task file is a mapping with template, inputs and answer_format.")
    unknown = set(data) - TASK_KEYS
    if unknown:
        raise InputError(f"{p}: unknown key(s) {', '.join(sorted(unknown))}.", "valid keys: " + ", ".join(sorted(TASK_KEYS)))
    raw = data.get("inputs") or []
    if not isinstance(raw, list) or not all(isinstance(x, str) and x.strip() for x in raw):
        raise InputError(f"{p}: 'inputs' must be a list of non-empty strings.")
    return Task(str(data.get("name") or p.stem), check_template(data.get("template"), str(p)), tuple(raw),
                _format(data.get("answer_format", "text"), str(p)), str(data.get("description") or ""), str(p))


@dataclass(frozen=True)
class Labelled:
    input: str
    label: str


def load_labelled(path: str, *, limit: int | None = None, offset: int = 0) -> list[Labelled]:
    """(input, label) pairs for ``eval`` only: GSM8K, BBH, or JSON/JSONL/YAML-free records with a label."""
    p = Path(path)
    records = _records(p)[offset:]
    if limit is not None:
        records = records[:limit]
    out = []
    for number, record in enumerate(records, offset + 1):
        value = _input_of(record, p, number)
        label = next((record[k] for k in LABEL_KEYS if isinstance(record, dict) and k in record), None)
        if label is None:
            raise InputError(f"{p} record {number}: no label ('target', 'answer' or 'label').",
                             "eval needs labelled data; the optimiser itself needs none")
        out.append(Labelled(value, str(label)))
    if not out:
        raise InputError(f"{path}: no labelled records.")
    return out
