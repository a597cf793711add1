"""A text that may be only the article's start: a teaser behind a paywall, or a body much
shorter than the feed's summary, is ready but says so (reader/clean/partial.py). The pages
are served on 127.0.0.1 and cleaned through the real fetch, claim, cleaner and store; the
reader view and the card show it, `reader clean --json` prints it, the browser's page
replaces such a text, and a reclean computes it for a text cleaned before it was kept."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from reader.core import running

from .. import commands
from ..helpers import article_html, serve_feed, subscribe_url, wait_for

TEASER = ("<p>The minister said on Tuesday that the plan would go ahead whatever the cost, and that the"
          " committee had been told so in a letter sent the week before.</p>"
          "<p>Critics of the plan were quick to answer, saying that the letter had not been shared with"
          " them and that the costs named in it were a guess at best.</p>")
NAV = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(12))


def page(title: str, article: str, head: str = "", after: str = "") -> str:
    """A news page: navigation, the article, what stands after it (a paywall, a newsletter box)."""
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>{title}</title>{head}</head><body>
<header><nav><ul>{NAV}</ul></nav></header>
<main><article><h1>{title}</h1>{article}</article>{after}</main>
<footer><p>Copyright footer text that should not be extracted.</p></footer></body></html>"""


def full_text(paragraphs: int = 16) -> str:
    """An article of some 500 words."""
    return "".join(
        f"<p>Paragraph {i} of the report goes on about the plan, the letter and the committee, with"
        f" enough ordinary words in it to read as prose, clauses, commas and a full stop.</p>"
        for i in range(paragraphs))


LOCKED = ('<script type="application/ld+json">{"@context": "https://schema.org", "@type": "NewsArticle",'
          ' "headline": "x", "isAccessibleForFree": "False", "hasPart": {"@type": "WebPageElement",'
          ' "isAccessibleForFree": "False", "cssSelector": ".paywalled"}}</script>')

MARKED = {
    "json-ld": (LOCKED, "", "the site marks it for subscribers"),
    "microdata": ('<meta itemprop="isAccessibleForFree" content="false">', "", "the site marks it for subscribers"),
    "content tier": ('<meta property="article:content_tier" content="locked">', "", "the site marks it for subscribers"),
    "paywall box": ("", '<div class="article-paywall"><p>Our reporting costs money.</p><a href="/plans">Plans</a></div>',
                    "the page has a paywall"),
    "piano modal": ("", '<div class="tp-modal"><p>Our reporting costs money.</p></div>', "the page has a paywall"),
    "teaser words": ("", '<div class="offer"><p>Subscribe to continue reading.</p><a href="/plans">See the plans</a></div>',
                     "the page says “Subscribe to continue reading”"),
    "teaser words in German": ("", '<div class="offer"><p>Bereits Abonnent? Hier anmelden</p></div>',
                               "the page says “Bereits Abonnent?”"),
}


async def clean_served(client, pages, slug: str, html: str) -> tuple[int, dict]:
    url = pages.add(f"/{slug}.html", html)
    saved = await client.post("/api/articles", json={"url": url})
    assert saved.status_code in (200, 201), saved.text
    content = await client.get(f"/api/articles/{saved.json()['id']}/content")
    assert content.status_code == 200, content.text
    return saved.json()["id"], content.json()


@pytest.mark.parametrize("kind", list(MARKED))
async def test_a_teaser_the_page_marks_is_ready_and_may_be_only_the_start(quiet, pages, kind):
    head, after, reason = MARKED[kind]
    article_id, content = await clean_served(quiet, pages, "teaser", page("The plan", TEASER, head, after))
    assert "The minister said on Tuesday" in content["text"]
    assert content["partial"] == reason
    assert (await quiet.get(f"/api/articles/{article_id}")).json()["partial"] == reason


async def test_a_page_without_marks_is_whole(quiet, pages):
    _, content = await clean_served(quiet, pages, "short", page("The plan", TEASER))
    assert content["partial"] is None


async def test_a_full_article_ending_in_a_newsletter_box_is_whole(quiet, pages):
    """The box says "Subscribe", "Already a subscriber?" and sits in a "premium-content"
    promotion: on a body of 500 words it is the site's furniture, not a wall."""
    box = ('<div class="newsletter premium-content"><h3>Get our newsletter</h3><p>Subscribe to our newsletter'
           ' for the week\'s best stories. Already a subscriber? Sign in to read your issues.</p></div>')
    _, content = await clean_served(quiet, pages, "full", page("The plan", full_text(), after=box))
    assert content["words"] > 400 and content["partial"] is None


async def test_a_whole_article_the_site_marks_for_subscribers_is_whole(quiet, pages):
    """Sites that mark their subscribers' articles serve them whole to search engines, and so
    to reader's fetch (the New York Times, The Intercept among the dev pages): a long body
    is the article. So is a short one that holds the part the site marks as locked."""
    _, long = await clean_served(quiet, pages, "long", page("The plan", full_text(), LOCKED))
    assert long["partial"] is None
    carried = f'<div class="paywalled">{TEASER}{TEASER.replace("Tuesday", "Wednesday")}</div>'
    _, short = await clean_served(quiet, pages, "carried", page("The plan", carried, LOCKED))
    assert short["words"] < 400 and short["partial"] is None


async def test_a_page_the_site_marks_as_free_has_no_paywall(quiet, pages):
    free = '<script type="application/ld+json">{"@type": "Article", "isAccessibleForFree": true}</script>'
    box = '<div class="paywall-box"><p>Our reporting costs money.</p></div>'
    _, content = await clean_served(quiet, pages, "free", page("The plan", TEASER, free, box))
    assert content["partial"] is None


async def test_a_hidden_meter_box_is_not_a_wall(quiet, pages):
    """A metered site carries its "no free articles left" box on every page, hidden until the
    meter runs out, which never happens to reader's fetch."""
    box = ('<div class="paywall hidden"><p>You have no free articles left this month. To continue reading,'
           ' sign in.</p></div>')
    _, content = await clean_served(quiet, pages, "meter", page("The plan", TEASER, after=box))
    assert content["partial"] is None


async def test_a_teaser_shorter_than_the_feed_summary_is_marked_by_the_worker(client, pages):
    """The feed gives the whole article (200 words) in its summary; the page has only its
    first two paragraphs and no mark of its own. Queued and cleaned by the worker, it is
    ready, and the card, the reader view and the API say it may be only the start."""
    summary = " ".join(f"Sentence {i} of the whole article as the feed gives it, word for word." for i in range(16))
    summary_html = f"&lt;p&gt;{summary}&lt;/p&gt;"
    feed = serve_feed(pages, ["teaser"], summaries={"teaser": summary_html})
    pages.add("/teaser.html", page("Item teaser", TEASER))
    _, (article_id,) = await subscribe_url(client, pages, feed, ["teaser"], statuses=(201,))
    queued = await client.post(f"/api/articles/{article_id}/queue", json={})
    assert queued.status_code == 200, queued.text

    async def ready() -> bool:
        return (await client.get(f"/api/articles/{article_id}")).json()["state"] == "ready"

    await wait_for(ready)
    item = (await client.get(f"/api/articles/{article_id}")).json()
    assert item["partial"] == "the text is shorter than the feed's summary"
    headlines = (await client.get("/")).text
    card = headlines[headlines.index(f'id="card-{article_id}"'):]
    assert "ready · may be only the start" in card[:card.index("</article>")]
    view = (await client.get(f"/articles/{article_id}")).text
    assert ("This may be only the start: the text is shorter than the feed&#39;s summary." in view
            or "This may be only the start: the text is shorter than the feed's summary." in view)
    notice = view[view.index('class="notice partial"'):]
    notice = notice[:notice.index("</p>")]
    assert f'href="{pages.url("/teaser.html")}"' in notice and "Open the original" in notice
    assert 'href="/feeds#saving"' in notice and "Save it from your browser" in notice


async def test_a_whole_article_shows_no_notice(client, pages):
    feed = serve_feed(pages, ["whole"])
    _, (article_id,) = await subscribe_url(client, pages, feed, ["whole"], statuses=(201,))
    assert (await client.get(f"/api/articles/{article_id}/content")).json()["partial"] is None
    view = (await client.get(f"/articles/{article_id}")).text
    assert "may be only the start" not in view
    assert "may be only the start" not in (await client.get("/")).text


async def test_the_browser_page_replaces_a_text_that_may_be_only_the_start(settings, pages):
    """The second chance: the person opens the original past the paywall and presses Save to
    reader; that page's whole text replaces the teaser, once, and the mark goes."""
    link = pages.add("/locked.html", page("The plan", TEASER, LOCKED))
    async with running(settings, worker=False) as reader:
        saved, _ = await reader.save(link)
        first = await reader.open(saved.id)
        assert first.partial == "the site marks it for subscribers"
        article, content = await reader.finish_with_page(link, article_html("The plan", "past-the-wall").encode())
        assert article.id == saved.id and article.partial is None
        assert content.partial is None and "past-the-wall" in content.text
        # a whole text is not replaced by another page
        _, again = await reader.finish_with_page(link, article_html("The plan", "second-page").encode())
        assert "past-the-wall" in again.text


async def test_a_reclean_computes_it_for_a_text_cleaned_before(settings, pages):
    link = pages.add("/old.html", page("The plan", TEASER, after='<div class="paywall"><p>Plans.</p></div>'))
    async with running(settings, worker=False) as reader:
        saved, _ = await reader.save(link)
        assert (await reader.open(saved.id)).partial == "the page has a paywall"
    with sqlite3.connect(settings.db) as db:  # as a database migrated to v19 holds it: nothing known
        db.execute("UPDATE contents SET partial = NULL")
    async with running(settings, worker=False) as reader:
        assert (await reader.article(saved.id)).partial is None
        assert await reader.reclean(saved.id) == ("cached", None)
        assert (await reader.article(saved.id)).partial == "the page has a paywall"
    assert pages.hits["/old.html"] == 1


def test_reader_clean_json_prints_it(tmp_path: Path):
    teaser = tmp_path / "teaser.html"
    teaser.write_text(page("The plan", TEASER, LOCKED), encoding="utf-8")
    whole = tmp_path / "whole.html"
    whole.write_text(page("The plan", full_text()), encoding="utf-8")
    done = commands.run(["clean", "--json", str(teaser), str(whole)])
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [line["partial"] for line in lines] == ["the site marks it for subscribers", None]
