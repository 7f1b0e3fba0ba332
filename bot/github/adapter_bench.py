"""PyGithub calls of the bench port (:class:`bot.github.port_bench.BenchPort`), mixed into
:class:`bot.github.adapter.PyGithubPort`."""

from __future__ import annotations

from typing import Any

from bot.github.calls import call
from bot.github.port import GitHubError
from bot.github.port_bench import BenchRun


class BenchAdapter:
    repo: Any  # the PyGithub Repository (set by PyGithubPort)
    gh: Any  # the PyGithub client

    def bench_runs(self, workflow: str, titles: frozenset[str], limit: int) -> list[BenchRun]:
        out: list[BenchRun] = []
        with call(f"list the runs of {workflow}"):
            for i, run in enumerate(self.repo.get_workflow(workflow).get_runs(event="workflow_dispatch"), 1):
                if run.display_title in titles:
                    out.append(BenchRun(int(run.id), str(run.display_title), str(run.status or ""),
                                        str(run.conclusion) if run.conclusion else None, str(run.html_url)))
                if i >= limit:
                    break
        return out

    def cancel_run(self, run_id: int) -> bool:
        """A cancel is idempotent on GitHub (a second one of a finished run is a 409), so after a
        lost answer (a 5xx, no response) it is sent once more rather than looked up."""
        url = f"{self.repo.url}/actions/runs/{int(run_id)}/cancel"
        for attempt in range(2):
            try:
                with call(f"cancel run {run_id}"):
                    self.repo._requester.requestJsonAndCheck("POST", url)
                return True
            except GitHubError as exc:
                if exc.status == 409:
                    return False
                if not exc.transient or attempt == 1:
                    raise
        return True  # not reached

    def remove_label(self, number: int, name: str) -> None:
        try:
            with call(f"remove the label {name} from #{number}"):
                self.repo.get_issue(number).remove_from_labels(name)
        except GitHubError as exc:
            if exc.status != 404:
                raise
