"""One comment command being answered (:class:`Ctx`): where to reply, what is known so far, and
the one claim comment every answer edits. ``bot.github.comments`` makes it; the command
handlers (``benchrun``, ``benchruns``) take it; none of them imports another.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.github import claim
from bot.github.claim import reply_marker
from bot.github.handling import Outcome
from bot.github.port import Comment, Port
from bot.settings import Config

Sleep = Callable[[float], None]


@dataclass
class Ctx:
    """One command being answered: where to reply, and what is known so far."""

    port: Port
    conf: Config
    number: int
    comment_id: int | str  # the command comment's id; ``label-<event id>`` for the label trigger (no reactions)
    workspace: str
    out: Outcome
    bot_login: str
    previous: list[Comment]  # the PR's conversation comments when the command was read
    sleep: Sleep
    now: Callable[[], float]
    claim: Comment  # the bot's reply that claimed the command: every answer edits it
    comment_at: float  # when the command was written (server time)
    answered: bool = False
    dispatched: bool = False  # the dispatch went out (a later failure must not invite a retry)

    @property
    def marker(self) -> str:
        return reply_marker(self.comment_id)

    def note(self, hidden: str, text: str) -> None:
        """Edit the claim, keeping it a claim (a step on the way, e.g. the dispatch about to go out)."""
        self.port.edit_issue_comment(self.claim.id, f"{self.marker}{claim.claim_marker(self.comment_id)}{hidden}\n"
                                                    f"{text}")

    def reply(self, text: str, extra_marker: str = "") -> None:
        self.port.edit_issue_comment(self.claim.id, f"{self.marker}{extra_marker}\n{text}")
        self.answered = True

    def react(self, content: str) -> None:
        """A reaction on the command comment (none for a label: there is no comment)."""
        if isinstance(self.comment_id, int):
            self.port.react(self.comment_id, content)

    def refuse(self, text: str, log: str, extra_marker: str = "") -> None:
        self.out.logs.append(f"benchbot: {log}")
        self.reply(text, extra_marker)
        self.react("confused")
