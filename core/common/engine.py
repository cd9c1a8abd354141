"""Map a batch function over a record stream, here or on Ray Data (issue 41; no paper).

``map_batches(fn, records, engine="local"|"ray", …)`` yields ``fn``'s results in input order,
one result per input record. ``fn`` is a picklable top-level function (or a
``functools.partial`` of one) from a list of records to a list of results of the same length;
a command uses the SAME function on both engines, so their outputs are identical by
construction. Randomness inside ``fn`` must come from :func:`record_rng` (``--seed`` and the
record's index), never from a stream shared across records.

* ``local`` runs ``fn`` on consecutive batches in this process (lazily: the output streams).
* ``ray`` reads the records in the driver and builds a dataset of ``(index, pickled record)``
  rows with ``ray.data.from_arrow``, one block per batch, so ``Dataset.map_batches`` (whole
  blocks) sees exactly the batches the local engine sees; results come back through
  ``iter_batches`` with ``DataContext.execution_options.preserve_order`` set and are re-ordered
  by index in any case. Pickled rows keep every record exactly as read (key order, ints vs
  floats, nested values), which an Arrow schema of the records themselves would not.

A batch that raises is retried record by record (on whichever engine ran it) to name the
failing record(s); the run then stops naming record numbers (1-based, input order): with the
record's own ``InputError``/``RunFailure`` class, or, for any other exception (a bug), a
``RunFailure`` worded ``internal error: …`` (exit 1) whose ``__cause__`` carries the worker's
traceback for ``MLX26_DEBUG=1``. ray is
imported only when ``engine="ray"`` is used; its start-up (seconds) and log lines stay off
stdout (``log_to_driver=False``, no dashboard, Ray Data progress bars off).
"""

from __future__ import annotations

import os
import pickle
import socket
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from mlx26.core.common.errors import BackendMissing, InputError, Mlx26Error, RunFailure

ENGINES = ("local", "ray")
DEFAULT_BATCH_SIZE = 256
CONNECT_TIMEOUT_S = 3.0
_ERR = "__mlx26_batch_error__"


def record_rng(seed: int, index: int):
    """The numpy Generator of record ``index`` (0-based) under ``seed``: the same on every engine and batching."""
    import numpy as np

    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(seed), spawn_key=(int(index),))))


# --------------------------------------------------------------------------- the batch wrapper (runs in workers)

class WorkerTraceback(Exception):
    """The traceback of a batch function's exception, as text (it may come from another process):
    the ``__cause__`` of the error :func:`map_batches` raises, so ``MLX26_DEBUG=1`` shows it."""


def _describe(exc: BaseException) -> dict[str, Any]:
    """What the driver needs to raise the same kind of error: our typed errors keep their class
    family and exit code, a missing module its name (so the CLI gives the pip line)."""
    import traceback

    text = "".join(traceback.format_exception(exc)).rstrip()
    if isinstance(exc, Mlx26Error):
        return {"kind": "mlx26", "input": isinstance(exc, InputError), "exit_code": exc.exit_code,
                "message": exc.message, "hint": exc.hint, "trace": text}
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return {"kind": "module", "module": exc.name, "message": str(exc), "hint": None, "trace": text}
    return {"kind": "bug", "message": f"{type(exc).__name__}: {exc}", "hint": None, "trace": text}


def _environmental(exc: BaseException) -> bool:
    """A failure of the installation, not of a record: retrying record by record would only repeat it."""
    return (isinstance(exc, ModuleNotFoundError) and bool(exc.name)) or \
        (isinstance(exc, Mlx26Error) and exc.exit_code == BackendMissing.exit_code)


def run_batch(fn: Callable[[list[Any]], list[Any]], records: list[Any], first: int) -> list[Any]:
    """``fn(records)``; on an exception, each record alone, to name the failing one(s).

    Returns ``fn``'s results, or a one-item list holding an error marker (a dict) that
    :func:`_raise_marker` turns into the run's error in the driver.
    """
    marker = {_ERR: True, "first": first + 1, "last": first + len(records)}
    try:
        out = list(fn(records))
    except Exception as whole:  # noqa: BLE001  (reported with the record numbers below)
        if _environmental(whole):
            return [{**marker, "failed": [(0, _describe(whole))]}]
        failed: list[tuple[int, dict[str, Any]]] = []
        for k, record in enumerate(records):
            try:
                fn([record])
            except Exception as exc:  # noqa: BLE001
                failed.append((first + k + 1, _describe(exc)))
        if not failed:  # the batch fails only as a whole (e.g. out of memory): name its range
            try:
                fn(records)
            except Exception as exc:  # noqa: BLE001
                failed.append((0, _describe(exc)))
        return [{**marker, "failed": failed}]
    if len(out) != len(records):
        return [{**marker, "failed": [(0, {"kind": "bug", "message": f"the batch function returned {len(out)} "
                                           f"results for {len(records)} records", "hint": None, "trace": ""})]}]
    return out


def _is_marker(value: Any) -> bool:
    return isinstance(value, dict) and value.get(_ERR) is True


def _raise_marker(marker: dict[str, Any]) -> None:
    failed = marker["failed"]
    span = f"records {marker['first']}-{marker['last']}"
    if not failed:
        raise RunFailure(f"the batch of {span} failed (and did not fail again when retried).",
                         hint="rerun; MLX26_DEBUG=1 shows the traceback")
    numbers = [n for n, _ in failed if n]
    error = failed[0][1]
    where = (f"record {numbers[0]}" if len(numbers) == 1 else
             f"records {', '.join(map(str, numbers[:10]))}{' …' if len(numbers) > 10 else ''}") if numbers else span
    cause = WorkerTraceback(error["trace"])
    if error["kind"] == "module":  # the CLI turns this into the missing extra's pip line (exit 3)
        raise ModuleNotFoundError(error["message"], name=error["module"]) from cause
    if error["kind"] == "mlx26":  # the record's own error: same family (input or runtime) and exit code
        family = InputError if error["input"] else RunFailure
        text = error["message"] if not numbers else f"{where} (in the batch of {span}) failed: {error['message']}"
        raise family(text, error["hint"], exit_code=error["exit_code"]) from cause
    # any other exception is a bug (CONTRIBUTING.md, Errors): reported as one, with the records it met
    raise RunFailure(f"internal error: {error['message']} ({where}, in the batch of {span})",
                     hint="please report it; MLX26_DEBUG=1 shows the traceback") from cause


# --------------------------------------------------------------------------- local

def _batches(records: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for record in records:
        batch.append(record)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _local(fn: Callable, records: Iterable[Any], batch_size: int, progress: Callable[[int], None] | None
           ) -> Iterator[Any]:
    done = 0
    for batch in _batches(records, batch_size):
        out = run_batch(fn, batch, done)
        if out and _is_marker(out[0]):
            _raise_marker(out[0])
        done += len(batch)
        yield from out
        if progress is not None:
            progress(done)


# --------------------------------------------------------------------------- ray

def check_address(address: str | None) -> None:
    """Refuse a malformed or unreachable ``--ray-address`` at once (a TCP connect, ≤ 3 s), naming it.

    ``None`` starts a local Ray instance; ``auto`` finds a running cluster (``ray start --head``)
    the way ``ray.init`` does; ``HOST:PORT`` (the GCS address ``ray start`` prints) and
    ``ray://HOST:PORT`` (Ray Client) are probed before Ray is asked, so a dead address fails in
    seconds instead of Ray's own minute-long retries.
    """
    if address is None or address == "auto":
        return
    target = address[len("ray://"):] if address.startswith("ray://") else address
    host, sep, port = target.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(f"--ray-address '{address}' is not HOST:PORT, ray://HOST:PORT or auto.",
                         hint="give the address `ray start --head` printed, e.g. 10.0.0.5:6379")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise RunFailure(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}.",
                         hint="start it with `ray start --head` (it prints the address) or drop --ray-address "
                              "to run Ray on this machine") from None


def _ray_init(address: str | None, num_cpus: int | None) -> tuple[Any, bool]:
    """``(ray, started_here)``: an already initialised Ray (a test's shared session) is reused."""
    import logging

    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")  # do not re-launch workers through uv
    import ray

    if ray.is_initialized():
        return ray, False
    check_address(address)
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR,
                              "configure_logging": True}
    if address is None:  # "local": always a new instance here, never a cluster `ray start` left on this machine
        kwargs["address"] = "local"
        kwargs["num_cpus"] = num_cpus
    else:
        kwargs["address"] = address
    try:
        ray.init(**kwargs)
    except Exception as exc:  # noqa: BLE001  (ConnectionError, RuntimeError, ValueError … from Ray)
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        raise RunFailure(f"cannot start or join {where}: {' '.join(str(exc).split())[:300]}",
                         hint="check --ray-address (`ray status` on the head node)") from None
    return ray, True


def _quiet_ray_data(ray: Any) -> Any:
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = False
    for attr in ("print_on_execution_start", "enable_operator_progress_bars"):
        if hasattr(ctx, attr):
            setattr(ctx, attr, False)
    import logging

    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return ctx


class _RayBatch:
    """The picklable function ``map_batches`` runs: unpickle, :func:`run_batch`, pickle (numpy batch format)."""

    def __init__(self, fn: Callable):
        self.fn = fn

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        index = [int(i) for i in batch["i"]]
        records = [pickle.loads(bytes(r)) for r in batch["r"]]
        out = run_batch(self.fn, records, index[0] if index else 0)
        if out and _is_marker(out[0]):
            out = [out[0]] + [None] * (len(records) - 1)  # one row per input row; the first carries the error
        payload = np.empty(len(out), dtype=object)
        payload[:] = [pickle.dumps(x, protocol=pickle.HIGHEST_PROTOCOL) for x in out]
        return {"i": np.asarray(index, dtype=np.int64), "o": payload}


def _ray(fn: Callable, records: Iterable[Any], *, address: str | None, batch_size: int, num_cpus: int | None,
         progress: Callable[[int], None] | None) -> Iterator[Any]:
    rows = [pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL) for r in records]
    if not rows:
        return
    ray, started = _ray_init(address, num_cpus)
    try:
        import pyarrow as pa

        _quiet_ray_data(ray)
        # one Arrow block per batch, mapped whole (batch_size=None): batch k is exactly records
        # k·N … k·N+N-1 on both engines, so a failing batch names the same records
        blocks = [pa.table({"i": pa.array(range(k, min(k + batch_size, len(rows))), pa.int64()),
                            "r": pa.array(rows[k:k + batch_size], pa.binary())})
                  for k in range(0, len(rows), batch_size)]
        ds = ray.data.from_arrow(blocks)
        options: dict[str, Any] = {"batch_size": None, "batch_format": "numpy", "zero_copy_batch": False}
        if address is not None and num_cpus:
            options["concurrency"] = num_cpus  # on a cluster --num-cpus caps the batches run at once
        mapped = ds.map_batches(_RayBatch(fn), **options)
        pending: dict[int, Any] = {}
        want = 0
        for batch in mapped.iter_batches(batch_size=None, batch_format="numpy"):
            for i, o in zip(batch["i"], batch["o"], strict=True):
                pending[int(i)] = pickle.loads(bytes(o))
            while want in pending:
                value = pending.pop(want)
                if _is_marker(value):
                    _raise_marker(value)
                want += 1
                yield value
            if progress is not None:
                progress(want)
        if want != len(rows):
            raise RunFailure(f"Ray returned {want} of {len(rows)} records.", hint="rerun; check `ray status`")
    finally:
        if started:
            ray.shutdown()


# --------------------------------------------------------------------------- entry point

def map_batches(fn: Callable[[list[Any]], list[Any]], records: Iterable[Any], *, engine: str = "local",
                ray_address: str | None = None, batch_size: int = DEFAULT_BATCH_SIZE, num_cpus: int | None = None,
                progress: Callable[[int], None] | None = None) -> Iterator[Any]:
    """``fn``'s result for each record, in input order (see the module docstring).

    ``progress(done)`` is called with the number of records finished so far.
    """
    if engine not in ENGINES:
        raise InputError(f"unknown engine '{engine}'.", hint="use local or ray")
    if batch_size < 1:
        raise InputError(f"--batch-size must be at least 1, got {batch_size}.")
    if engine == "local":
        return _local(fn, records, batch_size, progress)
    return _ray(fn, records, address=ray_address, batch_size=batch_size, num_cpus=num_cpus, progress=progress)


__all__ = ["ENGINES", "DEFAULT_BATCH_SIZE", "map_batches", "record_rng", "run_batch", "check_address"]
