"""JSON Schema validation of YAML documents, with every error at a YAML position.

The schemas live in the top-level ``schemas/`` folder (installed as ``bot._schemas``).
Documents are the position-keeping ``YMap``/``YList`` trees of ``yamlfile``; an error is
placed on the key it is about (an unknown field), the value (a wrong type) or the
mapping (a missing field), never "somewhere in the file".
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import importlib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib.resources import files
from typing import TYPE_CHECKING, Any

import fastjsonschema

from bot.repo.load.yamlfile import Mark, YList, YMap

if TYPE_CHECKING:
    # jsonschema (with referencing and attrs, a fifth of a warm lint to import) is loaded
    # only to explain a document fastjsonschema rejected, or to validate where it cannot
    import jsonschema
    from jsonschema.exceptions import ValidationError


@dataclass(frozen=True)
class Violation:
    """One schema error: where, what (one sentence), the JSON path and the keyword."""

    mark: Mark
    message: str
    path: tuple[str | int, ...]
    keyword: str
    subject: str = ""  # the offending key or value, for fingerprints


@functools.lru_cache(maxsize=None)
def schema_bytes(name: str) -> bytes:
    """The named schema file as shipped (``bot._schemas``)."""
    return files("bot._schemas").joinpath(name).read_bytes()


@functools.lru_cache(maxsize=None)
def load_schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(schema_bytes(name).decode("utf-8"))
    return data


@functools.lru_cache(maxsize=None)
def _validator(name: str) -> jsonschema.protocols.Validator:
    import jsonschema.validators

    schema = load_schema(name)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


FAST_PREFIX = "_fastschema_"


def fast_module_name(name: str) -> str:
    """The module (in this package) holding the fast validator of the schema file ``name``."""
    stem = name.removesuffix(".json").removesuffix(".schema")
    return FAST_PREFIX + re.sub(r"[^0-9a-z]+", "_", stem.lower()).strip("_")


@functools.lru_cache(maxsize=None)
def _fast(name: str) -> Callable[[Any], Any] | None:
    """fastjsonschema's validator of the named schema: it only says valid or not, 10-20x
    faster than jsonschema, which then explains a failure. Its code is generated ahead of
    time (``scripts/gen_schema_validators.py``) and shipped as a module of this package:
    nothing is generated, cached or executed from outside the package at run time. None when
    the schema has no such module (fastjsonschema would read it differently, see
    ``fast_safe``) or the module was made from another text of the schema (an edited schema
    not regenerated yet: jsonschema alone decides, which is slower, never wrong)."""
    try:
        module = importlib.import_module(f"{__package__}.{fast_module_name(name)}")
    except ImportError:
        return None
    if getattr(module, "SCHEMA_SHA256", None) != hashlib.sha256(schema_bytes(name)).hexdigest():
        return None
    fn: Callable[[Any], Any] = module.validate
    return fn


# Keywords the draft-07 reading of fastjsonschema and the 2020-12 one of jsonschema agree on.
_AGREED = frozenset({"$schema", "$id", "$ref", "$defs", "title", "description", "type", "properties",
                     "additionalProperties", "required", "items", "enum", "const", "pattern", "minLength",
                     "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems",
                     "maxItems", "uniqueItems", "anyOf", "oneOf", "allOf", "not", "if", "then", "else",
                     "propertyNames", "default", "examples"})


def fast_safe(schema: Any) -> bool:
    """Whether fastjsonschema (draft-07) reads the schema as jsonschema (2020-12) does: only
    ``_AGREED`` keywords, and ``$ref`` without sibling assertions (draft-07 ignores them)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            if "$ref" in node and set(node) - {"$ref", "description", "title"}:
                return False
            for k, v in node.items():
                if k in ("properties", "$defs"):
                    if not isinstance(v, dict):
                        return False
                    stack.extend(v.values())
                elif k not in _AGREED:
                    return False
                elif k not in ("enum", "const", "default", "examples", "description", "title", "pattern",
                               "required", "$id", "$schema", "$ref"):
                    stack.append(v)
    return True


def validate(doc: Any, schema: str) -> list[Violation]:
    """Validate ``doc`` against the named schema (a file name in ``schemas/``).

    Errors inside ``anyOf``/``oneOf`` are reduced to the branch the document matched best.
    A document the fast validator accepts has none (``_fast``).
    """
    fast = _fast(schema)
    if fast is not None:
        try:
            fast(doc)
            return []
        except fastjsonschema.JsonSchemaValueException:
            pass  # jsonschema says what and where
        except (RecursionError, ValueError, TypeError):
            pass
    validator = _validator(schema)
    errors: Iterable[ValidationError] = validator.iter_errors(doc)
    out: list[Violation] = []
    seen: set[tuple[tuple[str | int, ...], str, str]] = set()
    root = load_schema(schema)
    try:
        for err in _flatten(errors):
            v = _violation(err, doc, root)
            k = (v.path, v.keyword, v.message)
            if k not in seen:
                seen.add(k)
                out.append(v)
    except RecursionError:  # jsonschema recurses per level of the document
        out.append(Violation(getattr(doc, "pos", Mark(1, 1)), "the document nests too deeply to validate",
                             (), "depth"))
    out.sort(key=lambda v: (v.mark.line, v.mark.col, v.message))
    return out


def _flatten(errors: Iterable[ValidationError]) -> Iterator[ValidationError]:
    for err in errors:
        if err.validator in ("anyOf", "oneOf") and err.context:
            yield from _flatten(_best_branch(err))
        else:
            yield err


def _best_branch(err: ValidationError) -> list[ValidationError]:
    """The errors of the alternative the document came closest to.

    An alternative whose errors sit deeper in the document matched more of it (the type
    and the shape were right); on a tie, the one with fewer errors wins, then a
    non-type error beats a plain type mismatch.
    """
    branches: dict[int, list[ValidationError]] = {}
    for sub in err.context or ():
        idx = sub.schema_path[0] if sub.schema_path else 0
        branches.setdefault(int(idx), []).append(sub)

    def score(subs: list[ValidationError]) -> tuple[int, int, int]:
        depth = max(len(s.path) for s in subs)
        types_only = all(s.validator == "type" and len(s.path) == len(err.path) for s in subs)
        return (depth, 0 if types_only else 1, -len(subs))

    best = max(branches.values(), key=score)
    if all(s.validator in ("type", "const", "enum") and len(s.path) == len(err.path) for s in best):
        # Nothing matched: one message naming what would have been accepted.
        return [err]
    return best


def locate(doc: Any, path: Iterable[str | int]) -> tuple[Any, Any, str | int | None]:
    """(parent, node, key) for a JSON path into a YAML tree."""
    parent: Any = None
    node = doc
    key: str | int | None = None
    for part in path:
        parent, key = node, part
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
    return parent, node, key


def _value_mark(parent: Any, key: str | int | None, node: Any) -> Mark:
    if isinstance(parent, YMap) and isinstance(key, str) and key in parent.val_pos:
        return parent.val_pos[key]
    if isinstance(parent, YList) and isinstance(key, int) and 0 <= key < len(parent.item_pos):
        return parent.item_pos[key]
    return getattr(node, "pos", getattr(parent, "pos", Mark(1, 1)))


def _key_mark(parent: Any, key: str | int | None, node: Any) -> Mark:
    if isinstance(parent, YMap) and isinstance(key, str) and key in parent.key_pos:
        return parent.key_pos[key]
    return _value_mark(parent, key, node)


def _where(path: tuple[str | int, ...]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _show(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    return repr(value) if isinstance(value, str) else str(value)


_TYPE_NAMES = {"integer": "an integer", "string": "a string", "boolean": "true or false", "object": "a mapping",
               "array": "a list", "number": "a number", "null": "null"}


def _expected_type(t: Any) -> str:
    if isinstance(t, list):
        return " or ".join(_TYPE_NAMES.get(str(x), str(x)) for x in t)
    return _TYPE_NAMES.get(str(t), str(t))


def _violation(err: ValidationError, doc: Any, root: dict[str, Any]) -> Violation:
    path = tuple(err.absolute_path)
    parent, node, key = locate(doc, path)
    where = _where(path)
    kw = str(err.validator)
    if kw in ("additionalProperties", "unevaluatedProperties") and isinstance(node, dict):
        allowed = _allowed_keys(err.schema, root)
        extra = [k for k in node if k not in allowed and not _matches_pattern(err.schema, k)]
        name = extra[0] if extra else "?"
        hint = difflib.get_close_matches(str(name), sorted(allowed), n=1, cutoff=0.6)
        what = f"unknown field {name!r}" + (f" in {where}" if where else "")
        what += f"; did you mean {hint[0]!r}?" if hint else ""
        if not hint and allowed and len(allowed) <= 12:
            what += f" (expected one of: {', '.join(sorted(allowed))})"
        mark = node.key_pos.get(name, node.pos) if isinstance(node, YMap) else Mark(1, 1)
        return Violation(mark, what, (*path, name), kw, str(name))
    if kw == "required":
        missing = str(err.message).split("'")[1] if "'" in str(err.message) else str(err.validator_value)
        what = f"missing required field {missing!r}" + (f" in {where}" if where else "")
        return Violation(_key_mark(parent, key, node) if path else Mark(1, 1), what, path, kw, missing)
    if kw == "type":
        what = f"{where or 'the document'} must be {_expected_type(err.validator_value)}, not {_show(node)}"
        return Violation(_value_mark(parent, key, node), what, path, kw, _show(node))
    if kw == "enum":
        value: Any = err.validator_value
        opts = ", ".join(_show(v) for v in value)
        what = f"{where} is {_show(node)}; expected one of: {opts}"
        return Violation(_value_mark(parent, key, node), what, path, kw, _show(node))
    if kw == "const":
        what = f"{where} must be {_show(err.validator_value)}, not {_show(node)}"
        return Violation(_value_mark(parent, key, node), what, path, kw, _show(node))
    if kw in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        rel = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}[kw]
        what = f"{where} must be {rel} {err.validator_value}, not {_show(node)}"
        return Violation(_value_mark(parent, key, node), what, path, kw, _show(node))
    if kw in ("minLength", "minItems", "maxItems", "maxLength"):
        what = f"{where} is too {'short' if kw.startswith('min') else 'long'} ({kw} {err.validator_value})"
        if kw == "minLength" and node == "":
            what = f"{where} must not be empty"
        return Violation(_value_mark(parent, key, node), what, path, kw, _show(node))
    if kw in ("anyOf", "oneOf"):
        title = err.schema.get("description") or err.schema.get("title") if isinstance(err.schema, dict) else None
        what = f"{where or 'the document'} has an unexpected shape ({_show(node)})"
        if title:
            what += f": {title}"
        return Violation(_value_mark(parent, key, node), what, path, kw, _show(node))
    if kw == "pattern":
        what = f"{where} is {_show(node)}, which does not match {err.validator_value!r}"
        return Violation(_value_mark(parent, key, node), what, path, kw, _show(node))
    if kw in ("minProperties", "maxProperties"):
        what = f"{where or 'the document'} must have {'at least' if kw == 'minProperties' else 'at most'} " \
               f"{err.validator_value} field{'s' if err.validator_value != 1 else ''}"
        return Violation(_value_mark(parent, key, node), what, path, kw, "")
    what = f"{where or 'the document'}: {err.message}"
    return Violation(_value_mark(parent, key, node), what, path, kw, _show(node))


def _allowed_keys(schema: Any, root: dict[str, Any], depth: int = 0) -> set[str]:
    """Property names a (sub)schema allows, following local $refs and allOf/if/then."""
    out: set[str] = set()
    if not isinstance(schema, dict) or depth > 20:
        return out
    out.update(schema.get("properties", {}))
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(key, ()):
            out |= _allowed_keys(_deref(sub, root), root, depth + 1)
    for key in ("then", "else"):
        if key in schema:
            out |= _allowed_keys(_deref(schema[key], root), root, depth + 1)
    if "$ref" in schema:
        out |= _allowed_keys(_deref(schema, root), root, depth + 1)
    return out


def _deref(schema: Any, root: dict[str, Any]) -> Any:
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return schema
    node: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            return schema
        node = node[part]
    return node


def _matches_pattern(schema: Any, key: str) -> bool:
    pats = schema.get("patternProperties", {}) if isinstance(schema, dict) else {}
    return any(re.search(p, key) for p in pats)
