"""The project's own docs cannot drift: the rule table (docs/rules.md) against the registry,
the generated rule pages against the docstrings, docs/json.md against the JSON output, every
relative link in README.md and docs/ against the files the repo has, and the README as the
short front page that links every docs/ page."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.findings import Finding, Fix, Related, Severity
from bot.newonly import Comparison
from bot.report import Stats, rule_pages
from bot.report import json as json_report
from bot.rules import RULES
from tests.conftest import EXAMPLE, ROOT

DOCS = ROOT / "docs"
README = ROOT / "README.md"
RULES_TABLE = DOCS / "rules.md"


def _section(text: str, heading: str) -> str:
    """The text under a markdown heading, up to the next heading of the same or a higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    start = text.index(heading + "\n") + len(heading) + 1
    end = re.search(rf"^#{{1,{level}}} ", text[start:], re.M)
    return text[start:start + end.start()] if end else text[start:]


def _table(text: str) -> list[list[str]]:
    """The body rows of the first markdown table in a text, as stripped cells."""
    rows = [line for line in text.splitlines() if line.startswith("|")]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows[2:]]


# ------------------------------------------------------------------ the rule table (docs/rules.md)

def test_rule_table_matches_the_registry() -> None:
    rows = _table(_section(RULES_TABLE.read_text(encoding="utf-8"), "# Rules"))
    got: dict[str, tuple[str, str]] = {}
    for code, rid, severity, _what in rows:
        link = re.fullmatch(r"\[([a-z-]+)\]\(rules/([a-z-]+)\.md\)", rid)
        assert link and link.group(1) == link.group(2), f"{code}: link the id to its page: {rid}"
        got[link.group(1)] = (code, severity)
    assert set(got) == set(RULES), "docs/rules.md's table and bot.rules.RULES list different rules"
    assert [code for code, _ in got.values()] == sorted(code for code, _ in got.values()), "sort the table by code"
    for rid, module in RULES.items():
        code, severity = got[rid]
        assert (module.ID, code) == (rid, module.CODE)
        # the default severity first; any other severity the rule really uses named after it
        words = re.findall(r"\b(error|warning|info)\b", severity)
        assert words[0] == module.SEVERITY.label, \
            f"{rid}: docs/rules.md says {severity!r}, the rule {module.SEVERITY.label}"
        source = Path(module.__file__ or "").read_text(encoding="utf-8")
        used = {Severity[name].label for name in re.findall(r"\bSeverity\.(ERROR|WARNING|INFO)\b", source)}
        assert set(words) == used, f"{rid}: the rule reports {sorted(used)}, docs/rules.md says {severity!r}"


def test_rule_table_names_the_conditional_severity_of_no_launcher() -> None:
    rows = {r[0]: r for r in _table(_section(RULES_TABLE.read_text(encoding="utf-8"), "# Rules"))}
    assert rows["BB105"][2] == "error; warning when no entry uses those nodes"


# ------------------------------------------------------------------ README: the front page

def test_readme_rules_section_leads_to_the_table() -> None:
    # every generated rule page links back to the table (docs/rules.md); the README's section leads there too
    assert all("[All rules](../rules.md)" in p for p in rule_pages(RULES).values())
    section = _section(README.read_text(encoding="utf-8"), "## Rules")
    assert "(docs/rules.md)" in section and "(docs/rules/)" in section


def test_readme_keeps_the_two_commands() -> None:
    # .ci/run ends with the README's test command; the example command is the main job
    section = _section(README.read_text(encoding="utf-8"), "## Two commands")
    blocks = re.findall(r"^```sh\n(.*?)\n```", section, re.M | re.S)
    venv = "python3 -m venv .venv && .venv/bin/pip install -q"
    assert blocks == [
        f"{venv} -e . && .venv/bin/python -m bot lint examples/seed --show-fixes",
        f"{venv} -e '.[test]' && .venv/bin/python -m pytest -q",
    ]
    assert (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip().endswith(".venv/bin/python -m pytest -q")


def test_readme_is_short_and_links_every_docs_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 200, "README.md is the front page: move detail to docs/"
    linked = {t.split("#", 1)[0] for t in _relative_links(README)}
    pages = {f"docs/{p.name}" for p in DOCS.glob("*.md")}
    assert pages - linked == set(), "link these docs/ pages from README.md"


# ------------------------------------------------------------------ docs/rules/

def test_rule_pages_are_generated_from_the_docstrings() -> None:
    want = rule_pages(RULES)
    have = {p.name: p.read_text(encoding="utf-8") for p in (DOCS / "rules").glob("*.md")}
    assert sorted(have) == sorted(want), "run: python scripts/gen_rule_docs.py"
    for name, text in want.items():
        assert have[name] == text, f"docs/rules/{name} is stale; run: python scripts/gen_rule_docs.py"


def test_gen_rule_docs_check_passes() -> None:
    proc = subprocess.run([sys.executable, "scripts/gen_rule_docs.py", "--check"], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert (proc.returncode, proc.stderr) == (0, "")


def test_rule_page_content() -> None:
    page = rule_pages(RULES)["ignored-variant.md"]
    assert page.splitlines()[2] == "# ignored-variant (BB103)"
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Fix"):
        assert f"\n{heading}\n" in page
    assert "``" not in page.replace("```", "")  # RST literals became markdown code spans
    assert "\n```sh\n" in page and "Default severity: **error**" in page


# ------------------------------------------------------------------ docs/json.md

def _documented(section: str) -> tuple[set[str], set[str]]:
    """(every key, the optional ones) of a docs/json.md section's table."""
    rows = _table(_section((DOCS / "json.md").read_text(encoding="utf-8"), f"## {section}"))
    keys = {row[0].strip("`"): row[1] for row in rows}
    return set(keys), {k for k, kind in keys.items() if "optional" in kind}


def _emitted(capsys: pytest.CaptureFixture[str]) -> dict[str, list[dict[str, Any]]]:
    """Objects of each kind as bot/report/json.py writes them, optional keys included: the
    CLI's report of the bundled example, and crafted findings for what it lacks."""
    consequence = Related("benchmarks/x_mtp.sh", 1, "left dead", rule="dead-script", key="benchmarks/x_mtp.sh")
    f = Finding("ignored-variant", "BB103", Severity.ERROR, "runners/launch_a.sh", 3, 5, "m",
                (consequence, Related("configs/a-master.yaml", 2, "entry")), ("e-mtp",),
                Fix("d", "--- a/x\n+++ b/x\n", True), key="mtp|benchmarks/x_mtp.sh")
    plain = Finding("dead-script", "BB102", Severity.WARNING, "b.sh", 1, 1, "m")
    stats = Stats(1, 2, 3, 4, 0.5)
    docs = [json.loads(json_report.render([f, plain], stats, "/r")),
            json.loads(json_report.render([f], stats, "/r", compared=Comparison([f], [plain], ("ab",), rev="HEAD"))),
            json.loads(json_report.render([f], stats, "/r", compared=Comparison([f], [], (), baseline="b.json")))]
    assert main(["lint", str(EXAMPLE), "--format", "json"]) == 1
    docs.append(json.loads(capsys.readouterr().out))
    findings = [x for d in docs for x in d["findings"]]
    totals = [d["stats"] for d in docs]
    coverage = [t["coverage"] for t in totals if "coverage" in t]
    return {
        "Top level": docs,
        "Finding": findings,
        "Related": [r for x in findings for r in x["related"]],
        "Fix": [x["fix"] for x in findings if x["fix"]],
        "Stats": totals,
        "Coverage": coverage,
        "Recipes": [c["recipes"] for c in coverage],
        "Baseline": [d["baseline"] for d in docs if "baseline" in d],
    }


def test_json_doc_lists_exactly_the_keys_emitted(capsys: pytest.CaptureFixture[str]) -> None:
    emitted = _emitted(capsys)
    for section, objects in emitted.items():
        keys, optional = _documented(section)
        assert objects, section
        seen = set().union(*(set(o) for o in objects))
        assert seen == keys, f"docs/json.md ## {section}: documented {sorted(keys)}, emitted {sorted(seen)}"
        for o in objects:
            assert keys - optional <= set(o), f"{section}: a key not marked optional is missing in {o}"
    # a consequence carries its rule and fingerprint; a plain related location does not
    related = emitted["Related"]
    assert {"rule", "fingerprint"} <= set(related[0]) and set(related[1]) == {"path", "line", "note"}


# ------------------------------------------------------------------ links

_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^\s*```.*?^\s*```", re.M | re.S)


def _relative_links(path: Path) -> list[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans are not links
    return [t for t in _LINK.findall(text) if not re.match(r"^[a-z][a-z0-9+.-]*:|^#", t)]


def test_relative_links_point_to_files_the_repo_has() -> None:
    pages = [README, *sorted(DOCS.rglob("*.md"))]
    assert len(pages) > 3
    broken = []
    checked = 0
    for page in pages:
        for target in _relative_links(page):
            file = (page.parent / target.split("#", 1)[0]).resolve()
            checked += 1
            if not file.exists() or ROOT.resolve() not in (file, *file.parents):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, "links to files the repo does not have:\n" + "\n".join(broken)
    assert checked >= len(RULES) * 2  # docs/rules.md's table and each page's way back, at least


def test_the_link_check_is_not_vacuous(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("[a](x.md) [b](https://e.org/y.md) [c](#top) `[d](no.md)`\n```\n[e](no.md)\n```\n")
    assert _relative_links(page) == ["x.md"]
