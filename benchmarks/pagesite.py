"""The loopback article site in its own process (so serving pages does not share a GIL
with the load generator that times requests):

    python -m benchmarks.pagesite --pages 40 --aliases 300 --seed 3

serves /a/{k}.html for k < aliases (page k % pages of benchmarks/pages.py, 50-500 KB),
/__hits (JSON: fetches per path) and prints its port on the first line of stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import random
from email.utils import formatdate
import subprocess
import sys
import time

import httpx

from .common import BENCH_DIR, PYTHON, PageServer, stop
from .pages import _sentence, make_pages


def rss(f: int, items: int, base: str) -> str:
    rng = random.Random(f"feed-{f}")
    entries = "".join(
        f"<item><title>{html.escape(_sentence(rng)[:70])}</title><link>{base}/posts/{f}/{i}.html</link>"
        f"<guid>{base}/posts/{f}/{i}.html</guid><author>writer{f}@example.org (Writer {f})</author>"
        f"<description>{html.escape('<p>' + _sentence(rng) + ' ' + _sentence(rng) + '</p>')}</description>"
        f"<pubDate>{formatdate(1_700_000_000 + f * 1000 + i * 60, usegmt=True)}</pubDate></item>"
        for i in range(items))
    return (f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Feed {f}</title>'
            f"<link>{base}/site/{f}/</link><description>bench feed {f}</description>{entries}</channel></rss>")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--aliases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--feeds", type=int, default=0, help="also serve /f/{i}.xml: RSS with ETag")
    parser.add_argument("--items", type=int, default=20)
    args = parser.parse_args()
    bodies = [body.encode() for _, body in make_pages(args.pages, seed=args.seed)]
    server = PageServer()
    for k in range(args.aliases):
        server.add(f"/a/{k}.html", bodies[k % len(bodies)])
    for f in range(args.feeds):
        server.add(f"/f/{f}.xml", rss(f, args.items, server.url("")), "application/rss+xml", etag=f'"feed-{f}-v1"')
    with server:
        print(server.port, sum(map(len, bodies)) // len(bodies), flush=True)
        sys.stdin.read()  # until the parent closes our stdin


@contextlib.contextmanager
def page_site(pages: int, aliases: int, seed: int = 3, feeds: int = 0, items: int = 20):
    """Run the site; yields (base URL, mean page bytes, hits())."""
    proc = subprocess.Popen([PYTHON, "-m", "benchmarks.pagesite", "--pages", str(pages), "--aliases",
                             str(aliases), "--seed", str(seed), "--feeds", str(feeds), "--items", str(items)],
                            cwd=BENCH_DIR.parent,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        port, mean = map(int, proc.stdout.readline().split())
        base = f"http://127.0.0.1:{port}"

        def hits() -> dict[str, int]:
            return httpx.get(base + "/__hits", timeout=30).json()

        yield base, mean, hits
    finally:
        with contextlib.suppress(Exception):
            proc.stdin.close()
        time.sleep(0.1)
        stop(proc, 10)


if __name__ == "__main__":
    main()
