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
     buttons and links, so the forms (and htmx on them) stay the one way things happen;
   - a card's ⋯: the page's one menu, copied into the card and filled from it (fillMenu);
   - the feed filter: a choice applies at once. */
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
    // a card's star and queue first are in its menu, filled in when first asked for
    if (!el && scope && scope.matches && scope.matches("article.card") && fillMenu(scope)) el = scope.querySelector(selector);
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
  // -- a card's menu --------------------------------------------------------------------
  // A card carries its facts (its id, its state and lane as classes, data-starred, data-done,
  // data-url, its tag links) and a ⋯ button (templates/_card.html); the menu's forms are the
  // page's one <template id="row-menu">, copied into the card the first time they are
  // needed, filled from those facts and handed to htmx. A tap swaps the whole card, menu
  // and all, for the server's new one. One menu is open at a time; a tap elsewhere or Esc
  // closes it, as a menu does.
  function fillMenu(card) {
    var menu = card.querySelector(".more-menu");
    if (menu) return menu;
    var template = $("row-menu"), actions = card.querySelector(".actions");
    if (!template || !actions) return null;
    menu = template.content.firstElementChild.cloneNode(true);
    var id = card.id.replace("card-", ""), state = /\bstate-(\w+)/.exec(card.className);
    state = state ? state[1] : "";
    var first = card.classList.contains("lane-next");
    var forms = menu.querySelectorAll("form[data-do]");
    for (var i = 0; i < forms.length; i++) {
      var form = forms[i], path = "/articles/" + id + "/" + form.getAttribute("data-do");
      form.setAttribute("action", path);
      form.setAttribute("hx-post", path);  // into the card: the list's inherited target
    }
    var lane = menu.querySelector('form[data-do="queue"]');
    if (state === "queued" && first) {  // back in line: no key, n is for queue first
      lane.querySelector('input[name="lane"]').value = "normal";
      var back = lane.querySelector("button");
      back.textContent = "back in line";
      back.removeAttribute("data-key");
    } else if (state !== "new" && state !== "failed" && state !== "queued") {
      lane.remove();  // being cleaned or ready: nothing to move in the line
    }
    var starred = card.hasAttribute("data-starred"), done = card.hasAttribute("data-done");
    var isRead = card.getAttribute("data-read") === "yes";
    var star = menu.querySelector('form[data-do="star"]'), read = menu.querySelector('form[data-do="read"]');
    star.querySelector('input[name="value"]').value = starred ? "off" : "on";
    star.querySelector("button").textContent = starred ? "unstar" : "star";
    read.querySelector('input[name="value"]').value = isRead ? "off" : "on";
    read.querySelector("button").textContent = isRead ? "mark unread" : "mark read";
    // done is the reading list's own fact, so only a ready card has it (key e)
    var finished = menu.querySelector('form[data-do="done"]');
    if (state === "ready") {
      finished.querySelector('input[name="done"]').value = done ? "0" : "1";
      finished.querySelector("button").textContent = done ? "not done" : "done";
    } else {
      finished.remove();
    }
    menu.querySelector("a.button").href = card.getAttribute("data-url") || "";
    var tags = Array.prototype.map.call(card.querySelectorAll(".meta a.tag"), function (a) {
      return a.textContent.replace(/^#/, "");
    });
    menu.querySelector('input[name="tags"]').value = tags.join(", ");
    menu.id = "menu-" + id;
    menu.hidden = true;
    actions.appendChild(menu);
    if (window.htmx) window.htmx.process(menu);
    var toggle = card.querySelector(".more-toggle");
    if (toggle) toggle.setAttribute("aria-controls", menu.id);
    return menu;
  }
  function openMenu(card, open) {
    var toggle = card.querySelector(".more-toggle");
    var menu = open ? fillMenu(card) : card.querySelector(".more-menu");
    if (!toggle || !menu) return;
    menu.hidden = !open;
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
    if (open) {
      var first = menu.querySelector("button, a[href]");
      if (first) first.focus();
    }
  }
  function openMenus() {
    return Array.prototype.slice.call(document.querySelectorAll('article.card .more-toggle[aria-expanded="true"]'));
  }
  function closeMenus(except) {
    openMenus().forEach(function (toggle) {
      var card = toggle.closest("article.card");
      if (card !== except) openMenu(card, false);
    });
  }
  document.addEventListener("click", function (event) {
    var target = event.target && event.target.closest ? event.target : null;
    var toggle = target && target.closest(".more-toggle");
    var card = target && target.closest("article.card");
    if (toggle && card) openMenu(card, toggle.getAttribute("aria-expanded") !== "true");
    closeMenus(target && target.closest(".more-toggle, .more-menu") ? card : null);
  });
  // Esc in an open menu (its fields too) closes it and gives the focus back to its ⋯.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    var open = openMenus();
    if (!open.length) return;
    closeMenus(null);
    open[0].focus();
    event.preventDefault();
  }, true);

  // What only this script uses, it adds to the cards itself (a page of 50 carries less): each
  // card its focus for j/k and its name (its title) when focused, each ⋯ its name ("More for
  // <title>", #more-for and the card's h2) and its closed state, and each card's time its exact
  // moment on hover. On every card the page gets, swapped or polled.
  function dressCards() {
    var plain = document.querySelectorAll("article.card:not([tabindex])");
    for (var k = 0; k < plain.length; k++) {
      var heading = plain[k].querySelector("h2[id]");
      plain[k].tabIndex = -1;
      if (heading) plain[k].setAttribute("aria-labelledby", heading.id);
    }
    var toggles = document.querySelectorAll("article.card .more-toggle:not([aria-expanded])");
    for (var i = 0; i < toggles.length; i++) {
      var card = toggles[i].closest("article.card"), title = card && card.querySelector("h2[id]");
      toggles[i].type = "button";
      toggles[i].setAttribute("aria-expanded", "false");
      if (title) toggles[i].setAttribute("aria-labelledby", "more-for " + title.id);
    }
    var times = document.querySelectorAll("article.card time[datetime]:not([title])");
    for (var j = 0; j < times.length; j++) {
      var at = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)Z$/.exec(times[j].getAttribute("datetime"));
      if (at) times[j].title = at[1] + " " + at[2] + " UTC";
    }
  }
  document.addEventListener("htmx:after:swap", dressCards);
  document.addEventListener("htmx:after:settle", dressCards);

  // -- the feed filter ---------------------------------------------------------------------
  // Choosing a feed shows it at once (Show is there only without JavaScript). Arrow keys on a
  // closed select change it option by option: those wait for Enter or for the focus to leave.
  function setupApplying() {
    var selects = document.querySelectorAll("select[data-applies]");
    for (var i = 0; i < selects.length; i++) applyOnChange(selects[i]);
  }
  function applyOnChange(select) {
    var keyed = false, chosen = select.value;
    function apply() {
      keyed = false;
      if (select.value === chosen || !select.form) return;
      chosen = select.value;
      if (select.form.requestSubmit) select.form.requestSubmit(); else select.form.submit();
    }
    select.addEventListener("keydown", function (event) {
      if (event.key === "Enter") { event.preventDefault(); apply(); }
      else if (/^(Arrow|Page|Home|End)/.test(event.key) || event.key.length === 1) keyed = true;
    });
    select.addEventListener("change", function () { if (!keyed) apply(); });
    select.addEventListener("blur", function () { if (keyed) apply(); });
  }

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
    // a row names its original in data-url (its link is in the menu, filled when opened)
    var url = scope && scope.getAttribute && scope.getAttribute("data-url");
    var link = !url && scope && scope.querySelector('a[data-key="v"], a[rel~="noopener"][href^="http"]');
    if (link) url = link.href;
    if (!url) return false;
    window.open(url, "_blank", "noopener,noreferrer");
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
    dressCards();
    setupApplying();
    scrollablesFocusable();
    restoreCard();
    startWorker();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
