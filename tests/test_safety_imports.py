"""Imports under attack, second pass (issue 26): files other readers write in encodings
expat cannot read itself, text fields holding lone surrogates, and exports far larger than
any library.

Each file here is made as the app that writes it would make it, and goes through the
parser and through `reader import` / `reader import-opml` as a process of its own."""

from __future__ import annotations

import pytest

from reader.formats.importers import ImportFileError, ImportReport, parse_opml_folders
from reader.formats.opml import OpmlError, parse_opml

from .helpers import run_cli

# Feed titles as Japanese and Chinese feed readers write them, and the folder around them
TITLES = {
    "shift_jis": ("日本語のニュース", "技術"),
    "euc-jp": ("はてなブックマーク", "日記"),
    "gb2312": ("中文新闻", "科技"),
    "big5": ("中文新聞", "科技"),
    "utf-7": ("日本語とEnglish", "フォルダ"),
}


def opml_in(encoding: str, title: str, folder: str) -> bytes:
    document = (f'<?xml version="1.0" encoding="{encoding}"?>\n'
                f'<opml version="2.0"><head><title>{title}</title></head><body>\n'
                f'<outline text="{folder}">\n'
                f'  <outline type="rss" text="{title}" xmlUrl="http://example.com/{encoding}.xml"'
                f' htmlUrl="http://example.com/"/>\n'
                f'</outline></body></opml>\n')
    data = document.encode(encoding)
    assert title.encode("utf-8") not in data  # really written in that encoding, not UTF-8
    return data


@pytest.mark.parametrize("encoding", TITLES)
def test_opml_in_a_multi_byte_encoding_is_read_with_its_titles(encoding):
    title, folder = TITLES[encoding]
    data = opml_in(encoding, title, folder)
    feeds, skipped = parse_opml(data)
    assert [(f.url, f.title) for f in feeds] == [(f"http://example.com/{encoding}.xml", title)] and not skipped
    with_folders = parse_opml_folders(data, "feeds.opml", ImportReport())
    assert [(f.title, f.folder) for f in with_folders] == [(title, (folder,))]


def test_opml_that_is_not_what_its_declared_encoding_says_is_refused_with_the_reason():
    data = b'<?xml version="1.0" encoding="shift_jis"?><opml version="2.0"><body>' \
           b'<outline text="\xff\xff" xmlUrl="http://example.com/feed"/></body></opml>'
    with pytest.raises(OpmlError, match="shift_jis"):
        parse_opml(data)
    with pytest.raises(ImportFileError, match="shift_jis"):
        parse_opml_folders(data, "feeds.opml", ImportReport())


def test_a_doctype_hidden_in_utf7_is_still_refused():
    # "+ADw-" is "<" in UTF-7: a reader that checked the bytes before decoding would miss it
    data = (b'<?xml version="1.0" encoding="utf-7"?>+ADw-!DOCTYPE opml [+ADw-!ENTITY a "b"+AD4-]+AD4-'
            b'<opml version="2.0"><body><outline text="&a;" xmlUrl="http://example.com/feed"/></body></opml>')
    with pytest.raises(OpmlError, match="DOCTYPE"):
        parse_opml(data)
    with pytest.raises(ImportFileError, match="DOCTYPE"):
        parse_opml_folders(data, "feeds.opml", ImportReport())


@pytest.mark.parametrize("command", ["import-opml", "import"])
async def test_the_cli_imports_opml_in_multi_byte_encodings_with_their_titles(tmp_path, command):
    db = tmp_path / "reader.db"
    for encoding, (title, folder) in TITLES.items():
        path = tmp_path / f"{encoding}.opml"
        path.write_bytes(opml_in(encoding, title, folder))
        code, out, err = await run_cli(db, command, str(path))
        assert code == 0 and "Traceback" not in err, err
    code, out, err = await run_cli(db, "export-opml")
    assert code == 0, err
    written = parse_opml_folders(out.encode(), "export", ImportReport())
    assert {(f.url, f.title, f.folder) for f in written} == {
        (f"http://example.com/{encoding}.xml", title, (folder,)) for encoding, (title, folder) in TITLES.items()}


async def test_uploading_opml_in_shift_jis_subscribes_with_its_titles(client):
    title, folder = TITLES["shift_jis"]
    response = await client.post("/feeds/import", files={"opml": ("feeds.opml", opml_in("shift_jis", title, folder),
                                                                  "text/x-opml")})
    assert response.status_code < 400, response.text
    feeds = (await client.get("/api/feeds")).json()["feeds"]
    assert [(f["url"], f["title"]) for f in feeds] == [("http://example.com/shift_jis.xml", title)]
