"""Realistic article pages, made here: deterministic (seeded) prose inside the page
structure of reader's own sample site (reader/samples/site/articles/*.html: cookie
banner, navigation, the article, share buttons, a card grid, comments, a sidebar, a fat
footer), grown to 50-500 KB with what real pages carry around an article: more comments,
more related links, inline scripts and JSON state."""

from __future__ import annotations

import html
import json
import random
import re
from functools import lru_cache
from pathlib import Path

SEEDS = Path(__file__).resolve().parent.parent / "reader" / "samples" / "site" / "articles"

_WORDS = """
the a of to and in that is for it as with was on be by this are at from or an but not have
reading reader feed article queue worker page text browser screen morning evening habit
letter editor writer software database index query server network request latency cache
process thread memory library archive paragraph sentence headline summary author publisher
offline online simple careful quiet patient slow fast small large honest useful practical
because although while after before since until whenever however therefore meanwhile
people week year hour minute evening weekend notebook pencil margin chapter essay column
design typography measure leading contrast colour layout grid column spacing rhythm line
""".split()

_OPENERS = ["In practice", "Most of the time", "For a small app", "Years later", "On a good day",
            "The trouble is that", "Put simply", "Looking back", "At first", "Surprisingly",
            "For most readers", "Once a week"]


def _sentence(rng: random.Random) -> str:
    n = rng.randint(9, 26)
    words = [rng.choice(_WORDS) for _ in range(n)]
    if rng.random() < 0.3:
        words.insert(rng.randint(3, n - 1), ",")
    text = " ".join(words).replace(" ,", ",")
    if rng.random() < 0.35:
        return f"{rng.choice(_OPENERS)}, {text}."
    return text[0].upper() + text[1:] + "."


def _paragraph(rng: random.Random, sentences: tuple[int, int] = (3, 7)) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(*sentences)))


def _body(rng: random.Random, words: int, slug: str) -> str:
    parts, count, section = [], 0, 0
    while count < words:
        kind = rng.random()
        if kind < 0.08:
            section += 1
            parts.append(f'<h2 id="{slug}-s{section}">{_sentence(rng)[:60].rstrip(".")}</h2>')
        elif kind < 0.14:
            items = "".join(f"<li>{_sentence(rng)}</li>" for _ in range(rng.randint(3, 6)))
            parts.append(f"<ul>{items}</ul>")
        elif kind < 0.17:
            parts.append(f'<figure><img src="/img/{slug}-{len(parts)}.png" alt="{_sentence(rng)[:50]}"'
                         f' width="800" height="450"><figcaption>{_sentence(rng)}</figcaption></figure>')
        elif kind < 0.20:
            parts.append(f"<blockquote><p>{_sentence(rng)}</p></blockquote>")
        else:
            p = _paragraph(rng)
            if rng.random() < 0.3:
                w = p.split(" ")
                i = rng.randrange(len(w) - 3)
                w[i] = f'<a href="/articles/{rng.choice(_WORDS)}-{rng.randint(1, 999)}.html">{w[i]}'
                w[i + 2] = w[i + 2] + "</a>"
                p = " ".join(w)
            parts.append(f"<p>{p}</p>")
        count = sum(len(x.split()) for x in parts)
    return "\n".join(parts)


def _comments(rng: random.Random, n: int, start: int) -> str:
    out = []
    for i in range(start, start + n):
        out.append(
            f'<li class="comment" id="comment-{i}"><div class="comment-meta"><span class="comment-author">'
            f'{rng.choice(_WORDS)}{rng.randint(1, 99)}</span> <time class="comment-date" '
            f'datetime="2026-11-{rng.randint(1, 28):02d}T10:00:00+00:00">{rng.randint(1, 28)} November 2026</time>'
            f'</div><div class="comment-body"><p>{_paragraph(rng, (1, 4))}</p></div><div class="comment-actions">'
            f'<a href="#reply-{i}">Reply</a> <a href="#report-{i}">Report</a> <button type="button" '
            f'class="like">Like ({rng.randint(0, 40)})</button></div></li>')
    return "\n".join(out)


def _related(rng: random.Random, n: int) -> str:
    return "\n".join(
        f'<li><a href="/articles/{rng.choice(_WORDS)}-{rng.randint(1, 9999)}.html">{_sentence(rng)[:70]}</a>'
        f'<p class="teaser">{_sentence(rng)}</p></li>' for _ in range(n))


def _state_script(rng: random.Random, size: int) -> str:
    items, blob = [], ""
    while len(blob) < size:
        items.append({"id": rng.randint(1, 10**9), "slug": f"{rng.choice(_WORDS)}-{rng.randint(1, 9999)}",
                      "title": _sentence(rng), "teaser": _sentence(rng), "score": rng.random()})
        if len(items) % 20 == 0:
            blob = json.dumps({"page": {"related": items}})
    return f"<script>window.__INITIAL_STATE__ = {blob};</script>"


@lru_cache(maxsize=None)
def _seed(name: str) -> str:
    return (SEEDS / name).read_text()


def seed_names() -> list[str]:
    return sorted(p.name for p in SEEDS.glob("*.html"))


def make_page(index: int, size: int, words: int | None = None) -> tuple[str, str]:
    """A page of about `size` bytes; returns (title, html). Same index and size, same page."""
    rng = random.Random(f"page-{index}-{size}")
    seed = _seed(seed_names()[index % len(seed_names())])
    slug = f"bench-{index}"
    title = _sentence(rng)[:80].rstrip(".").replace(",", "")
    words = words or rng.randint(900, 3500)
    body = _body(rng, words, slug)
    page = re.sub(r'(<div class="post-body" itemprop="articleBody">).*?(</div>\s*<footer class="post-footer">)',
                  lambda m: m.group(1) + "\n" + body + "\n" + m.group(2), seed, count=1, flags=re.S)
    page = re.sub(r"<h1 itemprop=\"headline\">.*?</h1>", f'<h1 itemprop="headline">{html.escape(title)}</h1>',
                  page, count=1, flags=re.S)
    page = re.sub(r"<title>.*?</title>", f"<title>{html.escape(title)} | bench site</title>", page, count=1)
    # grow the clutter around the article until the page has the size asked for
    missing = size - len(page.encode())
    if missing > 0:
        comment_bytes = int(missing * 0.45)
        related_bytes = int(missing * 0.15)
        comments = _comments(rng, max(1, comment_bytes // 520), 1000)
        page = page.replace('<ol class="comment-list">', '<ol class="comment-list">\n' + comments, 1)
        related = _related(rng, max(1, related_bytes // 190))
        page = page.replace('<h3 class="widget-title">Related articles</h3>\n<ul>',
                            '<h3 class="widget-title">Related articles</h3>\n<ul>\n' + related, 1)
        still = size - len(page.encode())
        if still > 200:
            page = page.replace("</body>", _state_script(rng, still - 60) + "\n</body>", 1)
    return title, page


def page_sizes(count: int, low: int = 50_000, high: int = 500_000, seed: int = 7) -> list[int]:
    """Sizes spread over [low, high], skewed small like the web (log-uniform)."""
    rng = random.Random(seed)
    import math
    return [int(math.exp(rng.uniform(math.log(low), math.log(high)))) for _ in range(count)]


def make_pages(count: int, seed: int = 7) -> list[tuple[str, str]]:
    return [make_page(i, s) for i, s in enumerate(page_sizes(count, seed=seed))]


def article_html(rng: random.Random, words: int) -> str:
    """Cleaned-looking reading HTML (what `contents.html` holds) of about `words` words."""
    return _body(rng, words, f"c{rng.randint(1, 10**6)}")


if __name__ == "__main__":
    import sys

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    for (title, page), size in zip(make_pages(n), page_sizes(n)):
        print(f"{len(page.encode()):>8} bytes (asked {size})  {title}")
