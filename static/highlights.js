/* Highlights in the reader view (templates/_highlights.html): select text in the article
   and press h, or the Highlight button shown by the selection, to highlight it; click a
   highlight (or its Edit button in the list under the article) to add a note, a color or
   tags, or to delete it.

   The selection is sent as its quote with 128 characters of the text on either side, taken
   from the article body's DOM text; the server places it in the plain text it keeps
   (reader/clean/anchors.py, blind to the whitespace in which the two differ) and answers
   with its offsets there. The marks are painted at once; one the server refuses (a 422:
   not in the text) is taken off again, with its reason. Offline (or when reader does not
   answer) the action goes into static/offline.js's outbox with its idempotency key, the
   mark stays, and it is sent once reader answers; it can be edited or deleted meanwhile (those
   wait behind it in the outbox, naming it by its key). Reading highlights needs none of this:
   the server paints them in the page. Notes and tags are set as text, never as HTML. */
(function () {
  "use strict";

  // context sent on each side: the server keeps 32 characters, and weighs up to 128 to tell
  // a repeated quote's places apart
  var CONTEXT = 128;
  var data = {};  // highlight id -> {id, color, note, tags, quote}

  function $(id) { return document.getElementById(id); }
  function body() { return document.querySelector(".reading .reading-body > .body"); }
  function articleId() {
    var r = document.querySelector(".reading[data-article]");
    return r ? r.getAttribute("data-article") : null;
  }
  function typing(target) {
    return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  }
  function say(message) {
    var status = $("highlight-status");
    if (status) status.textContent = message;
  }
  function newKey() {
    var bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return "hl-" + Array.prototype.map.call(bytes, function (b) { return (b + 256).toString(16).slice(1); }).join("");
  }

  // -- the selection -----------------------------------------------------------------------

  function selected() {
    var selection = window.getSelection();
    var b = body();
    if (!b || !selection || selection.rangeCount === 0 || selection.isCollapsed) return null;
    var range = selection.getRangeAt(0);
    if (!b.contains(range.commonAncestorContainer) || !range.toString().trim()) return null;
    return range;
  }

  function context(range) {
    var b = body();
    var before = document.createRange();
    before.selectNodeContents(b);
    before.setEnd(range.startContainer, range.startOffset);
    var after = document.createRange();
    after.selectNodeContents(b);
    after.setStart(range.endContainer, range.endOffset);
    return { quote: range.toString(), prefix: before.toString().slice(-CONTEXT), suffix: after.toString().slice(0, CONTEXT) };
  }

  // -- marks in the text -------------------------------------------------------------------

  // The range's text as <mark>s, one per text node it touches (as the server paints them:
  // whitespace between blocks is left unmarked).
  function wrap(range, color, id) {
    var root = range.commonAncestorContainer;
    var nodes = [];
    if (root.nodeType === 3) nodes.push(root);
    else {
      var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      var node;
      while ((node = walker.nextNode())) if (range.intersectsNode(node)) nodes.push(node);
    }
    var start = range.startContainer, from = range.startOffset, end = range.endContainer, to = range.endOffset;
    var marks = [];
    nodes.forEach(function (piece) {
      var a = piece === start ? from : 0, z = piece === end ? to : piece.data.length;
      if (a >= z) return;
      if (z < piece.data.length) piece.splitText(z);
      if (a > 0) piece = piece.splitText(a);
      if (!piece.data.trim()) return;
      var mark = document.createElement("mark");
      mark.className = "hl hl-" + color;
      mark.setAttribute("data-hl", id);
      piece.parentNode.insertBefore(mark, piece);
      mark.appendChild(piece);
      marks.push(mark);
    });
    return marks;
  }

  function marksOf(id) {
    return Array.prototype.slice.call(document.querySelectorAll('.reading .body mark.hl[data-hl="' + id + '"]'));
  }

  function unwrap(marks) {
    marks.forEach(function (mark) {
      var parent = mark.parentNode;
      if (!parent) return;
      while (mark.firstChild) parent.insertBefore(mark.firstChild, mark);
      parent.removeChild(mark);
      parent.normalize();
    });
  }

  function recolor(marks, color) {
    marks.forEach(function (mark) {
      mark.className = mark.className.replace(/\bhl-(yellow|green|blue|pink)\b/, "hl-" + color);
    });
  }

  // -- the list under the article -----------------------------------------------------------

  function listItem(h) {
    var list = $("highlight-list");
    if (!list) return;
    var item = list.querySelector('li[data-hl="' + h.id + '"]');
    if (!item) {
      item = document.createElement("li");
      item.className = "highlight-item";
      item.setAttribute("data-hl", String(h.id));
      list.appendChild(item);
      var section = $("highlights");
      if (section) section.removeAttribute("data-empty");
    }
    item.textContent = "";
    var quote = document.createElement("a");
    quote.className = "highlight-quote hl-" + h.color;
    quote.href = "#hl-" + h.id;
    quote.textContent = h.quote.length > 300 ? h.quote.slice(0, 297) + "..." : h.quote;
    item.appendChild(quote);
    if (h.note) {
      var note = document.createElement("p");
      note.className = "highlight-note";
      note.textContent = h.note;
      item.appendChild(note);
    }
    if (h.tags && h.tags.length) {
      var tags = document.createElement("p");
      tags.className = "meta highlight-tags";
      tags.textContent = h.tags.map(function (t) { return "#" + t; }).join(", ");
      item.appendChild(tags);
    }
    addEditButton(item);
  }

  function addEditButton(item) {
    if (item.querySelector(".highlight-edit")) return;
    var id = item.getAttribute("data-hl");
    if (!data[id]) return;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "secondary highlight-edit";
    button.textContent = "Edit";
    button.setAttribute("aria-label", "Edit highlight: " + data[id].quote.slice(0, 60));
    button.addEventListener("click", function () { edit(id, button); });
    item.appendChild(button);
  }

  // -- talking to reader -----------------------------------------------------------------------

  // Send an action once, with its key; a network failure or an answer that says "later"
  // puts it in the outbox (same key: reader may have applied it). Calls done(answer) on
  // reader's answer, refused(message) on a refusal, kept() when it waits in the outbox.
  function send(method, path, payload, done, refused, kept, key) {
    key = key || newKey();
    var body = payload ? JSON.stringify(payload) : null;
    function keepIt() {
      if (window.readerOutbox) {
        window.readerOutbox.keep({ method: method, path: path, body: body, key: key });
        kept();
      } else refused("reader cannot be reached: try again when it answers");
    }
    if (window.readerOutbox && window.readerOutbox.offline()) { keepIt(); return; }
    fetch(path, {
      method: method, credentials: "same-origin", body: body,
      headers: { "Content-Type": "application/json", "Idempotency-Key": key },
    }).then(function (response) {
      if (response.status >= 500 || [401, 409, 429].indexOf(response.status) >= 0) { keepIt(); return; }
      return response.json().then(function (answer) {
        if (response.ok) done(answer);
        else refused(answer.error || "reader refused it");
      }, function () { refused("reader answered with something that is not JSON"); });
    }, keepIt);
  }

  function make() {
    var range = selected();
    var id = articleId();
    if (!range || !id) return false;
    var found = context(range);
    var pending = "new-" + Date.now();
    var key = newKey();
    var marks = wrap(range, "yellow", pending);
    marks.forEach(function (mark) { mark.classList.add("hl-pending"); });
    window.getSelection().removeAllRanges();
    hideButton();
    send("POST", "/api/articles/" + id + "/highlights", found, function (h) {
      marks.forEach(function (mark, i) {
        mark.classList.remove("hl-pending");
        mark.setAttribute("data-hl", h.id);
        if (i === 0) mark.id = "hl-" + h.id;
      });
      data[h.id] = { id: h.id, color: h.color, note: h.note, tags: h.tags, quote: h.quote };
      listItem(data[h.id]);
      say("Highlighted.");
    }, function (message) {
      unwrap(marks);
      say("Not highlighted: " + message + ".");
    }, function () {
      // Kept in the outbox: it has no id yet, but it can be edited or deleted already. Those
      // go into the outbox after it and name it by its key (/api/highlights/made/KEY), so
      // reader applies them in order once it answers.
      data[pending] = { id: pending, color: "yellow", note: "", tags: [], quote: found.quote, made: key };
      listItem(data[pending]);
      say("Highlighted on this device: it is sent to reader when it answers again.");
    }, key);
    return true;
  }

  // The path of a highlight's own actions: its id, or the key it was made by offline.
  function pathOf(h) { return h.made ? "/api/highlights/made/" + h.made : "/api/highlights/" + h.id; }

  // An edit or a delete of a highlight made offline waits behind its making, in the outbox.
  function sendAfterMaking(h, method, payload, message) {
    if (h.made && window.readerOutbox) {
      window.readerOutbox.keep({ method: method, path: pathOf(h), body: payload ? JSON.stringify(payload) : null });
      say(message + " on this device: it is sent to reader after the highlight.");
      return true;
    }
    return false;
  }

  // -- the button by the selection -------------------------------------------------------------

  function hideButton() {
    var holder = $("highlight-make");
    if (holder) holder.hidden = true;
  }

  var pendingShow = null;
  function placeButton() {
    pendingShow = null;
    var holder = $("highlight-make");
    var range = selected();
    if (!holder) return;
    if (!range) { holder.hidden = true; return; }
    var rects = range.getClientRects();
    var last = rects.length ? rects[rects.length - 1] : range.getBoundingClientRect();
    holder.hidden = false;
    // below the selection's end (a phone shows its own menu above the selection)
    var left = Math.max(8, Math.min(last.right + window.scrollX - holder.offsetWidth / 2,
                                    document.documentElement.clientWidth - holder.offsetWidth - 8));
    holder.style.left = left + "px";
    holder.style.top = (last.bottom + window.scrollY + 8) + "px";
  }

  // -- the editor ---------------------------------------------------------------------------------

  var editing = null, returnTo = null;
  function edit(id, from) {
    var dialog = $("highlight-editor");
    var h = data[id];
    if (!dialog || !h || typeof dialog.showModal !== "function") return;
    editing = id;
    returnTo = from || null;
    $("highlight-editor-quote").textContent = h.quote;
    $("highlight-note").value = h.note || "";
    $("highlight-tags").value = (h.tags || []).join(", ");
    var radios = dialog.querySelectorAll('input[name="color"]');
    for (var i = 0; i < radios.length; i++) radios[i].checked = radios[i].value === h.color;
    dialog.returnValue = "";
    dialog.showModal();
    $("highlight-note").focus();
  }

  function closed() {
    var dialog = $("highlight-editor");
    var id = editing;
    editing = null;
    if (returnTo && document.contains(returnTo)) returnTo.focus();
    if (!id || !data[id]) return;
    var h = data[id];
    if (dialog.returnValue === "save") {
      var checked = dialog.querySelector('input[name="color"]:checked');
      var change = {
        note: $("highlight-note").value,
        color: checked ? checked.value : h.color,
        tags: $("highlight-tags").value.split(",").map(function (t) { return t.trim(); }).filter(Boolean),
      };
      var before = { note: h.note, color: h.color, tags: h.tags };
      h.note = change.note; h.color = change.color; h.tags = change.tags;
      recolor(marksOf(id), h.color);
      listItem(h);
      if (sendAfterMaking(h, "PATCH", change, "Saved")) return;
      send("PATCH", pathOf(h), change, function (answer) {
        h.note = answer.note; h.tags = answer.tags; h.color = answer.color;
        listItem(h);
        say("Saved.");
      }, function (message) {
        h.note = before.note; h.color = before.color; h.tags = before.tags;
        recolor(marksOf(id), h.color);
        listItem(h);
        say("Not saved: " + message + ".");
      }, function () { say("Saved on this device: it is sent to reader when it answers again."); });
    } else if (dialog.returnValue === "delete") {
      unwrap(marksOf(id));
      var item = document.querySelector('#highlights li[data-hl="' + id + '"]');
      if (item) item.parentNode.removeChild(item);
      delete data[id];
      if (sendAfterMaking(h, "DELETE", null, "Deleted")) return;
      send("DELETE", pathOf(h), null, function () { say("Highlight deleted."); },
           function (message) { say("Not deleted: " + message + "."); },
           function () { say("Deleted on this device: it is sent to reader when it answers again."); });
    }
  }

  // -- wiring ------------------------------------------------------------------------------------

  function start() {
    if (!body() || !$("highlights")) return;
    Array.prototype.forEach.call(document.querySelectorAll("#highlights li[data-hl]"), function (item) {
      var tags = [];
      try { tags = JSON.parse(item.getAttribute("data-tags") || "[]"); } catch (e) { /* none */ }
      var id = item.getAttribute("data-hl");
      data[id] = { id: id, color: item.getAttribute("data-color") || "yellow", note: item.getAttribute("data-note") || "",
                   tags: tags, quote: item.getAttribute("data-quote") || "" };
    });
    Array.prototype.forEach.call(document.querySelectorAll("#highlights li[data-hl]"), addEditButton);
    var dialog = $("highlight-editor");
    if (dialog) {
      dialog.addEventListener("close", closed);
      Array.prototype.forEach.call(dialog.querySelectorAll("button[data-close]"), function (button) {
        button.addEventListener("click", function () { dialog.close(button.getAttribute("data-close")); });
      });
      $("highlight-tags").addEventListener("keydown", function (event) {
        if (event.key === "Enter") { event.preventDefault(); dialog.close("save"); }
      });
    }
    var button = $("highlight-button");
    if (button) {
      // pressing the button must not take the selection away before its click
      button.addEventListener("pointerdown", function (event) { event.preventDefault(); });
      button.addEventListener("mousedown", function (event) { event.preventDefault(); });
      button.addEventListener("click", function () { if (!make()) hideButton(); });
    }
    document.addEventListener("selectionchange", function () {
      if (!pendingShow) pendingShow = setTimeout(placeButton, 120);
    });
    document.addEventListener("keydown", function (event) {
      if (event.key !== "h" || event.ctrlKey || event.altKey || event.metaKey || event.defaultPrevented) return;
      if (typing(event.target) || (dialog && dialog.open)) return;
      if (make()) event.preventDefault();
    });
    document.addEventListener("click", function (event) {
      var mark = event.target.closest && event.target.closest(".reading .body mark.hl");
      if (!mark || selected()) return;
      var id = mark.getAttribute("data-hl");
      if (data[id]) { event.preventDefault(); edit(id, null); }
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
