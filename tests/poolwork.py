"""Functions the extraction pool runs in tests. They live in a module of their own, light
to import, because each pool process imports the module a function comes from."""

from __future__ import annotations

import os
import time
from pathlib import Path


def block_the_first_time(marker: str) -> int:
    """The first call writes its process id to `marker` and then works until it is killed;
    any later call answers its process id at once."""
    path = Path(marker)
    if not path.exists():
        path.write_text(str(os.getpid()))
        while True:
            time.sleep(60)
    return os.getpid()


def pid() -> int:
    return os.getpid()
