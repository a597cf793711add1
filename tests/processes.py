"""Process trees read from /proc (Linux), for the tests about pool and child processes."""

from __future__ import annotations

import os
from pathlib import Path


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process, or None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = raw[raw.rindex(")") + 2:].split()  # the name may hold spaces and parentheses
    return fields[0], int(fields[1])


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[1] == pid:
                found.append(int(entry))
    return found


def descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        for child in children(todo.pop()):
            found.append(child)
            todo.append(child)
    return found


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return ""


def alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie nobody has reaped yet."""
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def pool_processes(owner: int) -> list[int]:
    """The extraction pool's processes of `owner`: children of its fork server."""
    servers = [p for p in children(owner) if "multiprocessing.forkserver" in command_line(p)]
    return [p for server in servers for p in children(server)]
