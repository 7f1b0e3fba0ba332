"""``benchbot map`` through ``bot.cli.main``: usage errors, links (GitHub blobs at the commit from
the checkout's origin, else relative paths), lint's summary wording, statuses that add up to
lint's coverage, --entry, --rev, and the page's structure (no network, escaped data)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from bot.cli import main
from bot.map import build as map_build
from bot.map.links import github_repo
from tests.conftest import EXAMPLE, FIXTURES, copy_repo, git
from tests.map.browser import parse
from tests.map.helpers import MTP, write_map


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _hrefs(page: Path) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'href="([^"]*)"', page.read_text())]


def _untimed(text: str) -> str:
    return re.sub(r"in \d+\.\d+s", "in <t>s", text)


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = _run(capsys, "map", str(empty), "--html", str(tmp_path / "m.html"))
    assert (code, out) == (2, "") and "no master configs" in err
    code, out, err = _run(capsys, "map", str(EXAMPLE), "--entry", "kimik2.5-mi300x-mtp",
                          "--html", str(tmp_path / "m.html"))
    assert (code, out) == (2, "")
    assert err.startswith("benchbot: no entry matches kimik2.5-mi300x-mtp (6 entries; e.g. ")
    code, _, err = _run(capsys, "map", str(EXAMPLE), "--html", str(tmp_path / "no" / "such" / "dir" / "m.html"))
    assert code == 2 and "cannot write" in err
    code, _, err = _run(capsys, "map", str(EXAMPLE), "--rev", "", "--html", str(tmp_path / "m.html"))
    assert code == 2 and "--rev needs a revision" in err
    with pytest.raises(SystemExit) as done:
        main(["map", str(EXAMPLE)])  # --html is required
    assert done.value.code == 2
    assert not (tmp_path / "m.html").exists()


def test_an_internal_error_is_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_a: object, **_k: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(map_build, "build", broken)
    code, out, err = _run(capsys, "map", str(EXAMPLE), "--html", str(tmp_path / "m.html"))
    assert (code, out) == (3, "") and "internal error: RuntimeError: boom" in err and "Traceback" not in err


def test_the_summary_is_lints_own(seed_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lint_out, _ = _run(capsys, "lint", str(seed_repo), "--no-frames")
    assert code == 1
    last = lint_out.rstrip("\n").splitlines()[-1]
    code, out, err = _run(capsys, "map", str(seed_repo), "--html", str(tmp_path / "m.html"))
    assert (code, err) == (0, "")
    assert out.startswith(f"benchbot: wrote the map of 6 entries to {tmp_path / 'm.html'} (")
    assert _untimed(out.rstrip("\n").split("): ", 1)[1]) == _untimed(last)
    summary = parse((tmp_path / "m.html").read_text()).one("p", id="summary").text()
    assert _untimed(summary) == _untimed(last)


@pytest.mark.parametrize("fixture", ["multinode-recipes", "runner-labels", "rejected-entry"])
def test_entry_statuses_add_up_to_lints_coverage(fixture: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(FIXTURES / fixture, tmp_path / "r")
    _, out, _ = _run(capsys, "lint", str(repo), "--format", "json")
    cov = json.loads(out)["stats"]["coverage"]
    page = write_map(repo, tmp_path / "m.html")
    capsys.readouterr()
    statuses = [s.text().removeprefix("not analysed: ") for s in parse(page.read_text()).all("span", class_="status")]
    counted = {"analysed": statuses.count("analysed"), "rejected": statuses.count("rejected"),
               "unknown": statuses.count("unknown"),
               "handed": {t: statuses.count(f"handed to {t}") for t in cov["handed"]}}
    assert counted == {k: cov[k] for k in ("analysed", "rejected", "unknown", "handed")}
    assert len(statuses) == sum(cov["handed"].values()) + cov["analysed"] + cov["rejected"] + cov["unknown"]
    notes = parse(page.read_text()).all("span", class_="note")
    if cov["unknown"] or cov["rejected"]:  # the reason is on a node of the chain
        assert notes


def test_github_origin_links_blobs_at_the_commit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outer = tmp_path / "outer"
    copy_repo(EXAMPLE, outer / "bench")  # the benchmark repo in a folder of the git repo
    git(outer, "init", "-q", "-b", "main")
    git(outer, "remote", "add", "origin", "https://x-access-token:secret@github.com/Owner/bench-repo.git")
    git(outer, "add", "-A")
    git(outer, "commit", "-qm", "seed")
    sha = git(outer, "rev-parse", "HEAD").strip()
    page = write_map(outer / "bench", tmp_path / "m.html")
    hrefs = _hrefs(page)
    base = f"https://github.com/Owner/bench-repo/blob/{sha}/bench/"
    assert f"{base}runners/launch_mi300x-amds.sh#L32" in hrefs  # the line that built the path
    assert f"{base}configs/amd-master.yaml#L20" in hrefs
    assert not any("secret" in h for h in hrefs) and "secret" not in page.read_text()  # never the credentials
    capsys.readouterr()


def test_rev_links_at_the_revisions_commit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = copy_repo(EXAMPLE, tmp_path / "r")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", "git@github.com:Owner/seed.git")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "seed")
    first = git(repo, "rev-parse", "HEAD").strip()
    (repo / "README.md").write_text("changed\n")
    git(repo, "commit", "-qam", "two")
    page = write_map(repo, tmp_path / "m.html", "--rev", "HEAD~1")
    capsys.readouterr()
    assert f"https://github.com/Owner/seed/blob/{first}/runners/launch_mi325x-amds.sh#L26" in _hrefs(page)
    assert f"{repo}@HEAD~1 at {first[:12]}" in parse(page.read_text()).one("h1").text()


def test_without_a_github_origin_links_are_relative_paths(seed_repo: Path, tmp_path: Path) -> None:
    git(seed_repo, "init", "-q", "-b", "main")
    git(seed_repo, "remote", "add", "origin", "https://gitlab.example/Owner/seed.git")
    out = tmp_path / "pages"
    out.mkdir()
    page = write_map(seed_repo, out / "m.html")
    hrefs = [h for h in _hrefs(page) if not h.startswith("#")]
    assert "../seed/runners/launch_mi300x-amds.sh" in hrefs
    assert all(h.startswith("../seed/") for h in hrefs)
    assert all((out / h).resolve().is_file() for h in hrefs)  # each opens the file it names


def test_entry_selection_keeps_the_whole_blast_radius(seed_repo: Path, tmp_path: Path) -> None:
    page = write_map(seed_repo, tmp_path / "m.html", "--entry", "*mi300x*")
    dom = parse(page.read_text())
    assert [a.attrs["data-entry"] for a in dom.all("article")] == ["kimik2.5-int4-mi300x-vllm", MTP[0]]
    assert "(2 of 6 entries)" in dom.one("h1").text()
    rows = {r.all("td")[0].text().split(" show")[0]: r.all("td")[1].text()
            for r in dom.one("section", id="shared").all("tr") if r.all("td")}
    assert rows["runners/launch_mi355x-amds.sh"] == "2"  # entries not shown still count
    # the filter script's data: JSON that cannot close its element
    index = dom.one("script", id="map-index").text()
    assert json.loads(index)[1] == {"name": MTP[0], "label": "mi300x", "framework": "vllm",
                                    "launchers": ["runners/launch_mi300x-amds.sh"],
                                    "scripts": ["benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x.sh"],
                                    "findings": 1}


def test_the_page_needs_nothing_from_the_network(seed_repo: Path, tmp_path: Path) -> None:
    text = write_map(seed_repo, tmp_path / "m.html").read_text()
    assert not re.search(r"""<(?:script|link|img|iframe)[^>]*(?:src|href)=""", text)
    assert "@import" not in text and "url(" not in text
    assert text.count("<script") == 2  # the data and the page's own script


@pytest.mark.parametrize(("url", "want"), [
    ("https://github.com/o/r.git", ("o", "r")),
    ("https://github.com/o/r", ("o", "r")),
    ("https://user:tok@github.com/o/r.git/", ("o", "r")),
    ("git@github.com:o-x/r.y.git", ("o-x", "r.y")),
    ("ssh://git@github.com:22/o/r.git", ("o", "r")),
    ("https://gitlab.com/o/r.git", None),
    ("https://github.com.evil/o/r.git", None),
    ("https://github.com/o/r/extra", None),
    ("/srv/git/r.git", None),
])
def test_github_remote_urls(url: str, want: tuple[str, str] | None) -> None:
    assert github_repo(url) == want
