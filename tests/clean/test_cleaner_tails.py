"""Bylines, date stamps and calls to follow or share at the edges of the body (tails.py):
small pages of our own, cleaned with the workers' own clean_page. Each removal has its
near miss that must stay: the same words in the middle of the story, a sentence that only
starts like a byline, a page that has no running text for them to frame."""

from __future__ import annotations

import lxml.html

from reader.clean import clean_page
from reader.clean.tails import find_tails

from ..cleanerpages import PROSE


def page(start: str = "", end: str = "", middle: str = "") -> bytes:
    """An article of eight paragraphs of prose with room before, between and after them."""
    first = "".join(f"<p>{p}</p>" for p in PROSE[:4])
    second = "".join(f"<p>{p}</p>" for p in PROSE[4:])
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>The harbour report</title></head>
<body><main><article><h1>The harbour report</h1>
<div class="body">{start}{first}{middle}{second}{end}</div></article></main>
<footer><p>Footer text of the site that should not be extracted.</p></footer></body></html>""".encode()


def text(body: bytes) -> str:
    result = clean_page(body, "http://example.com/harbour", None)
    assert all(p in result["text"] for p in PROSE)  # the story itself is whole
    return result["text"]


# The page's own marks

def test_a_block_the_page_marks_as_its_byline_is_dropped():
    byline = '<p class="byline">Jane Doe, harbour correspondent, reporting from the quay in Bremerhaven</p>'
    assert "Jane Doe" not in text(page(start=byline))


def test_a_byline_inside_a_small_marked_box_is_dropped():
    byline = ('<div class="articleAuthor"><p>Jane Doe, harbour correspondent, reporting from the quay in '
              "Bremerhaven</p></div>")
    assert "Jane Doe" not in text(page(start=byline))


def test_a_line_whose_text_is_an_itemprop_author_is_dropped():
    byline = '<p><span itemprop="author">Jane Doe, harbour correspondent in Bremerhaven</span></p>'
    assert "Jane Doe" not in text(page(start=byline))


def test_an_author_box_after_the_story_is_dropped():
    box = ('<div class="author-box"><p>Jane Doe has covered the harbour, the fishing fleet and the shipyards for '
           "the paper since 2010, and lives by the quay.</p></div>")
    assert "covered the harbour" not in text(page(end=box))


def test_a_follow_box_after_the_story_is_dropped():
    box = ('<div class="follow-us"><p>Our harbour desk is on Mastodon, Bluesky, Instagram and Facebook, and it '
           "posts every day</p></div>")
    assert "harbour desk is on" not in text(page(end=box))


def test_a_marked_box_must_be_small_the_articles_container_does_not_count():
    # a WordPress article carries its tags as classes: "tag-social-media" marks the whole
    # story, not a share prompt
    body = page(end="<p>Jane Doe has covered the harbour for years.</p>").replace(
        b'<div class="body">', b'<div class="body tag-social-media post-author-12">')
    assert "Jane Doe has covered the harbour" in text(body)


def test_a_link_to_an_authors_page_is_dropped():
    byline = '<p><a rel="author" href="/people/jane">Jane Doe and John Smith</a> in Bremerhaven</p>'
    assert "Jane Doe" not in text(page(start=byline))


def test_a_line_that_is_mostly_a_time_element_is_dropped():
    stamp = '<p><time datetime="2024-03-03T05:27">Sunday, March 3, 2024 at 5:27 in the morning</time> local time</p>'
    assert "March 3" not in text(page(start=stamp))


# Whole short lines known by how they open

def test_bylines_in_four_languages_are_dropped():
    for line, name in (("By Jane Doe and John Smith", "Jane Doe"), ("Von Cosima Künzel", "Cosima"),
                       ("Par Jean Dupont", "Dupont"), ("Por Agencia EFE", "EFE"),
                       ("By Jane Doe | Updated 5:27 am EST, March 3, 2024", "Jane Doe")):
        assert name not in text(page(start=f"<p>{line}</p>")), line


def test_date_stamps_are_dropped():
    for line in ("Updated 5:27 am EST, March 3, 2024", "Aktualisiert am 19.02.2020", "Stand: 28.04.2020 18:00 Uhr",
                 "Publicado el 03/05/2022 a las 22h03", "08.04.2015 12:46"):
        body = text(page(start=f"<p>{line}</p>"))
        assert line.split()[0] not in body, line


def test_calls_to_follow_or_share_after_the_story_are_dropped():
    for line in ("Follow us on Facebook and Twitter for more stories from the harbour.",
                 "Like this story? Share it with a friend!", "Follow Jane Doe on Twitter",
                 "Folgen Sie uns auf Instagram", "Suivez-nous sur Instagram et Facebook",
                 "Síguenos en Telegram, Instagram, Facebook y Twitter"):
        assert line not in text(page(end=f"<p>{line}</p>")), line


def test_a_posts_filing_line_after_the_story_is_dropped():
    for line in ("This entry was posted in Harbour, Tides and tagged boats, ferries, the old quay, winter storms. "
                 "Bookmark the permalink.",
                 "Filed under: Harbour news",
                 "Dieser Beitrag wurde unter Hafen, Gezeiten abgelegt und mit Boote, Fähren, Kai verschlagwortet. "
                 "Setze ein Lesezeichen auf den Permalink.",
                 "Der Beitrag wurde am Mittwoch, den 27. November 2019 um 15:21 Uhr veröffentlicht und wurde unter "
                 "Allgemein, Hafen, Veranstaltungen abgelegt. Du kannst die Kommentare zu diesem Eintrag durch den "
                 "RSS-2.0 Feed verfolgen.",
                 "Erstellt am Dienstag 6. Mai 2014 um 23:30 und abgelegt unter Hafen, Linux.",
                 "Cet article a été publié dans Port, Marées.", "Esta entrada fue publicada en Puerto."):
        assert line[:30] not in text(page(end=f"<p>{line}</p>")), line


def test_a_sentence_that_starts_like_a_filing_line_stays_in_the_story():
    said = "<p>Posted in Berlin for three years, the harbour master learned to read the river before the sea.</p>"
    assert "Posted in Berlin for three years" in text(page(middle=said))


# Near misses that stay

def test_a_paragraph_that_starts_with_by_the_way_stays():
    assert "By the way, the harbour opens again in May." in text(page(end="<p>By the way, the harbour opens again in "
                                                                         "May.</p>"))


def test_lines_that_start_like_a_byline_but_are_a_sentence_or_a_section_stay():
    for line in ("By the time the boats came back, the quay was empty.", "Von der Mole aus sieht man die Stadt",
                 "By 2030 the basin will be twice as deep.", "By Monday."):
        assert line in text(page(start=f"<p>{line}</p>")), line
    assert "By Train" in text(page(start="<h2>By Train</h2>"))


def test_a_call_to_subscribe_stays_in_the_middle_of_the_story_and_after_it():
    # the rule that took it after the text was retired: it cost the Mozilla set's check half
    said = "<p>Subscribe to the harbour newsletter, the mayor said.</p>"
    assert "Subscribe to the harbour newsletter" in text(page(middle=said))
    assert "Subscribe to Harbour Times newsletters." in text(page(end="<p>Subscribe to Harbour Times newsletters.</p>"))


def test_a_date_between_two_paragraphs_stays():
    assert "12.03.2020" in text(page(middle="<p>12.03.2020</p>"))


def test_a_sentence_that_mentions_following_stays():
    for line in ("Readers who subscribe can follow the boats on Twitter.",
                 "Jane Doe is the author of six novels about the sea."):
        assert line in text(page(end=f"<p>{line}</p>")), line
    # a dek-like line before the story is no call to follow, even when it names a network
    assert "Follow these steps" in text(page(start="<p>Follow these steps shared on Twitter to find the "
                                                   "harbour.</p>"))


def test_a_page_without_running_text_keeps_its_short_blocks():
    # a staff page: a list of links to the authors' pages, with their bylines and dates,
    # and no paragraph of prose for them to frame
    staff = lxml.html.fromstring(
        '<div><p>By Jane Doe</p><ul>'
        + "".join(f'<li><a rel="author" href="/author/{n}">{n.title()} Doe</a></li>' for n in ("jane", "john", "joan"))
        + '</ul><p class="byline">Updated 5:27 am, March 3, 2024</p><p>Follow us on Twitter</p></div>')
    assert find_tails(staff) == []


def test_an_authors_bio_that_the_article_is_about_stays():
    # a profile of a writer: its paragraphs talk about the author, its closing line is hers
    bio = [f"<p>{p.replace('the report on the harbour', 'the life of the author Jane Doe')}</p>" for p in PROSE[:3]]
    root = lxml.html.fromstring("<div>" + "".join(bio) + "<p>Jane Doe, author of six novels about the sea.</p></div>")
    assert find_tails(root) == []
