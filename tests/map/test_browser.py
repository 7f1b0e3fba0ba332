"""The map page in a real headless browser (Debian's chromium, ``--dump-dom``): the DOM after the
page's own script ran. The seed's MTP entries show the plain script they really run with the
ignored-variant finding on their launcher node; a filter in the URL fragment hides the other
entries; repository text that looks like markup stays text."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import yaml

from tests.conftest import EXAMPLE, copy_repo
from tests.map.browser import El, dump_dom, parse
from tests.map.helpers import MTP, PLAIN, write_map


def _articles(dom: El) -> dict[str, El]:
    return {a.attrs["data-entry"]: a for a in dom.all("article", class_="entry")}


def _node(article: El, kind: str) -> El:
    [node] = [n for n in article.all("li", class_="node") if n.attrs.get("data-kind") == kind]
    return node


def _title(node: El) -> str:
    [title] = [e for e in node.walk() if "title" in e.attrs.get("class", "").split()]
    return title.text()


def _shown(dom: El) -> set[str]:
    return {name for name, a in _articles(dom).items() if "hidden" not in a.attrs}


def test_seed_mtp_entries_show_the_plain_script_and_the_finding_on_the_launcher(seed_repo: Path,
                                                                                   tmp_path: Path) -> None:
    page = write_map(seed_repo, tmp_path / "map.html")
    dom = parse(dump_dom(page.as_uri()))
    assert dom.one("html").attrs.get("data-ready") == "1"  # the page's script ran to its end
    articles = _articles(dom)
    assert len(articles) == 6 and _shown(dom) == set(articles)
    for name in MTP:
        article = articles[name]
        launcher, script = _node(article, "launcher"), _node(article, "script")
        assert _title(script) == PLAIN[name]  # what the entry really runs: the plain script
        found = launcher.all("li", class_="error")
        assert len(found) == 1 and "BB103" in found[0].text() and "ignored-variant" in found[0].text()
        assert "bad" in launcher.attrs["class"].split()
        # on the launcher only: no other node of the chain carries it
        others = [n for n in article.all("li", class_="node") if n is not launcher]
        assert all(not n.all("ul", class_="findings") for n in others)
        assert "spec off" in _node(article, "server").text()
    # the launcher that handles SPEC_DECODING: its MTP entry runs the _mtp script, with no finding
    good = articles["kimik2.5-int4-mi355x-vllm-mtp"]
    assert _title(_node(good, "script")).endswith("kimik2.5_int4_mi355x_mtp.sh")
    assert not good.all("ul", class_="findings")
    # coverage at the top, lint's own summary line
    summary = dom.one("p", id="summary").text()
    assert summary.startswith("2 findings (2 errors)") and "6 entries, 3 launchers, 7 scripts checked in" in summary


def test_a_filter_in_the_fragment_hides_the_other_entries(seed_repo: Path, tmp_path: Path) -> None:
    page = write_map(seed_repo, tmp_path / "map.html")
    one = parse(dump_dom(page.as_uri() + "#entry=" + urllib.parse.quote(MTP[0])))
    assert _shown(one) == {MTP[0]}
    assert len(_articles(one)) == 6  # the others are there, hidden
    assert one.one("output", id="count").text() == "1 of 6 entries shown"
    chip = one.one("span", id="entry-chip")
    assert "hidden" not in chip.attrs and MTP[0] in chip.text()
    # a glob, and the blast radius of a launcher (what else a change to it moves)
    assert _shown(parse(dump_dom(page.as_uri() + "#entry=*-mtp"))) == {*MTP, "kimik2.5-int4-mi355x-vllm-mtp"}
    launcher = parse(dump_dom(page.as_uri() + "#launcher=" + urllib.parse.quote("runners/launch_mi300x-amds.sh")))
    assert _shown(launcher) == {"kimik2.5-int4-mi300x-vllm", "kimik2.5-int4-mi300x-vllm-mtp"}
    # filters combine: a GPU label and "with findings only"
    assert _shown(parse(dump_dom(page.as_uri() + "#label=mi325x&findings=1"))) == {MTP[1]}
    # the select shows the filter the fragment set
    assert launcher.one("select", id="launcher").all("option", value="runners/launch_mi300x-amds.sh")


HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">&amp;"


def test_repo_text_that_looks_like_markup_renders_as_text(tmp_path: Path) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "r")
    master = repo / "configs" / "amd-master.yaml"
    doc = yaml.safe_load(master.read_text())
    renamed = {(HOSTILE if name == MTP[0] else name): body for name, body in doc.items()}
    master.write_text(yaml.safe_dump(renamed, sort_keys=False, width=1000))
    page = write_map(repo, tmp_path / "map.html")
    raw = page.read_text()
    assert "<script>document" not in raw and "<img" not in raw and "onerror=\"" not in raw
    dom = parse(dump_dom(page.as_uri()))
    assert dom.one("title").text().startswith("benchbot map")  # nothing of the entry's ran
    assert not [img for img in dom.all("img")]
    article = _articles(dom)[HOSTILE]  # the attribute, decoded, is the name as written
    assert article.one("a", class_="name").text() == HOSTILE
    assert _title(_node(article, "config")) == HOSTILE
    assert "BB103" in _node(article, "launcher").text()  # its finding still found its node
    only = parse(dump_dom(page.as_uri() + "#entry=" + urllib.parse.quote(HOSTILE, safe="")))
    assert _shown(only) == {HOSTILE}
