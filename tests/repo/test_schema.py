"""``bot.repo.load.schema``'s fast validator: fastjsonschema's code, generated ahead of time
(``scripts/gen_schema_validators.py``) and shipped as modules of the package. Nothing of it is
kept in, or loaded from, the persistent cache: an entry planted where earlier versions kept the
compiled validator (``marshal`` of a code object, run with ``exec``) is never read."""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

import fastjsonschema
import pytest

from bot import cache
from bot.repo.load import schema
from tests.conftest import EXAMPLE, ROOT, copy_repo

MASTER = "configs/amd-master.yaml"
SCHEMAS = ("master-config.schema.json", "runners.schema.json", "benchbot.schema.json")


def test_the_shipped_validators_are_what_the_generator_writes() -> None:
    proc = subprocess.run([sys.executable, "scripts/gen_schema_validators.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_each_schema_has_its_shipped_validator() -> None:
    for name in SCHEMAS:
        schema._fast.cache_clear()
        fast = schema._fast(name)
        assert fast is not None and fast.__module__ == f"bot.repo.load.{schema.fast_module_name(name)}", name
    schema._fast.cache_clear()


def test_our_schemas_read_alike_by_both_validators() -> None:
    for name in SCHEMAS:
        assert schema.fast_safe(schema.load_schema(name)), name
    assert not schema.fast_safe({"$ref": "#/$defs/x", "required": ["a"]})  # draft-07 ignores the sibling
    assert not schema.fast_safe({"properties": {"a": {"prefixItems": [{}]}}})  # a keyword it does not know
    assert schema.fast_safe({"properties": {"pattern": {"type": "string"}}})  # a property named like a keyword
    assert json.dumps(schema.load_schema("runners.schema.json"))  # plain JSON


def test_a_schema_edited_after_generation_is_validated_by_jsonschema_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped module records the schema text it was made from: for another text (a
    schema edited in a checkout, not regenerated yet) it is not used, never wrong."""
    name = "runners.schema.json"
    edited = schema.schema_bytes(name).replace(b'"type"', b'"type" ', 1)
    monkeypatch.setattr(schema, "schema_bytes", lambda _n: edited)
    schema._fast.cache_clear()
    try:
        assert schema._fast(name) is None
        doc = {"labels": {"mi300x": ["node-1"]}, "hardware": {}}
        assert schema.validate(doc, name) == []
        assert [v.keyword for v in schema.validate({"labels": {"mi300x": []}}, name)] == ["minItems"]
    finally:
        schema._fast.cache_clear()


def test_validation_writes_nothing_to_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHBOT_CACHE_DIR", str(tmp_path / "c"))
    schema._fast.cache_clear()
    for name in SCHEMAS:
        assert schema._fast(name) is not None
    assert not (tmp_path / "c").exists()


# ------------------------------------------------------------------ planted entries, through the CLI


def _repo_with_two_schema_errors(tmp_path: Path) -> Path:
    repo = copy_repo(EXAMPLE, tmp_path / "seed")
    master = repo / MASTER
    text = master.read_text()
    for entry, field in (("kimik2.5-int4-mi300x-vllm", "unknown-field: 1"),
                         ("kimik2.5-int4-mi325x-vllm", "precision-typo: int4")):
        head = f"{entry}:\n  image: vllm/vllm-openai-rocm:v0.14.1\n"
        assert head in text
        text = text.replace(head, f"{head}  {field}\n", 1)
    master.write_text(text)
    return repo


def _old_schema_key(name: str) -> str:
    """Where benchbot up to this change kept the compiled validator of a schema."""
    text = json.dumps(schema.load_schema(name), sort_keys=True)
    return cache.key("fastjsonschema", fastjsonschema.VERSION, importlib.util.MAGIC_NUMBER, text)


def _lint(repo: Path, where: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BENCHBOT_CACHE_DIR": str(where)}
    env.pop("BENCHBOT_NO_CACHE", None)
    return subprocess.run([sys.executable, "-m", "bot", "lint", str(repo), "--format", "json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def _schema_findings(proc: subprocess.CompletedProcess[str]) -> list[tuple[str, int]]:
    return [(f["path"], f["line"]) for f in json.loads(proc.stdout)["findings"] if f["rule"] == "config-schema"]


def test_a_planted_validator_never_runs_and_the_schema_errors_stay(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A validator planted in the cache (code that writes a file and accepts every document)
    under the key earlier versions read: it does not run, both config-schema errors are
    reported, the lint exits 1."""
    where = tmp_path / "cache"
    monkeypatch.setenv("BENCHBOT_CACHE_DIR", str(where))
    repo = _repo_with_two_schema_errors(tmp_path)
    ran = tmp_path / "planted-code-ran"
    planted = compile(f"open({str(ran)!r}, 'w').write('ran')\ndef validate(data, **kwargs):\n    return data\n",
                      "<planted>", "exec")
    for name in SCHEMAS:
        cache.put("schema", _old_schema_key(name), marshal.dumps(("validate", planted)))
    proc = _lint(repo, where)
    assert not ran.exists(), "the planted validator ran"
    assert proc.returncode == 1, proc.stderr
    assert _schema_findings(proc) == [(MASTER, 3), (MASTER, 42)]


def test_bad_bytes_where_a_validator_was_kept_do_not_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bytecode that would crash the interpreter (and bytes that are no code at all) where the
    compiled validator was kept: the lint is whole, exit 1, never a crash (139) or exit 3."""
    where = tmp_path / "cache"
    monkeypatch.setenv("BENCHBOT_CACHE_DIR", str(where))
    repo = _repo_with_two_schema_errors(tmp_path)
    code = compile("def validate(data, **kwargs):\n    return data\n", "<bad>", "exec")
    fn_code = next(c for c in code.co_consts if hasattr(c, "co_code"))
    broken = code.replace(co_consts=tuple(fn_code.replace(co_code=b"\xff\xff" * 64) if c is fn_code else c
                                          for c in code.co_consts), co_code=b"\xff\xff" * 64)
    payloads = [marshal.dumps(("validate", broken)), b"\x00not marshal at all\xff" * 10]
    for i, payload in enumerate(payloads):
        for name in SCHEMAS:
            cache.put("schema", _old_schema_key(name), payload)
        proc = _lint(repo, where)
        assert proc.returncode == 1, (i, proc.returncode, proc.stderr[-2000:])
        assert _schema_findings(proc) == [(MASTER, 3), (MASTER, 42)]
        cache.clear()
