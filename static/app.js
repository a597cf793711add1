/* reader: the small script on every page (the CSP allows scripts from 'self' only: no
   inline scripts, no inline handlers). Everything here is optional: without it the pages
   work through plain forms and links.

   - theme: light, dark or the system's, remembered in localStorage, applied to <html>
     before the page paints (this file is loaded without defer, in <head>);
   - reading preferences: serif or sans, text size steps;
   - the service worker (static/sw.js): registered here, asked to sync the saved list;
   - keyboard: j/k move between cards, q queue, n queue first, o/Enter open, s star,
     m read or unread, e done, v the original in a new tab, A mark the page read,
     u back to the list, ] / [ (and j/k) next / previous article while reading, g then
     u/r/s/f a list, / search, ? the list of keys. Actions click the card's own
     buttons and links, so the forms (and htmx on them) stay the one way things happen. */
(function () {
  "use strict";
  var root = document.documentElement;
  var THEMES = ["system", "light", "dark"];
  var SIZES = [-2, -1, 0, 1, 2, 3];

  function load(key, fallback) {
    try { return localStorage.getItem(key) || fallback; } catch (e) { return fallback; }
  }
  function save(key, value) {
    try { localStorage.setItem(key, value); } catch (e) { /* private mode: not remembered */ }
  }
  function applyTheme(theme) {
    if (theme === "light" || theme === "dark") root.setAttribute("data-theme", theme);
    else root.removeAttribute("data-theme");
  }
  function applyFont(font) {
    if (font === "sans") root.setAttribute("data-font", "sans"); else root.removeAttribute("data-font");
  }
  function applySize(size) {
    if (size && size !== "0") root.setAttribute("data-size", size); else root.removeAttribute("data-size");
  }
  // Before the first paint.
  applyTheme(load("reader.theme", "system"));
  applyFont(load("reader.font", "serif"));
  applySize(load("reader.size", "0"));

  function $(id) { return document.getElementById(id); }

  function setupControls() {
    var nodes = document.querySelectorAll("[data-js-only]");
    for (var i = 0; i < nodes.length; i++) nodes[i].hidden = false;

    var themeButton = $("theme-toggle");
    function showTheme() {
      if (themeButton) themeButton.textContent = "Theme: " + load("reader.theme", "system");
    }
    if (themeButton) {
      showTheme();
      themeButton.addEventListener("click", function () {
        var now = THEMES.indexOf(load("reader.theme", "system"));
        var next = THEMES[(now + 1) % THEMES.length];
        save("reader.theme", next);
        applyTheme(next);
        showTheme();
      });
    }
    var fontButton = $("font-toggle");
    function showFont() {
      if (fontButton) fontButton.textContent = load("reader.font", "serif") === "sans" ? "Serif" : "Sans";
      // The name starts with the visible word, so what a person sees is what they can say.
      if (fontButton) fontButton.setAttribute("aria-label",
        load("reader.font", "serif") === "sans" ? "Serif: use a serif font" : "Sans: use a sans-serif font");
    }
    if (fontButton) {
      showFont();
      fontButton.addEventListener("click", function () {
        var next = load("reader.font", "serif") === "sans" ? "serif" : "sans";
        save("reader.font", next);
        applyFont(next);
        showFont();
      });
    }
    function step(by) {
      var now = SIZES.indexOf(parseInt(load("reader.size", "0"), 10));
      if (now < 0) now = SIZES.indexOf(0);
      var next = SIZES[Math.max(0, Math.min(SIZES.length - 1, now + by))];
      save("reader.size", String(next));
      applySize(String(next));
    }
    var down = $("size-down"), up = $("size-up");
    if (down) down.addEventListener("click", function () { step(-1); });
    if (up) up.addEventListener("click", function () { step(1); });

    var dialog = $("keys");
    var open = $("keys-open"), close = $("keys-close");
    if (open && dialog) open.addEventListener("click", function () { showKeys(); });
    if (close && dialog) close.addEventListener("click", function () { dialog.close(); });
  }

  function showKeys() {
    var dialog = $("keys");
    if (!dialog || dialog.open) return;
    dialog.showModal();  // Esc closes it; focus returns to where it was
  }

  // -- keyboard ------------------------------------------------------------------------

  var currentId = null;  // the card j/k moved to, by id: an htmx swap replaces the element

  function cards() { return Array.prototype.slice.call(document.querySelectorAll("article.card")); }
  function currentCard() {
    var el = currentId && $(currentId);
    if (el) return el;
    var active = document.activeElement;
    return active && active.closest ? active.closest("article.card") : null;
  }
  function select(card) {
    var old = document.querySelectorAll("article.card.is-current");
    for (var i = 0; i < old.length; i++) old[i].classList.remove("is-current");
    currentId = card.id;
    card.classList.add("is-current");
    card.focus({ preventScroll: true });
  }
  function focusCard(card) {
    select(card);
    card.scrollIntoView({ block: "nearest" });
    rememberCard(card);
  }
  function move(by) {
    var all = cards();
    if (!all.length) return;
    var at = all.indexOf(currentCard());
    var next = at < 0 ? (by > 0 ? 0 : all.length - 1) : Math.max(0, Math.min(all.length - 1, at + by));
    focusCard(all[next]);
  }
  function clickIn(scope, selector) {
    var el = scope && scope.querySelector(selector);
    if (el) { el.click(); return true; }
    return false;
  }
  function openCard(card) {
    return clickIn(card, "h2 a");
  }
  function typing(target) {
    if (!target || !target.closest) return false;
    return target.isContentEditable || !!target.closest("input, textarea, select, [contenteditable]");
  }
  // Where a person was in a list, per tab (sessionStorage): the list's address and the card
  // they had selected or opened. `u` and the browser's Back both load the list afresh (pages
  // are no-store, so the states are live) and the card is selected again where it was.
  // The referrer cannot say where they came from: pages are sent with no-referrer.
  function remember(key, value) {
    try { sessionStorage.setItem(key, value); } catch (e) { /* storage off: start at the top */ }
  }
  function recall(key) {
    try { return sessionStorage.getItem(key); } catch (e) { return null; }
  }
  function here() { return location.pathname + location.search; }
  function rememberCard(card) {
    remember("reader.at " + here(), card.id);
    remember("reader.list", here());
  }
  function restoreCard() {
    var id = recall("reader.at " + here());
    var card = id && $(id);
    if (!card || !card.matches("article.card")) return;
    select(card);
    var box = card.getBoundingClientRect();
    if (box.top < 0 || box.bottom > window.innerHeight) card.scrollIntoView({ block: "center" });
  }
  document.addEventListener("click", function (event) {
    var card = event.target && event.target.closest ? event.target.closest("article.card") : null;
    if (card) rememberCard(card);
  }, true);
  // A row's "more" menu is a <details> (it works without JavaScript); with it, one menu is open
  // at a time and a tap elsewhere or Esc closes it, as a menu does.
  function closeMenus(except) {
    var open = document.querySelectorAll("details.more[open]");
    for (var i = 0; i < open.length; i++) if (open[i] !== except) open[i].open = false;
  }
  document.addEventListener("click", function (event) {
    closeMenus(event.target && event.target.closest ? event.target.closest("details.more") : null);
  });

  function backToList() {
    if (!document.querySelector(".reading")) return false;
    var target = recall("reader.list") || "/";
    if (target.charAt(0) !== "/" || target.charAt(1) === "/") target = "/";
    location.assign(target);
    return true;
  }

  // -- more keys: v, m, e, A, g then a list, ? again to close the list of keys, j/k while
  // reading. Added before the listener below, so a key handled here (defaultPrevented) is
  // not handled there too: after g, u and s name a list, not "back" and "star".
  var GO_TO = { u: "/?unread=1", r: "/?state=ready&unread=1", s: "/?starred=1", f: "/feeds" };
  var GO_WAIT = 1500;  // ms after g in which its second key counts
  var goSince = 0;

  function openOriginal(scope) {
    // the card's "original" link (behind its menu; never clicked, so no menu has to open)
    var link = scope && scope.querySelector('a[data-key="v"], a[rel~="noopener"][href^="http"]');
    if (!link) return false;
    window.open(link.href, "_blank", "noopener,noreferrer");
    return true;
  }
  function markPageRead() {
    // the page's "Mark these read" (the ids of its cards): its answer has the undo notice
    var button = document.querySelector('button[data-key="A"]');
    var ids = !button && document.querySelector('form[action="/articles/read"] input[name="ids"]');
    if (ids) button = ids.form.querySelector('button[type="submit"]');
    if (!button) return false;
    button.click();
    return true;
  }
  function moreKeys(event) {
    if (event.ctrlKey || event.altKey || event.metaKey || event.defaultPrevented) return;
    if (typing(event.target)) return;
    var key = event.key;
    var dialog = $("keys");
    if (dialog && dialog.open) {
      if (key === "?") { dialog.close(); event.preventDefault(); }
      return;
    }
    if (key === "Shift") return;  // on its way to A or ?
    var going = goSince && Date.now() - goSince < GO_WAIT;
    goSince = 0;
    if (going) {
      if (GO_TO[key]) { event.preventDefault(); location.assign(GO_TO[key]); }
      return;
    }
    var card = currentCard();
    var reading = document.querySelector(".reading");
    var handled = true;
    if (key === "g") goSince = Date.now();
    else if (key === "v") handled = openOriginal(card || reading);
    else if (key === "m") handled = clickIn(card || (reading && $("reading-tools")), 'form[action$="/read"] button[type="submit"]');
    else if (key === "e") handled = clickIn(card || (reading && document), 'button[data-key="e"]');
    else if (key === "A") handled = !reading && markPageRead();
    else if (reading && (key === "j" || key === "k")) handled = clickIn(document, 'a[data-key="' + (key === "j" ? "]" : "[") + '"]');
    else handled = false;
    if (handled) event.preventDefault();
  }
  document.addEventListener("keydown", moreKeys);

  // The reader view's text menu (a <details>, so it opens without JavaScript too): Esc or a
  // tap elsewhere closes it, as a menu does.
  function closeTextMenu(event) {
    var menu = document.querySelector("details.text-menu[open]");
    if (!menu) return;
    if (event.type === "keydown") {
      if (event.key !== "Escape") return;
      menu.open = false;
      menu.querySelector("summary").focus();
    } else if (!menu.contains(event.target)) {
      menu.open = false;
    }
  }
  document.addEventListener("keydown", closeTextMenu);
  document.addEventListener("click", closeTextMenu);

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.altKey || event.metaKey || event.defaultPrevented) return;
    if (typing(event.target)) return;
    var dialog = $("keys");
    if (dialog && dialog.open) return;  // the dialog's own keys (Esc, Tab) only
    if (event.key === "Escape" && document.querySelector("details.more[open]")) {
      var menu = document.querySelector("details.more[open]");
      closeMenus(null);
      menu.querySelector("summary").focus();
      return;
    }
    var key = event.key;
    var card = currentCard();
    var reading = document.querySelector(".reading");
    var handled = true;
    if (key === "j") move(1);
    else if (key === "k") move(-1);
    else if (key === "/") {
      var box = $("q");
      if (box) { box.focus(); box.select(); } else handled = false;
    } else if (key === "?") showKeys();
    else if (key === "u") handled = backToList();
    else if (key === "]" || key === "[") handled = clickIn(reading && document, 'a[data-key="' + key + '"]');
    else if (key === "o") handled = card ? openCard(card) : false;
    else if (key === "Enter") handled = card && document.activeElement === card ? openCard(card) : false;
    else if (key === "q") handled = card ? clickIn(card, 'button[data-key="q"]') : false;
    else if (key === "n") handled = card ? clickIn(card, 'button[data-key="n"]') : false;
    else if (key === "s") handled = clickIn(card || (reading && $("reading-tools")), 'button[data-key="s"]');
    else handled = false;
    if (handled) event.preventDefault();
  });

  // A tapped card is replaced by htmx (outerHTML): keep the place j/k had reached.
  document.addEventListener("htmx:after:swap", function () {
    if (!currentId) return;
    var card = $(currentId);
    if (card && !card.classList.contains("is-current")) {
      card.classList.add("is-current");
      var active = document.activeElement;
      if (!active || active === document.body) card.focus({ preventScroll: true });
    }
  });

  // Code blocks and wide tables in an article scroll sideways on their own: the keyboard must
  // be able to reach them to scroll them.
  function scrollablesFocusable() {
    var nodes = document.querySelectorAll(".reading .body pre, .reading .body table");
    for (var i = 0; i < nodes.length; i++) if (!nodes[i].hasAttribute("tabindex")) nodes[i].tabIndex = 0;
  }
  document.addEventListener("htmx:after:swap", scrollablesFocusable);

  // The installable app (static/sw.js): the worker is registered on every page, and each
  // page load while online asks it to bring the saved reading list up to date. Its answer
  // (how many articles are saved) is put on <html> and in the footer. Offline actions and
  // the reading position are in static/offline.js.
  function startWorker() {
    if (!("serviceWorker" in navigator) || !window.isSecureContext) return;
    navigator.serviceWorker.addEventListener("message", function (event) {
      var data = event.data || {};
      if (typeof data.saved !== "number") return;
      root.setAttribute("data-saved", String(data.saved));
      root.setAttribute("data-worker", String(data.version));
      var note = $("saved-note");
      if (note) {
        note.textContent = data.saved === 1 ? "1 article saved on this device for offline reading"
          : data.saved + " articles saved on this device for offline reading";
        note.hidden = false;
      }
    });
    navigator.serviceWorker.register("/sw.js").then(function () {
      return navigator.serviceWorker.ready;
    }).then(function (registration) {
      if (navigator.onLine && registration.active) registration.active.postMessage("sync");
    }).catch(function () { /* no worker: the pages work as before, online */ });
  }

  function start() {
    setupControls();
    scrollablesFocusable();
    restoreCard();
    startWorker();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
