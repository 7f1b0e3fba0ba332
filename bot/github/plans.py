"""The records of a pull request's review: what is new, old and fixed (:data:`Split`), what one
run knows of the pull request (:class:`Context`) and what it will write (:class:`Plan` and its
parts). ``bot.github.review`` plans, ``bot.github.summary`` writes the summary from them: both
import these, neither the other's plans.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.findings import Finding
from bot.github.evidence import SpecChange
from bot.github.inline import Link
from bot.github.port import DraftComment, ReviewComment
from bot.newonly import Comparison
from bot.report import Stats

# new: on the head, not on the base (what the PR introduces); old: on both (reported in the
# summary only, collapsed); fixed: base findings the head no longer has (listed).
Split = Comparison


@dataclass(frozen=True)
class Posted:
    """One of the bot's inline comments: its causes' fingerprints, and whether it is resolved."""

    comment: ReviewComment
    fingerprints: tuple[str, ...]
    resolved: bool

    @property
    def key(self) -> tuple[str, int | None, str]:
        if self.comment.subject_type == "file" or self.comment.line is None:
            return (self.comment.path, None, "RIGHT")
        return (self.comment.path, self.comment.line, self.comment.side or "RIGHT")


@dataclass(frozen=True)
class Resolve:
    comment: ReviewComment
    reply: str | None  # None: the reply is there already (an earlier run stopped after it)
    body: str  # the comment's new body, marked resolved


@dataclass(frozen=True)
class Update:
    """A cause added to the bot's open comment on the same line."""

    comment: ReviewComment
    body: str


@dataclass
class Plan:
    review: list[DraftComment] = field(default_factory=list)
    review_body: str = ""
    inline: list[Finding] = field(default_factory=list)  # causes that get a comment (new or added to one) this run
    posted: list[Finding] = field(default_factory=list)  # new causes commented on before
    unanchored: list[Finding] = field(default_factory=list)  # new causes the PR touches nowhere: summary only
    update: list[Update] = field(default_factory=list)
    resolve: list[Resolve] = field(default_factory=list)
    recheck: list[ReviewComment] = field(default_factory=list)  # marked resolved: their threads should be too
    summary: str = ""
    summary_id: int | None = None  # edit this comment; None: create one
    summary_changed: bool = True
    comments: int = 0  # inline comments of this pull request's new causes, old and new


@dataclass(frozen=True)
class Context:
    head_sha: str
    base_sha: str
    base_ref: str
    bot_login: str
    stats: Stats
    reminder: str | None = None  # the recipe reminder, when the PR calls for it
    inline_comments: bool = True
    link: Link | None = None
    policy: str | None = None  # what the PR changes in benchbot's configuration (``bot.github.policy``)
    fixed: tuple[Finding, ...] = ()  # the base's findings the head fixes (:func:`fixed_findings`)
    spec: SpecChange = SpecChange()  # what the PR changes in speculative decoding (``bot.github.evidence``)
    description: str = ""  # the PR's description (untrusted): lm_eval tables in it are compared
    recipes: tuple[str, ...] = ()  # the "Recipe parity" section (``bot.github.parity``), markdown lines
    workflows: tuple[str, ...] = ()  # what the workflow checkers looked at (``bot.github.workflows_gate``)
    chains: str = ""  # the changed entries' dispatch chains, before and after (``bot.github.chains``)
    map_link: str | None = None  # where the HTML map of the head is (the workflow run's artifact)
