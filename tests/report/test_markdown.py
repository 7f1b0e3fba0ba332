"""Markdown for PR comments: structure on the example, and repository text rendered inert."""

from __future__ import annotations

import re

import pytest

from bot.findings import Fix, Related, Severity
from bot.report import markdown
from tests.conftest import EXAMPLE
from tests.report import SEED_RULES, STATS, finding, run

ZWJ = "\u200d"


def test_seed_structure(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "lint", str(EXAMPLE), *SEED_RULES, "--format", "markdown")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == ("**2 findings** (2 errors), 2 with a proposed fix; "
                        "6 entries, 3 launchers, 7 scripts checked.")
    headings = [line for line in lines if line.startswith("#### ")]
    # errors first, one heading per rule with its code, id, count and icon
    assert headings == ["#### \u274c BB103 `ignored-variant`: 2 errors"]
    iv = out[out.index(headings[0]):]
    bullets = [line for line in iv.splitlines() if line.startswith("- ")]
    assert [b.split(":", 2)[:2] for b in bullets] == [["- `runners/launch_mi300x-amds.sh", "32`"],
                                                      ["- `runners/launch_mi325x-amds.sh", "26`"]]
    assert "  - `configs/amd-master.yaml:20`: kimik2.5-int4-mi300x-vllm-mtp \\(mtp\\)" in iv
    assert "  - entry: `kimik2.5-int4-mi300x-vllm-mtp`" in iv
    # each fix in a collapsed block with the diff, inside the finding's list item
    blocks = re.findall(r"  <details><summary>Fix: (.*?)</summary>\n\n  ```diff\n(.*?)\n  ```\n\n  </details>", iv,
                        re.S)
    assert len(blocks) == 2
    summary, diff = blocks[0]
    assert summary.startswith("Append ${SPEC_SUFFIX} to the script path") and "safe to apply" in summary
    assert diff.startswith("  --- a/runners/launch_mi300x-amds.sh\n  +++ b/runners/launch_mi300x-amds.sh\n  @@")
    assert "  +bash benchmarks/single_node/${SCENARIO_SUBDIR}" in diff
    # the dead _mtp script is listed under its cause
    assert "  - `benchmarks/single_node/fixed_seq_len/kimik2.5_int4_mi300x_mtp.sh:1`: consequence" in iv


def test_links() -> None:
    f = finding("runners/a b(1).sh", 7, related=(Related("configs/x.yaml", 3, "entry"),))
    out = markdown.render([f], STATS, link=lambda p, n: f"https://example.test/blob/sha/{p}#L{n}")
    assert "- [`runners/a b(1).sh:7`](https://example.test/blob/sha/runners/a%20b%281%29.sh#L7): msg" in out
    assert "  - [`configs/x.yaml:3`](https://example.test/blob/sha/configs/x.yaml#L3): entry" in out


def test_title_and_empty() -> None:
    assert markdown.render([], STATS) == "\u2705 No findings: 2 entries, 1 launcher, 1 script checked.\n"
    out = markdown.render([], STATS, title="benchbot <b>report</b>")
    assert out.splitlines()[0] == "### benchbot &lt;b&gt;report&lt;/b&gt;"


def test_mixed_severities_in_one_rule() -> None:
    out = markdown.render([finding(severity=Severity.WARNING), finding("b.sh", severity=Severity.INFO)], STATS)
    assert "#### \u26a0\ufe0f BB103 `ignored-variant`: 2 findings (1 warning, 1 info)" in out


def test_crafted_repository_text_is_inert() -> None:
    evil_path = "runners/<img src=x onerror=alert(1)>`@octocat`.sh"
    f = finding(evil_path, 1,
                message="ping @octocat and @github/security </details><script>x</script> [a](javascript:x) **b**\n# h",
                related=(Related("x.sh", 2, "cc @someone <b>"),), entries=("e`n@try",),
                fix=Fix("</summary><img src=x> @admin", "--- a/x\n+++ b/x\n```\n</details>\n@@ -1 +1 @@\n"))
    out = markdown.render([f], STATS, link=None)
    # outside code (spans and the fenced diff, rendered literally) there is no HTML but ours
    prose = _without_code(out)
    assert set(re.findall(r"</?([a-zA-Z]+)", prose)) == {"details", "summary"}, prose
    assert out.count("<details>") == 1 and out.count("<summary>") == 1
    # the diff fence is longer than any backtick run in the diff; the </details> in it is code
    assert "  ````diff\n" in out and "\n  ````\n" in out
    fenced = out[out.index("````diff"):out.rindex("````")]
    assert "</details>" in fenced
    assert out.count("</details>") == 2 and out.rstrip().endswith("</details>")
    # no mention survives outside code: each @ is followed by a zero-width joiner
    assert not re.search(r"@(?!\u200d)\w", prose), prose
    assert f"@{ZWJ}octocat and @{ZWJ}github/security" in out
    assert f"@{ZWJ}admin" in out and f"cc @{ZWJ}someone &lt;b&gt;" in out
    # markdown in the message is escaped, the newline cannot start a heading
    assert "\\[a\\]\\(javascript:x\\) \\*\\*b\\*\\* \\# h" in out
    assert "\n# h" not in out
    # the path is one code span whatever backticks it holds
    assert "- ``runners/<img src=x onerror=alert(1)>`@octocat`.sh:1``: ping" in out
    assert "``e`n@try``" in out


def _without_code(text: str) -> str:
    text = re.sub(r"\n  (`{3,})diff\n.*?\n  \1\n", "\n", text, flags=re.S)
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", text)


def test_escape_and_code_helpers() -> None:
    assert markdown.escape("a_b*c`d|e$f") == "a\\_b\\*c\\`d\\|e\\$f"
    assert markdown.escape("x & <y>") == "x &amp; &lt;y&gt;"
    assert markdown.escape("mail a@b.c") == f"mail a@{ZWJ}b.c"
    assert markdown.code("plain") == "`plain`"
    assert markdown.code("a``b") == "```a``b```"
    assert markdown.code("`x") == "`` `x ``"
    assert markdown.safe_url("https://h/p (1)\n<x>") == "https://h/p%20%281%29%3Cx%3E"


# ------------------------------------------------------------------ inert under GitHub's own renderer
# cmark-gfm (GitHub's fork of cmark) with its extensions, as github.com renders comments.

def _gfm(text: str) -> str:
    import cmarkgfm
    from cmarkgfm.cmark import Options

    return cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE)


MARKER = "<!-- benchbot:summary -->"


def test_a_marker_in_repository_text_is_broken_everywhere_it_lands() -> None:
    f = finding(f"runners/{MARKER}.sh", 1, message=f"label {MARKER} and <!-- x", entries=(f"e{MARKER}",),
                related=(Related("x.sh", 2, f"-->{MARKER}"),),
                fix=Fix(f"fix {MARKER}", f"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+{MARKER}\n"))
    out = markdown.render([f], STATS, link=None)
    assert "<!--" not in out and "-->" not in out
    assert "benchbot:summary" in out  # shown, not dropped
    assert "<!--" not in markdown.code(MARKER) and "-->" not in markdown.code("a-->b")
    assert markdown.inert(MARKER) == f"<{ZWJ}!-- benchbot:summary -{ZWJ}->"
    html = _gfm(out)
    assert "<!--" not in html  # nothing GitHub would hide


def test_bare_urls_are_not_linked() -> None:
    for url in ("https://evil.example/x", "http://evil.example", "www.evil.example/y", "mailto:a@evil.example",
                "see HTTPS://EVIL.EXAMPLE"):
        html = _gfm(markdown.escape(url))
        assert "<a " not in html, (url, html)
        assert "evil.example" in html.lower()
    # a word that merely contains a scheme's letters is left alone
    assert markdown.escape("xhttps: and awww.b") == "xhttps: and awww.b"


def test_a_table_cell_keeps_its_pipes() -> None:
    row = f"| {markdown.cell(markdown.code('[0|, mallory]'))} | {markdown.cell(markdown.escape('a|b'))} |"
    html = _gfm("| x | y |\n|---|---|\n" + row + "\n")
    body = html[html.index("<tbody>"):]
    assert body.count("<td>") == 2 and "<code>[0|, mallory]</code>" in body and "a|b" in body
