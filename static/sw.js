/* reader's service worker: what makes the installed app read without a network.

   Served at /sw.js (so its scope is every page) with VERSION filled in by reader/pwa.py:
   reader's version and a hash of every static file and template. Any deploy that changes
   a page's makings changes these bytes, so the browser installs this worker anew; the new
   one takes over at once and deletes every cache of the old one: no stale shell.

   What it keeps, in two caches named after VERSION:
   - the shell: the stylesheet, the script, htmx, the icons, the manifest and the
     "offline: not saved on this device" page, fetched when the worker installs;
   - the saved pages: the reading list page, the queue page, and every article on the
     reading list with the images reader serves for it, in tap order, up to the size
     budget (READER_OFFLINE_MAX_BYTES, counted over the articles' pages and images).
     /api/offline says what they are; the pages ask the worker to sync on every load while
     online, and it saves what is new and drops what left the list (with the same list,
     at most once a minute).

   How it answers:
   - pages: network first, always. Online, a page is the live one (pages are no-store);
     a saved one is refreshed on the way. Only when reader cannot be reached does a saved
     copy answer, or the offline page: no network at all, or a network that does not lead
     to reader (the server is down, the laptop is on another network, its proxy answers
     502, 503 or 504). navigator.onLine is true in all of those but the first. A page
     answered from the cache carries data-saved-copy on <html>, so the page's script
     (static/offline.js) knows reader is out of reach and keeps what is done in the outbox;
   - reader's own files and images: network first too, the cache when reader cannot be reached;
   - writes, the JSON API, other sites: never touched (offline actions are kept by the
     page itself, in IndexedDB: static/app.js).

   Logging out drops the saved pages (with a password, they are the person's): the logout's
   Clear-Site-Data clears them where the browser honours it, the page tells this worker
   ("logout") as its form is sent, and this worker drops them itself whenever a page it
   fetches live is the login page (the browser is logged out, however that came about: a
   logout, a session that ended with a restart of reader). A sync that was going on then
   stores nothing more, so a saved copy is only ever answered from what was saved while
   logged in and before the login page was seen. Without a password there is no login
   page and no logout: nothing changes. */
"use strict";

const VERSION = "__READER_VERSION__";
const SHELL_CACHE = "reader-shell-" + VERSION;
const SAVED_CACHE = "reader-saved-" + VERSION;
const SHELL = [
  "/static/style.css",
  "/static/app.js",
  "/static/offline.js",
  "/static/highlights.js",
  "/static/vendor/htmx-4.0.1/htmx.min.js",
  "/static/icons/icon-192.png",
  "/static/icons/icon-512.png",
  "/manifest.webmanifest",
  "/offline?what=page",
  "/offline?what=article",
];
// A page saved for offline reading is fetched with this header: reader then knows it is
// not a person opening the article, and does not mark it read.
const SAVING = { "X-Reader-Offline": "save" };
// Where the sizes of saved responses are noted, so a sync need not read them back.
const SIZES = "/__reader-saved-sizes";

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const shell = await caches.open(SHELL_CACHE);
    // "reload": past the HTTP cache, so the shell is this deploy's, not a leftover
    await shell.addAll(SHELL.map((url) => new Request(url, { cache: "reload" })));
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith("reader-") && name !== SHELL_CACHE && name !== SAVED_CACHE) {
        await caches.delete(name);
      }
    }
    await self.clients.claim();
  })());
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin || url.pathname.startsWith("/api/") || url.pathname === "/sw.js") return;
  event.respondWith(request.mode === "navigate" ? page(request, url) : file(request));
});

self.addEventListener("message", (event) => {
  if (event.data === "sync") event.waitUntil(sync());
  else if (event.data === "logout") event.waitUntil(forget());
});

// Counts the times the saved pages were dropped: a sync that began before one stops saving.
let forgotten = 0;

async function forget() {
  forgotten += 1;
  last = { list: null, at: 0, message: null };
  await caches.delete(SAVED_CACHE);
}

function isLoginPage(url, response) {
  return url.pathname === "/login" && response.ok;
}

function articlePath(url) {
  const found = url.pathname.match(/^\/articles\/(\d+)$/);
  return found ? "/articles/" + found[1] : null;
}

// What a proxy in front of reader answers while reader itself is down.
const UNREACHABLE = [502, 503, 504];

async function page(request, url) {
  let response = null;
  try {
    response = await fetch(request);
  } catch (offline) {
    // no answer at all: no network, or none that reaches reader
  }
  // An article is saved once, whichever list it was opened from (?list=...).
  const key = articlePath(url) || url.pathname + url.search;
  if (response && isLoginPage(url, response)) {
    await forget();  // logged out: nothing saved is answered again
    return response;
  }
  if (response && !UNREACHABLE.includes(response.status)) {
    // A saved page seen live is saved again as it is now.
    if (response.ok && !response.redirected) {
      const saved = await caches.open(SAVED_CACHE);
      if (await saved.match(key)) await saved.put(key, response.clone());
    }
    return response;
  }
  const saved = await caches.open(SAVED_CACHE);
  const copy = await saved.match(key);
  if (copy) return markedCopy(copy);
  if (response) return response;  // the proxy's own answer: nothing saved says more
  const notSaved = await caches.match(articlePath(url) ? "/offline?what=article" : "/offline?what=page");
  return notSaved ? markedCopy(notSaved) : new Response("offline: this article is not saved on this device",
    { status: 503, headers: { "Content-Type": "text/plain; charset=utf-8" } });
}

async function markedCopy(copy) {
  // Pages are a few hundred KB at most: rewriting the start tag costs nothing worth saving.
  const text = await copy.text();
  const headers = new Headers(copy.headers);
  headers.delete("Content-Length");
  return new Response(text.replace(/<html\b/i, "<html data-saved-copy"),
    { status: copy.status, statusText: copy.statusText, headers: headers });
}

async function file(request) {
  let response = null;
  try {
    response = await fetch(request);
  } catch (offline) {
    const copy = await caches.match(request);
    if (copy) return copy;
    throw offline;
  }
  if (UNREACHABLE.includes(response.status)) {
    const copy = await caches.match(request);
    if (copy) return copy;
  }
  return response;
}

// -- saving the reading list ---------------------------------------------------------------

let syncing = null;
// The last sync: which articles it saved and when. Pages load often; when the list is the
// same and the last sync is recent, the pages are not fetched again.
let last = { list: null, at: 0, message: null };
const RESYNC_AFTER = 60 * 1000;  // ms

function sync() {
  // One sync at a time: pages load faster than a sync ends.
  if (!syncing) syncing = saveReadingList().catch(() => null).finally(() => { syncing = null; });
  return syncing;
}

async function tell(message) {
  // Uncontrolled pages too: the first page's sync can end before this worker has claimed it.
  const pages = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  for (const client of pages) client.postMessage(message);
}

async function saveReadingList() {
  const answer = await fetch("/api/offline", { cache: "no-store" });
  if (!answer.ok) return;
  const list = await answer.json();
  const epoch = forgotten;
  const same = JSON.stringify(list);
  if (same === last.list && Date.now() - last.at < RESYNC_AFTER) return tell(last.message);
  const saved = await caches.open(SAVED_CACHE);
  const noted = await saved.match(SIZES);
  const sizes = noted ? await noted.json() : {};
  const kept = {};
  let used = 0;

  async function keep(url, refresh) {
    if (!refresh && sizes[url] !== undefined && await saved.match(url)) {
      kept[url] = sizes[url];
      return sizes[url];
    }
    const response = await fetch(url, { headers: SAVING, cache: "no-cache" });
    // redirected: to the login page, the session gone since the list was read
    if (!response.ok || response.redirected) throw new Error(url + ": " + response.status);
    if (forgotten !== epoch) throw new Error("logged out");
    const size = (await response.clone().blob()).size;
    await saved.put(url, response);
    kept[url] = size;
    return size;
  }

  // The list pages are what the app opens on: always kept, outside the budget (they are small).
  for (const path of list.pages) await keep(path, true);
  let articles = 0;
  for (const article of list.articles) {
    // Pages are small and change (a star, where the person stopped): fetched each sync.
    // Images do not change: fetched once. The budget is counted as they arrive, and an
    // article is kept whole or not at all.
    let size = 0;
    const urls = [article.page, ...article.images];
    const before = Object.assign({}, kept);
    try {
      for (const url of urls) size += await keep(url, url === article.page);
    } catch (failed) {
      for (const url of urls) if (!(url in before)) delete kept[url];
      continue;
    }
    if (used + size > list.budget) {
      for (const url of urls) if (!(url in before)) delete kept[url];
      break;
    }
    used += size;
    articles += 1;
  }
  if (forgotten !== epoch) return caches.delete(SAVED_CACHE);  // a put that raced the drop
  for (const request of await saved.keys()) {
    const path = new URL(request.url).pathname + new URL(request.url).search;
    if (!(path in kept) && path !== SIZES) await saved.delete(request);
  }
  await saved.put(SIZES, new Response(JSON.stringify(kept), { headers: { "Content-Type": "application/json" } }));
  last = { list: same, at: Date.now(), message: { saved: articles, bytes: used, version: VERSION } };
  await tell(last.message);
}
