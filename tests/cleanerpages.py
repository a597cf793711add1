"""A small article page of our own with places to put furniture in, for the cleaner's
furniture and lead tests."""

from __future__ import annotations


PROSE = [
    f"Paragraph {i} of the report on the harbour carries enough ordinary words to read as prose, "
    f"with clauses, commas and a full stop at the end of it."
    for i in range(8)
]


def page(middle: str = "", end: str = "", *, header: str = "") -> bytes:
    nav = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(10))
    first = "".join(f"<p>{p}</p>" for p in PROSE[:4])
    second = "".join(f"<p>{p}</p>" for p in PROSE[4:])
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>The harbour report</title></head>
<body><header><nav><ul>{nav}</ul></nav></header>
<main><article><header><h1>The harbour report</h1>{header}</header>
<div class="body">{first}{middle}{second}{end}</div></article></main>
<footer><p>Footer text of the site that should not be extracted.</p></footer></body></html>""".encode()
