"""Every route of the web app, in one table grouped by page: the HTML pages (each
handler in reader/web/pages/), the editions and the app shell, then the JSON API
(reader/web/api/). Reading it tells what the app does. The `rowid` path converter is
registered here, before any route names it."""

from __future__ import annotations

from starlette.convertors import IntegerConvertor, register_url_convertor
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from ..resources import static_dir
from .sync import fever, greader
from .sync.greader import PREFIX
from .api import articles as api_articles
from .api import devices as api_devices
from .api import feeds as api_feeds
from .api import highlights as api_highlights
from .api import imports as api_imports
from .api import rules as api_rules
from .api import status as api_status
from .pages import (
    app_shell,
    apps,
    article,
    browse,
    editions,
    feeds,
    highlights,
    library,
    rules,
    save,
    session,
    status,
    tags,
    taps,
)


class RowIdConvertor(IntegerConvertor):
    """Path ids of at most 18 digits: a longer number (past SQLite's 64-bit integers)
    matches no route and is a 404, never an OverflowError."""

    regex = "[0-9]{1,18}"


# before the table below: a Route compiles its path, and the converter it names, when built
register_url_convertor("rowid", RowIdConvertor())

SYNC_READ = ["GET", "POST"]  # native apps differ: some POST their reads

routes: list[BaseRoute] = [
    # the reader view first: a ready article's open is the request most worth answering
    # fast, and the router tries each route in turn (no other path can be an article's)
    Route("/articles/{id:rowid}", article.read, methods=["GET"]),
    Route("/articles/{id:rowid}/body", article.reading_body, methods=["GET"]),
    Route("/articles/{id:rowid}/images/{hash}", article.article_image, methods=["GET"]),

    # session: login, logout, presentation choices
    Route("/login", session.login_page, methods=["GET"]),
    Route("/login", session.login, methods=["POST"]),
    Route("/logout", session.logout, methods=["POST"]),
    Route("/prefs", session.set_pref, methods=["POST"]),

    # the headlines
    Route("/", browse.browse, methods=["GET"]),

    # taps on cards and in the reader view, the batched poll, the line
    Route("/articles/read", taps.mark_many, methods=["POST"]),
    Route("/articles/read/undo", taps.undo_mark, methods=["POST"]),
    Route("/articles/queue", taps.queue_many, methods=["POST"]),
    Route("/articles/queue/undo", taps.undo_queue, methods=["POST"]),
    Route("/articles/done", taps.done_many, methods=["POST"]),
    Route("/articles/done/undo", taps.undo_done, methods=["POST"]),
    Route("/articles/tags", taps.tag_many, methods=["POST"]),
    Route("/articles/{id:rowid}/tags", taps.set_tags, methods=["POST"]),
    Route("/articles/{id:rowid}/card", taps.card, methods=["GET"]),
    Route("/articles/{id:rowid}/queue", taps.queue, methods=["POST"]),
    Route("/articles/{id:rowid}/unqueue", taps.unqueue, methods=["POST"]),
    Route("/articles/{id:rowid}/read", taps.mark_read, methods=["POST"]),
    Route("/articles/{id:rowid}/star", taps.star, methods=["POST"]),
    Route("/articles/{id:rowid}/done", taps.mark_done, methods=["POST"]),
    Route("/live", taps.live, methods=["GET"]),
    Route("/queue", taps.queue_page, methods=["GET"]),

    # every tag, with its count
    Route("/tags", tags.tags_page, methods=["GET"]),

    # the feeds page
    Route("/feeds", feeds.feeds_page, methods=["GET"]),
    Route("/feeds", feeds.subscribe, methods=["POST"]),
    Route("/feeds/{id:rowid}/delete", feeds.unsubscribe, methods=["POST"]),
    Route("/feeds/{id:rowid}/rename", feeds.rename_feed, methods=["POST"]),
    Route("/feeds/{id:rowid}/folder", feeds.set_folder, methods=["POST"]),
    Route("/refresh", feeds.refresh_now, methods=["POST"]),

    # rules, what they hid, and paused feeds
    Route("/rules", rules.rules_page, methods=["GET"]),
    Route("/rules", rules.add_rule, methods=["POST"]),
    Route("/rules/hidden", rules.hidden_page, methods=["GET"]),
    Route("/rules/hidden/{id:rowid}/show", rules.show_again, methods=["POST"]),
    Route("/rules/{id:rowid}/enabled", rules.set_enabled, methods=["POST"]),
    Route("/rules/{id:rowid}/delete", rules.delete_rule, methods=["POST"]),
    Route("/rules/{id:rowid}/apply", rules.apply_rule, methods=["POST"]),
    Route("/rules/{id:rowid}/undo", rules.undo_rule, methods=["POST"]),
    Route("/feeds/{id:rowid}/pause", rules.pause_feed, methods=["POST"]),

    # the library: files in and out
    Route("/feeds/import", library.import_form, methods=["POST"]),
    Route("/imports/{id:rowid}", library.import_page, methods=["GET"]),
    Route("/imports/{id:rowid}/queue", library.queue_import, methods=["POST"]),
    Route("/library.html", library.export_bookmarks_file, methods=["GET"]),
    Route("/feeds.opml", library.export_opml_file, methods=["GET"]),

    # saving a link
    Route("/save", save.save_page, methods=["GET"]),
    Route("/save", save.save_link, methods=["POST"]),
    Route("/save/page", save.save_with_page, methods=["POST"]),

    # highlights
    Route("/highlights", highlights.highlights_page, methods=["GET"]),
    Route("/highlights.zip", highlights.highlights_zip, methods=["GET"]),
    Route("/highlights.csv", highlights.highlights_csv, methods=["GET"]),
    Route("/articles/{id:rowid}/refetch", highlights.fetch_again, methods=["POST"]),
    # status
    Route("/stats", status.stats_page, methods=["GET"]),

    # native apps: their app passwords
    Route("/apps", apps.apps_page, methods=["GET"]),
    Route("/apps", apps.add_app_password, methods=["POST"]),
    Route("/apps/{id:rowid}/revoke", apps.revoke_app_password, methods=["POST"]),

    # editions for e-readers
    Route("/edition.epub", editions.edition_epub, methods=["GET"]),
    Route("/articles/{id:rowid}.epub", editions.article_epub, methods=["GET"]),
    Route("/opds", editions.opds, methods=["GET"]),

    # the installable app
    Route("/manifest.webmanifest", app_shell.web_manifest, methods=["GET"]),
    Route("/sw.js", app_shell.service_worker_script, methods=["GET"]),
    Route("/offline", app_shell.offline_page, methods=["GET"]),

    # the JSON API: feeds
    Route("/api/feeds", api_feeds.list_feeds, methods=["GET"]),
    Route("/api/feeds", api_feeds.add_feed, methods=["POST"]),
    Route("/api/feeds/{id:rowid}", api_feeds.delete_feed, methods=["DELETE"]),
    Route("/api/feeds/{id:rowid}", api_feeds.update_feed, methods=["PATCH"]),
    Route("/api/refresh", api_feeds.refresh, methods=["POST"]),

    # the JSON API: imports started from the page, their reports, queueing their links
    Route("/api/imports/{id:rowid}", api_imports.import_job, methods=["GET"]),
    Route("/api/imports/{id:rowid}/queue", api_imports.queue_import, methods=["POST"]),
    # the JSON API: rules and what they hid
    Route("/api/rules", api_rules.list_rules, methods=["GET"]),
    Route("/api/rules", api_rules.add_rule, methods=["POST"]),
    Route("/api/rules/test", api_rules.test_rule, methods=["POST"]),
    Route("/api/rules/{id:rowid}", api_rules.update_rule, methods=["PATCH"]),
    Route("/api/rules/{id:rowid}", api_rules.delete_rule, methods=["DELETE"]),
    Route("/api/rules/{id:rowid}/apply", api_rules.apply_rule, methods=["POST"]),
    Route("/api/rules/{id:rowid}/undo", api_rules.undo_rule, methods=["POST"]),
    Route("/api/hidden", api_rules.hidden, methods=["GET"]),
    Route("/api/hidden/{id:rowid}", api_rules.show_again, methods=["DELETE"]),

    # the JSON API: articles
    Route("/api/articles", api_articles.list_articles, methods=["GET"]),
    Route("/api/articles", api_articles.save_article, methods=["POST"]),
    Route("/api/articles/read", api_articles.mark_many_read, methods=["POST"]),
    Route("/api/articles/tags", api_articles.tag_many, methods=["POST"]),
    Route("/api/articles/queue", api_articles.queue_many, methods=["POST"]),
    Route("/api/articles/queue/undo", api_articles.undo_queue, methods=["POST"]),
    Route("/api/articles/read", api_articles.mark_many_unread, methods=["DELETE"]),
    Route("/api/articles/done", api_articles.done_many, methods=["POST"]),
    Route("/api/articles/done", api_articles.not_done_many, methods=["DELETE"]),
    Route("/api/articles/{id:rowid}", api_articles.get_article, methods=["GET"]),
    Route("/api/articles/{id:rowid}/queue", api_articles.queue_article, methods=["POST"]),
    Route("/api/articles/{id:rowid}/queue", api_articles.unqueue_article, methods=["DELETE"]),
    Route("/api/articles/{id:rowid}/content", api_articles.article_content, methods=["GET"]),
    Route("/api/articles/{id:rowid}/read", api_articles.mark_read, methods=["POST"]),
    Route("/api/articles/{id:rowid}/read", api_articles.mark_unread, methods=["DELETE"]),
    Route("/api/articles/{id:rowid}/star", api_articles.star, methods=["POST"]),
    Route("/api/articles/{id:rowid}/tags", api_articles.set_tags, methods=["POST"]),
    Route("/api/articles/{id:rowid}/star", api_articles.unstar, methods=["DELETE"]),
    Route("/api/articles/{id:rowid}/done", api_articles.mark_done, methods=["POST"]),
    Route("/api/articles/{id:rowid}/done", api_articles.mark_not_done, methods=["DELETE"]),
    Route("/api/articles/{id:rowid}/position", api_articles.set_position, methods=["PUT"]),
    # the JSON API: highlights
    Route("/api/articles/{id:rowid}/highlights", api_highlights.article_highlights, methods=["GET"]),
    Route("/api/articles/{id:rowid}/highlights", api_highlights.add_highlight, methods=["POST"]),
    Route("/api/highlights", api_highlights.list_highlights, methods=["GET"]),
    Route("/api/highlights/{id:rowid}", api_highlights.get_highlight, methods=["GET"]),
    Route("/api/highlights/{id:rowid}", api_highlights.update_highlight, methods=["PATCH"]),
    Route("/api/highlights/{id:rowid}", api_highlights.delete_highlight, methods=["DELETE"]),
    # a highlight made offline, named by its POST's Idempotency-Key until the device knows its id
    Route("/api/highlights/made/{key}", api_highlights.update_highlight, methods=["PATCH"]),
    Route("/api/highlights/made/{key}", api_highlights.delete_highlight, methods=["DELETE"]),

    # the JSON API: devices reading offline, the line and the ledger
    Route("/api/articles/{id:rowid}/opened", api_devices.mark_opened, methods=["POST"]),
    Route("/api/offline", api_devices.offline, methods=["GET"]),
    Route("/api/queue", api_status.queue, methods=["GET"]),
    Route("/api/stats", api_status.stats, methods=["GET"]),

    # the sync API for native apps (reader/web/sync/): the Google Reader API at
    # /accounts/ClientLogin and /reader/api/0/..., Fever at /fever/ and /api/fever.php,
    # and the images their articles show, by signed URL
    Route("/accounts/ClientLogin", greader.client_login, methods=SYNC_READ),
    Route(f"{PREFIX}/token", greader.token_endpoint, methods=SYNC_READ),
    Route(f"{PREFIX}/user-info", greader.user_info_endpoint, methods=SYNC_READ),
    Route(f"{PREFIX}/subscription/list", greader.subscription_list_endpoint, methods=SYNC_READ),
    Route(f"{PREFIX}/tag/list", greader.tag_list_endpoint, methods=SYNC_READ),
    Route(f"{PREFIX}/unread-count", greader.unread_count_endpoint, methods=SYNC_READ),
    Route(f"{PREFIX}/stream/items/ids", greader.stream_item_ids_endpoint, methods=SYNC_READ),
    Route(f"{PREFIX}/stream/items/contents", greader.stream_items_contents_endpoint, methods=SYNC_READ),
    Route(f"{PREFIX}/stream/contents", greader.stream_contents_endpoint, methods=SYNC_READ),
    Route(f"{PREFIX}/stream/contents/{{stream:path}}", greader.stream_contents_endpoint, methods=SYNC_READ),
    Route(f"{PREFIX}/edit-tag", greader.edit_tag_endpoint, methods=SYNC_READ),
    Route(f"{PREFIX}/mark-all-as-read", greader.mark_all_as_read_endpoint, methods=SYNC_READ),
    Route(f"{PREFIX}/subscription/quickadd", greader.quickadd_endpoint, methods=SYNC_READ),
    Route(f"{PREFIX}/subscription/edit", greader.subscription_edit_endpoint, methods=SYNC_READ),
    Route(f"{PREFIX}/rename-tag", greader.rename_tag_endpoint, methods=SYNC_READ),
    Route(f"{PREFIX}/disable-tag", greader.disable_tag_endpoint, methods=SYNC_READ),
    Route("/sync/images/{password:syncid}/{signature}/{id:syncid}/{hash}", greader.image, methods=["GET"]),
    # every other path the access layer lets through as the sync API's is answered by it
    # (a line of text), never by the pages' error page
    Route("/sync/images/{rest:path}", greader.no_image_endpoint, methods=["GET", "POST"]),
    Route(f"{PREFIX}/{{rest:path}}", greader.unknown_endpoint, methods=["GET", "POST", "PUT", "DELETE", "PATCH"]),
    Route("/fever/", fever.fever, methods=["GET", "POST"]),
    Route("/fever", fever.fever, methods=["GET", "POST"]),
    Route("/api/fever.php", fever.fever, methods=["GET", "POST"]),
    Route("/fever/{rest:path}", fever.fever, methods=["GET", "POST"]),  # any path below it is Fever's too

    Mount("/static", StaticFiles(directory=static_dir()), name="static"),
]
