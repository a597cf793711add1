"""The candidate chooser: the vote's article, trafilatura's alone and readability's alone are
each a whole candidate, and the chooser's features see how they differ. The page of our
own here is the case the chooser is for: the container readability picks holds a second
whole story after the article, the vote keeps it (its paragraphs are long prose), and
trafilatura's article alone is the right one."""

from __future__ import annotations

from reader.clean import clean_page
from reader.clean.choose import CANDIDATES, ENABLED, Text, choose, features
from reader.clean.pipeline import clean_candidates
from reader.clean.sanitize import plain_text

from ..cleanerpages import PROSE

OTHER = [f"Sentence {i} of another story about the mountain railway, long enough to be read as its own "
         f"prose, with commas and a full stop." for i in range(8)]
NAV = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(10))
URL = "http://example.com/harbour"


def page(extra: str) -> bytes:
    body = "".join(f"<p>{p}</p>" for p in PROSE)
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>The harbour report</title></head>
<body><header><nav><ul>{NAV}</ul></nav></header><main><div class="content">
<article><h1>The harbour report</h1>{body}</article>{extra}</div></main>
<footer><p>Footer text of the site that should not be extracted.</p></footer></body></html>""".encode()


SECOND_STORY = page('<div class="next"><h2>The mountain railway</h2>' + "".join(f"<p>{p}</p>" for p in OTHER)
                    + "</div>")


def counts(html: str) -> tuple[int, int]:
    text = plain_text(html)
    return sum(p in text for p in PROSE), sum(p in text for p in OTHER)


def test_each_extractor_alone_is_a_candidate_beside_the_vote():
    cleaned, read = clean_candidates(SECOND_STORY, URL, None)
    assert set(cleaned) == set(CANDIDATES) == set(read)
    assert counts(cleaned["vote"]["html"]) == (8, 8)  # the vote keeps the second story
    assert counts(cleaned["readability"]["html"]) == (8, 8)
    assert counts(cleaned["trafilatura"]["html"]) == (8, 0)


def test_the_features_see_a_second_story_at_the_end_of_the_vote():
    _, read = clean_candidates(SECOND_STORY, URL, None)
    found = features(*(Text(*read[c]) for c in CANDIDATES))
    assert found["t_in_v"] == 1.0  # the vote holds all of trafilatura's article
    assert 0.4 < found["v_in_t"] < 0.6  # and as much again
    assert 0.4 < found["v_not_t_share"] < 0.6
    assert found["v_not_t_where"] > 0.6  # at its end
    assert found["v_not_t_short"] == 0.0  # in long lines of prose
    assert found["r_in_v"] > 0.9 and found["v_in_r"] > 0.9  # readability kept it too


def test_a_page_both_extractors_read_alike_keeps_the_vote():
    plain = page("")
    _, read = clean_candidates(plain, URL, None)
    assert choose(features(*(Text(*read[c]) for c in CANDIDATES))) == "vote"
    assert clean_page(plain, URL, None) == clean_candidates(plain, URL, None)[0]["vote"]


def test_the_page_is_the_candidate_the_chooser_picks():
    cleaned, read = clean_candidates(SECOND_STORY, URL, None)
    picked = choose(features(*(Text(*read[c]) for c in CANDIDATES)))
    assert clean_page(SECOND_STORY, URL, None) == cleaned[picked]
    if not ENABLED:
        assert picked == "vote"
