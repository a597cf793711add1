// The save page opened by the bookmarklet in a new tab (page=1). It tells the tab that
// opened it (only at the origin of the link being saved) that it is ready; that tab
// answers with the page as the browser rendered it. On Save, that page is posted to
// /save/page with the CSRF token, and the article is cleaned from it: the second chance
// for a page the server could not clean (one that needs JavaScript or refuses servers).
(function () {
  "use strict";
  var form = document.querySelector("form.save-confirm[data-page-max]");
  if (!form || !window.opener) return;
  var status = form.querySelector(".page-status");
  var button = form.querySelector("button[type=submit]");
  var max = parseInt(form.getAttribute("data-page-max"), 10) || 0;
  var link = form.elements.url.value;
  var origin;
  try { origin = new URL(link).origin; } catch (e) { return; }
  var page = null;

  function say(text) {
    status.textContent = text;
    status.hidden = false;
  }

  window.addEventListener("message", function (event) {
    var data = event.data;
    if (event.source !== window.opener || event.origin !== origin) return;
    if (!data || data.reader !== "page" || typeof data.html !== "string") return;
    var bytes = new TextEncoder().encode(data.html);
    // A page past the cap is cut, not refused: the article's text is nearly always in
    // its first megabytes, and the server refuses anything longer (413).
    page = bytes.length > max ? bytes.slice(0, max) : bytes;
    say("Your browser's copy of this page (" + Math.ceil(page.length / 1024) +
        " KB) is here: Save cleans the article from it.");
    button.textContent = "Save and clean from this page";
  });
  window.opener.postMessage("reader:ready", origin);

  form.addEventListener("submit", function (event) {
    // No page arrived, or the link was edited since (the page is only ever the one at the
    // address it came from): an ordinary save of the link.
    if (page === null || form.elements.url.value !== link) return;
    event.preventDefault();
    button.disabled = true;
    say("Cleaning…");
    var query = "?url=" + encodeURIComponent(link) +
                "&title=" + encodeURIComponent(form.elements.title.value);
    fetch("/save/page" + query, {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "text/html; charset=utf-8", "X-CSRF-Token": form.elements.csrf.value},
      body: new Blob([page], {type: "text/html; charset=utf-8"})
    }).then(function (response) {
      return response.json().catch(function () { return {error: "reader answered " + response.status}; });
    }).then(function (answer) {
      if (answer.location) {
        window.location.href = answer.location;
      } else {
        button.disabled = false;
        say("Could not clean it from this page: " + (answer.error || "unknown error"));
      }
    }, function () {
      button.disabled = false;
      say("Could not reach reader: try again.");
    });
  });
})();
