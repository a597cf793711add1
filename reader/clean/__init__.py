"""Page bytes in, the article's sanitized HTML, plain text and metadata out: pure CPU,
run in the pool's processes (and by `reader clean`).

`pipeline.py` is the cleaner in order; `upstream.py` holds every call into trafilatura,
htmldate and readability-lxml; `vote.py` is how their two opinions are merged; the other
modules are the cleaner's own rules (blocks, boilerplate, furniture, figures, standfirst),
the one sanitizer (`sanitize.py`) and the pure half of the images (`images.py`).
Importing the package imports none of the three libraries.
"""

from .pipeline import CleanedPage, ExtractError, as_json_line, clean_file, clean_page

__all__ = ["CleanedPage", "ExtractError", "as_json_line", "clean_file", "clean_page"]
