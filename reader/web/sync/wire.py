"""What the sync routes share on the wire: their parameters (the query and the form
together, as clients put `output=json` or `T` in either), the sign-in throttle, and their
refusals as one line of text with a status."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from ...core import Reader
from ...core.sync import MAX_ITEM_IDS
from ...errors import Malformed, ReaderError
from ..sessions import Throttle, client_key

# Parameters one request may carry: every `i` a call may name, and room for the rest.
MAX_FIELDS = MAX_ITEM_IDS + 100


class Params:
    """A request's parameters, query first, then the form."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs

    def all(self, name: str) -> list[str]:
        return [v for k, v in self.pairs if k == name]

    def one(self, name: str) -> str | None:
        """The value of a parameter sent at most once (the same value twice is once)."""
        values = list(dict.fromkeys(self.all(name)))
        if len(values) > 1:
            raise Malformed(f"{name} was sent {len(self.all(name))} times with different values: send it once")
        return values[0] if values else None

    def wants_json(self) -> bool:
        return self.one("output") == "json"


async def params(request: Request) -> Params:
    """The query and, for a POST, its form body (urlencoded, or multipart)."""
    try:
        pairs = parse_qsl(request.url.query, keep_blank_values=True, max_num_fields=MAX_FIELDS)
        if request.method == "POST":
            kind = request.headers.get("content-type", "")
            if kind.startswith("multipart/form-data"):
                async with request.form(max_fields=MAX_FIELDS) as form:
                    pairs += [(k, v) for k, v in form.multi_items() if isinstance(v, str)]
            else:  # urlencoded, or sent without a type (some clients do)
                body = (await request.body()).decode("utf-8", "replace")
                pairs += parse_qsl(body, keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except ValueError:
        raise Malformed(f"too many parameters: send at most {MAX_ITEM_IDS:,} item ids at a time") from None
    return Params(pairs)


def reader_of(request: Request) -> Reader:
    reader: Reader = request.app.state["reader"]
    return reader


def throttle_of(request: Request) -> Throttle:
    """The app's throttle of wrong app passwords, the web login's kind (one per app)."""
    state = request.app.state
    throttle: Throttle | None = getattr(state, "sync_throttle", None)
    if throttle is None:
        throttle = state.sync_throttle = Throttle()
    return throttle


def refusal(error: ReaderError) -> Response:
    """A refusal as one line of text, with its status."""
    message = " ".join(error.message.split())
    status = error.status if 400 <= error.status < 600 else 500
    response = PlainTextResponse(message, status_code=status)
    if error.retry_after is not None:
        response.headers["Retry-After"] = str(error.retry_after)
    return response


def too_many_tries(wait: float) -> Response:
    seconds = math.ceil(wait)
    return PlainTextResponse(f"too many wrong app passwords: try again in {seconds} s", status_code=429,
                             headers={"Retry-After": str(seconds)})


def client(request: Request) -> str:
    return client_key(request.scope)


Endpoint = Callable[[Request], Awaitable[Response]]


def refusing(endpoint: Endpoint) -> Endpoint:
    """The endpoint, with every ReaderError it raises answered as a line of text."""
    async def answer(request: Request) -> Response:
        try:
            return await endpoint(request)
        except ReaderError as exc:
            return refusal(exc)

    return answer
