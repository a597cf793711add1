"""A link inside a sentence is part of the sentence, whatever its class says: a page that
marks its note links class="popup" (a note shown on click) keeps their words in the
article, as Readability.js does, rather than losing them as an unlikely container."""

from __future__ import annotations

from reader.clean import clean_page

PARAGRAPHS = [
    ("I am a", "rather elderly", "man. The nature of my work for the last thirty years has brought me into "
     "more than ordinary contact with an interesting and somewhat singular set of men."),
    ("Of all the copyists I ever knew, the", "strangest", "was the one who came to my office on a summer "
     "morning and stood in the doorway, pallidly neat and pitiably respectable."),
    ("My chambers were up stairs and looked upon the", "white wall", "of the interior of a spacious "
     "sky-light shaft, penetrating the building from top to bottom all day long."),
    ("He wrote on silently, palely and mechanically, by sun-light and by", "candle-light", "through the "
     "whole of the long winter, and never once looked up from his desk by the window."),
]


def note(words: str) -> str:
    return (f'<a href="javascript:void(0);" class="popup" '
            f'onclick="return overlib(\'A note about these words.\')">{words}</a>')


def page() -> bytes:
    nav = "".join(f'<li><a href="/chapter/{i}">Chapter {i}</a></li>' for i in range(8))
    body = "".join(f"<p>{before} {note(linked)} {after}</p>" for before, linked, after in PARAGRAPHS)
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>The scrivener</title></head>
<body><div id="menu"><ul>{nav}</ul></div>
<div id="text"><h1>The scrivener</h1>{body}</div>
<div id="footer"><p>Footer text of the site that should not be extracted.</p></div></body></html>""".encode()


def test_the_words_of_a_note_link_stay_in_their_sentence() -> None:
    text = clean_page(page(), "https://example.org/scrivener", None)["text"]
    for before, linked, after in PARAGRAPHS:
        assert f"{before} {linked} {after.split()[0]}" in " ".join(text.split())



GAMES = [
    ("Harbour Lights", "A slow puzzle game about guiding ships into port at night, where every lamp you light "
     "changes the current and the tide decides how long you have to think."),
    ("Copper Valley", "You run a mining town's railway through three hard winters, and the game is generous "
     "about mistakes without ever letting you forget the ones that cost a life."),
    ("Night Orchard", "A short ghost story told through the trees of one orchard across forty years, with a "
     "soundtrack that is worth the price of the game on its own."),
]


def review(between: str) -> bytes:
    intro = ("<p>Plenty of games came out this autumn, and only some of them are worth your evenings. "
             "I played every one of them to the end, and these are the three I would buy again.</p>")
    games = "".join(f'<h3><a href="https://store.example.com/{name.lower().replace(" ", "-")}">{name} ($20)</a></h3>'
                    f"{between}<p>{text}</p>" for name, text in GAMES)
    outro = ("<p>None of them needs a new console, and all three run well on the older machines that most "
             "people still have under the television, which is more than the big releases can say.</p>")
    nav = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(8))
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>Three games worth buying</title></head>
<body><nav><ul>{nav}</ul></nav><article><h1>Three games worth buying</h1>{intro}{games}{outro}</article>
<footer><p>Footer text of the site that should not be extracted.</p></footer></body></html>""".encode()


def test_a_heading_that_links_to_its_subject_stays_above_its_text() -> None:
    text = clean_page(review(""), "https://example.org/games", None)["text"]
    for name, _ in GAMES:
        assert f"{name} ($20)" in text


def test_a_video_between_a_heading_and_its_text_keeps_the_heading() -> None:
    video = '<p><iframe src="https://www.youtube.com/embed/abc123"></iframe></p>'
    text = clean_page(review(video), "https://example.org/games", None)["text"]
    for name, _ in GAMES:
        assert f"{name} ($20)" in text
    assert "VIDEO" not in text  # readability's placeholder inside the frame is not the page's
