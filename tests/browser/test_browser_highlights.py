"""Highlights in a real Chromium against a real uvicorn, desktop and phone: text selected
with the mouse and highlighted with the h key, text selected on a touch screen and
highlighted with the button by the selection, a note added in the editor, all still there
after a reload (painted by the server); one made offline kept in the outbox and sent once
the device is back; the axe sweep of an article with highlights and of the highlights
page, light and dark. No console errors, no CSP violations.

Same Chromium and launch flags as the other browser tests (tests/browser/browsing.py)."""

from __future__ import annotations

import re

import httpx
import pytest

from ..helpers import wait_for
from .browsing import TIMEOUT_MS, Watch
from .test_browser_layout import DESKTOP, PHONE, axe_findings, with_axe

pytestmark = pytest.mark.browser


@pytest.fixture
def settings(settings):
    return settings.replace(fetch_timeout=60.0, claim_ttl=30.0, open_wait=5.0, serve_workers=0)


def article_page() -> str:
    body = "\n".join(
        f"<p>Paragraph {i} of the essay on printing: before the press, every copy of a book was made by"
        f" hand, and <em>each copy</em> differed a little from the one it was made from.</p>" for i in range(12))
    return ("<!doctype html><html><head><meta charset='utf-8'><title>On printing</title></head><body>"
            f"<main><article><h1>On printing</h1>{body}</article></main></body></html>")


def ready_article(live_server, pages) -> int:
    link = pages.add("/printing.html", article_page())
    with httpx.Client(base_url=live_server.url, timeout=60) as api:
        article_id = int(api.post("/api/articles", json={"url": link}).json()["id"])
        assert api.get(f"/api/articles/{article_id}/content").status_code == 200
    return article_id


async def select_words(page, paragraph: int, words: str) -> None:
    """Select `words` inside paragraph number `paragraph` of the article body, as a
    person's selection (a Range on the document's selection)."""
    await page.evaluate("""([n, words]) => {
        const p = document.querySelectorAll('.reading .body p')[n];
        const walker = document.createTreeWalker(p, NodeFilter.SHOW_TEXT);
        let node;
        while ((node = walker.nextNode())) {
            const at = node.data.indexOf(words);
            if (at >= 0) {
                const range = document.createRange();
                range.setStart(node, at);
                range.setEnd(node, at + words.length);
                const s = getSelection();
                s.removeAllRanges();
                s.addRange(range);
                return;
            }
        }
        throw new Error('words not found: ' + words);
    }""", [paragraph, words])


async def drag_select(page, paragraph: int, words: str) -> None:
    """Select `words` with the mouse: pressed at the first letter, released after the last."""
    box = await page.evaluate("""([n, words]) => {
        const p = document.querySelectorAll('.reading .body p')[n];
        p.scrollIntoView({block: 'center'});
        const node = p.firstChild;
        const at = node.data.indexOf(words);
        const range = document.createRange();
        range.setStart(node, at); range.setEnd(node, at + 1);
        const first = range.getBoundingClientRect();
        range.setStart(node, at + words.length - 1); range.setEnd(node, at + words.length);
        const last = range.getBoundingClientRect();
        return {x0: first.left + 1, y0: first.top + first.height / 2, x1: last.right - 1, y1: last.top + last.height / 2};
    }""", [paragraph, words])
    await page.mouse.move(box["x0"], box["y0"])
    await page.mouse.down()
    await page.mouse.move(box["x1"], box["y1"], steps=8)
    await page.mouse.up()


def marked(page):
    return page.locator(".reading .body mark.hl")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
async def test_select_highlight_add_a_note_and_reload(chromium, live_server, pages, viewport):
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    article_id = ready_article(live_server, pages)
    phone = viewport == PHONE
    context = await chromium.new_context(viewport=viewport, color_scheme="light", is_mobile=phone, has_touch=phone)
    context.set_default_timeout(TIMEOUT_MS)
    page = await context.new_page()
    watch = await Watch.start(page, live_server.url)
    await page.goto(f"{live_server.url}/articles/{article_id}")
    await expect(page.locator(".reading .body p").first).to_be_visible()

    if phone:
        # a touch screen: the selection, then the button shown by it
        await select_words(page, 2, "every copy of a book was made by hand")
        button = page.get_by_role("button", name=re.compile("^Highlight"))
        await expect(button).to_be_visible()
        await button.tap()
        quote = "every copy of a book was made by hand"
    else:
        await drag_select(page, 2, "every copy of a book")
        assert (await page.evaluate("getSelection().toString()")).strip() == "every copy of a book"
        await page.keyboard.press("h")
        quote = "every copy of a book"
    mark = marked(page).first
    await expect(mark).to_have_attribute("data-hl", re.compile(r"^\d+$"))  # the server's id: it was stored
    assert await marked(page).all_inner_texts() == [quote]
    await expect(page.locator("#highlight-list li")).to_have_count(1)

    # a highlight across an element boundary: "and each copy" ends inside <em>
    await select_words(page, 4, "hand, and ")
    await page.evaluate("""() => {
        const p = document.querySelectorAll('.reading .body p')[4];
        const r = getSelection().getRangeAt(0);
        r.setEnd(p.querySelector('em').firstChild, 4);
    }""")
    await page.keyboard.press("h")
    await expect(page.locator("#highlight-list li")).to_have_count(2)
    await expect(marked(page)).to_have_count(3)

    # the editor: a note, then save
    await mark.click()
    dialog = page.get_by_role("dialog", name="Highlight")
    await expect(dialog).to_be_visible()
    await dialog.get_by_label("Note").fill("Scribes: <b>slow</b>, and wrong now and then.")
    await dialog.get_by_label("Tags, separated by commas").fill("history, books")
    await dialog.get_by_text("green").click()
    await dialog.get_by_role("button", name="Save").click()
    await expect(dialog).to_be_hidden()
    await expect(page.locator("#highlight-status")).to_have_text("Saved.")

    await page.reload()
    await expect(marked(page)).to_have_count(3)
    await expect(marked(page).first).to_have_class(re.compile(r"\bhl-green\b"))
    notes = page.locator("#highlight-list .highlight-note")
    await expect(notes.first).to_have_text("Scribes: <b>slow</b>, and wrong now and then.")  # text, not markup
    await expect(page.locator("#highlight-list .highlight-tags").first).to_have_text("#history, #books")
    assert await page.locator("#highlight-list b").count() == 0

    # a link to it opens the article at that passage
    hl = await marked(page).first.get_attribute("data-hl")
    await page.goto(f"{live_server.url}/highlights")
    await page.locator(f'a[href="/articles/{article_id}#hl-{hl}"]').click()
    await expect(page.locator(f"#hl-{hl}")).to_be_in_viewport()

    # deleted from the editor
    await page.locator(f"#hl-{hl}").click()
    await dialog.get_by_role("button", name="Delete highlight").click()
    await expect(page.locator("#highlight-status")).to_have_text("Highlight deleted.")
    await page.reload()
    await expect(page.locator("#highlight-list li")).to_have_count(1)
    await watch.collect_csp()
    assert watch.problems == []
    await context.close()


async def highlighted_offline(chromium, live_server, pages):
    """A ready article open on a desktop that then goes offline, and a passage of it
    highlighted there with h: (article id, context, page)."""
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    article_id = ready_article(live_server, pages)
    context = await chromium.new_context(viewport=DESKTOP, color_scheme="light")
    context.set_default_timeout(TIMEOUT_MS)
    page = await context.new_page()
    await page.goto(f"{live_server.url}/articles/{article_id}")
    await expect(page.locator(".reading .body p").first).to_be_visible()
    await context.set_offline(True)
    await select_words(page, 6, "differed a little from the one")
    await page.keyboard.press("h")
    return article_id, context, page


async def test_a_highlight_made_offline_is_sent_when_back(chromium, live_server, pages):
    from playwright.async_api import expect

    article_id, context, page = await highlighted_offline(chromium, live_server, pages)
    await expect(marked(page)).to_have_count(1)  # shown at once
    await expect(page.locator("#highlight-status")).to_contain_text("Highlighted on this device")
    with httpx.Client(base_url=live_server.url) as api:
        assert api.get(f"/api/articles/{article_id}/highlights").json()["items"] == []
        await context.set_offline(False)  # the outbox is sent when the device is back
        await wait_for(lambda: len(api.get(f"/api/articles/{article_id}/highlights").json()["items"]) == 1,
                       TIMEOUT_MS / 1000)
        [made] = api.get(f"/api/articles/{article_id}/highlights").json()["items"]
    assert made["quote"] == "differed a little from the one" and not made["detached"]
    await page.reload()
    await expect(page.locator(f'.reading .body mark.hl[data-hl="{made["id"]}"]')).to_have_count(1)
    await context.close()


async def test_a_highlight_made_offline_can_be_edited_and_deleted_before_it_is_sent(chromium, live_server, pages):
    """Made offline it has no id yet; a note and a color given meanwhile go after it, and a
    second one made and deleted offline is gone once the outbox is sent (made, then deleted,
    in order)."""
    from playwright.async_api import expect

    article_id, context, page = await highlighted_offline(chromium, live_server, pages)
    await expect(page.locator("#highlight-status")).to_contain_text("Highlighted on this device")
    await marked(page).first.click()
    dialog = page.get_by_role("dialog", name="Highlight")
    await expect(dialog).to_be_visible()
    await dialog.get_by_label("Note").fill("Copies drift.")
    await dialog.get_by_text("green").click()
    await dialog.get_by_role("button", name="Save").click()
    await expect(page.locator("#highlight-status")).to_contain_text("Saved on this device")
    await expect(page.locator("#highlight-list .highlight-note")).to_have_text("Copies drift.")
    await select_words(page, 8, "every copy of a book")
    await page.keyboard.press("h")
    await expect(marked(page)).to_have_count(2)
    await page.locator("#highlight-list li").nth(1).get_by_role("button", name=re.compile("Edit")).click()
    await dialog.get_by_role("button", name="Delete").click()
    await expect(page.locator("#highlight-status")).to_contain_text("Deleted on this device")
    await expect(marked(page)).to_have_count(1)
    with httpx.Client(base_url=live_server.url) as api:
        assert api.get(f"/api/articles/{article_id}/highlights").json()["items"] == []
        await context.set_offline(False)

        def sent() -> bool:  # the first made and edited, the second made and deleted: in order
            items = api.get(f"/api/articles/{article_id}/highlights").json()["items"]
            return len(items) == 1 and items[0]["note"] == "Copies drift."
        await wait_for(sent, TIMEOUT_MS / 1000)
        await wait_for(lambda: page.evaluate("() => new Promise(r => { const q = indexedDB.open('reader');"
                                             " q.onsuccess = () => { const t = q.result.transaction('outbox');"
                                             " t.objectStore('outbox').count().onsuccess = e => r(e.target.result"
                                             " === 0); }; })"), TIMEOUT_MS / 1000)
        [made] = api.get(f"/api/articles/{article_id}/highlights").json()["items"]
    assert (made["quote"], made["color"]) == ("differed a little from the one", "green")
    await context.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
async def test_axe_finds_nothing_on_an_article_with_highlights_or_the_highlights_page(chromium, live_server, pages,
                                                                                     viewport):
    from playwright.async_api import expect

    article_id = ready_article(live_server, pages)
    with httpx.Client(base_url=live_server.url) as api:
        for i, (quote, color) in enumerate((("before the press", "yellow"), ("made by hand", "green"),
                                            ("each copy", "blue"), ("differed a little", "pink"))):
            made = api.post(f"/api/articles/{article_id}/highlights",
                            json={"quote": quote, "prefix": f"Paragraph {i} of the essay on printing: "[-32:]
                                  if i == 0 else "", "color": color, "note": f"note {i}", "tags": ["t"]})
            if made.status_code == 422:  # repeated in every paragraph: say which by offsets
                text = api.get(f"/api/articles/{article_id}/content").json()["text"]
                at = text.index(quote, text.index(f"Paragraph {i + 1} "))
                made = api.post(f"/api/articles/{article_id}/highlights",
                                json={"start": at, "end": at + len(quote), "color": color, "note": f"note {i}"})
            assert made.status_code == 200, made.text
    context = await chromium.new_context(viewport=viewport, color_scheme="light", is_mobile=viewport == PHONE,
                                         has_touch=viewport == PHONE)
    await with_axe(context)
    page = await context.new_page()
    findings = []
    for name, path in (("article", f"/articles/{article_id}"), ("highlights", "/highlights"),
                       ("filtered", "/highlights?tag=t&q=note")):
        await page.goto(live_server.url + path)
        await expect(page.locator("main")).to_be_visible()
        if name == "article":
            await expect(marked(page)).to_have_count(4)
        for scheme in ("light", "dark"):
            await page.emulate_media(color_scheme=scheme)
            findings += [f"{scheme} {name}: {f}" for f in await axe_findings(
                page, only=["color-contrast", "link-in-text-block"] if scheme == "dark" else None)]
        if name == "article":  # the editor open
            await page.emulate_media(color_scheme="light")
            await marked(page).first.click()
            await expect(page.get_by_role("dialog", name="Highlight")).to_be_visible()
            for scheme in ("light", "dark"):
                await page.emulate_media(color_scheme=scheme)
                findings += [f"{scheme} editor: {f}" for f in await axe_findings(page)]
        await page.emulate_media(color_scheme="light")
    await context.close()
    assert findings == []
