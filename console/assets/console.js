// Flotilla console: after the page has loaded, follow the server's events
// (one stream per tab, fed by the console's one bus consumer). A page
// complete without this script stays complete; with it, the page's main
// element is fetched again whenever the fleet changes, and the events page
// adds each event at the top of its table.
"use strict";
(function () {
  function start() {
    var table = document.getElementById("events");
    if (table && table.dataset.tail) { tail(table); return; }
    if (document.body.dataset.live) { follow(document.body.dataset.live); }
  }

  function follow(url) {
    var src = new EventSource(url);
    var busy = false, again = false;
    var state = document.getElementById("live-state");
    src.addEventListener("changed", function () {
      if (busy) { again = true; return; }
      busy = true;
      refresh().finally(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
    });
    src.onerror = function () { if (state) state.textContent = "reconnecting…"; };
    src.onopen = function () { document.body.dataset.following = "true"; };
  }

  // refresh fetches the page again and swaps its main element, keeping the
  // focus and the open details where they were.
  function refresh() {
    return fetch(location.href, { headers: { "Accept": "text/html" } }).then(function (r) {
      if (!r.ok) throw new Error(r.status);
      return r.text();
    }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      var fresh = doc.getElementById("main"), main = document.getElementById("main");
      if (!fresh || !main) return;
      var open = [];
      main.querySelectorAll("details[open] > summary").forEach(function (s) { open.push(s.textContent); });
      var focusId = document.activeElement && document.activeElement.id;
      main.innerHTML = fresh.innerHTML;
      main.dataset.readAt = fresh.dataset.readAt;
      main.querySelectorAll("details > summary").forEach(function (s) {
        if (open.indexOf(s.textContent) >= 0) s.parentElement.open = true;
      });
      if (focusId && document.getElementById(focusId)) document.getElementById(focusId).focus();
      var state = document.getElementById("live-state"), st = doc.getElementById("live-state");
      if (state && st) state.textContent = st.textContent + " · live";
    }).catch(function () {});
  }

  function tail(table) {
    var src = new EventSource(table.dataset.tail);
    var body = table.tBodies[0];
    src.addEventListener("bus", function (m) {
      var e = JSON.parse(m.data);
      var tr = document.createElement("tr");
      tr.className = "fresh";
      [e.Time, e.Stream, String(e.Sequence), e.Type, e.Subject].forEach(function (v) {
        var td = document.createElement("td"); td.textContent = v; tr.appendChild(td);
      });
      var td = document.createElement("td"), det = document.createElement("details"), sum = document.createElement("summary");
      sum.textContent = "id " + e.ID; det.appendChild(sum);
      var dl = document.createElement("dl"); dl.className = "attrs";
      (e.Attributes || []).forEach(function (a) {
        var dt = document.createElement("dt"), dd = document.createElement("dd");
        dt.textContent = a.Name; dd.textContent = a.Value; dl.appendChild(dt); dl.appendChild(dd);
      });
      det.appendChild(dl);
      var pre = document.createElement("pre"); pre.textContent = e.Data; det.appendChild(pre);
      td.appendChild(det); tr.appendChild(td);
      body.insertBefore(tr, body.firstChild);
      while (body.rows.length > 1000) body.deleteRow(body.rows.length - 1);
    });
    src.onopen = function () { document.body.dataset.following = "true"; };
  }

  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
})();
