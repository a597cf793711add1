"""The CPU pool: CPU-bound functions (the cleaner, the feed parser, image rewriting) run
off the event loop, in worker processes started from a fork server, so the loop keeps
serving pages while trafilatura works, and a crash in one page's extraction is the
pool's to survive, not the server's."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import multiprocessing
import multiprocessing.forkserver
import os
import select
import site
import threading
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Callable, TypeVar

from .errors import Unavailable

T = TypeVar("T")

log = logging.getLogger(__name__)


class PoolUnavailable(Unavailable):
    """The extraction processes died under the work twice in a row (killed from outside,
    as an OOM kill does): a failure of the machine, not of the article."""


class _Broken(Exception):
    """The pool `executor` broke under a piece of work (a process of it died)."""

    def __init__(self, executor: concurrent.futures.Executor):
        super().__init__("an extraction process died")
        self.executor = executor


def _cancel_submitted(submitting: asyncio.Future[tuple[concurrent.futures.Executor, concurrent.futures.Future[Any]]]
                      ) -> None:
    """The caller went away while its work was being submitted: cancel the work if it has
    not started."""
    if not submitting.cancelled() and submitting.exception() is None:
        submitting.result()[1].cancel()


class CpuPool:
    """Runs CPU-bound functions off the event loop: in worker processes (the default,
    so extraction does not even compete for the GIL), or in one thread when
    processes = 0.

    A process of the pool can be killed from outside at any time. That breaks a
    ProcessPoolExecutor for good, so a broken one is replaced and the work tried once
    more on the new one; only a second break in a row reaches the caller, as
    PoolUnavailable.

    `warm` is for a long-lived process (a server, a worker): the pool starts at once, so
    the first extraction does not wait for the fork server to import trafilatura, and the
    fork server makes the cleaner's first calls before forking (reader/prewarm.py), which
    saves each pool process 0.2 s of CPU. A one-shot command (`reader stats`, `reader
    edition`) starts its pool on first use, if at all, and skips the warm-up: for one or
    two pieces of work it costs more than it saves."""

    def __init__(self, processes: int = 1, *, warm: bool = True):
        self._processes = processes
        self._warm = warm
        self._replacing = threading.Lock()
        self._executor: concurrent.futures.Executor | None = self._new_executor() if warm else None

    def _started(self) -> concurrent.futures.Executor:
        with self._replacing:
            if self._executor is None:
                self._executor = self._new_executor()
            return self._executor

    def _new_executor(self) -> concurrent.futures.Executor:
        if self._processes <= 0:
            return concurrent.futures.ThreadPoolExecutor(max_workers=1)
        context = multiprocessing.get_context("forkserver")
        # Workers fork from a server that has already imported trafilatura (and, for a
        # warm pool, made its first calls).
        context.set_forkserver_preload(["reader.clean.pipeline", "reader.feeds.parse", *(["reader.jobs.prewarm"] if self._warm else [])])
        _start_forkserver()
        return concurrent.futures.ProcessPoolExecutor(
            max_workers=self._processes, mp_context=context,
            initializer=_exit_with_owner, initargs=(os.getpid(),),
        )

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        try:
            return await self._run_once(fn, args)
        except _Broken as broken:
            log.warning("an extraction process died; starting a new pool and trying once more")
            await asyncio.to_thread(self._replace, broken.executor)
        try:
            return await self._run_once(fn, args)
        except _Broken as broken:
            await asyncio.to_thread(self._replace, broken.executor)  # the next work starts on a sound pool
            raise PoolUnavailable("the extraction processes died twice in a row; the work is kept for later") from broken

    async def _run_once(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        # Submitting is done from a thread, never the event loop's: a process pool starts
        # its processes inside submit(), and starting one waits for the fork server, which
        # on a loaded machine took seconds (2 s at load 12 for the first one, while the
        # server imported trafilatura). A loop stopped that long renews no claim: a live
        # holder's claim expired and a second worker cleaned the article again.
        submitting = asyncio.ensure_future(asyncio.to_thread(self._submit, fn, args))
        try:
            executor, future = await asyncio.shield(submitting)
        except asyncio.CancelledError:
            submitting.add_done_callback(_cancel_submitted)
            raise
        try:
            return await asyncio.wrap_future(future)
        except BrokenProcessPool as exc:
            raise _Broken(executor) from exc

    def _submit(self, fn: Callable[..., T], args: tuple[Any, ...]
                ) -> tuple[concurrent.futures.Executor, concurrent.futures.Future[T]]:
        executor = self._started()
        try:
            return executor, executor.submit(fn, *args)
        except BrokenProcessPool as exc:
            raise _Broken(executor) from exc

    def _replace(self, broken: concurrent.futures.Executor) -> None:
        """Swap in a new executor, once however many callers saw the same one break."""
        with self._replacing:
            if self._executor is not broken:
                return
            self._executor = self._new_executor()
        broken.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)


_forkserver_lock = threading.Lock()


def _start_forkserver() -> None:
    """Start multiprocessing's fork server (if it is not running) without the current
    directory on its import path.

    The server is started as `python -c ...`, which puts the current directory first on
    sys.path, and the forkserver of Python 3.11 (and of 3.12 and 3.13 before their fix of
    CPython gh-117378) ignores the sys.path the parent sends it. So a folder named
    `reader` where reader was started (the folder it was cloned into, say) was imported in
    place of this package when the server preloaded it, and every pool process forked
    from it failed. PYTHONSAFEPATH (Python 3.11+) keeps the directory off the path; it is
    set only for the server's start, and this package's own location is added back when
    it is not an installed one (a checkout run in place)."""
    root = str(Path(__file__).resolve().parent.parent)
    extra = {"PYTHONSAFEPATH": "1"}
    installed = {str(Path(p).resolve()) for p in [*site.getsitepackages(), site.getusersitepackages()]}
    if root not in installed:
        extra["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    with _forkserver_lock:
        saved = {name: os.environ.get(name) for name in extra}
        os.environ.update(extra)
        try:
            multiprocessing.forkserver.ensure_running()
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def _exit_with_owner(owner: int) -> None:
    """Pool process initializer: exit as soon as the process that owns the pool is gone.

    Pool processes are children of the fork server, not of their owner, and each holds
    the pipe that keeps the fork server alive; so when the owner is killed (kill -9
    leaves no time to shut the pool down), nothing else would ever end them, and they
    would keep the fork server and the resource tracker alive too. Once they exit, those
    two see their pipes close and exit by themselves."""
    try:
        handle: int | None = os.pidfd_open(owner)  # Linux 5.3+: readable once the owner exits
    except (AttributeError, OSError):
        handle = None

    def watch() -> None:
        if handle is not None:
            select.select([handle], [], [])
        else:
            while _alive(owner):
                time.sleep(0.5)
        os._exit(0)

    if handle is None and not _alive(owner):
        os._exit(0)
    threading.Thread(target=watch, name="exit-with-owner", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True
