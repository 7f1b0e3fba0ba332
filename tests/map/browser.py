"""Debian's chromium, headless, for the map's tests: the DOM after the page's script ran
(``--dump-dom``), and a small tree of it (``html.parser``) to look into. A missing chromium
fails the test that needs it (``.ci/run`` installs it): the page is checked in a real browser
or not at all."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.conftest import ROOT

MERMAID = ROOT / "tests" / "js" / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                   "wbr"})


def chromium() -> str:
    """The browser: ``BENCHBOT_CHROMIUM``, else ``chromium`` on PATH; the test fails without it."""
    found = os.environ.get("BENCHBOT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("chromium is not installed: apt-get install -y chromium (.ci/run installs it)")
    return found


def mermaid_js() -> Path:
    if not MERMAID.is_file():
        pytest.fail(f"{MERMAID.relative_to(ROOT)} is missing: npm ci --prefix tests/js (.ci/run runs it)")
    return MERMAID


def dump_dom(url: str, *, budget_ms: int = 0, timeout: float = 120.0) -> str:
    """The page's DOM after load (and after ``budget_ms`` of virtual time: promises and timers
    settle), serialized by chromium."""
    with tempfile.TemporaryDirectory(prefix="benchbot-chromium-") as profile:
        argv = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-extensions", f"--user-data-dir={profile}", "--dump-dom"]
        if budget_ms:
            argv.insert(-1, f"--virtual-time-budget={budget_ms}")
        done = subprocess.run([*argv, url], capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "<html" in done.stdout, done.stderr[-2000:]
    return done.stdout


def screenshot(url: str, out: Path, size: str = "1400,1000", timeout: float = 120.0) -> None:
    with tempfile.TemporaryDirectory(prefix="benchbot-chromium-") as profile:
        subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--user-data-dir={profile}", f"--screenshot={out}", f"--window-size={size}", url],
                       capture_output=True, timeout=timeout, check=True)


@dataclass
class El:
    tag: str
    attrs: dict[str, str]
    children: list[El | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def walk(self) -> list[El]:
        out = [self]
        for c in self.children:
            if isinstance(c, El):
                out += c.walk()
        return out

    def all(self, tag: str, **attrs: str) -> list[El]:
        """Descendants with ``tag`` whose attributes hold these values (``class_``: one class of them)."""
        found = []
        for el in self.walk()[1:]:
            if el.tag != tag:
                continue
            cls = attrs.get("class_")
            if cls is not None and cls not in el.attrs.get("class", "").split():
                continue
            if all(el.attrs.get(k) == v for k, v in attrs.items() if k != "class_"):
                found.append(el)
        return found

    def one(self, tag: str, **attrs: str) -> El:
        found = self.all(tag, **attrs)
        assert len(found) == 1, (tag, attrs, len(found))
        return found[0]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = El("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        el = El(tag, {k: v if v is not None else "" for k, v in attrs})
        self.stack[-1].children.append(el)
        if tag not in _VOID:
            self.stack.append(el)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> El:
    b = _Builder()
    b.feed(html)
    b.close()
    return b.root


_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><pre id="out">pending</pre>
<script src="{js}" charset="utf-8"></script>
<script>
const charts = JSON.parse(document.getElementById("charts").textContent);
mermaid.initialize({{startOnLoad: false, securityLevel: "strict"}});
(async () => {{
  const out = [];
  for (let i = 0; i < charts.length; i++) {{
    const r = {{}};
    try {{ await mermaid.parse(charts[i]); r.parsed = true; }}
    catch (e) {{ r.parsed = false; r.error = String(e.message || e); }}
    if (r.parsed) {{
      try {{
        const svg = (await mermaid.render("m" + i, charts[i])).svg;
        const div = document.createElement("div");
        div.innerHTML = svg;
        r.text = div.textContent; r.scripts = div.querySelectorAll("script,img").length;
      }} catch (e) {{ r.renderError = String(e.message || e); }}
    }}
    out.push(r);
  }}
  document.getElementById("out").textContent = JSON.stringify(out);
}})();
</script></body></html>"""


def mermaid_check(tmp: Path, charts: list[str]) -> list[dict[str, object]]:
    """Each chart parsed (and rendered) by Mermaid in chromium: what it said."""
    page = tmp / "mermaid.html"
    data = json.dumps(charts).replace("<", "\\u003c")
    page.write_text(_PAGE.format(js=mermaid_js().as_uri()).replace(
        "<script>\nconst", f'<script type="application/json" id="charts">{data}</script><script>\nconst', 1))
    out = parse(dump_dom(page.as_uri(), budget_ms=20000)).one("pre", id="out").text()
    assert out != "pending", "the page's script did not finish"
    got: list[dict[str, object]] = json.loads(out)
    assert len(got) == len(charts)
    return got
