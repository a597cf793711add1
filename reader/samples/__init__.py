"""Sample site shipped with reader so a first run works offline."""

import pathlib

SAMPLE_HOST = "samples.reader.invalid"
SAMPLE_FEED_URL = "https://samples.reader.invalid/feed.xml"
SITE_DIR = pathlib.Path(__file__).parent / "site"
