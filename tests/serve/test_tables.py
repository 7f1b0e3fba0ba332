"""The shipped alias tables agree with ../shared/data (skipped when that folder is absent)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from bot.serve import tables
from bot.serve.tables import generate

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"{DATA} is absent")


def _data(name: str) -> object:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def test_shipped_tables_are_the_generated_ones() -> None:
    for name, text in generate.render(DATA).items():
        shipped = resources.files("bot.serve.tables").joinpath(name).read_text(encoding="utf-8")
        assert shipped == text, f"{name} is stale: run python -m bot.serve.tables.generate {DATA}"
        assert text.endswith("}\n")


def test_vllm_short_aliases_identical() -> None:
    pairs = _data(f"vllm_{generate.VLLM_VERSION}_short_aliases.json")
    assert isinstance(pairs, list)
    expected = {short: long[2:].replace("-", "_") for long, short in pairs}
    shipped = json.loads(resources.files("bot.serve.tables").joinpath("vllm.json").read_text(encoding="utf-8"))
    assert shipped["short"] == expected
    assert dict(tables.vllm().short) == {**expected, "-asc": "api_server_count"}


def test_every_sglang_option_string_maps_to_the_same_field() -> None:
    strings = _data(f"sglang_{generate.SGLANG_VERSION}_option_strings.json")
    manual = _data(f"sglang_{generate.SGLANG_VERSION}_serverargs.json")["manual"]  # type: ignore[index]
    assert isinstance(strings, dict)
    t = tables.sglang()
    assert set(t.options) == set(strings)
    for opt, field in strings.items():
        if field != "(manual)":
            assert t.options[opt] == field, opt
            continue
        info = manual[opt]
        new = info["new_flag"]
        if info["action"] == "DeprecatedAliasStoreAction":
            assert t.options[opt] == strings[new], opt
        elif new and "=" in new:
            fields = {strings[n.split("=")[0]] for n in generate._expand(new)}
            assert set(t.consts[opt]) == fields, opt
        elif new:
            assert dict(t.consts[opt]) == {strings[new]: True}, opt
        else:
            assert t.options[opt] == opt[2:].replace("-", "_"), opt


def test_sglang_bool_fields_are_flags() -> None:
    fields = _data(f"sglang_{generate.SGLANG_VERSION}_serverargs.json")["fields"]  # type: ignore[index]
    t = tables.sglang()
    for opt, field in t.options.items():
        if fields.get(field, {}).get("type") == "bool" and opt not in t.consts:
            assert opt in t.flags, opt
    assert "--tp-size" not in t.flags and "--enable-dp-attention" in t.flags


def test_generate_main_is_deterministic() -> None:
    assert generate.render(DATA) == generate.render(DATA)
    assert generate.main([]) == 2
