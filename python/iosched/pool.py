"""Where many independent runs go: this process, a local process pool, or a Dask cluster.

A task is (scenario text, source name, seed); its result is the list of run summaries (dicts),
one per scheduler. Tasks are independent and each is deterministic, so the results are the
same, in the same order, whatever runs them (`--jobs 1`, `--jobs N`, `--dask ADDRESS`).
"""

from __future__ import annotations

import json
import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

Task = Tuple[str, str, Optional[int]]


class TaskFailed(Exception):
    """A task's error as it crosses a process boundary: the native ScenarioError class cannot be
    pickled by a worker, so its kind and message travel instead and are raised again here."""

    def __init__(self, kind: str, message: str):
        super().__init__(kind, message)
        self.kind, self.message = kind, message

    def reraise(self):
        from . import _native

        if self.kind == "ScenarioError":
            raise _native.ScenarioError(self.message) from None
        raise RuntimeError(self.message) from None


def run_task(task: Task) -> list:
    """Runs one task (in whatever process this is); returns its summaries."""
    from . import _native

    text, source, seed = task
    return [json.loads(s) for s, _ in _native.run_scenario(text, source, seed, False)]


def _run_task_portable(task: Task) -> list:
    """run_task for a worker process: errors come back as TaskFailed (picklable)."""
    try:
        return run_task(task)
    except Exception as e:  # the native ScenarioError and anything else a run raises
        raise TaskFailed(type(e).__name__, str(e)) from None


def default_jobs() -> int:
    """The number of CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class Pool:
    """`jobs` local processes (1: run here, in order), or the Dask cluster at `dask`
    ("local" starts a LocalCluster of `jobs` workers on this machine)."""

    jobs: Optional[int] = None
    dask: Optional[str] = None

    def describe(self) -> str:
        if self.dask:
            return f"Dask cluster {self.dask}"
        n = self.jobs or default_jobs()
        return "this process" if n == 1 else f"{n} local processes"

    def map(self, tasks: Sequence[Task], progress: Optional[Callable[[int, int], None]] = None) -> List[list]:
        """Runs every task; returns their summaries in task order. `progress(done, total)`
        after each task. Ctrl-C cancels what has not started and re-raises."""
        tasks = list(tasks)
        if progress:
            progress(0, len(tasks))
        if not tasks:
            return []
        if self.dask:
            return self._map_dask(tasks, progress)
        jobs = min(self.jobs or default_jobs(), len(tasks))
        if jobs <= 1:
            out = []
            for i, t in enumerate(tasks):
                out.append(run_task(t))
                if progress:
                    progress(i + 1, len(tasks))
            return out
        import multiprocessing

        results: List[Optional[list]] = [None] * len(tasks)
        # spawn: the workers start clean (no copy of this process's threads, e.g. a progress bar's).
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as ex:
            futures = {ex.submit(_run_task_portable, t): i for i, t in enumerate(tasks)}
            pending, done_count = set(futures), 0
            try:
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        try:
                            results[futures[f]] = f.result()
                        except TaskFailed as e:
                            e.reraise()
                        done_count += 1
                    if progress:
                        progress(done_count, len(tasks))
            except BaseException:
                for f in pending:
                    f.cancel()
                raise
        return results  # type: ignore[return-value]

    def _map_dask(self, tasks: List[Task], progress) -> List[list]:
        try:
            from dask.distributed import Client, LocalCluster, as_completed
        except ImportError:
            raise RuntimeError("--dask needs dask.distributed: pip install 'dask[distributed]'") from None
        cluster = None
        if self.dask == "local":
            cluster = LocalCluster(n_workers=self.jobs or default_jobs(), threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster)
        else:
            client = Client(self.dask, timeout="20s")
        try:
            # pure=False: identical tasks are still each run (they are cheap and it keeps counts honest).
            futures = client.map(_run_task_portable, tasks, pure=False)
            index = {f.key: i for i, f in enumerate(futures)}
            results: List[Optional[list]] = [None] * len(tasks)
            for n, f in enumerate(as_completed(futures), 1):
                try:
                    results[index[f.key]] = f.result()
                except TaskFailed as e:
                    e.reraise()
                if progress:
                    progress(n, len(tasks))
            return results  # type: ignore[return-value]
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
