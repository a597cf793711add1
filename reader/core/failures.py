"""What a failed article's reason advises: the one place that decides whether the
person's browser (the bookmarklet's second chance: open the page, press Save to reader)
can help, or the page is gone, or the site cannot be reached, or a retry later is all
there is.

The reasons are the sentences the fetch and the cleaner store with a failed article
(reader/fetch/, reader/clean/, reader/jobs/cleaning.py); they are read here by their
stable openings, since the stored text is all an article keeps of its failure. Each
rule says why it advises what it does. Advising the browser for a page that is gone
sends a person to open a 404 and press a button that cannot work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Remedy = Literal["gone", "unreachable", "browser", "later", "none"]


@dataclass(frozen=True)
class Advice:
    """`remedy`: what can help; `says`: the sentence for the card and the reader view
    ("" when the reason says it all)."""

    remedy: Remedy
    says: str

    @property
    def browser(self) -> bool:
        """Offer the bookmarklet's second chance."""
        return self.remedy == "browser"


BROWSER = Advice("browser", "this site needs your browser; open it and press Save to reader")

# First match wins; each pattern is matched at the start of the reason.
_RULES: list[tuple[re.Pattern[str], Advice]] = [(re.compile(pattern), advice) for pattern, advice in [
    # 404 and 410: the site itself says the page does not exist. A browser gets the same
    # answer; retrying is the most that could help (a page moved back).
    (r"the site answered HTTP 410", Advice("gone", "the page is gone: the site says it was removed for good")),
    (r"the site answered HTTP 404", Advice("gone", "the page is gone: the site says there is nothing at this address")),
    # Refusals a browser gets past: a bot check or challenge (401, 403, and 429, which is
    # also how rate limits on non-browsers answer), or a login the person has.
    (r"the site answered HTTP (401|403|429)\b", BROWSER),
    # 503 is what challenge pages ("Just a moment...") answer with as well as an overload.
    (r"the site answered HTTP 503\b", BROWSER),
    # Any other 5xx: the site is broken for everyone right now.
    (r"the site answered HTTP 5\d\d", Advice("later", "the site is failing right now; retry later")),
    # Other 4xx (400, 405, 451...): the site will not give this page to anyone asking so.
    (r"the site answered HTTP", Advice("none", "")),
    # DNS: the name does not resolve, for a browser as much as for reader.
    (r"host not found", Advice("unreachable", "the site cannot be reached: its name is not found"
                                              " (mistyped, or the domain is gone)")),
    (r"not a valid host name", Advice("none", "")),
    # Connection refused or failed: nothing answers at the address.
    (r"could not connect to", Advice("unreachable", "the site cannot be reached: nothing answers at its"
                                                     " address; retry later if it was only down")),
    # Slow or dropped answers: usually a site in trouble (retrying is built in already).
    (r"timed out|fetch failed", Advice("later", "the site did not answer properly; retry later")),
    # The page arrived with no article in it: built by scripts, or behind a consent or
    # login wall, which the page in the person's browser is past.
    (r"no readable text found", BROWSER),
    # Redirect loops are mostly cookie and consent checks that a browser completes.
    (r"more than \d+ redirects", BROWSER),
    # An encoding reader does not decode (br, zstd): a browser does.
    (r"the response could not be decoded", BROWSER),
    # A private address reader is told not to fetch (an intranet page): the browser that
    # can open it sends the page instead.
    (r"blocked: (?!only http)", BROWSER),
    # What a browser cannot change: not a web page, too large, not http, not a URL, a
    # page that kills the extraction, reader's own bug.
    (r"not an HTML page|page is larger than|blocked: only http|not a valid URL", Advice("none", "")),
    (r"cleaning this page made the extraction processes die", Advice("none", "")),
    (r"internal error while cleaning", Advice("later", "reader failed on this page; retry later")),
]]


def advice_for(reason: str | None) -> Advice:
    """The advice for a failure's stored reason. A reason no rule knows (written before
    these rules, or by a newer cleaner) keeps the old advice: the browser's second chance
    is then the one thing left to try."""
    if not reason:
        return Advice("none", "")
    for pattern, advice in _RULES:
        if pattern.match(reason):
            return advice
    return BROWSER
