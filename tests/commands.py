"""`reader`'s command line as real processes, without paying Python's start-up and reader's
imports (~1 s, trafilatura's most of it) for every command a test runs.

One process per test process has imported `reader.cli` and does nothing else (no threads,
no event loop). For each command it forks a child, which takes the caller's stdin, stdout
and stderr (passed over a Unix socket), its environment, working directory and arguments,
and runs `reader.cli.main` as `python -m reader` would, exiting with its status. So each
command is still a process of its own: its own descriptors, environment, signal handlers,
logging and exit status, and nothing it does can touch the test process. What this does
not cover is Python's start-up and the console script itself; test_processes and the
smoke test of .ci/run start those as a user does.

Run as a script, this file is that forking process: `python commands.py SOCKET`. It stops
when its stdin closes (its test process ended).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

READY = b"ready\n"


# -- the forking side (a process of its own) ------------------------------------------------------

def _serve(socket_path: str) -> None:
    from reader.cli import main

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin, selectors.EVENT_READ, "parent")
    sys.stdout.buffer.write(READY)
    sys.stdout.flush()
    while True:
        for key, _ in selector.select():
            if key.data == "parent":
                if not sys.stdin.buffer.read1(1):  # EOF: the test process is gone
                    return
            elif key.data == "accept":
                conn, _ = listener.accept()
                pid = _start(conn, main)
                if pid is None:
                    conn.close()
                    continue
                conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
                selector.register(os.pidfd_open(pid), selectors.EVENT_READ, (pid, conn))
            else:
                pid, conn = key.data
                selector.unregister(key.fileobj)
                os.close(key.fd)
                _, status = os.waitpid(pid, 0)
                try:
                    conn.sendall(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
                except OSError:
                    pass  # the caller gave up waiting
                conn.close()


def _start(conn: socket.socket, main: Callable[[list[str]], int]) -> int | None:
    """Read one request (JSON, then EOF; stdin, stdout and stderr as passed descriptors)
    and fork its child; the child never returns from here."""
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    while chunk := conn.recv(1 << 16):
        data += chunk
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return None
    request = json.loads(data)
    # Nothing may sit in a buffer the child would inherit and write a second time.
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        return pid
    # The child: only its request's descriptors, environment and directory.
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    # Everything else this process holds (other callers' connections among them, whose
    # callers wait for them to close) is not the child's: as subprocess's close_fds does.
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.argv = ["reader", *request["argv"]]
    code: object
    try:
        code = main(request["argv"])
    except SystemExit as exc:
        code = exc.code
    except BaseException:  # noqa: BLE001 - as the interpreter would: the traceback, status 1
        traceback.print_exc()
        code = 1
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    try:
        atexit._run_exitfuncs()  # what the interpreter runs at exit (multiprocessing's clean-up)
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


# -- the test side -------------------------------------------------------------------------------

class _Forker:
    """The forking process of this test process, started on first use."""

    def __init__(self) -> None:
        self.directory = tempfile.TemporaryDirectory(prefix="reader-commands-")
        self.path = str(Path(self.directory.name) / "socket")
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), self.path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=self.directory.name)
        assert self.process.stdout is not None
        if self.process.stdout.readline() != READY:
            raise RuntimeError("the command process did not start")
        atexit.register(self.close)

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()  # its signal to stop
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        self.directory.cleanup()


_forker: _Forker | None = None
_forker_lock = threading.Lock()


def _the_forker() -> _Forker:
    global _forker
    with _forker_lock:
        if _forker is None or _forker.process.poll() is not None:
            _forker = _Forker()
        return _forker


def run(args: Sequence[str | bytes], *, env: Mapping[str, str] | None = None, cwd: Path | str | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """`reader ARGS...` as a process of its own (see the module docstring): its exit status
    and everything it wrote to stdout and stderr. Bytes arguments reach it as Python would
    decode them from a command line."""
    argv = [os.fsdecode(a) for a in args]
    request = json.dumps({"argv": argv, "env": dict(os.environ if env is None else env),
                          "cwd": str(cwd or os.getcwd())}).encode()
    forker = _the_forker()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            open(os.devnull, "rb") as null, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(forker.path)
        socket.send_fds(conn, [request], [null.fileno(), out.fileno(), err.fileno()])
        conn.shutdown(socket.SHUT_WR)
        reply = b""
        try:
            while chunk := conn.recv(4096):
                reply += chunk
        except TimeoutError:
            pid = json.loads(reply.split(b"\n")[0])["pid"] if reply else None
            if pid:
                os.kill(pid, 9)
            raise subprocess.TimeoutExpired(["reader", *argv], timeout) from None
        answers = [json.loads(line) for line in reply.splitlines()]
        if not answers or "returncode" not in answers[-1]:
            raise RuntimeError(f"the command process gave no exit status for reader {argv}: {reply!r}")
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(["reader", *argv], answers[-1]["returncode"], out.read(), err.read())


class Started:
    """A command started with start(): the parts of subprocess.Popen the tests use (pid,
    poll, wait, send_signal, kill, communicate, and stderr as lines of text)."""

    def __init__(self, args: list[str], conn: socket.socket, stderr: int | None) -> None:
        self.args = args
        self.returncode: int | None = None
        self.stderr = open(stderr, encoding="utf-8", errors="replace") if stderr is not None else None
        self._conn = conn
        self._done = threading.Event()
        self._reading: threading.Thread | None = None
        self._rest: list[str] = []
        reply = b""
        while b"\n" not in reply:
            chunk = conn.recv(4096)
            if not chunk:
                raise RuntimeError(f"the command process did not start reader {args}")
            reply += chunk
        first, rest = reply.split(b"\n", 1)
        self.pid: int = json.loads(first)["pid"]
        threading.Thread(target=self._wait_for_status, args=(rest,), daemon=True).start()

    def _wait_for_status(self, reply: bytes) -> None:
        try:
            while chunk := self._conn.recv(4096):
                reply += chunk
        finally:
            self._conn.close()
            if reply.strip():
                self.returncode = json.loads(reply.splitlines()[-1])["returncode"]
            self._done.set()

    def poll(self) -> int | None:
        return self.returncode if self._done.is_set() else None

    def wait(self, timeout: float | None = None) -> int:
        if not self._done.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        if self.returncode is None:
            raise RuntimeError(f"the command process lost reader {self.args}")
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if not self._done.is_set():  # after its end the pid may be someone else's
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout: float | None = None) -> tuple[None, str]:
        """Wait for the end and return what is left of stderr (read alongside, as Popen
        does, so a full pipe cannot stall the command)."""
        if self._reading is None:
            self._reading = threading.Thread(target=self._read_the_rest, daemon=True)
            self._reading.start()
        self.wait(timeout)
        self._reading.join(timeout)
        if self._reading.is_alive():  # a descendant still holds stderr open
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return None, "".join(self._rest)

    def _read_the_rest(self) -> None:
        if self.stderr is not None:
            self._rest.append(self.stderr.read())
            self.stderr.close()


def start(args: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: Path | str | None = None,
          stderr_pipe: bool = True) -> Started:
    """`reader ARGS...` started as a process of its own, as start()ed by Popen: stdin and
    stdout are /dev/null, stderr a pipe (`.stderr`) or /dev/null."""
    argv = [os.fsdecode(a) for a in args]
    request = json.dumps({"argv": argv, "env": dict(os.environ if env is None else env),
                          "cwd": str(cwd or os.getcwd())}).encode()
    forker = _the_forker()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    read_end, write_end = os.pipe() if stderr_pipe else (None, None)
    try:
        with open(os.devnull, "rb") as null, open(os.devnull, "wb") as sink:
            conn.connect(forker.path)
            socket.send_fds(conn, [request], [null.fileno(), sink.fileno(),
                                              write_end if write_end is not None else sink.fileno()])
            conn.shutdown(socket.SHUT_WR)
        started = Started(["reader", *argv], conn, read_end)
    except BaseException:
        conn.close()
        if read_end is not None:
            os.close(read_end)
        raise
    finally:
        if write_end is not None:
            os.close(write_end)  # the child's copy is the one that counts
    return started


async def run_async(args: Sequence[str | bytes], *, env: Mapping[str, str] | None = None,
                    cwd: Path | str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """run(), waited for off the event loop: the test's own servers keep answering."""
    return await asyncio.to_thread(run, args, env=env, cwd=cwd, timeout=timeout)


if __name__ == "__main__":
    del sys.path[0]  # this file's folder (the tests'): the commands import as `python -m reader` does
    _serve(sys.argv[1])
