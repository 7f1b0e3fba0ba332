"""The bot's own configuration: ``.benchbot.yml`` or ``[tool.benchbot]`` in pyproject.toml.

```
select: [ignored-variant, missing-script]   # default: every rule
ignore: [dead-script]
severity: {dead-script: error}
fail-on: warning                            # error | warning | info
max-file-mb: 8                              # bigger repo files are reported, not read (<= 64)
per-path-ignores:                           # glob -> rules not reported there
  "benchmarks/experimental/**": [dead-script]
profile: {...}                              # overrides of bot.repo.env.profile.Profile
speculators: .benchbot/speculators.yml      # the speculator policy (this is the default; docs/speculators.md)
github:                                     # the pull-request bot (benchbot event)
  bot-login: github-actions[bot]
  recipe-reminder: "..."
recipes:                                    # where the official recipes are read (bot.recipes.sources)
  vllm: {repo: vllm-project/recipes, ref: main, path: ""}
  sglang: {repo: sgl-project/sglang, path: docs_new/src/snippets/configs}
```
The file is validated against ``schemas/benchbot.schema.json``; every error names the
file, line and column of the offending key or value.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from bot.external.names import suggestion as external_suggestion
from bot.external.settings import parse as parse_workflows
from bot.findings import Severity
from bot.repo.env.profile import profile_from_config
from bot.repo.files.tree import DEFAULT_MAX_BYTES, HARD_MAX_BYTES, Tree, too_large
from bot.repo.load.schema import Violation, validate
from bot.repo.load.speculators import PolicyError, load_policy
from bot.repo.load.yamlfile import YList, YMap, load
from bot.settings import (  # the records, re-exported: callers keep importing them from here
    DEFAULT_BENCH_INPUTS,
    DEFAULT_REMINDER_PATHS,
    BenchConfig,
    Config,
    GitHubConfig,
    RecipeSettings,
    RepoRef,
)

__all__ = ["CONFIG_FILES", "DEFAULT_BENCH_INPUTS", "DEFAULT_REMINDER_PATHS", "BenchConfig", "Config", "ConfigError",
           "GitHubConfig", "RecipeSettings", "RepoRef", "from_mapping", "load_config"]

CONFIG_FILES = (".benchbot.yml", ".benchbot.yaml")


class ConfigError(Exception):
    """A configuration problem: exit code 2, with the file and position."""


_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}")
_RECIPE_FIELDS = {
    "repo": "must be OWNER/NAME of a GitHub repository",
    "ref": "must be a branch, tag or commit SHA (no spaces, no '..', none of ~^:?*[\\)",
    "path": "must be a folder of the repository, relative to its root (no leading '/', no '..')",
    "local": "must be a folder of this repository, relative to its root (no leading '/', no '..')",
}


def _recipes_message(v: Violation) -> str:
    """What a ``recipes:`` value the schema's pattern refused should be (not the pattern)."""
    if v.keyword != "pattern" or len(v.path) != 3 or v.path[0] != "recipes":
        return v.message
    if v.path[1] == "local":
        return f"recipes.local[{v.path[2]}] {_RECIPE_FIELDS['local']}, not {v.subject}"
    return f"recipes.{v.path[1]}.{v.path[2]} {_RECIPE_FIELDS.get(str(v.path[2]), 'is not valid')}, not {v.subject}"


def _recipes(data: Any, path: str) -> RecipeSettings:
    """``recipes:`` (the schema has checked its shape)."""
    defaults = RecipeSettings()
    section = data.get("recipes") or {}
    out: dict[str, RepoRef] = {}
    for kind in ("vllm", "sglang"):
        given = section.get(kind) or {}
        base = defaults.of(kind)
        repo = str(given.get("repo", base.repo))
        if not _REPO.fullmatch(repo) or repo.endswith(("/.", "/..")):  # the schema's pattern, and no final newline
            raise ConfigError(f"{_where(section, kind, path)}: recipes.{kind}.repo {_RECIPE_FIELDS['repo']}, "
                              f"not {repo!r}")
        ref = given.get("ref")
        folder = str(given.get("path", base.path if repo == base.repo else "")).strip("/")
        out[kind] = RepoRef(repo, str(ref) if ref is not None else None, folder)
    local = tuple(str(d).strip("/") for d in section.get("local", ()))
    github = "vllm" in section or "sglang" in section or not local
    return RecipeSettings(out["vllm"], out["sglang"], local, "recipes" in data, github)


def load_config(tree: Tree, explicit: str | None = None) -> Config:
    """Read the config from the repo (or an explicit file path on disk), with the speculator
    policy of the same tree (``speculators: PATH``, else ``.benchbot/speculators.yml``).

    A config file that is there but cannot be read (not a regular file, over the size
    budget, permission denied), nests too deeply or expands too far is a ConfigError; so is
    a policy file that cannot be read or does not validate."""
    conf, named = _load(tree, explicit)
    try:
        policy = load_policy(tree, named, conf.source or "")
    except PolicyError as exc:
        raise ConfigError(str(exc)) from None
    return replace(conf, speculators=policy) if policy is not None else conf


def _load(tree: Tree, explicit: str | None) -> tuple[Config, str | None]:
    """The configuration and the policy path it names (``speculators:``; None: the default)."""
    if explicit is not None:
        return _parse_text(explicit, _read_explicit(explicit))
    for name in CONFIG_FILES:
        found = _text(tree, name)
        if found is not None:
            return _parse_text(name, found)
    text = _text(tree, "pyproject.toml")
    if text is not None:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"pyproject.toml: {exc}") from None
        except RecursionError:  # tomllib recurses per nested array / inline table
            raise ConfigError("pyproject.toml: an array or inline table nests too deeply to read") from None
        tool = data.get("tool", {})
        section = tool.get("benchbot") if isinstance(tool, dict) else None
        if isinstance(section, dict):
            return from_mapping(section, "pyproject.toml"), _policy_path(section)
    return Config(), None


def _text(tree: Tree, path: str) -> str | None:
    text = tree.text(path)
    if text is None and tree.is_file(path):
        raise ConfigError(f"{path}: {tree.problem(path) or 'unreadable'}; the configuration cannot be read")
    return text


def _read_explicit(path: str) -> str:
    """``--config FILE``: a regular file within the hard size limit, opened without blocking."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"{path}: not a regular file; the configuration cannot be read")
        if st.st_size > HARD_MAX_BYTES:
            raise ConfigError(f"{path}: {too_large(st.st_size, HARD_MAX_BYTES)}")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            return fh.read(HARD_MAX_BYTES + 1).decode("utf-8", "replace")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None


def _from_text(path: str, text: str) -> Config:
    return _parse_text(path, text)[0]


def _parse_text(path: str, text: str) -> tuple[Config, str | None]:
    """The configuration in ``text`` and the policy path it names (``speculators:``)."""
    data, err = load(text)
    if err is not None:
        raise ConfigError(f"{path}:{err.line}:{err.col}: {err.message}")
    if data is None:
        return Config(source=path), None
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}:1:1: the configuration must be a mapping")
    return from_mapping(data, path), _policy_path(data)


def _policy_path(data: Mapping[str, Any]) -> str | None:
    """``speculators:`` (validated by the schema before this is asked)."""
    value = data.get("speculators")
    return str(value) if isinstance(value, str) else None


def _where(data: Any, key: str, path: str) -> str:
    if isinstance(data, YMap) and key in data.key_pos:
        m = data.key_pos[key]
        return f"{path}:{m.line}:{m.col}"
    return path


def from_mapping(data: Mapping[str, Any], path: str) -> Config:
    from bot.rules import RULES, resolve_rule

    problems = validate(data, "benchbot.schema.json")
    if problems:
        # pyproject.toml tables have no YAML positions: name the key path instead.
        first = problems[0]
        where = f"{path}:{first.mark.line}:{first.mark.col}" if isinstance(data, YMap) else path
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ConfigError(f"{where}: {_recipes_message(first)}{more}")

    def rule_ids(value: Any, where: str, what: str) -> frozenset[str]:
        out = set()
        for i, item in enumerate(value):
            rid = resolve_rule(str(item))
            if rid is None:
                if isinstance(value, YList) and i < len(value.item_pos):
                    where = f"{path}:{value.item_pos[i].line}:{value.item_pos[i].col}"
                hint = [external_suggestion(str(item))] if external_suggestion(str(item)) else \
                    difflib.get_close_matches(str(item), list(RULES), n=1)
                raise ConfigError(f"{where}: unknown rule {item!r} in {what}"
                                  + (f"; did you mean {hint[0]!r}?" if hint else "; see 'benchbot rules'"))
            out.add(rid)
        return frozenset(out)

    def rules(key: str) -> frozenset[str]:
        return rule_ids(data.get(key, []), _where(data, key, path), key)

    select = rules("select") if "select" in data else None
    ignore = rules("ignore")
    ppi = data.get("per-path-ignores", {})
    per_path = tuple(
        (str(pattern), rule_ids(ids, _where(ppi, str(pattern), path), f"per-path-ignores[{pattern!r}]"))
        for pattern, ids in ppi.items())
    severity: dict[str, Severity] = {}
    sev = data.get("severity", {})
    if not isinstance(sev, Mapping):
        raise ConfigError(f"{_where(data, 'severity', path)}: severity must map rule ids to levels")
    for k, v in sev.items():
        rid = resolve_rule(str(k))
        if rid is None:
            raise ConfigError(f"{_where(sev, str(k), path)}: unknown rule {k!r} in severity")
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
    gh = data.get("github", {})
    github = GitHubConfig(
        bot_login=gh.get("bot-login"),
        recipe_reminder=gh.get("recipe-reminder"),
        reminder_paths=tuple(gh.get("reminder-paths", DEFAULT_REMINDER_PATHS)),
        inline_comments=bool(gh.get("inline-comments", True)),
        map_entries=int(gh.get("map-entries", 5)),
    )
    b = data.get("bench", {})
    defaults = BenchConfig()
    bench = BenchConfig(
        workflow=str(b.get("workflow", defaults.workflow)),
        ref=b.get("ref"),
        inputs=tuple((str(k), str(v)) for k, v in b["inputs"].items()) if "inputs" in b else defaults.inputs,
        run_name=str(b.get("run-name", defaults.run_name)),
        repository_dispatch=b.get("repository-dispatch"),
        allow=frozenset(str(x).lower() for x in b.get("allow", [])),
        max_per_hour=int(b.get("max-per-hour", defaults.max_per_hour)),
        poll_seconds=float(b.get("poll-seconds", defaults.poll_seconds)),
        max_jobs=int(b.get("max-jobs", defaults.max_jobs)),
        labels=tuple((str(k), str(v)) for k, v in b.get("labels", {}).items()),
    )
    max_file = min(int(float(data.get("max-file-mb", DEFAULT_MAX_BYTES / 2**20)) * 2**20), HARD_MAX_BYTES)
    return Config(select, ignore, severity, fail_on, profile, path, per_path, github, bench, max(1, max_file),
                  recipes=_recipes(data, path), workflows=parse_workflows(data))
