"""``mlx26 rpa-distill``: distil agent trajectories into robust RPA functions (AutoRPA reconstruction).

Thin wrapper over ``mlx26.core.rpa_distill`` (Chen, Hu, Yu, Yin, ICML 2026; no public code:
a reconstruction, see docs/rpa-distill.md). Trajectories are JSONL, one episode a line.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Annotated, Any

import typer
from mlx26.cli._errors import BackendMissing, RuntimeFailure, UsageError, unknown_name
from mlx26.cli._io import (
    ColumnsOpt,
    FieldOpt,
    ForceOpt,
    ForceOutOpt,
    FormatOpt,
    InputArg,
    OutputFormat,
    OutputOpt,
    QuietOpt,
    RecordStream,
    SeedOpt,
    atomic_output,
    check_output,
    emit,
    notice,
)
from mlx26.cli._llm_options import LLMOpt, llm_errors, open_llm
from mlx26.core.rpa_distill.spec import AGENTS, BUILDERS, TRANSLATORS

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None)

EnvOpt = Annotated[str, typer.Option("--env", help="synthetic/FAMILY or miniwob/TASK (see `rpa-distill envs`).", metavar="TEXT")]
EpisodesOpt = Annotated[int, typer.Option("--episodes", "-n", help="Number of episodes.", min=1, max=100_000, metavar="N")]
FallbackOpt = Annotated[str, typer.Option("--fallback", help="react: the agent completes failed runs; none.", metavar="TEXT")]
TimeoutOpt = Annotated[float, typer.Option("--step-timeout", help="Seconds a step may wait for its element.",
                                           min=0.01, metavar="NUMBER")]
HtmlOpt = Annotated[str | None, typer.Option("--html", help="Your own page (a local HTML file); needs --task.",
                                             metavar="FILE")]
UrlOpt = Annotated[str | None, typer.Option("--url", help="Your own page by URL (http(s):// or file://); needs "
                                            "--task.", metavar="URL")]
TaskOpt = Annotated[str | None, typer.Option("--task", help="task.yaml for --html/--url: instruction template, "
                                             "field values, success check (docs/rpa-distill.md).", metavar="FILE")]


def _polls(name: str) -> bool:
    """Browser environments: a selector waits (polls) for its element until --step-timeout."""
    return name.startswith(("miniwob/", "html/"))


@contextlib.contextmanager
def _environment(env: str | None, html: str | None, url: str | None, task: str | None,
                 step_timeout: float) -> Iterator[Any]:
    """--env NAME, or a user's page (--html FILE | --url URL) with --task task.yaml; always closed."""
    if html or url or task:
        if env:
            raise UsageError("give --env NAME or --html/--url with --task, not both.")
        if not task:
            raise UsageError("--html/--url need --task task.yaml (instruction, fields, success check).")
        from mlx26.core.rpa_distill.html_env import page_env
        from mlx26.core.rpa_distill.miniwob_env import browser_problem

        page = page_env(html=html, url=url, task_file=task, step_timeout=step_timeout)
        problem = browser_problem()
        if problem:
            raise BackendMissing(f"{page.name} needs a headless browser: {problem}.",
                                 hint="apt-get install chromium chromium-driver; pip install 'mlx26[rpa]'")
        try:
            yield page
        finally:
            page.close()
        return
    if not env:
        raise UsageError("no environment: give --env NAME, or --html FILE / --url URL with --task task.yaml.")
    if env.startswith("html/"):
        raise UsageError(f"{env} is a page of your own: give --html FILE or --url URL with --task task.yaml.")
    from mlx26.core.rpa_distill import pipeline

    _env_available(env)
    with pipeline.opened(env, step_timeout) as environment:
        yield environment


def _backend(llm: str | None, quiet: bool) -> Any:
    """The --llm backend, or the shipped scripted ReAct policy when none is given."""
    if not llm:
        from mlx26.core.rpa_distill.rules import default_spec

        llm = default_spec()
        notice("rpa-distill: no --llm given; using the shipped scripted ReAct policy (estimated tokens).", quiet)
    return open_llm(llm, purpose="rpa-distill")


def _env_available(name: str) -> None:
    """Exit 3 with the install hint when a miniwob/* env cannot start here (checked before any work)."""
    if name.startswith("miniwob/"):
        from mlx26.core.rpa_distill.miniwob_env import browser_problem

        problem = browser_problem()
        if problem:
            raise BackendMissing(f"{name} needs a headless browser: {problem}.",
                                 hint="apt-get install chromium chromium-driver; pip install 'mlx26[rpa]'")


def _trajectories(path: str) -> list[dict[str, Any]]:
    from mlx26.core.rpa_distill.record import check_trajectory

    source = RecordStream(path, "jsonl")
    trajs = []
    for line, record in source:
        check_trajectory(record, f"{source.name} line {line}")
        trajs.append(record)
    if not trajs:
        raise UsageError(f"{source.name} holds no trajectories.", hint="record some with `rpa-distill record`")
    return trajs


def _fallback(value: str) -> bool:
    if value not in ("react", "none"):
        raise unknown_name("fallback", value, ("react", "none"))
    return value == "react"


@app.command("envs")
def envs(output: OutputOpt = None, fmt: FormatOpt = OutputFormat.auto, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, quiet: QuietOpt = False, force: ForceOpt = False) -> None:
    """List the environments and whether each can run here (MiniWoB++ needs Chromium).

    \b
    Examples:
      mlx26 rpa-distill envs --format jsonl
    """
    check_output(output, force)
    from mlx26.core.rpa_distill import env_names
    from mlx26.core.rpa_distill.miniwob_env import browser_problem

    problem = browser_problem()
    from mlx26.core.rpa_distill.oracle import POLICIES

    rows = [{"env": n, "available": not n.startswith("miniwob/") or problem is None,
             "oracle": n.split("/", 1)[1] in POLICIES,
             "note": problem if n.startswith("miniwob/") and problem else ""} for n in env_names()]
    emit(rows, output, fmt, force=force, title="rpa-distill environments")


@app.command("record")
def record(
    env: Annotated[str | None, typer.Option("--env", help="synthetic/FAMILY or miniwob/TASK (see `rpa-distill envs`); "
                                            "or --html/--url with --task.", metavar="TEXT")] = None,
    html: HtmlOpt = None,
    url: UrlOpt = None,
    task: TaskOpt = None,
    episodes: EpisodesOpt = 3,
    agent: Annotated[str, typer.Option("--agent", help="oracle (scripted policy, no LLM) or react.", metavar="TEXT")] = "oracle",
    llm: LLMOpt = None,
    max_steps: Annotated[int, typer.Option("--max-steps", help="Most actions per episode.", min=1, metavar="N")] = 12,
    seed: SeedOpt = 0,
    step_timeout: TimeoutOpt = 10.0,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Record trajectories (instruction, fields, snapshots, actions, reward, tokens) as JSONL.

    Episode i uses seed SEED + i. The react agent uses --llm (default: the shipped scripted
    ReAct policy, whose token counts are estimates of the real prompts).

    \b
    Examples:
      mlx26 rpa-distill record --env synthetic/click-button --episodes 3 --format jsonl
      mlx26 rpa-distill record --env synthetic/login-user -n 2 --agent react --format jsonl
    """
    if agent not in AGENTS:
        raise unknown_name("agent", agent, AGENTS)
    if agent == "oracle" and (html or url):
        raise UsageError("a page of your own has no scripted oracle.", hint="record with --agent react --llm SPEC")
    check_output(output, force)
    from mlx26.core.rpa_distill import pipeline

    with llm_errors(), _environment(env, html, url, task, step_timeout) as environment:
        backend = _backend(llm, quiet) if agent == "react" else None
        actor = pipeline.make_agent(agent, environment.name, backend)
        steps = getattr(environment, "max_steps", max_steps) if max_steps == 12 else max_steps
        rows = list(pipeline.record(environment, actor, episodes, seed, steps))
    failed = sum(not r["success"] for r in rows)
    if failed:
        notice(f"rpa-distill record: {failed} of {len(rows)} episode(s) failed (kept; build excludes them).", quiet)
    emit(rows, output, fmt if fmt != OutputFormat.auto or output else OutputFormat.jsonl, force=force)


TranslatorOpt = Annotated[str, typer.Option("--translator", help="rules: the rule translator; llm: the model "
                                            "proposes each step's selector, kept only if it matches exactly the "
                                            "acted-on element (else the rule selector stays).", metavar="TEXT")]


def _translator(kind: str, llm: str | None) -> None:
    if kind not in TRANSLATORS:
        raise unknown_name("translator", kind, TRANSLATORS)
    if kind == "llm" and not llm:
        raise UsageError("--translator llm needs an LLM.", hint="give --llm SPEC")


@app.command("translate")
def translate(input: InputArg, translator: TranslatorOpt = "rules", llm: LLMOpt = None, output: OutputOpt = None,
              fmt: FormatOpt = OutputFormat.auto, only_field: FieldOpt = None, table_columns: ColumnsOpt = None,
              force: ForceOpt = False, quiet: QuietOpt = False) -> None:
    """Replace every action's element ref by a soft-coded selector (unique in its snapshot).

    Failed episodes are dropped with a warning; mixed task ids are refused. With --translator llm each
    step records who wrote its selector (translated_by) and, where the model named it, its field.

    \b
    Examples:
      mlx26 rpa-distill translate <(mlx26 rpa-distill record --env synthetic/login-user -n 3) --format jsonl
    """
    _translator(translator, llm)
    check_output(output, force)
    from mlx26.core.rpa_distill.translate import translate as run

    with llm_errors():
        demos, _, warnings = run(_trajectories(input))
        if translator == "llm":
            from mlx26.core.rpa_distill.llm_translate import translate_with_llm

            report = translate_with_llm(demos, open_llm(llm, purpose="rpa-distill translate"))
            notice(f"rpa-distill translate: the LLM's selector kept for {report['accepted']} of {report['steps']} "
                   f"steps ({report['kept_rule_selector']} keep the rule selector).", quiet)
    for warning in warnings:
        notice(f"Warning: {warning}", quiet)
    emit(demos, output, fmt if fmt != OutputFormat.auto or output else OutputFormat.jsonl, force=force)


@app.command("build")
def build(
    input: InputArg,
    out: Annotated[str, typer.Option("--out", help="Where to write the Python RPA function.", metavar="FILE")],
    builder: Annotated[str, typer.Option("--builder", help="synth: rule synthesiser (--llm only fills slots it "
                                         "cannot explain); llm: the LLM writes the function, verified and "
                                         "repaired; auto: synth, then llm where slots stay unexplained.",
                                         metavar="TEXT")] = "synth",
    llm: LLMOpt = None,
    translator: TranslatorOpt = "rules",
    repair_budget: Annotated[int, typer.Option("--repair-budget", help="LLM attempts in all (the first + repairs).",
                                               min=1, max=20, metavar="N")] = 3,
    heldout: Annotated[int, typer.Option("--heldout", help="Fresh instances an LLM-written function must also "
                                         "solve (besides the demos' own).", min=0, max=1000, metavar="N")] = 5,
    exemplars: Annotated[int, typer.Option("--exemplars", help="Retrieved example functions in the LLM prompt.",
                                           min=0, max=20, metavar="N")] = 3,
    store: Annotated[str | None, typer.Option("--store", help="Extra exemplars: JSONL of {instruction, source} "
                                              "(default store: the synthetic families' functions).",
                                              metavar="FILE")] = None,
    step_timeout: TimeoutOpt = 10.0,
    html: HtmlOpt = None,
    url: UrlOpt = None,
    task_file: TaskOpt = None,
    output: OutputOpt = None,
    force: ForceOutOpt = False,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Build a whitelisted Python RPA function from trajectories of one task; print a summary.

    --builder synth (default): the rule synthesiser; with --llm, slots the rules cannot explain go to
    the LLM with the demos in the prompt. --builder llm: the LLM writes the whole function from the
    translated demos and retrieved exemplars; it must pass the whitelist and solve the demos' instances
    and --heldout fresh ones, and each refusal or failure goes back to the model (--repair-budget
    attempts in all). --builder auto: synth first, llm when slots stay unexplained. The LLM paths run
    the task's environment (MiniWoB++ needs Chromium).

    \b
    Examples:
      mlx26 rpa-distill record --env synthetic/click-checkboxes -n 3 | mlx26 rpa-distill build - --out fn.py --force
      mlx26 rpa-distill record --env synthetic/login-user -n 3 | mlx26 rpa-distill build - --out fn.py --builder auto --llm scripted:demo --force --format json
    """
    if out == "-":
        raise UsageError("--out needs a file name: the build summary goes to stdout.")
    if builder not in BUILDERS:
        raise unknown_name("builder", builder, BUILDERS)
    if builder == "llm" and not llm:
        raise UsageError("--builder llm needs an LLM.", hint="give --llm SPEC (e.g. openai:URL#MODEL or hf:tiny-llama)")
    _translator(translator, llm)
    if translator == "llm" and builder == "synth":
        raise UsageError("--translator llm feeds the LLM builder; the synthesiser needs the rule translator's "
                         "one key set per step across demos.", hint="use --builder llm or auto")
    check_output(out, force)
    check_output(output, force)
    from mlx26.core.rpa_distill import distill

    trajs = _trajectories(input)
    resolver = None
    summary: dict[str, Any] = {"builder": builder}
    with llm_errors():
        extra = None
        if store:
            from mlx26.core.rpa_distill.llm_builder import read_store

            extra = read_store(store)
        backend = open_llm(llm, purpose="rpa-distill build") if llm else None
        source = None
        if builder in ("synth", "auto"):
            if backend is not None and builder == "synth":
                from mlx26.core.rpa_distill.rag import RagResolver

                resolver = RagResolver(backend)
            source, program, warnings = distill(trajs, resolver)
            for warning in warnings:
                notice(f"Warning: {warning}", quiet)
            summary.update({"task": program.task, "demos": program.n_demos, "statements": len(program.body),
                            "needs_llm": program.needs_llm()})
            if builder == "auto" and program.needs_llm() and backend is None:
                notice(f"rpa-distill build: {program.needs_llm()} slot(s) stay NeedsLLM; give --llm to let the "
                       "LLM builder write the function.", quiet)
            if builder == "synth" or not program.needs_llm() or backend is None:
                builder_used = "synth"
            else:
                source = None
        if source is None:
            source, llm_summary = _llm_build(trajs, backend, extra, repair_budget, heldout, exemplars, step_timeout,
                                             quiet, (html, url, task_file), translator == "llm")
            summary.update(llm_summary)
            builder_used = "llm"
    with atomic_output(out, force) as handle:
        handle.write(source)
    tokens = (sum(resolver.tokens[k] for k in ("prompt_tokens", "completion_tokens")) if resolver
              else summary.pop("_tokens", 0))
    emit({**summary, "builder_used": builder_used, "out": out, "build_tokens": tokens}, output, fmt, force=force,
         title="rpa-distill build")


def _llm_build(trajs: list[dict[str, Any]], backend: Any, extra: list[dict[str, Any]] | None, budget: int,
               heldout: int, k: int, step_timeout: float, quiet: bool,
               page: tuple[str | None, str | None, str | None], llm_translator: bool = False
               ) -> tuple[str, dict[str, Any]]:
    """The LLM builder on the trajectories' own environment; exit 1 when no attempt verifies."""
    from mlx26.core.rpa_distill import llm_builder as L

    task = str(next((t.get("task") for t in trajs if t.get("success")), trajs[0].get("task")))
    if task.startswith("html/") and not any(page):
        raise UsageError(f"the demos are of your page {task}: the LLM builder runs it to verify the function.",
                         hint="give the same --html FILE/--url URL and --task task.yaml as when recording")
    store = L.synthetic_store(exclude=task) + (extra or [])
    with _environment(None if any(page) else task, *page, step_timeout) as env:
        if env.name != task:
            raise UsageError(f"the demos are of {task}, but --task defines {env.name}.")
        result = L.build_with_llm(trajs, backend, env, store=store, k=k, budget=budget, heldout=heldout,
                                  step_timeout=step_timeout, poll=_polls(task),
                                  translator=backend if llm_translator else None)
    for attempt in result.attempts:
        notice(f"rpa-distill build: LLM attempt {attempt.number}: {attempt.verdict} — {attempt.detail}", quiet)
    if result.source is None:
        raise RuntimeFailure(L.no_function_error(result).message,
                             hint="raise --repair-budget, use --builder synth/auto, or try a stronger --llm")
    return result.source, {"task": result.task, "demos": sum(bool(t.get("success")) for t in trajs),
                           "attempts": len(result.attempts), "verdicts": [a.verdict for a in result.attempts],
                           "exemplars": result.exemplars, "llm_calls": result.tokens["calls"],
                           **({"llm_selectors": f"{result.translation['accepted']}/{result.translation['steps']}"}
                              if result.translation else {}),
                           "_tokens": result.tokens["prompt_tokens"] + result.tokens["completion_tokens"]}


@app.command("verify")
def verify(
    function: Annotated[str, typer.Argument(help="RPA function file written by build.", metavar="FILE")],
    episodes: EpisodesOpt = 20,
    env: Annotated[str | None, typer.Option("--env", help="Default: the function's TASK.", metavar="TEXT")] = None,
    html: HtmlOpt = None,
    url: UrlOpt = None,
    task_file: TaskOpt = None,
    fallback: FallbackOpt = "none",
    llm: LLMOpt = None,
    demos: Annotated[str | None, typer.Option("--demos", help="Trajectories the function was built from "
                                              "(needed for --repair).", metavar="FILE")] = None,
    repair: Annotated[int, typer.Option("--repair", help="Rebuild rounds from successful fallbacks.", min=0,
                                        max=10, metavar="N")] = 0,
    out: Annotated[str | None, typer.Option("--out", help="Write the repaired function here.", metavar="FILE")
                   ] = None,
    seed: SeedOpt = 0,
    step_timeout: TimeoutOpt = 10.0,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOutOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Run the function on fresh instances: success rate, fallbacks, LLM tokens per round.

    With --fallback react --demos FILE --repair N, successful fallback runs join the demos and the
    function is rebuilt (up to N rounds); --out writes the final function.

    \b
    Examples:
      mlx26 rpa-distill record --env synthetic/login-user -n 3 | mlx26 rpa-distill build - --out fn.py --force -q --format json > /dev/null && mlx26 rpa-distill verify fn.py -n 50
    """
    use_fallback = _fallback(fallback)
    if repair and not (demos and use_fallback):
        raise UsageError("--repair needs --demos FILE and --fallback react.")
    check_output(output, force)
    if out == "-":
        raise UsageError("--out needs a file name: the verification records go to stdout.")
    if out:
        check_output(out, force)
    from mlx26.core.rpa_distill import pipeline
    from mlx26.core.rpa_distill.distill import verify as run_verify
    from mlx26.core.rpa_distill.whitelist import check

    source = _read_function(function)
    check(source)
    page = bool(html or url or task_file)
    with llm_errors(), _environment(None if page else env or _task_of(source), html, url, task_file,
                                    step_timeout) as environment:
        task = environment.name
        demo_list = _trajectories(demos) if demos else None
        other = sorted({str(d["task"]) for d in demo_list or []} - {task})
        if other:  # validate before any episode runs (repair would refuse the mix only later)
            raise UsageError(f"--demos holds trajectories of {', '.join(other)}, but the function runs {task}.",
                             hint="give the demos the function was built from")
        agent = pipeline.make_agent("react", task, _backend(llm, quiet)) if use_fallback or llm else None
        rounds, _, final = run_verify(environment, source, episodes, agent=agent, fallback=use_fallback,
                                      demos=demo_list, repair_rounds=repair, seed=seed, step_timeout=step_timeout,
                                      poll=_polls(task))
    if out:
        with atomic_output(out, force) as handle:
            handle.write(final)
    elif repair and final != source:
        notice("rpa-distill verify: the function was repaired; add --out FILE to keep it.", quiet)
    emit([{"env": task, **r} for r in rounds], output, fmt, force=force, title="rpa-distill verify")


@app.command("run")
def run(
    function: Annotated[str, typer.Argument(help="RPA function file written by build.", metavar="FILE")],
    env: Annotated[str | None, typer.Option("--env", help="Default: the function's TASK.", metavar="TEXT")] = None,
    params: Annotated[str | None, typer.Option("--params", help="JSON object of field values (synthetic/*, html/*).",
                                               metavar="TEXT")] = None,
    html: HtmlOpt = None,
    url: UrlOpt = None,
    task_file: TaskOpt = None,
    fallback: FallbackOpt = "none",
    llm: LLMOpt = None,
    seed: SeedOpt = 0,
    step_timeout: TimeoutOpt = 10.0,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Run the function once; exit 1 when the episode is not solved.

    \b
    Examples:
      mlx26 rpa-distill record --env synthetic/click-button -n 3 | mlx26 rpa-distill build - --out fn.py --force -q --format json > /dev/null && mlx26 rpa-distill run fn.py --params '{"target": "Share"}'
    """
    use_fallback = _fallback(fallback)
    values = _params(params)
    check_output(output, force)
    from mlx26.core.rpa_distill import compile_function, pipeline
    from mlx26.core.rpa_distill.distill import check_env
    from mlx26.core.rpa_distill.runtime import run_function

    page = bool(html or url or task_file)
    with llm_errors():
        fn_task, rpa, _ = compile_function(_read_function(function))
        with _environment(None if page else env or fn_task, html, url, task_file, step_timeout) as environment:
            task = environment.name
            check_env(fn_task, task)
            agent = pipeline.make_agent("react", task, _backend(llm, quiet)) if use_fallback or llm else None
            result = run_function(environment, rpa, seed, agent=agent, fallback=use_fallback, params=values,
                                  step_timeout=step_timeout, poll=_polls(task))
    from mlx26.core.rpa_distill.actions import format_action

    emit({"env": task, "success": result["success"], "reward": result["reward"], "fallback": result["fallback"],
          "failure": result["failure"], "actions": [format_action(s["action"]) for s in result["steps"]],
          "tokens": result["tokens"]["prompt_tokens"] + result["tokens"]["completion_tokens"]},
         output, fmt, force=force, title="rpa-distill run")
    if not result["success"]:
        raise RuntimeFailure(f"the episode was not solved ({result['failure'] or 'reward ' + str(result['reward'])}).")


@app.command("compare")
def compare(
    env: Annotated[list[str], typer.Option("--env", help="Environment; repeat for several.", metavar="TEXT")],
    episodes: EpisodesOpt = 100,
    demos: Annotated[int, typer.Option("--demos", help="Demonstrations to distil from.", min=1, metavar="N")] = 3,
    demo_agent: Annotated[str, typer.Option("--demo-agent", help="oracle or react records the demos.", metavar="TEXT")] = "oracle",
    llm: LLMOpt = None,
    seed: SeedOpt = 0,
    step_timeout: TimeoutOpt = 10.0,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.auto,
    only_field: FieldOpt = None,
    table_columns: ColumnsOpt = None,
    force: ForceOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """ReAct vs distilled vs distilled+fallback on the same held-out instances: success and tokens.

    \b
    Examples:
      mlx26 rpa-distill compare --env synthetic/login-user -n 20 --format csv
    """
    if demo_agent not in AGENTS:
        raise unknown_name("demo agent", demo_agent, AGENTS)
    check_output(output, force)
    from mlx26.core.rpa_distill import pipeline

    for name in env:
        _env_available(name)
    with llm_errors():
        backend = _backend(llm, quiet)
        rows = [row for name in env for row in pipeline.compare(name, backend, demos=demos, episodes=episodes,
                                                                  demo_agent=demo_agent, seed=seed,
                                                                  step_timeout=step_timeout)]
    emit(rows, output, fmt, force=force, title="rpa-distill compare (scripted ReAct policy: estimated tokens)")


@app.command("demo")
def demo(output: OutputOpt = None, fmt: FormatOpt = OutputFormat.auto, only_field: FieldOpt = None, table_columns: ColumnsOpt = None, force: ForceOpt = False,
         quiet: QuietOpt = False) -> None:
    """Every synthetic family: 3 oracle demos → function → 100 held-out instances vs ReAct (seconds).

    \b
    Examples:
      mlx26 rpa-distill demo --format csv
    """
    check_output(output, force)
    from mlx26.core.rpa_distill import pipeline
    from mlx26.core.rpa_distill.synthetic import FAMILIES

    backend = _backend(None, True)
    rows = [row for f in FAMILIES for row in pipeline.compare(f"synthetic/{f}", backend)]
    notice("rpa-distill demo: synthetic environment; ReAct = the scripted policy (estimated tokens).", quiet)
    emit(rows, output, fmt, force=force, title="rpa-distill demo (synthetic, scripted ReAct)")


def _read_function(path: str) -> str:
    from pathlib import Path

    p = Path(path)
    if not p.is_file():
        raise UsageError(f"function file not found: {path}", hint="write one with `rpa-distill build --out FILE`")
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text, so not an RPA function.",
                         hint="write one with `rpa-distill build --out FILE`") from None


def _task_of(source: str) -> str:
    from mlx26.core.rpa_distill.whitelist import load

    return load(source, lambda *a: None)[0]


def _params(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--params is not valid JSON ({exc.msg}).") from None
    if not isinstance(value, dict):
        raise UsageError("--params must be a JSON object of field values.")
    return value
