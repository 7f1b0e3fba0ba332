"""Regenerate the shipped alias tables from the engine data in ``../shared/data``.

Usage: ``python -m bot.serve.tables.generate /work/shared/data`` (writes ``vllm.json`` and
``sglang.json`` next to this file; deterministic: sorted keys, two-space indent, trailing
newline). The package never reads the data folder at run time; tests compare the shipped
tables with it.

SGLang option strings marked ``(manual)`` in ``sglang_<v>_option_strings.json`` are resolved
from the ``manual`` section of ``sglang_<v>_serverargs.json``:

- ``DeprecatedAliasStoreAction``: the option stores into the field of its ``new_flag``;
- ``DeprecatedStoreTrueAction`` / ``DeprecatedStoreConstAction``: a flag that sets the
  field(s) of ``new_flag`` (``--x=v`` sets v, a bare ``--x`` sets true; ``{a,b}`` expands);
- ``DeprecatedAction``: accepted and ignored (a flag);
- no action: the option's own field (dashes -> underscores).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

VLLM_VERSION = "0.25.1"
SGLANG_VERSION = "0.5.14"

# Short aliases the vLLM data file does not list (recipes.md 4.2: cli_args.py:361).
VLLM_SHORT_EXTRA = {"-asc": "api_server_count"}

_BRACES = re.compile(r"\{([^{}]*)\}")


def _expand(flag: str) -> list[str]:
    """``--a-{x,y}=v`` -> ``[--a-x=v, --a-y=v]``."""
    m = _BRACES.search(flag)
    if m is None:
        return [flag]
    out: list[str] = []
    for part in m.group(1).split(","):
        out.extend(_expand(flag[: m.start()] + part + flag[m.end():]))
    return out


def _field_kind(type_text: str) -> str:
    t = type_text.replace("Optional[", "")
    if t.startswith("bool"):
        return "bool"
    if t.startswith("int"):
        return "int"
    if t.startswith("float"):
        return "float"
    if t.startswith("List[") or t.startswith("list["):
        return "list"
    if t.startswith(("Dict[", "dict[")):
        return "json"
    return "str"


def _scalar(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(text)
    except ValueError:
        return text


def build_vllm(data: Path) -> dict[str, Any]:
    pairs = json.loads((data / f"vllm_{VLLM_VERSION}_short_aliases.json").read_text())
    short = {s: long.lstrip("-").replace("-", "_") for long, s in pairs}
    return {"version": VLLM_VERSION, "short": short, "short_extra": dict(VLLM_SHORT_EXTRA)}


def build_sglang(data: Path) -> dict[str, Any]:
    strings: dict[str, str] = json.loads((data / f"sglang_{SGLANG_VERSION}_option_strings.json").read_text())
    serverargs = json.loads((data / f"sglang_{SGLANG_VERSION}_serverargs.json").read_text())
    fields: dict[str, Any] = serverargs["fields"]
    manual: dict[str, Any] = serverargs["manual"]
    kinds = {name: _field_kind(str(f["type"])) for name, f in fields.items()}
    options: dict[str, str] = {}
    consts: dict[str, dict[str, Any]] = {}
    deprecated: dict[str, str] = {}
    ignored: list[str] = []
    unsure: list[str] = []
    for opt, field in strings.items():
        if field != "(manual)":
            options[opt] = field
            continue
        info = manual.get(opt, {})
        new_flag, action = info.get("new_flag"), info.get("action")
        own = opt.lstrip("-").replace("-", "_")
        if new_flag:
            deprecated[opt] = new_flag
        if action == "DeprecatedAction":
            options[opt] = own
            ignored.append(opt)
        elif new_flag and action == "DeprecatedAliasStoreAction":
            options[opt] = strings[new_flag]
        elif new_flag and action in ("DeprecatedStoreTrueAction", "DeprecatedStoreConstAction"):
            sets: dict[str, Any] = {}
            for one in _expand(new_flag):
                name, eq, value = one.partition("=")
                sets[strings[name]] = _scalar(value) if eq else True
            consts[opt] = sets
            options[opt] = next(iter(sets))
        else:
            options[opt] = own
            if own not in kinds:
                unsure.append(opt)
    flags = sorted(o for o, f in options.items()
                   if o in consts or o in ignored or (kinds.get(f) == "bool" and o not in unsure))
    return {
        "version": SGLANG_VERSION,
        "options": options,
        "kinds": kinds,
        "flags": flags,
        "consts": consts,
        "deprecated": deprecated,
        "ignored": sorted(ignored),
        "unsure": sorted(unsure),
    }


def dump(table: dict[str, Any]) -> str:
    return json.dumps(table, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render(data: Path) -> dict[str, str]:
    """File name -> content of every shipped table."""
    return {"vllm.json": dump(build_vllm(data)), "sglang.json": dump(build_sglang(data))}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m bot.serve.tables.generate DATA_DIR\n")
        return 2
    out = Path(__file__).resolve().parent
    for name, text in render(Path(args[0])).items():
        (out / name).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
