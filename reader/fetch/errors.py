"""What a fetch raises: one message written for the person reading the card."""

from __future__ import annotations

from ..errors import FetchFailed


class FetchError(FetchFailed):
    """A fetch that did not produce a usable body. `transient` failures may succeed later."""

    def __init__(self, message: str, *, transient: bool = False):
        super().__init__(message)
        self.transient = transient


class BlockedAddress(FetchError):
    pass
