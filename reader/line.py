"""The line a person sees. Positions come from the store's service order (the same
ORDER BY the workers take by); this module turns a position into an honest estimate of
when the article will be ready."""

from __future__ import annotations

import math
import statistics


def estimate_wait(position: int, durations: list[float], capacity: int) -> float | None:
    """Seconds until the article at `position` is cleaned: the line is served in rounds
    of `capacity` articles (all live workers together), each round taking the median of
    the recent extraction times. None when there is no history or no worker to serve it."""
    if not durations or capacity < 1 or position < 1:
        return None
    return math.ceil(position / capacity) * statistics.median(durations)


def describe_wait(seconds: float | None) -> str:
    """'about 40 s', 'about 3 min'; '' when there is nothing honest to say."""
    if seconds is None:
        return ""
    if seconds < 10:
        return "a few seconds"
    if seconds < 90:
        return f"about {int(round(seconds / 5) * 5)} s"
    return f"about {round(seconds / 60)} min"
