"""The cleaner's one exception is part of reader's error tree, and crosses the pool intact."""

from __future__ import annotations

import pickle

import pytest

from reader.clean import ExtractError, clean_page
from reader.errors import ExtractionFailed, ReaderError
from reader.fetch import FetchError


def test_a_page_without_an_article_is_an_extraction_failure_not_a_fetch_error():
    with pytest.raises(ExtractError) as caught:
        clean_page(b"<html><body></body></html>", "http://example.com/x", None)
    assert isinstance(caught.value, ExtractionFailed) and isinstance(caught.value, ReaderError)
    assert not isinstance(caught.value, FetchError)
    assert caught.value.status == 502 and caught.value.message == "no readable text found on the page"


def test_the_error_survives_the_trip_back_from_a_pool_process():
    back = pickle.loads(pickle.dumps(ExtractError("no readable text found on the page")))
    assert type(back) is ExtractError and str(back) == back.message == "no readable text found on the page"
