"""How often the static answer and the traced one agree, over a real checkout.

    python tests/perf/trace_agreement.py REPO [--entry GLOB]... [--jobs N] [--json FILE]

Traces every single-node (entry, point, launcher) of REPO (one point per group, as lint
evaluates them) in the sandbox (``bot.trace``) and compares with ``serve``'s answer
(``bot.trace.agree``). Prints the agreement rates for dispatch (the script) and serve (the
server, then the client), and the disagreements grouped by cause (part and key), with a few
examples each. REPO must be a checkout you trust: its scripts run (with stand-ins, no
network). ``--jobs`` runs that many sandboxes at once (the static side is computed first).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(HERE))

from bot.config import load_config  # noqa: E402
from bot.repo.facts import gather  # noqa: E402
from bot.repo.files.tree import WorkTree  # noqa: E402
from bot.trace.agree import static_launches, verdict  # noqa: E402
from bot.trace.run import runs, trace_one  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("repo")
    p.add_argument("--entry", action="append")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--json", help="write every run's verdict here")
    args = p.parse_args(argv)
    repo = Path(args.repo).resolve()
    tree = WorkTree(str(repo))
    facts = gather(tree, load_config(tree).profile)
    entries = [e for e in facts.entries if not args.entry or any(fnmatch.fnmatchcase(e.name, g) for g in args.entry)]
    t0 = time.perf_counter()
    served = static_launches(facts, entries)
    todo = list(runs(facts, entries))
    for r in todo:  # each run's env is worked out here, in one thread: trace_one reads it from the memo
        facts.env_for(r[0], r[1], r[4], r[5])

    def one(r: tuple) -> object:  # type: ignore[type-arg]
        return trace_one(facts, repo, *r, timeout=args.timeout)

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        traced = list(pool.map(one, todo))
    seconds = time.perf_counter() - t0
    rows = []
    causes: dict[tuple[str, str], list[str]] = defaultdict(list)
    script_ok = server_ok = client_ok = 0
    ended: Counter[str] = Counter()
    for t in traced:
        found = verdict(served, t)  # type: ignore[arg-type]
        ended[t.ended] += 1  # type: ignore[attr-defined]
        parts = {d.part for d in found}
        script_ok += "script" not in parts
        server_ok += not parts & {"script", "server"}
        client_ok += not parts
        for d in found:
            causes[(d.part, d.key)].append(f"{t.entry.name} @ {t.launcher}: {d.text()}")  # type: ignore[attr-defined]
        rows.append({"entry": t.entry.name, "launcher": t.launcher, "script": t.script,  # type: ignore[attr-defined]
                     "message": t.message, "disagreements": [d.text() for d in found]})  # type: ignore[attr-defined]
    n = len(traced)
    print(f"{n} runs traced in {seconds:.0f}s ({dict(ended)})")
    if n:
        print(f"dispatch (script) agrees: {script_ok}/{n} ({100 * script_ok / n:.1f}%)")
        print(f"serve (server) agrees:    {server_ok}/{n} ({100 * server_ok / n:.1f}%)")
        print(f"serve (server and client): {client_ok}/{n} ({100 * client_ok / n:.1f}%)")
    for (part, key), found in sorted(causes.items(), key=lambda kv: -len(kv[1])):
        print(f"\n{len(found):4d}  {part} {key}")
        for example in found[:3]:
            print(f"      {example[:300]}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
