"""A link inside a sentence is part of the sentence, whatever its class says: a page that
marks its note links class="popup" (a note shown on click) keeps their words in the
article, as Readability.js does, rather than losing them as an unlikely container."""

from __future__ import annotations

from reader.cleaner import clean_page

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

