"""PyGithub calls of the results port (:class:`bot.github.port_results.ResultsPort`), mixed into
:class:`bot.github.adapter.PyGithubPort`."""

from __future__ import annotations

from typing import Any

import github.Artifact
from github.PaginatedList import PaginatedList

from bot.github.calls import call
from bot.github.port_results import Artifact, TooLarge

CHUNK = 64 * 1024


class ResultsAdapter:
    repo: Any  # the PyGithub Repository (set by PyGithubPort)
    gh: Any  # the PyGithub client

    def run_artifacts(self, run_id: int, limit: int) -> list[Artifact]:
        if limit <= 0:
            return []
        with call(f"list the artifacts of run {run_id}"):
            listed: PaginatedList[github.Artifact.Artifact] = PaginatedList(
                github.Artifact.Artifact, self.gh.requester, f"{self.repo.url}/actions/runs/{run_id}/artifacts",
                None, list_item="artifacts")
            out: list[Artifact] = []
            for a in listed:
                out.append(Artifact(int(a.id), str(a.name or ""), int(a.size_in_bytes or 0), bool(a.expired)))
                if len(out) >= limit:
                    break
            return out

    def download_artifact(self, artifact_id: int, max_bytes: int) -> bytes:
        url = f"{self.repo.url}/actions/artifacts/{artifact_id}/zip"
        with call(f"download artifact {artifact_id}"):
            # GitHub answers 302 to a short-lived storage URL; the requester follows it (and drops
            # the token when the host differs)
            _, _, chunks = self.gh.requester.getStream(url, chunk_size=CHUNK)
            buf = bytearray()
            for chunk in chunks:
                buf += chunk
                if len(buf) > max_bytes:
                    raise TooLarge(f"artifact {artifact_id} is over {max_bytes} bytes")
            return bytes(buf)

    def open_pulls(self, limit: int) -> list[int]:
        if limit <= 0:
            return []
        with call("list the open pull requests"):
            out: list[int] = []
            for p in self.repo.get_pulls(state="open", sort="updated", direction="desc"):
                out.append(int(p.number))
                if len(out) >= limit:
                    break
            return out
