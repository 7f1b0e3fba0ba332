"""The bot's own configuration: ``.benchbot.yml`` or ``[tool.benchbot]`` in pyproject.toml.

```
select: [ignored-variant, missing-script]   # default: every rule
ignore: [dead-script]
severity: {dead-script: error}
fail-on: warning                            # error | warning | info
profile: {...}                              # overrides of bot.repo.profile.Profile
```
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.findings import Severity
from bot.repo.profile import Profile, profile_from_config
from bot.repo.tree import Tree
from bot.repo.yamlfile import YMap, load

CONFIG_FILES = (".benchbot.yml", ".benchbot.yaml")


class ConfigError(Exception):
    """A configuration problem: exit code 2, with the file and position."""


@dataclass(frozen=True)
class Config:
    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    fail_on: Severity = Severity.WARNING
    profile: Profile = field(default_factory=Profile)
    source: str | None = None

    def enabled(self, rule: str) -> bool:
        return (self.select is None or rule in self.select) and rule not in self.ignore


def load_config(tree: Tree, explicit: str | None = None) -> Config:
    """Read the config from the repo (or an explicit file path on disk)."""
    if explicit is not None:
        try:
            with open(explicit, encoding="utf-8") as fh:
                content = fh.read()
        except OSError as exc:
            raise ConfigError(f"{explicit}: cannot read ({exc.strerror})") from None
        return _from_text(explicit, content)
    for name in CONFIG_FILES:
        found = tree.text(name)
        if found is not None:
            return _from_text(name, found)
    text = tree.text("pyproject.toml")
    if text is not None:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"pyproject.toml: {exc}") from None
        section = data.get("tool", {}).get("benchbot")
        if isinstance(section, dict):
            return from_mapping(section, "pyproject.toml")
    return Config()


def _from_text(path: str, text: str) -> Config:
    data, err = load(text)
    if err is not None:
        raise ConfigError(f"{path}:{err.line}:{err.col}: {err.message}")
    if data is None:
        return Config(source=path)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}:1:1: the configuration must be a mapping")
    return from_mapping(data, path)


def _where(data: Any, key: str, path: str) -> str:
    if isinstance(data, YMap) and key in data.key_pos:
        m = data.key_pos[key]
        return f"{path}:{m.line}:{m.col}"
    return path


def from_mapping(data: Mapping[str, Any], path: str) -> Config:
    from bot.rules import resolve_rule

    known = {"select", "ignore", "severity", "fail-on", "profile"}
    for key in data:
        if key not in known:
            raise ConfigError(f"{_where(data, key, path)}: unknown key {key!r} (expected one of "
                              f"{', '.join(sorted(known))})")

    def rules(key: str) -> frozenset[str]:
        value = data.get(key, [])
        if not isinstance(value, list):
            raise ConfigError(f"{_where(data, key, path)}: {key} must be a list of rule ids")
        out = set()
        for item in value:
            rid = resolve_rule(str(item))
            if rid is None:
                raise ConfigError(f"{_where(data, key, path)}: unknown rule {item!r} in {key}")
            out.add(rid)
        return frozenset(out)

    select = rules("select") if "select" in data else None
    ignore = rules("ignore")
    severity: dict[str, Severity] = {}
    sev = data.get("severity", {})
    if not isinstance(sev, Mapping):
        raise ConfigError(f"{_where(data, 'severity', path)}: severity must map rule ids to levels")
    for k, v in sev.items():
        rid = resolve_rule(str(k))
        if rid is None:
            raise ConfigError(f"{_where(data, 'severity', path)}: unknown rule {k!r} in severity")
        try:
            severity[rid] = Severity.parse(str(v))
        except ValueError as exc:
            raise ConfigError(f"{_where(data, 'severity', path)}: {exc}") from None
    try:
        fail_on = Severity.parse(str(data.get("fail-on", "warning")))
    except ValueError as exc:
        raise ConfigError(f"{_where(data, 'fail-on', path)}: {exc}") from None
    prof = data.get("profile")
    if prof is not None and not isinstance(prof, Mapping):
        raise ConfigError(f"{_where(data, 'profile', path)}: profile must be a mapping")
    try:
        profile = profile_from_config(prof)
    except (ValueError, TypeError, KeyError) as exc:
        raise ConfigError(f"{_where(data, 'profile', path)}: {exc}") from None
    return Config(select, ignore, severity, fail_on, profile, path)
