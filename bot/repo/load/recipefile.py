"""What a recipe file states for ``bot.repo.jobs``: the container of its base and of the
override blocks its selectors pick, read with the repo's YAML reader (positions kept).

A multinode repo names a few hundred recipe files (InferenceX HEAD: 236); reading them is
a YAML compose and convert each, the same work on every lint of an unchanged file. What
``containers`` finds is kept in the persistent cache (``bot/cache.py``) by the file's
content and the selectors asked, so a warm lint reads none of them (JSON, decoded by
``bot.cachejson`` with every field's type checked; in CI read only when sealed, as it
decides recipe-image-mismatch: ``bot.cachetrust``). The whole document,
which the serve model needs for worker blocks, is ``document`` (memoised per lint).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from bot import cache
from bot.cachejson import array, integer, obj, string
from bot.repo.files.host import Host
from bot.repo.load.yamlfile import Mark, YamlError, YList, YMap, load, pos_of

_SELECTOR_INDEX = re.compile(r"\[(\d+)\]\Z")
FORMAT = "1"  # of the cached payload


@dataclass(frozen=True)
class Container:
    value: str
    pos: Mark


def document(facts: Host, path: str) -> tuple[Any, YamlError | None]:
    """The recipe as the YAML reader gives it (once per lint and path)."""
    memo = facts.memo.setdefault("jobs.yaml", {})
    if path not in memo:
        memo[path] = load(facts.tree.text(path) or "")
    doc, err = memo[path]
    return doc, err


def containers(facts: Host, path: str, selectors: tuple[str, ...]) -> tuple[dict[str, Container], YamlError | None]:
    """Selector ("" = the base) -> the container it states; or the error that stops the
    file from being read. From the persistent cache when this content was read before."""
    memo = facts.memo.setdefault("jobs.containers", {})
    text = facts.tree.text(path) or ""
    k = cache.key("recipe", FORMAT, hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest(), *selectors)
    if k in memo:
        hit: tuple[dict[str, Container], YamlError | None] = memo[k]
        return hit
    found = _decode(cache.get_json("recipe", k))
    if found is None:
        doc, err = document(facts, path)
        found = ({}, err) if err is not None else (_containers(doc, selectors), None)
        cache.put("recipe", k, _encode(found))
    memo[k] = found
    return found


def _encode(found: tuple[dict[str, Container], YamlError | None]) -> bytes:
    out, err = found
    return json.dumps({"containers": {s: [c.value, c.pos.line, c.pos.col] for s, c in out.items()},
                       "error": None if err is None else [err.message, err.line, err.col]},
                      separators=(",", ":")).encode()


def _decode(stored: Any) -> tuple[dict[str, Container], YamlError | None] | None:
    """A cached entry (its JSON value), or None when there is none or it is not one this code wrote."""
    if stored is None:
        return None
    try:
        d = obj(stored)
        out = {s: Container(string(v), Mark(integer(line), integer(col)))
               for s, (v, line, col) in ((s, array(c, 3)) for s, c in obj(d["containers"]).items())}
        e = d["error"]
        err = None if e is None else YamlError(string(array(e, 3)[0]), integer(e[1]), integer(e[2]))
    except (ValueError, KeyError):  # cachejson.Refused is a ValueError
        return None
    return out, err


def _containers(doc: Any, selectors: tuple[str, ...]) -> dict[str, Container]:
    out: dict[str, Container] = {}
    base = doc.get("base") if isinstance(doc, YMap) and isinstance(doc.get("base"), YMap) else doc
    found = _container_of(base)
    if found is not None:
        out[""] = found
    for selector in selectors:
        override = _override_container(doc, selector) if selector else None
        if override is not None:
            out[selector] = override
    return out


def _container_of(doc: Any, index: int | None = None) -> Container | None:
    model = doc.get("model") if isinstance(doc, YMap) else None
    if not isinstance(model, YMap) or "container" not in model:
        return None
    value, pos = model["container"], pos_of(model, "container")
    if isinstance(value, YMap) and "image" in value:
        value, pos = value["image"], pos_of(value, "image")
    if isinstance(value, YList) and index is not None and 0 <= index < len(value):
        value, pos = value[index], pos_of(value, index)
    return Container(str(value), pos) if isinstance(value, (str, int, float)) and str(value) else None


def _override_container(doc: Any, selector: str) -> Container | None:
    """The container an override block (``zip_override_x[1]``, ``override_y``) sets."""
    m = _SELECTOR_INDEX.search(selector)
    name = selector[: m.start()] if m else selector
    block = doc.get(name) if isinstance(doc, YMap) else None
    return _container_of(block, int(m.group(1)) if m else None)
