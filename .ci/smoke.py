"""Smoke test of an installed reader (run by .ci/run against the wheel in a fresh venv):
from a temporary directory that holds a folder named `reader`, start `reader serve` on a
free port with a fresh database, check that the sample feed is browsable, clean one
article, stop. Standard library only; not a pytest module.

    python .ci/smoke.py /path/to/venv/bin/reader
"""

from __future__ import annotations

import html
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path


def get(url: str, timeout: float = 60) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check(condition: bool, what: str) -> None:
    if not condition:
        raise SystemExit(f"smoke: FAILED: {what}")
    print(f"smoke: ok: {what}")


def main(reader: str) -> None:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="reader-smoke-") as scratch:
        home = Path(scratch)
        # The folder reader was cloned into, in the current directory: to Python a namespace
        # package `reader`, which must not be imported in place of the installed one.
        (home / "reader" / "reader").mkdir(parents=True)
        (home / "reader" / "reader" / "__init__.py").write_text("raise ImportError('the wrong reader')\n")
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("READER_", "PYTHON"))}
        log = home / "serve.log"
        with open(log, "wb") as out:
            server = subprocess.Popen([reader, "serve", "--port", str(port), "--db", str(home / "data.db")],
                                      cwd=home, env=env, stdout=out, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                if server.poll() is not None:
                    raise SystemExit(f"smoke: FAILED: reader serve exited\n{log.read_text()}")
                try:
                    status, page = get(f"{base}/", timeout=5)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise SystemExit(f"smoke: FAILED: reader serve did not answer\n{log.read_text()}")
                    time.sleep(0.1)
            check(status == 200, "GET / answers")
            articles = json.loads(get(f"{base}/api/articles")[1])["items"]
            check(len(articles) == 8 and {a["feed_title"] for a in articles} == {"reader samples"},
                  "the first run is subscribed to the sample feed")
            text = page.decode()
            check(all(html.escape(a["title"]) in text for a in articles), "/ lists the sample articles")
            status, body = get(f"{base}/api/articles/{articles[0]['id']}/content")
            check(status == 200 and json.loads(body)["words"] > 100,
                  f"an article is cleaned ({status}: {body[:200]!r})")
            status, body = get(f"{base}/static/vendor/htmx-4.0.1/htmx.min.js")
            check(status == 200 and len(body) > 1000, "the vendored htmx is served")
        except BaseException:
            print(log.read_text(), file=sys.stderr)
            raise
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    print(f"smoke: passed in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1])
