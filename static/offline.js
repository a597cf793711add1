/* reader: what a page does for reading without a network (the saving itself is the
   service worker's, static/sw.js). Without JavaScript none of this runs and nothing changes.

   - The offline banner, shown while reader cannot be reached: the device has no network,
     or this page is a saved copy (the service worker answered from its cache, marking
     <html data-saved-copy>: the server is down, or the network does not lead to it, while
     navigator.onLine says true), or a tap's request found no server.
   - Offline actions. While reader cannot be reached, a tap on star, mark read (or unread),
     done (or not done) or unqueue is kept in IndexedDB (the "outbox"), the button shows the new state at
     once, and the outbox is sent, oldest first, when reader answers again (tried every few
     seconds, when the network is back, and on every page load). Opening a saved copy of
     an unread article is kept the same way (it is read once reader hears of it, as an
     open online would have made it). Each action carries its own random id (the
     Idempotency-Key header): reader applies an id once and answers a repeat with the
     first answer, so an action sent again
     after a lost answer, however often the connection flaps, is applied exactly once. An
     action leaves the outbox only once reader has answered it.
   - The reading position: how far through the text the person is (a fraction, not pixels),
     saved as they read (at most every few seconds, and when the page is left), kept on the
     device too, and restored on opening: the newer of reader's and the device's. Only a
     place the person moved to is sent: opening and leaving sends nothing. A place at the
     end makes the article done (off the reading list); a place sent later never puts it
     back (that is "not done", a tap of its own). */
(function () {
  "use strict";

  var SEND_EVERY = 2000;  // ms between two saves of the reading position
  var RETRY = 5000;  // ms before sending the outbox again after a failure
  var NEXT_WAIT = 3000;  // ms "Mark read and next" waits for reader before going on

  // -- IndexedDB: the outbox (actions in order) and the positions read on this device ----

  var opening = null;
  function db() {
    if (!opening) opening = new Promise(function (resolve, reject) {
      var request = indexedDB.open("reader", 1);
      request.onupgradeneeded = function () {
        request.result.createObjectStore("outbox", { keyPath: "seq", autoIncrement: true });
        request.result.createObjectStore("positions", { keyPath: "id" });
      };
      request.onsuccess = function () { resolve(request.result); };
      request.onerror = function () { reject(request.error); };
    });
    return opening;
  }
  function store(name, mode, work) {
    return db().then(function (database) {
      return new Promise(function (resolve, reject) {
        var tx = database.transaction(name, mode);
        var result = work(tx.objectStore(name));
        tx.oncomplete = function () { resolve(result && "result" in result ? result.result : result); };
        tx.onerror = function () { reject(tx.error); };
      });
    });
  }
  function all(name) { return store(name, "readonly", function (s) { return s.getAll(); }); }

  function newKey() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    var bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return (b + 256).toString(16).slice(1); }).join("");
  }

  // -- the outbox ---------------------------------------------------------------------------

  function keep(action) {
    // an action already tried once online keeps its id: the server may have applied it
    action.key = action.key || newKey();
    return store("outbox", "readwrite", function (s) {
      if (action.position || action.opened) {
        // only the latest place in an article is worth sending, and an open once
        s.openCursor().onsuccess = function (event) {
          var cursor = event.target.result;
          if (!cursor) return;
          // (the cursor also meets the action added below: that one stays)
          var older = (cursor.value.position || cursor.value.opened) && cursor.value.path === action.path &&
            cursor.value.key !== action.key;
          if (older) cursor.delete();
          cursor.continue();
        };
      }
      s.add(action);
    }).then(send);
  }

  var sending = null, again = null, more = false;
  function send() {
    if (sending) {
      more = true;  // kept while a send was going: it goes right after
      return sending;
    }
    more = false;
    if (!navigator.onLine) return Promise.resolve();
    sending = all("outbox").then(function (actions) {
      return actions.reduce(function (previous, action) {
        return previous.then(function (going) {
          if (!going) return false;
          return fetch(action.path, {
            method: action.method,
            credentials: "same-origin",
            headers: { "Content-Type": "application/json", "Idempotency-Key": action.key },
            body: action.body || null,
          }).then(function (response) {
            reached(UNREACHABLE.indexOf(response.status) < 0);
            // 5xx, 409 (still being applied), 401 (logged out), 429: try again later.
            // Anything else is reader's answer: applied, or refused for good (a 404: gone).
            if (response.status >= 500 || [401, 409, 429].indexOf(response.status) >= 0) return false;
            return store("outbox", "readwrite", function (s) { s.delete(action.seq); }).then(function () { return true; });
          }, function () { reached(false); return false; });
        });
      }, Promise.resolve(true));
    }).then(function (done) {
      sending = null;
      if (!done && !again) again = setTimeout(function () { again = null; send(); }, RETRY);
      else if (done && more) send();
    }, function () { sending = null; });
    return sending;
  }

  window.addEventListener("online", function () { showBanner(); send(); });
  window.addEventListener("offline", showBanner);

  // What a proxy in front of reader answers while reader itself is down (as static/sw.js).
  var UNREACHABLE = [502, 503, 504];
  // A saved copy means the service worker could not reach reader for this very page.
  var unreachable = document.documentElement.hasAttribute("data-saved-copy");
  function offline() { return !navigator.onLine || unreachable; }
  function reached(yes) {
    if (unreachable === !yes) return;
    unreachable = !yes;
    showBanner();
  }

  function showBanner() {
    var banner = document.getElementById("offline-banner");
    if (!banner) return;
    banner.hidden = !offline();
    var words = banner.getAttribute(navigator.onLine ? "data-unreachable" : "data-offline");
    if (words && banner.textContent !== words) banner.textContent = words;
  }

  // The pages' own forms for these actions, as the JSON API's calls.
  var FORM = /^\/articles\/(\d+)\/(star|read|unqueue|done)$/;
  var LABELS = { star: ["star", "unstar"], read: ["mark read", "mark unread"], done: ["done", "not done"] };

  // A toggle's field: `value` (on or off), or done's own `done` (1 or 0).
  function toggle(form) { return form.querySelector('input[name="value"], input[name="done"]'); }

  function asAction(form) {
    var found = FORM.exec(form.getAttribute("action") || "");
    if (!found) return null;
    var id = found[1], kind = found[2];
    if (kind === "unqueue") return { kind: kind, method: "DELETE", path: "/api/articles/" + id + "/queue" };
    var value = toggle(form);
    var on = !!value && (value.value === "on" || value.value === "1");
    return { kind: kind, on: on, method: on ? "POST" : "DELETE", path: "/api/articles/" + id + "/" + kind };
  }

  function showKept(form, action) {
    var button = form.querySelector("button");
    if (action.kind === "unqueue") {
      button.textContent = "unqueued";
      button.disabled = true;
      return;
    }
    var value = toggle(form);
    if (value.name === "done") value.value = action.on ? "0" : "1";
    else value.value = action.on ? "off" : "on";
    button.textContent = LABELS[action.kind][action.on ? 1 : 0];
    if (button.hasAttribute("aria-pressed")) button.setAttribute("aria-pressed", action.on ? "true" : "false");
  }

  function keepForm(form, action) {
    return keep({ method: action.method, path: action.path }).then(function () {
      showKept(form, action);
    });
  }

  // Capture, on window: before htmx (or the browser) sends the form to a reader that is
  // not there.
  window.addEventListener("submit", function (event) {
    var form = event.target;
    var action = form && asAction(form);
    if (!action) return;
    // "Mark read and next" ("Done and next") is a plain form (a 303 to the next article): sent through the
    // outbox whenever it can be, so that a server gone since the page loaded leaves a kept
    // action and a saved next article, not the browser's error page.
    var next = form.closest(".read-through") && form.querySelector('input[name="next"]');
    if (!offline() && !(next && window.indexedDB)) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    var kept = keepForm(form, action);
    if (!next) return;
    // on to the next article (saved too, if it is on the list) once the mark is sent, or
    // kept if reader is slow to answer: the outbox sends it later
    Promise.race([kept, new Promise(function (resolve) { setTimeout(resolve, NEXT_WAIT); })]).then(function () {
      location.assign(next.value);
    });
  }, true);

  // A tap htmx sent while reader seemed reachable and that found no server: kept all the same.
  document.addEventListener("htmx:error", function (event) {
    var form = event.target;
    var action = form && form.tagName === "FORM" && asAction(form);
    var error = event.detail && event.detail.error;
    if (!action || !(error instanceof TypeError)) return;  // a network failure, not a bug in a swap
    reached(false);
    keepForm(form, action);
  });

  // -- the reading position ------------------------------------------------------------------

  function reading() { return document.querySelector(".reading[data-article]"); }
  function readingId() { var r = reading(); return r ? r.getAttribute("data-article") : null; }
  function text() { var r = reading(); return r && (r.querySelector(".body") || r); }

  // How far through the text: the part above the top of the screen, or all of it once its
  // end is on screen.
  function fraction() {
    var box = text().getBoundingClientRect();
    if (box.height <= 0 || box.bottom <= window.innerHeight) return 1;
    return Math.max(0, Math.min(1, -box.top / box.height));
  }
  function scrollTo(position) {
    var box = text().getBoundingClientRect();
    var top = box.top + window.scrollY;
    var y = position >= 1 ? top + box.height - window.innerHeight : top + position * box.height;
    window.scrollTo(0, Math.max(0, y));
  }

  var saved = null, timer = null, moved = false;
  function savePosition() {
    timer = null;
    var r = reading();
    if (!r || !moved) return;
    var position = Math.round(fraction() * 10000) / 10000;
    if (saved !== null && Math.abs(position - saved) < 0.005) return;
    saved = position;
    var id = r.getAttribute("data-article"), at = Date.now() / 1000;
    store("positions", "readwrite", function (s) { s.put({ id: id, position: position, at: at }); });
    keep({ method: "PUT", path: "/api/articles/" + id + "/position", position: true,
           body: JSON.stringify({ position: position, at: at }) });
  }

  function startReading() {
    var r = reading();
    if (!r) return;
    var id = r.getAttribute("data-article");
    // Where the page opens is no place of the person's: a key that only leaves the page
    // (] for the next article) must not send it.
    saved = Math.round(fraction() * 10000) / 10000;
    if (offline() && r.hasAttribute("data-unread") && window.indexedDB) {
      // the saved copy of an unread article, opened: read once reader hears of it
      keep({ method: "POST", path: "/api/articles/" + id + "/opened", opened: true });
    }
    var server = r.hasAttribute("data-position")
      ? { position: parseFloat(r.getAttribute("data-position")), at: parseFloat(r.getAttribute("data-position-at")) || 0 }
      : null;
    store("positions", "readonly", function (s) { return s.get(id); }).then(function (local) {
      var best = local && (!server || local.at > server.at) ? local : server;
      // a link to a highlight (#hl-ID) opens at that passage, not at the place kept
      if (!best || moved || /^#hl-\d+$/.test(location.hash)) return;
      saved = best.position;
      scrollTo(best.position);
      // images arriving later move the text: place it again unless the person has moved on
      window.addEventListener("load", function () { if (!moved) scrollTo(best.position); });
      r.setAttribute("data-restored", String(best.position));
    }, function () { /* IndexedDB off: no place to restore */ });
    // Only a person's own scrolling is saved, never the restoring above.
    ["wheel", "touchmove", "keydown", "pointerdown"].forEach(function (name) {
      window.addEventListener(name, function () { moved = true; }, { passive: true, capture: true });
    });
    window.addEventListener("scroll", function () {
      if (moved && !timer) timer = setTimeout(savePosition, SEND_EVERY);
    }, { passive: true });
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "hidden") { clearTimeout(timer); savePosition(); }
    });
  }

  // -- logging out -----------------------------------------------------------------------------
  // What this device saved is the person's: logging out drops the outbox and the positions
  // (this database) and the service worker's saved pages (it is told). The logout's
  // Clear-Site-Data does the same where the browser honours it (reader/web/pages/session.py).
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form || form.getAttribute("action") !== "/logout" || event.defaultPrevented) return;
    if (navigator.serviceWorker && navigator.serviceWorker.controller) {
      navigator.serviceWorker.controller.postMessage("logout");
    }
    if (!window.indexedDB) return;
    // this page's own connection would hold the deletion back until the page is gone
    if (opening) opening.then(function (database) { database.close(); }, function () {});
    opening = Promise.reject(new Error("logged out"));
    opening.catch(function () {});
    indexedDB.deleteDatabase("reader");
  });

  // static/highlights.js keeps the highlights made offline in the same outbox
  window.readerOutbox = { keep: keep, offline: function () { return offline(); } };

  function start() {
    showBanner();
    startReading();
    if (window.indexedDB) send();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
