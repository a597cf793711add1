"""The cleaned article keeps the page's structure: captions, inline code, numbered lists,
code blocks, tables, quotes and heading levels, and its plain text keeps paragraph
breaks. Each page is served on 127.0.0.1 and opened through the API, so it goes through
the real fetch, claim, process pool, cleaner and sanitizer; `reader clean` is checked to
give the same result from a saved file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from reader.clean.pipeline import clean_page

from .. import commands
from ..pictures import png

PROSE = "".join(
    f"<p>Paragraph {i} of the piece carries enough ordinary words to read as prose to an extractor, "
    f"with clauses, commas and a full stop at its end.</p>"
    for i in range(6)
)


def page(title: str, inner: str) -> str:
    nav = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(10))
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>{title}</title></head><body>
<header><nav><ul>{nav}</ul></nav></header>
<main><article><h1>{title}</h1>{PROSE}{inner}{PROSE}</article></main>
<footer><p>Copyright footer text that should not be extracted.</p></footer></body></html>"""


async def open_article(client, pages, slug: str, html: str) -> dict:
    url = pages.add(f"/{slug}.html", page(f"A page about {slug}", html))
    saved = await client.post("/api/articles", json={"url": url})
    assert saved.status_code in (200, 201), saved.text
    content = await client.get(f"/api/articles/{saved.json()['id']}/content")
    assert content.status_code == 200, content.text
    return content.json()


async def test_a_figure_keeps_its_caption(client, pages):
    pages.add("/chart.png", png(60), headers={"Content-Type": "image/png"})
    article = await open_article(client, pages, "figure", (
        '<figure><img src="/chart.png" alt="A chart"><figcaption>The chart of every unit we measured '
        "last year.</figcaption></figure>"))
    assert "<figure>" in article["html"]
    assert "<figcaption>The chart of every unit we measured last year.</figcaption>" in article["html"]
    # the image is kept, its address resolved against the page's, and stored with the article
    assert f'src="/articles/{article["id"]}/images/' in article["html"]
    assert pages.hits["/chart.png"] == 1


async def test_inline_code_stays_inside_its_sentence_also_in_a_quote(client, pages):
    article = await open_article(client, pages, "code", (
        "<p>Call <code>frobnicate()</code> before you start, and the sentence goes on as one.</p>"
        "<blockquote><p>Run <code>git rebase main</code> often, said the wise person in the quote.</p></blockquote>"))
    html = article["html"]
    assert "<p>Call <code>frobnicate()</code> before you start, and the sentence goes on as one.</p>" in html
    assert "<blockquote><p>Run <code>git rebase main</code> often, said the wise person in the quote.</p></blockquote>" in html
    assert "Call frobnicate() before you start" in article["text"]


async def test_a_numbered_list_keeps_its_numbers_and_start(client, pages):
    article = await open_article(client, pages, "steps", (
        '<ol start="3"><li>Open the lid of the box on the bench.</li><li>Look inside it carefully with a lamp.</li>'
        "<li>Close the lid again when you are done.</li></ol>"))
    assert '<ol start="3"><li>Open the lid of the box on the bench.</li>' in article["html"]
    assert "<ul>" not in article["html"]


async def test_a_code_block_keeps_its_line_breaks_and_indentation(client, pages):
    code = "def total(units):\n    # add them all up\n    return sum(u.value for u in units)\n"
    article = await open_article(client, pages, "block", f"<pre><code>{code}</code></pre>")
    assert f"<pre><code>{code}</code></pre>" in article["html"]


async def test_a_table_keeps_its_header_cells(client, pages):
    article = await open_article(client, pages, "table", (
        "<table><thead><tr><th>Planet</th><th>Moons</th></tr></thead><tbody>"
        "<tr><td>Earth</td><td>1</td></tr><tr><td>Mars</td><td>2</td></tr><tr><td>Jupiter</td><td>95</td></tr>"
        "</tbody></table>"))
    html = article["html"]
    assert "<th>Planet</th>" in html and "<th>Moons</th>" in html
    assert "<td>Jupiter</td>" in html
    assert html.index("<th>Planet</th>") < html.index("<td>Earth</td>")


async def test_headings_start_below_the_title(client, pages):
    article = await open_article(client, pages, "headings", (
        "<h2>First part</h2><p>Words in the first part of the article, enough of them to be prose here.</p>"
        "<h3>A detail</h3><p>Words about the detail of the first part, also enough of them for prose.</p>"))
    html = article["html"]
    assert "<h1" not in html  # the reader view prints the title as the page's h1
    assert "A page about headings" not in article["text"]
    assert "<h2>First part</h2>" in html and "<h3>A detail</h3>" in html


def test_headings_of_a_page_that_starts_deep_are_lifted_to_h2():
    body = page("Deep headings", "<h4>Deep part</h4><p>Words in the deep part of the article, enough of them.</p>"
                                 "<h5>Deeper</h5><p>More words in the deeper part of the article, enough too.</p>")
    html = clean_page(body.encode(), "http://example.com/deep", None)["html"]
    assert "<h2>Deep part</h2>" in html and "<h3>Deeper</h3>" in html


async def test_plain_text_keeps_paragraph_breaks(client, pages):
    article = await open_article(client, pages, "breaks", "<p>We counted the units.</p><p>The count was right.</p>")
    assert "We counted the units.\n\nThe count was right." in article["text"]
    assert "units.The" not in article["text"]


def run_clean(*args: str) -> subprocess.CompletedProcess:
    done = commands.run(["clean", *args])
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def test_reader_clean_gives_the_workers_result_and_goes_on_past_a_bad_file(tmp_path: Path):
    good = tmp_path / "good.html"
    good.write_text(page("A saved page", "<ol start=\"7\"><li>Seventh step of the saved list.</li>"
                                         "<li>Eighth step of the saved list.</li></ol>"), encoding="utf-8")
    empty = tmp_path / "empty.html"
    empty.write_bytes(b"")
    missing = tmp_path / "missing.html"
    done = run_clean("--json", "--url", "http://example.com/saved", str(empty), str(missing), str(good))
    assert done.returncode == 1  # some files failed
    assert "Traceback" not in done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["file"] for line in lines] == [str(empty), str(missing), str(good)]
    assert lines[0]["error"] and lines[1]["error"]
    expected = clean_page(good.read_bytes(), "http://example.com/saved", None)
    assert set(lines[2]) == {"file", "title", "author", "published", "site", "lead", "text", "figures", "html", "words"}
    assert {k: lines[2][k] for k in expected} == expected
    assert '<ol start="7">' in lines[2]["html"] and lines[2]["title"] == "A saved page"

    alone = run_clean(str(good))
    assert alone.returncode == 0 and "Seventh step of the saved list." in alone.stdout


@pytest.mark.parametrize("body", [b"\x00\xff\xfe" * 50, b"<html><body></body></html>", b"plain words, no markup"])
def test_pages_without_an_article_fail_with_a_reason(body: bytes):
    from reader.clean.pipeline import ExtractError

    try:
        result = clean_page(body, "http://example.com/x", None)
    except ExtractError as exc:
        assert str(exc)
    else:
        assert result["words"] > 0  # a page of bare words is an article of bare words


def test_reader_clean_json_is_one_line_per_file_whatever_the_text_holds(tmp_path: Path):
    odd = tmp_path / "odd.html"
    odd.write_text(page("Odd breaks", "<p>A line\u2028separator and a next\u0085line inside one paragraph of text.</p>"),
                   encoding="utf-8")
    done = run_clean("--json", str(odd), str(odd))
    assert done.returncode == 0
    lines = done.stdout.splitlines()  # splits on U+2028 and U+0085 too, as score.py does
    assert len(lines) == 2 and all(json.loads(line)["file"] == str(odd) for line in lines)
    assert "separator and a next" in json.loads(lines[0])["text"]


def test_mathml_keeps_its_text_inside_the_sentence():
    # The sanitizer drops foreign (MathML) markup whole; the formula's words must survive.
    body = page("Roots", '<p>When <math><mi>a</mi><mo>≠</mo><mn>0</mn></math> there are two solutions '
                         "to the equation, and the rest of this sentence is ordinary prose.</p>")
    text = clean_page(body.encode(), "http://example.com/math", None)["text"]
    assert "When a ≠ 0 there are two solutions" in " ".join(text.split())

