#!/usr/bin/env python3
"""Write docs/rules/<rule-id>.md, one page per rule, from the rule docstrings.

    python scripts/gen_rule_docs.py           # rewrite the pages (and drop pages of removed rules)
    python scripts/gen_rule_docs.py --check   # exit 1 and name the stale pages, write nothing

The pages are committed (they are the SARIF ``helpUri`` targets); tests/test_docs.py checks
that they equal what this script writes. The text comes from ``bot.report.rule_page``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout's bot/, also when it is not installed

from bot.report import rule_pages  # noqa: E402
from bot.rules import RULES  # noqa: E402

PAGES = ROOT / "docs" / "rules"


def stale(pages: dict[str, str], folder: Path) -> list[str]:
    """Pages that differ from ``pages``, are missing, or belong to no rule."""
    out = [name for name, text in pages.items()
           if not (folder / name).is_file() or (folder / name).read_text(encoding="utf-8") != text]
    out += [p.name for p in folder.glob("*.md") if p.name not in pages] if folder.is_dir() else []
    return sorted(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report stale pages, write nothing")
    args = parser.parse_args(argv)
    pages = rule_pages(RULES)
    todo = stale(pages, PAGES)
    if args.check:
        for name in todo:
            print(f"docs/rules/{name} is stale; run python scripts/gen_rule_docs.py", file=sys.stderr)
        return 1 if todo else 0
    PAGES.mkdir(parents=True, exist_ok=True)
    for name in todo:
        if name in pages:
            (PAGES / name).write_text(pages[name], encoding="utf-8")
        else:
            (PAGES / name).unlink()
        print(f"docs/rules/{name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
