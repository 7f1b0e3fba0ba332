"""Binding a ``/bench`` to the head the commenter saw: pure, over timeline records."""

from __future__ import annotations

from bot.github.bind import RUN_LAG, Binding, Evidence, bind, evidence
from bot.github.port import RunInfo, TimelineEvent

H, OLD = "a" * 40, "b" * 40
T = 1_000_000.0  # the comment's created_at
RETRY = "`/bench x @aaaaaaaaaaaa`"


def test_a_named_sha_must_match_the_head() -> None:
    assert bind(H, H, T, None, RETRY) == Binding(H, "named")  # the full SHA: no timeline needed
    assert bind(H, H.upper(), T, None, RETRY).sha == H
    refused = bind(H, "bbbbbbb", T, [], RETRY)
    assert refused.sha is None and "`bbbbbbb`" in refused.how and RETRY in refused.how


def test_a_short_prefix_binds_nothing() -> None:
    proof = [TimelineEvent("head_ref_force_pushed", H, T - 60)]
    for n in (7, 11):
        b = bind(H, H[:n], T, proof, RETRY)
        assert b.sha is None and f"has {n} hex digits" in b.how and RETRY in b.how


def test_a_long_prefix_binds_with_the_proof_and_only_when_unique() -> None:
    proof = [TimelineEvent("head_ref_force_pushed", H, T - 60)]
    assert bind(H, H[:12], T, proof, RETRY) == Binding(H, "named+timeline")
    assert bind(H, H[:12], T, None, RETRY).sha is None  # no proof: the timeline could not be read
    after = [*proof, TimelineEvent("head_ref_force_pushed", H, T + 5)]
    assert bind(H, H[:20], T, after, RETRY).sha is None  # a push after the comment
    twin = "a" * 12 + "f" * 28  # another commit of the pull request with the same 12 digits
    for other in ([TimelineEvent("committed", twin, None), *proof], proof):
        runs = [RunInfo(twin, "pull_request", "b", "o/r", T - 30)] if other is proof else []
        b = bind(H, H[:12], T, other, RETRY, runs=runs)
        assert b.sha is None and "more than one commit" in b.how
    assert bind(H, H[:13], T, [TimelineEvent("committed", twin, None), *proof], RETRY).sha == H


def test_a_force_push_before_the_comment_proves_the_head() -> None:
    events = [TimelineEvent("committed", OLD, None), TimelineEvent("head_ref_force_pushed", H, T - 60),
              TimelineEvent("committed", H, None)]
    assert bind(H, None, T, events, RETRY).how == "timeline"


def test_anything_else_is_refused_with_the_command_to_type() -> None:
    cases = [
        None,  # the timeline could not be read
        [TimelineEvent("committed", H, None)],  # a plain push: no server time
        [TimelineEvent("head_ref_force_pushed", OLD, T - 60)],  # the proof names another head
        [TimelineEvent("head_ref_force_pushed", H, T - 60), TimelineEvent("head_ref_force_pushed", H, T + 5)],
        [TimelineEvent("head_ref_force_pushed", H, T)],  # the comment's own second: may be after it
        [TimelineEvent("head_ref_force_pushed", H, T - 60), TimelineEvent("head_ref_force_pushed", None, T - 30)],
    ]
    for events in cases:
        b = bind(H, None, T, events, RETRY)
        assert b.sha is None and RETRY in b.how, events


# ------------------------------------------------------------------ workflow runs as evidence

A = "c" * 40  # an earlier head
PR_REPO, PR_REF = "alice/bench", "conc"


def run(sha: str, at: float, *, event: str = "pull_request", branch: str = PR_REF, repo: str = PR_REPO) -> RunInfo:
    return RunInfo(sha, event, branch, repo, at)


def bound(events: list[TimelineEvent] | None, runs: list[RunInfo] | None) -> Binding:
    return bind(H, None, T, events, RETRY, runs=runs, head_repo=PR_REPO, head_ref=PR_REF)


def test_a_run_for_the_head_before_the_comment_proves_a_plain_push() -> None:
    plain = [TimelineEvent("committed", OLD, None), TimelineEvent("committed", H, None)]
    assert bound(plain, [run(H, T - 60)]) == Binding(H, "run")
    assert bound(plain, [run(H, T - 60, event="pull_request_target")]).sha == H
    # a force push long before, then a plain push of H with its run: the run is the latest
    assert bound([TimelineEvent("head_ref_force_pushed", OLD, T - 3600)], [run(H, T - 60)]).sha == H
    # a force push to H itself, then its run a few seconds later: either proves H
    assert bound([TimelineEvent("head_ref_force_pushed", H, T - 63)], [run(H, T - 60)]).sha == H


def test_runs_of_other_branches_repositories_or_events_do_not_count() -> None:
    for r in (run(H, T - 60, branch="other"), run(H, T - 60, repo="mallory/bench"), run(H, T - 60, event="push"),
              run(H, T - 60, event="workflow_dispatch"), run(H, T - 60, repo="")):
        b = bound([], [r])
        assert b.sha is None and "no server time" in b.how and RETRY in b.how, r
    # and without the pull request's head repository and branch no run counts
    assert bind(H, None, T, [], RETRY, runs=[run(H, T - 60)]).sha is None


def test_force_push_back_then_fast_forward_after_the_comment_is_refused() -> None:
    """Push A, push H (its run at t1), force-push back to A (t2), the maintainer comments at T seeing
    A, the author fast-forwards to H after T with no run (the PR edited the review workflow away)."""
    events = [TimelineEvent("committed", A, None), TimelineEvent("committed", H, None),
              TimelineEvent("head_ref_force_pushed", A, T - 600), TimelineEvent("committed", H, None)]
    b = bound(events, [run(H, T - 1200)])
    assert b.sha is None and f"`{A[:12]}`" in b.how and RETRY in b.how


def test_a_run_at_or_after_the_comment_is_refused() -> None:
    for late in (T, T + 5):  # the comment's own second counts as after
        b = bound([], [run(H, T - 60), run(H, late)])  # a later synchronize to H
        assert b.sha is None and "after your comment" in b.how and RETRY in b.how, late
    # a force push after the comment keeps its own message
    b = bound([TimelineEvent("head_ref_force_pushed", H, T + 5)], [run(H, T + 6)])
    assert b.sha is None and "force-pushed after your comment" in b.how


def test_a_force_push_elsewhere_just_before_the_run_is_refused() -> None:
    """Push H, force-push back to A at once; the run for H is created after the force push."""
    events = [TimelineEvent("head_ref_force_pushed", A, T - 62)]
    b = bound(events, [run(H, T - 60)])
    assert b.sha is None and "shortly before the workflow run" in b.how and RETRY in b.how
    assert bound([TimelineEvent("head_ref_force_pushed", A, T - 60 - RUN_LAG - 1)], [run(H, T - 60)]).sha == H
    # an unknown head move (a restored branch) in the window refuses the same way
    assert bound([TimelineEvent("head_ref_restored", None, T - 62)], [run(H, T - 60)]).sha is None


def test_two_heads_in_the_same_second_are_refused() -> None:
    b = bound([TimelineEvent("head_ref_force_pushed", H, T - 60)], [run(OLD, T - 60), run(H, T - 60)])
    assert b.sha is None and "same second" in b.how


def test_unreadable_runs_leave_only_the_timeline() -> None:
    assert bound([TimelineEvent("head_ref_force_pushed", H, T - 60)], None) == Binding(H, "timeline")
    b = bound([TimelineEvent("committed", H, None)], None)
    assert b.sha is None and "workflow runs could not be read" in b.how and RETRY in b.how


def test_evidence_merges_both_sources_oldest_first() -> None:
    events = [TimelineEvent("committed", H, None), TimelineEvent("head_ref_force_pushed", A, T - 30),
              TimelineEvent("head_ref_deleted", None, T - 20), TimelineEvent("labeled", None, T - 10)]
    got = evidence(events, [run(H, T - 40), run(H, T - 5, branch="x")], PR_REPO, PR_REF)
    assert got == [Evidence(T - 40, H, "run"), Evidence(T - 30, A, "timeline"), Evidence(T - 20, None, "timeline")]
