"""Where takes run: the standard library's process pool, or a Dask cluster through the
``concurrent.futures`` executor its client gives (``Client.get_executor``), so the same
loop drives both.

:meth:`Pool.run` keeps a few tasks per worker in flight and yields each result as it
comes.  A task whose worker died is suspected, not blamed: it runs again alone (nothing
else in flight, so nothing else can be the cause), and only if its worker dies again is
it reported as :class:`WorkerDied`.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, InvalidStateError, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from .. import formats
from ..errors import MissingDependency

PRELOAD = [f.module for f in formats.file_formats()]  # every registered format's module
IN_FLIGHT_PER_WORKER = 2  # tasks handed out per worker: one running, one waiting to start
WORKER_PACKAGE = __package__.split(".")[0]  # what every worker must be able to import
DASK_EXTRA = 'pip install "mocap-addon[dask]" (or pip install "dask[distributed]")'


class WorkerDied(RuntimeError):
    """The process running a task died, twice (the second time running nothing else)."""


def machine_cores() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class Pool:
    """Worker processes of the standard library (``workers`` of them); use as a context manager."""

    lost: tuple[type[BaseException], ...] = (BrokenProcessPool,)

    def __init__(self, workers: int, preload: Sequence[str] = ()) -> None:
        """``preload``: modules the workers import before their first task, besides the core's."""
        self.width = workers
        self.preload = [f"{__package__}.convert", *PRELOAD, *preload]
        self._executor: Executor | None = None

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, error_type: type[BaseException] | None, *exc: object) -> None:
        self.close(wait=error_type is None)  # interrupted: do not wait for the takes in flight

    def executor(self) -> Executor:
        if self._executor is None:
            self._executor = self._make()
        return self._executor

    def _make(self) -> Executor:
        # Workers forked from a server that has imported what they need: quick to start, and free
        # of whatever threads the caller runs.
        method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
        context = multiprocessing.get_context(method)
        if method == "forkserver":
            context.set_forkserver_preload(self.preload)
        return ProcessPoolExecutor(max_workers=self.width, mp_context=context)

    def _renew(self) -> None:
        """After a worker died: the standard pool is broken for good, so the next task gets a new one."""
        self.close()

    def close(self, wait: bool = True) -> None:
        """Stop the workers: once their tasks are done (``wait``), else at once (interrupted: the takes in
        flight are abandoned, their workers terminated so none outlives the batch)."""
        if self._executor is not None:
            # The standard pool keeps its processes in ``_processes`` (pid -> Process).
            workers = [] if wait else list((getattr(self._executor, "_processes", None) or {}).values())
            for worker in workers:
                worker.terminate()
            self._executor.shutdown(wait=wait, cancel_futures=True)
            for worker in workers:
                worker.join(5)
            self._executor = None

    def run(self, function: Callable[..., Any], tasks: Sequence[tuple[Any, ...]]) -> Iterator[tuple[int, Any]]:
        """``function(*tasks[i])`` for every ``i``; yields ``(i, result)`` as each finishes, the result
        being the exception where the call failed (:class:`WorkerDied` where its worker died twice)."""
        pending: deque[int] = deque(range(len(tasks)))
        suspects: deque[int] = deque()
        suspected: set[int] = set()
        running: dict[Future[Any], int] = {}

        def settle(future: Future[Any]) -> tuple[int, Any] | None:
            """The finished task's result, or ``None`` if its worker died (it is then suspected)."""
            index = running.pop(future)
            if future.cancelled():
                return index, RuntimeError("cancelled")
            error = future.exception()
            if error is None:
                return index, future.result()
            if not isinstance(error, self.lost):
                return index, error
            if index in suspected:
                return index, WorkerDied("the worker converting it died, twice")
            suspected.add(index)
            suspects.append(index)
            return None

        try:
            while pending or suspects or running:
                lost = False
                # A suspect runs alone: it waits until nothing else is in flight.
                queue, limit = (suspects, 1) if suspects else (pending, IN_FLIGHT_PER_WORKER * self.width)
                while queue and len(running) < limit:
                    index = queue.popleft()
                    try:
                        running[self.executor().submit(function, *tasks[index])] = index
                    except self.lost:  # broke before anything told us: this task never ran
                        queue.appendleft(index)
                        lost = True
                        break
                if running:
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in done:
                        settled = settle(future)
                        lost |= settled is None
                        if settled is not None:
                            yield settled
                if lost:  # what else was in flight shares the broken pool's fate: collect it first
                    for future in list(wait(running).done):
                        settled = settle(future)
                        if settled is not None:
                            yield settled
                    self._renew()
        finally:
            if running:
                for future in running:
                    future.cancel()


class DaskPool(Pool):
    """The same tasks on a Dask cluster: ``"local"`` (a ``LocalCluster`` of ``workers`` processes,
    one thread each) or a scheduler's address (its workers must see the files)."""

    def __init__(self, scheduler: str, workers: int) -> None:
        try:
            import dask
            import distributed
        except ImportError:
            raise MissingDependency(f"--scheduler needs Dask: {DASK_EXTRA}") from None
        self.lost = (distributed.KilledWorker,)
        self._cluster = None
        if scheduler == "local":
            # A task whose worker dies fails at once (Pool.run gives it its one retry, alone); no
            # statistical profiler sampling the workers' stacks 100 times a second.
            with dask.config.set({"distributed.scheduler.allowed-failures": 0,
                                  "distributed.worker.profile.enabled": False}):
                self._cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                         dashboard_address=None, silence_logs=40)
            self.client = distributed.Client(self._cluster)
        else:
            self.client = distributed.Client(scheduler, timeout="30s")
        super().__init__(max(1, sum(self.client.nthreads().values())))
        self._require_package_on_workers()

    def _require_package_on_workers(self) -> None:
        """Raise :class:`MissingDependency` (one line) unless every worker can import the add-on's package
        (asked with a builtin, which any worker can unpickle)."""
        probe = f"__import__('importlib.util').util.find_spec({WORKER_PACKAGE!r}) is not None"
        found = self.client.run(eval, probe)
        lacking = sorted(address for address, present in found.items() if not present)
        if lacking:
            self.close()
            raise MissingDependency(f"{len(lacking)} of {len(found)} Dask workers cannot import {WORKER_PACKAGE} "
                                    f"(first {lacking[0]}): install the add-on's package where they run")

    def _make(self) -> Executor:
        # Client.get_executor(pure=False) (pure=False: a retried task runs again), its futures settled
        # as below.
        return _settled_executor(type(self.client.get_executor()))(self.client, pure=False)

    def _renew(self) -> None:
        """Dask replaces dead workers itself; the executor stays."""

    def close(self, wait: bool = True) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def _settled_executor(client_executor: type[Any]) -> type[Any]:
    """Dask's ``concurrent.futures`` executor with each future settled by its Dask future's own done
    callback.  Dask's executor copies a result over in a coroutine that lets an error escape when a
    worker died holding the result and recomputing it failed (distributed 2026.8), leaving the
    ``concurrent.futures`` future pending for ever; here every outcome, that one too, reaches it."""

    class SettledExecutor(client_executor):
        def _wrap_future(self, future: Any) -> Future[Any]:
            settled: Future[Any] = Future()

            def copy(finished: Any) -> None:  # on Dask's callback thread
                try:
                    outcome, failed = finished.result(), False
                except BaseException as error:  # the task's error, a dead worker's, a cancellation
                    outcome, failed = error, True
                with contextlib.suppress(InvalidStateError):  # cancelled meanwhile
                    settled.set_exception(outcome) if failed else settled.set_result(outcome)

            settled.add_done_callback(lambda mine: future.cancel() if mine.cancelled() else None)
            future.add_done_callback(copy)
            return settled

    return SettledExecutor
