"""SGLang ``launch_server`` / ``sglang serve`` arguments -> ServerArgs field names (0.5.14).

Exact option strings from the shipped table (explicit aliases such as ``--model``,
``--tensor-parallel-size``, ``--ep`` included); deprecated aliases folded into their
field, deprecated store-const flags (``--disable-cuda-graph``) set their field(s) to the
const (recipes.md 4.3). Python argparse unique-prefix abbreviations (``--tp`` ->
``--tp-size``, ``--speculative-algo``) resolve only when the prefix matches exactly one
option string (``--pp`` does not), with a note. Underscored spellings are not SGLang
options. Bool fields are store_true: a bare flag is true and there is no ``--no-X``.
``--speculative-algorithm`` is uppercased (speculative_hook.py:65); NEXTN means EAGLE.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

from bot.serve import tables
from bot.serve.argv import Builder, Opt, as_bool, store, walk
from bot.serve.model import Command, File, Tok
from bot.serve.spec import spec_of

_HELP = ("-h", "--help")


@lru_cache(maxsize=4096)  # the tables never change within a process
def _opt(option: str, raw: str, notes: tuple[str, ...] = ()) -> Opt:
    t = tables.sglang()
    field = t.options[option]
    kind = t.kinds.get(field, "any")
    if option in t.deprecated:
        notes += (f"{option} is deprecated in SGLang {t.version}: use {t.deprecated[option]}",)
    if option in t.ignored:
        notes += (f"{option} is accepted and ignored by SGLang {t.version}",)
    if option in t.consts:
        return Opt(field, "0", const=t.consts[option], notes=notes)
    if option in t.flags:
        return Opt(field, "0", kind="bool", notes=notes)
    if option in t.unsure:
        return Opt(field, "?", notes=notes)
    return Opt(field, "+" if kind == "list" else "1", kind=kind, notes=notes)


def lookup(raw: str, tok: Tok) -> Opt:
    t = tables.sglang()
    if raw in t.options:
        return _opt(raw, raw)
    spelled = raw.lstrip("-").replace("-", "_")
    if raw.startswith("--") and "_" in raw:
        fixed = raw.replace("_", "-")
        hint = f" ({fixed} is)" if fixed in t.options else ""
        return Opt(spelled, "?", reason=f"{raw}: not an SGLang option at {tok.src}; SGLang does not accept "
                                        f"underscores{hint}")
    if raw.startswith("--") and len(raw) > 2:
        hits = sorted(o for o in (*t.options, *_HELP) if o.startswith(raw))
        if len(hits) == 1 and hits[0] in t.options:
            return _opt(hits[0], raw, (f"{raw} -> {hits[0]} (argparse unique-prefix abbreviation)",))
        if len(hits) > 1:
            shown = ", ".join(hits[:4]) + (", ..." if len(hits) > 4 else "")
            return Opt(spelled, "?", reason=f"{raw}: ambiguous abbreviation ({shown}) at {tok.src}")
    return Opt(spelled, "?", reason=f"{raw}: not an SGLang option at {tok.src}")


def normalize(toks: Sequence[Tok], files: Mapping[str, File] | None, env: Mapping[str, str]) -> Command:
    del files  # SGLang's --config file is not read (recorded as the config arg)
    b = Builder("sglang", toks, env)

    def on_value(opt: Opt, name: str, values: Sequence[Tok], tok: Tok) -> None:
        if opt.nargs == "0" and values and opt.const is None:
            flag = as_bool(values[0].text)
            b.note(f"{name}=...: SGLang store_true flags take no value (argparse rejects it) at {tok.src}")
            b.put(opt.dest, True if flag is None else flag, tok.src)
            return
        store(b, opt, values, tok)
        if opt.dest == "model_path":
            b.model = b.args.get("model_path") if isinstance(b.args.get("model_path"), str) else None
            b.sources["model"] = tok.src
        if opt.dest == "speculative_algorithm" and isinstance(b.args.get(opt.dest), str):
            alg = str(b.args[opt.dest]).upper()
            b.args[opt.dest] = alg
            if alg == "NEXTN":
                b.note("speculative_algorithm NEXTN is EAGLE in SGLang (speculative_hook.py:42-50)")

    walk(toks, b, lookup, on_value, b.stray)
    if "SGLANG_ENABLE_SPEC_V2" in env:
        b.note("SGLANG_ENABLE_SPEC_V2 has no effect from SGLang 0.5.14 on (speculative_hook.py:67-74)")
    return b.done(spec_of("sglang", b.args))
