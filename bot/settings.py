"""The bot's configuration as records: what ``.benchbot.yml`` (or ``[tool.benchbot]``) says,
once ``bot.config`` has read and validated it.

Rules, reports and the GitHub layer take a :class:`Config`; only ``bot.config`` reads one. The
records import nothing of the rules, so the rule registry can resolve the names a configuration
gives (``bot.config.from_mapping``) without a circle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.external.names import family
from bot.external.settings import WorkflowSettings
from bot.findings import Severity
from bot.repo.env.profile import Profile
from bot.repo.files.tree import DEFAULT_MAX_BYTES, glob_match
from bot.repo.load.speculators import SpecPolicy

DEFAULT_REMINDER_PATHS = ("configs/**", ".github/configs/**", "benchmarks/**")


@dataclass(frozen=True)
class GitHubConfig:
    """The ``github:`` section: how ``benchbot event`` behaves on pull requests."""

    bot_login: str | None = None
    recipe_reminder: str | None = None
    reminder_paths: tuple[str, ...] = DEFAULT_REMINDER_PATHS
    inline_comments: bool = True
    map_entries: int = 5  # changed entries whose dispatch chain the summary draws (bot.map.mermaid)

    def reminds(self, paths: list[str]) -> bool:
        """Whether a change to these files calls for the recipe reminder."""
        return self.recipe_reminder is not None and any(
            glob_match(pattern, p) for pattern in self.reminder_paths for p in paths)


DEFAULT_BENCH_INPUTS = (
    ("generate-cli-command", "test-config --config-keys {entries} --config-files {config_files}"),
    ("test-name", "{test_name}"),
    ("ref", "{sha}"),
)


@dataclass(frozen=True)
class BenchConfig:
    """The ``bench:`` section: what ``/bench <sku>`` dispatches (defaults: InferenceX's e2e-tests.yml)."""

    workflow: str = "e2e-tests.yml"
    ref: str | None = None  # None: the default branch
    inputs: tuple[tuple[str, str], ...] = DEFAULT_BENCH_INPUTS
    run_name: str = "e2e Test - {test_name}"
    repository_dispatch: str | None = None
    allow: frozenset[str] = frozenset()
    max_per_hour: int = 6
    poll_seconds: float = 20.0
    max_jobs: int = 64  # benchmark jobs one command may start without --yes
    labels: tuple[tuple[str, str], ...] = ()  # PR label -> /bench target (the label trigger)


@dataclass(frozen=True)
class RepoRef:
    """A folder of a GitHub repository at a ref: where one engine's official recipes live."""

    repo: str  # owner/name
    ref: str | None = None  # a branch, tag or commit SHA; None: the default branch
    path: str = ""  # repository-relative folder ("" the root); Source paths stay repository-relative


@dataclass(frozen=True)
class RecipeSettings:
    """The ``recipes:`` section (``bot.recipes.sources.open_sources``)."""

    vllm: RepoRef = RepoRef("vllm-project/recipes")
    sglang: RepoRef = RepoRef("sgl-project/sglang", None, "docs_new/src/snippets/configs")
    local: tuple[str, ...] = ()  # repo-relative folders of collections kept in the linted repo
    # the configuration has a ``recipes:`` section: the pull-request bot compares changed
    # entries with the GitHub repositories (it never reaches them unasked)
    given: bool = False
    # the GitHub repositories are read (unless the section names only ``local`` folders)
    github: bool = True

    def of(self, kind: str) -> RepoRef:
        """The repository of ``kind`` ("vllm" or "sglang")."""
        if kind not in ("vllm", "sglang"):
            raise ValueError(f"no recipe kind {kind!r}")
        ref: RepoRef = getattr(self, kind)
        return ref


@dataclass(frozen=True)
class Config:
    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    fail_on: Severity = Severity.WARNING
    profile: Profile = field(default_factory=Profile)
    source: str | None = None
    per_path_ignores: tuple[tuple[str, frozenset[str]], ...] = ()
    github: GitHubConfig = field(default_factory=lambda: GitHubConfig())
    bench: BenchConfig = field(default_factory=lambda: BenchConfig())
    # ``max-file-mb``: a repo file over this is reported, not read (at most HARD_MAX_BYTES)
    max_file_bytes: int = DEFAULT_MAX_BYTES
    # the speculator policy (``.benchbot/speculators.yml`` or ``speculators: PATH``), read from
    # the same tree as this config (the base in pull requests); None: the repo has none
    speculators: SpecPolicy | None = None
    recipes: RecipeSettings = field(default_factory=lambda: RecipeSettings())
    workflows: WorkflowSettings = field(default_factory=lambda: WorkflowSettings())

    def enabled(self, rule: str) -> bool:
        """Whether ``rule`` runs: selected (by its id, or an external rule by its tool's name) and not ignored."""
        tool = family(rule)
        return ((self.select is None or rule in self.select or tool in self.select)
                and rule not in self.ignore and tool not in self.ignore)

    def ignored_at(self, rule: str, path: str) -> bool:
        """Whether ``per-path-ignores`` turns ``rule`` off for the file ``path``."""
        tool = family(rule)
        return any((rule in rules or tool in rules) and glob_match(pattern, path)
                   for pattern, rules in self.per_path_ignores)

    def severity_of(self, rule: str) -> Severity | None:
        """The configured severity of ``rule`` (an external rule's tool's, if it has none of its own)."""
        return self.severity.get(rule) or self.severity.get(family(rule))
