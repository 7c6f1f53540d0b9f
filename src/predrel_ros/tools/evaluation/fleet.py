"""The sweep's episodes on a Dask cluster (`predrel eval --scheduler`, docs/fleet-evaluation.md).

    with connect("local:2") as fleet:                 # or "tcp://scheduler:8786"
        results = fleet.map(spec, episode_run.evaluate_episode, sources, "sweep", progress=True)

The unit of work is one episode, as with `--jobs`: an episode's degraded conditions are run against
its clean run (frame dropping, the reference entities), its streams are indexed on the clean (or
ground-truth) scope, and all its conditions go into one sequences file and one set of rows, so an
episode x condition unit would recompute or ship the clean run and need a merge step per episode.

Every unit is one Dask task with a key made of the run's token and the unit's index, so the
scheduler never runs a unit twice at the same time and the results are gathered once, by key, in the
order of the units: the same list `--jobs N` returns. A worker that dies loses its tasks to the
scheduler, which runs them again elsewhere (`distributed.scheduler.allowed-failures` times); the
units are idempotent (detections, sequences and recognizer outcomes are written to a temporary
name and renamed), so a rerun overwrites the same files with the same bytes.

The spec (config, thresholds, recognizer models) is a task of its own, so a worker that joins late
or replaces a dead one computes or fetches it; each worker process sets itself up once per map
(`episode_run.ensure_worker`) and runs one unit at a time, also when it was started with more
threads. Dask is imported only here, inside `connect`: `predrel --help` does not load it.
"""
from __future__ import annotations

import re
import sys
import threading
import uuid
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence

from predrel_ros.core.errors import UserError

LOCAL = "local:"
SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")
_ADDRESS = re.compile(rf"^(?:(?:{'|'.join(SCHEMES)})://)?[^\s/:]+(?::\d{{1,5}})?$")
_worker_lock = threading.Lock()


def check_scheduler(text: str) -> str:
    """`text` if it is `local:N` (N >= 1) or a scheduler address (tcp://host:8786, host:8786, tls://...);
    ValueError naming the accepted forms otherwise."""
    if text.startswith(LOCAL):
        count = text[len(LOCAL):]
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"scheduler {text!r}: local:N needs a number of worker processes N >= 1 (e.g. local:2)")
        return text
    if not _ADDRESS.match(text) or ("://" not in text and ":" not in text):
        raise ValueError(f"scheduler {text!r}: expected a Dask scheduler address (tcp://host:8786, host:8786, "
                         f"{', '.join(s + '://...' for s in SCHEMES[1:])}) or local:N (N worker processes here)")
    return text


def local_workers(scheduler: str) -> int | None:
    """N of `local:N`, None for an address."""
    return int(scheduler[len(LOCAL):]) if scheduler.startswith(LOCAL) else None


def _spec(spec):
    return spec


def _unit(spec, token: str, function: Callable, item):
    """function(item) in a Dask worker set up for `spec` (one unit at a time per process)."""
    from predrel_ros.tools.evaluation import episode_run

    with _worker_lock:
        episode_run.ensure_worker(spec, token)
        return function(item)


class Fleet:
    """A connected Dask client (and the LocalCluster it started, if any)."""

    def __init__(self, client, cluster, scheduler: str) -> None:
        self.client = client
        self.cluster = cluster
        self.scheduler = scheduler

    def workers(self) -> int:
        return len(self.client.scheduler_info(n_workers=-1).get("workers", {}))

    def map(self, spec, function: Callable, items: Sequence, description: str, progress: bool) -> list:
        """function(item) for every item on the cluster's workers, in the order of `items`."""
        from distributed import KilledWorker, as_completed

        token = uuid.uuid4().hex[:12]
        name = getattr(function, "__name__", "unit")
        spec_future = self.client.submit(_spec, spec, key=f"predrel-spec-{token}", pure=False)
        keys = [f"predrel-{name}-{token}-{index:06d}" for index in range(len(items))]
        futures = [self.client.submit(_unit, spec_future, token, function, item, key=key, pure=False)
                   for key, item in zip(keys, items)]
        bar = None
        if progress:
            from tqdm import tqdm
            bar = tqdm(total=len(items), desc=description, unit="episode", file=sys.stderr)
        results: dict[str, object] = {}
        try:
            for future in as_completed(futures):   # each future once, however often its task ran
                results[future.key] = future.result()
                if bar is not None:
                    bar.update()
        except KilledWorker as error:
            raise UserError(f"{description}: a unit took down every worker that ran it ({error}); see the "
                            f"workers' logs (memory limit?)") from None
        finally:
            if bar is not None:
                bar.close()
            for future in futures:
                future.release()
            spec_future.release()
        missing = [key for key in keys if key not in results]
        if missing:
            raise RuntimeError(f"units without a result: {missing}")
        return [results[key] for key in keys]

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


@contextmanager
def connect(scheduler: str) -> Iterator[Fleet]:
    """A Fleet on `scheduler` (`local:N`: a LocalCluster of N worker processes, one thread each)."""
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise UserError("--scheduler needs Dask: pip install dask distributed (versions in requirements.txt)") from None
    count = local_workers(scheduler)
    cluster = None
    try:
        if count is not None:
            cluster = LocalCluster(n_workers=count, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
        else:
            client = Client(scheduler)   # waits up to distributed.comm.timeouts.connect (30 s)
            client.wait_for_workers(1, timeout=dask.config.get("distributed.comm.timeouts.connect"))
    except (OSError, TimeoutError, ValueError) as error:
        if cluster is not None:
            cluster.close()
        raise UserError(f"cannot reach the Dask scheduler {scheduler} ({type(error).__name__}: {error})") from None
    fleet = Fleet(client, cluster, scheduler)
    try:
        yield fleet
    finally:
        fleet.close()
