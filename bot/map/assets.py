"""The map page's own stylesheet and script, inlined into every page (nothing is fetched).

The script only filters: the page is complete without it. Filters live in the URL fragment
(``map.html#entry=NAME``, ``#label=b200&framework=vllm``, ``#launcher=PATH``, ``#script=PATH``,
``#q=TEXT``, ``#findings=1``), so a filtered view can be linked, and opened by a headless
browser. Entry names filter as globs (``*``, ``?``). When it has run, the script sets
``data-ready`` on ``<html>`` and writes the milliseconds since navigation start into
``#perf``. Repository text reaches it only as JSON (``#map-index``) and is set with
``textContent``, never as markup.
"""

from __future__ import annotations

CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#f6f8fa;--err:#cf222e;--warn:#9a6700;--info:#0969da}
*{box-sizing:border-box}
body{margin:0;font:13px/1.4 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:var(--fg)}
header{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid var(--line);padding:8px 16px}
h1{font-size:17px;margin:0 0 2px}
h1 small{font-weight:normal;color:var(--muted);font-size:13px}
.summary{margin:2px 0 6px;font-weight:600}
form{display:flex;flex-wrap:wrap;gap:6px;align-items:center}
form input[type=search]{width:260px}
form select{max-width:260px}
input,select,button{font:inherit;padding:2px 4px}
#count{color:var(--muted);margin-left:auto}
.chip{background:#ddf4ff;border:1px solid #54aeff;border-radius:10px;padding:0 6px}
main,section{padding:8px 16px}
article{border:1px solid var(--line);border-radius:6px;margin:0 0 10px;background:#fff}
article h2{font-size:14px;margin:0;padding:6px 10px;background:var(--bg);border-bottom:1px solid var(--line);
 display:flex;flex-wrap:wrap;gap:6px;align-items:center}
article h2 a.name{color:var(--fg);text-decoration:none}
.tag,.status,.n{font-size:11px;font-weight:normal;border:1px solid var(--line);border-radius:10px;padding:0 6px;
 background:#fff}
.status.analysed{border-color:#4ac26b;color:#1a7f37}
.status.other{border-color:#d4a72c;color:var(--warn)}
.n.error{background:var(--err);color:#fff;border-color:var(--err)}
.n.warning{background:#fff8c5;color:var(--warn);border-color:#d4a72c}
.route{padding:6px 10px}
.route+.route{border-top:1px dashed var(--line)}
.points{margin:0 0 4px;color:var(--muted);font-size:12px}
ol.chain{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;align-items:flex-start;gap:4px 18px}
li.node{position:relative;border:1px solid var(--line);border-left:4px solid #8c959f;border-radius:4px;
 padding:3px 6px;min-width:120px;max-width:330px;background:#fff;overflow-wrap:anywhere}
li.node+li.node::before{content:"\\2192";position:absolute;left:-16px;top:6px;color:var(--muted)}
li.node .kind{display:block;font-size:10px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
li.node .title{display:block;font-weight:600;color:var(--fg)}
li.node .where{display:block;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:11px;color:var(--muted)}
li.node .detail{display:block;font-size:12px;color:var(--muted)}
li.k-config{border-left-color:#8250df}li.k-workflow{border-left-color:#bf8700}li.k-runner{border-left-color:#0969da}
li.k-launcher{border-left-color:#1a7f37}li.k-script{border-left-color:#116329}li.k-handoff{border-left-color:#953800}
li.k-server{border-left-color:#cf222e}li.k-client{border-left-color:#6e7781}
li.node.bad{background:#ffebe9;border-color:var(--err)}
li.node.warn{background:#fff8c5}
.note{display:block;font-size:12px;color:var(--warn)}
.note::before{content:"not analysed: ";font-weight:600}
ul.findings{margin:3px 0 0;padding:0;list-style:none}
ul.findings li{font-size:12px;margin-top:2px}
ul.findings li.error b{color:var(--err)}ul.findings li.warning b{color:var(--warn)}
ul.findings li.info b{color:var(--info)}
.shared{display:block;font-size:11px}
.efind{margin:0;padding:4px 10px 0;list-style:none}
table{border-collapse:collapse;margin-bottom:12px}
td,th{border:1px solid var(--line);padding:2px 6px;text-align:left;vertical-align:top}
td.num{text-align:right}
summary{cursor:pointer}
#perf{color:var(--muted);font-size:11px;padding:0 16px}
"""

JS = r"""
(function () {
  "use strict";
  var index = JSON.parse(document.getElementById("map-index").textContent);
  var articles = document.querySelectorAll("article.entry");
  var keys = ["label", "framework", "launcher", "script"];
  var q = document.getElementById("q");
  var onlyFindings = document.getElementById("findings");
  var chip = document.getElementById("entry-chip");
  var entry = "";
  var texts = null;

  function glob(pattern) {
    var re = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
    return new RegExp("^" + re + "$");
  }
  function decode(s) {
    try { return decodeURIComponent(s.replace(/\+/g, " ")); } catch (e) { return s; }
  }
  function readHash() {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      if (!part) { return; }
      var i = part.indexOf("=");
      out[decode(i < 0 ? part : part.slice(0, i))] = i < 0 ? "" : decode(part.slice(i + 1));
    });
    return out;
  }
  function state() {
    var s = {};
    if (entry) { s.entry = entry; }
    keys.forEach(function (k) { var v = document.getElementById(k).value; if (v) { s[k] = v; } });
    if (q.value) { s.q = q.value; }
    if (onlyFindings.checked) { s.findings = "1"; }
    return s;
  }
  function writeHash() {
    var s = state();
    var parts = Object.keys(s).map(function (k) { return k + "=" + encodeURIComponent(s[k]); });
    history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname + location.search);
    apply();
  }
  function load() {
    var s = readHash();
    entry = s.entry || "";
    keys.forEach(function (k) {
      var el = document.getElementById(k);
      el.value = s[k] || "";
      if (el.value !== (s[k] || "")) { el.value = ""; }
    });
    q.value = s.q || "";
    onlyFindings.checked = s.findings === "1";
    apply();
  }
  function apply() {
    var match = entry ? glob(entry) : null;
    var words = q.value.toLowerCase().split(/\s+/).filter(Boolean);
    if (words.length && texts === null) {
      texts = Array.prototype.map.call(articles, function (a) { return a.textContent.toLowerCase(); });
    }
    var s = state();
    var shown = 0;
    for (var i = 0; i < articles.length; i++) {
      var r = index[i];
      var ok = (!match || match.test(r.name)) && (!s.label || r.label === s.label) &&
        (!s.framework || r.framework === s.framework) &&
        (!s.launcher || r.launchers.indexOf(s.launcher) >= 0) &&
        (!s.script || r.scripts.indexOf(s.script) >= 0) && (!s.findings || r.findings > 0) &&
        words.every(function (w) { return texts[i].indexOf(w) >= 0; });
      articles[i].hidden = !ok;
      if (ok) { shown++; }
    }
    chip.hidden = !entry;
    chip.querySelector("span").textContent = "entry: " + entry;
    document.getElementById("count").textContent = shown + " of " + articles.length + " entries shown";
  }
  keys.forEach(function (k) { document.getElementById(k).addEventListener("change", writeHash); });
  q.addEventListener("input", writeHash);
  onlyFindings.addEventListener("change", writeHash);
  chip.querySelector("button").addEventListener("click", function () { entry = ""; writeHash(); });
  document.getElementById("reset").addEventListener("click", function () {
    entry = ""; q.value = ""; onlyFindings.checked = false;
    keys.forEach(function (k) { document.getElementById(k).value = ""; });
    writeHash();
  });
  window.addEventListener("hashchange", load);
  load();
  document.documentElement.setAttribute("data-ready", "1");
  var perf = document.getElementById("perf");
  var ms = Math.round(performance.now());
  perf.setAttribute("data-ms", String(ms));
  perf.textContent = "page ready in " + ms + " ms";
})();
"""
