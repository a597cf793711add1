"""The direct lane's rules in the core, as every interface gets them (reader/core/reading.py):
a failed article is not tried again by opening it, only a person's open marks it read,
a link from another site starts nothing, and "save and queue" queues only what needs it."""

from __future__ import annotations

from reader.core import running
from reader.errors import ExtractionFailed, Invalid

import pytest


async def test_opening_a_failed_article_shows_why_and_asking_for_its_text_tries_again(settings, pages):
    pages.add("/gone.html", "gone", status=410)
    async with running(settings, worker=False) as reader:
        saved, _ = await reader.save(pages.url("/gone.html"))
        with pytest.raises(ExtractionFailed):
            await reader.open(saved.id)
        assert pages.hits["/gone.html"] == 1
        opened = await reader.open_page(saved.id)
        assert opened.content is None and opened.error is not None and "410" in opened.error
        body = await reader.reading_state(saved.id, wait=5.0)
        assert body.error == opened.error and not body.pending
        assert pages.hits["/gone.html"] == 1  # opening is no retry: a retry is a tap
        with pytest.raises(ExtractionFailed):
            await reader.open(saved.id)  # the text itself asked for: the work again
        assert pages.hits["/gone.html"] == 2


async def test_only_the_person_opening_an_article_marks_it_read(settings, pages):
    url = pages.add_article("story", title="Story")
    async with running(settings, worker=False) as reader:
        saved, _ = await reader.save(url)
        held = await reader.open_page(saved.id, by="another site")
        assert held.pending and held.article.read_at is None and not held.unchanged
        assert pages.hits["/story.html"] == 0  # another site's link starts nothing
        copy = await reader.open_page(saved.id, by="offline copy")
        assert copy.content is not None and copy.article.read_at is None
        assert await reader.kept_version(saved.id, by="offline copy") is not None
        assert await reader.kept_version(saved.id, by="person") is None  # opening it would mark it read
        opened = await reader.open_page(saved.id, by="person")
        assert opened.article.read_at is not None and not opened.unchanged
        again = await reader.open_page(saved.id, by="person")
        assert again.unchanged and again.article.read_at == opened.article.read_at
        assert await reader.kept_version(saved.id) is not None
        assert pages.hits["/story.html"] == 1


async def test_save_and_queue_queues_only_a_new_or_failed_article(settings, pages):
    url = pages.add_article("later", title="Later")
    async with running(settings, worker=False) as reader:
        first = await reader.save_and_queue(url)
        assert first.created and first.queued and first.article.state == "queued"
        await reader.open(first.article.id)
        second = await reader.save_and_queue(url)
        assert not second.created and not second.queued and second.article.state == "ready"


async def test_a_search_refusal_names_the_parameter_the_interface_gave_it(settings):
    async with running(settings, worker=False) as reader:
        for param, start in ((None, "nothing to search for"), ("q", "q: nothing to search for")):
            with pytest.raises(Invalid) as refused:
                await reader.search("   ", param=param)
            assert str(refused.value).startswith(start)
