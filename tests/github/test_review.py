"""The pure planning of reviews: diff lines, anchors, suggestions, idempotence."""

from __future__ import annotations

from bot.findings import Finding, Fix, Related, Severity, file_diff
from bot.github import plans, review
from bot.github.diff import changes, parse_patch
from bot.github.port import ChangedFile, Comment, ReviewComment
from bot.report import Stats

STATS = Stats(3, 6, 3, 6, 0.01)
BOT = "github-actions[bot]"


def test_parse_patch_counts_right_side_lines() -> None:
    patch = "@@ -1,3 +1,4 @@\n a\n-b\n+B\n+C\n c\n@@ -10,2 +11,2 @@\n x\n+y\n\\ No newline at end of file"
    added, visible = parse_patch(patch)
    assert added == {2, 3, 12}
    assert visible == {1, 2, 3, 4, 11, 12}


def test_changes_keep_removed_files_as_deleted_lines_and_patchless_ones() -> None:
    ch = changes([ChangedFile("a.sh", "removed", "@@ -1,2 +0,0 @@\n-x\n-y"), ChangedFile("big.yaml", "added", None),
                  ChangedFile("b.sh", "added", "@@ -0,0 +1,2 @@\n+x\n+y"),
                  ChangedFile("c.yaml", "modified", "@@ -3,3 +3,2 @@\n a\n-gone: 1\n+kept: 2\n-also: 3")])
    assert ch.files["a.sh"].deleted == ((1, "x"), (2, "y")) and not ch.added("a.sh", 1)
    assert not ch.added("big.yaml", 1)  # GitHub gave no patch: nothing to anchor on
    assert ch.added("b.sh", 2) and not ch.added("b.sh", 3)
    assert ch.files["c.yaml"].deleted == ((4, "gone: 1"), (5, "also: 3")) and ch.added("c.yaml", 4)


def _finding(path: str, line: int, related: tuple[Related, ...] = (), fix: Fix | None = None,
             message: str = "m") -> Finding:
    return Finding("ignored-variant", "BB103", Severity.ERROR, path, line, 1, message, related, ("e-mtp",), fix)


def test_anchor_prefers_own_line_then_related_added_lines() -> None:
    ch = changes([ChangedFile("configs/m.yaml", "modified", "@@ -5,0 +6,3 @@\n+a\n+b\n+c"),
                  ChangedFile("s_mtp.sh", "added", "@@ -0,0 +1,2 @@\n+#!/bin/sh\n+x")])
    f = _finding("runners/l.sh", 26, (Related("configs/m.yaml", 7, "entry"), Related("s_mtp.sh", 1, "script")))
    assert review.anchor(f, ch) == review.Anchor("configs/m.yaml", 7)
    assert review.anchor(_finding("s_mtp.sh", 2), ch) == review.Anchor("s_mtp.sh", 2)
    # configs/m.yaml is changed but not on line 2, and deletes nothing: a comment on the whole file
    assert review.anchor(_finding("runners/l.sh", 26, (Related("configs/m.yaml", 2, "old line"),)), ch) == \
        review.Anchor("configs/m.yaml", None)
    # a file the pull request does not change: nowhere
    assert review.anchor(_finding("runners/l.sh", 26, (Related("other.yaml", 2, "x"),)), ch) is None


def test_suggestion_from_a_one_block_fix_inside_the_diff() -> None:
    old = "a\n# benchbot: ignore[dead-script] stale\nb\n"
    fix = Fix("remove the suppression", file_diff("x.sh", old, "a\nb\n"), safe=True)
    f = _finding("x.sh", 2, fix=fix)
    sug = review.suggestion(f, "x.sh", frozenset({1, 2, 3}))
    assert sug is not None and (sug.start, sug.end) == (2, 2) and sug.text == ""
    # an insertion becomes a replacement of the line above it
    ins = Fix("add", file_diff("x.sh", "a\nb\n", "a\nnew\nb\n"))
    sug = review.suggestion(_finding("x.sh", 1, fix=ins), "x.sh", frozenset({1, 2}))
    assert sug is not None and (sug.start, sug.end, sug.text) == (1, 1, "a\nnew")
    # outside the diff, another file, or two separate blocks: no suggestion
    assert review.suggestion(f, "x.sh", frozenset({1})) is None
    assert review.suggestion(f, "y.sh", frozenset({1, 2, 3})) is None
    two = Fix("two", file_diff("x.sh", "a\nb\nc\nd\ne\n", "A\nb\nc\nd\nE\n"))
    assert review.suggestion(_finding("x.sh", 1, fix=two), "x.sh", frozenset(range(1, 6))) is None


def _ctx(**kw: object) -> plans.Context:
    base = dict(head_sha="h" * 40, base_sha="b" * 40, base_ref="main", bot_login=BOT, stats=STATS)
    base.update(kw)
    return plans.Context(**base)  # type: ignore[arg-type]


def test_plan_is_idempotent_and_resolves_fixed_findings() -> None:
    ch = changes([ChangedFile("s_mtp.sh", "added", "@@ -0,0 +1,2 @@\n+#!/bin/sh\n+x")])
    f = _finding("s_mtp.sh", 1)
    first = review.plan(review.split([f], []), ch, [], [], _ctx())
    assert [(d.path, d.line) for d in first.review] == [("s_mtp.sh", 1)]
    assert first.summary_id is None and first.summary.rstrip().endswith(f"`/bench <gpu> @{'h' * 40}`")
    posted = ReviewComment(11, BOT, first.review[0].body, "s_mtp.sh", 1)
    summary = Comment(5, BOT, first.summary)
    again = review.plan(review.split([f], []), ch, [summary], [posted], _ctx())
    assert again.review == [] and again.summary_id == 5 and not again.summary_changed
    # someone else's comment with our marker is not ours
    spoof = ReviewComment(12, "mallory", first.review[0].body, "s_mtp.sh", 1)
    assert review.plan(review.split([f], []), ch, [Comment(6, "mallory", first.summary)], [spoof],
                       _ctx()).summary_id is None
    fixed = review.plan(review.split([], []), ch, [summary], [posted], _ctx(head_sha="c" * 40))
    assert [r.comment.id for r in fixed.resolve] == [11]
    assert "resolved" in fixed.resolve[0].body.splitlines()[0] and fixed.summary_changed
    assert "introduces no findings" in fixed.summary
    resolved = ReviewComment(11, BOT, fixed.resolve[0].body, "s_mtp.sh", 1)
    assert review.plan(review.split([], []), ch, [summary], [resolved], _ctx()).resolve == []


def test_preexisting_findings_only_in_the_collapsed_summary() -> None:
    old = _finding("runners/l.sh", 3, message="old problem")
    new = _finding("runners/l.sh", 9, (Related("gone.sh", 1, "x"),), message="new problem")
    parts = review.split([old, new], [old])
    p = review.plan(parts, changes([]), [], [], _ctx(reminder="Compare with the vLLM recipe."))
    assert p.review == [] and p.unanchored == [new]  # nothing of the PR's: summary only, and it says so
    body = p.summary
    assert "1 of them is on no line or file this pull request changes" in body
    assert body.index("new problem") < body.index(
        "<details><summary>Already on main, not introduced here: 1 finding (1 error), 0 near lines this pull request "
        "changes</summary>")
    assert "old problem" not in body  # not in a file the PR changes: counted, not listed
    assert "> Compare with the vLLM recipe." in body


def test_summary_fits_in_a_comment() -> None:
    many = [_finding(f"runners/l{i}.sh", 1, message="x" * 400) for i in range(400)]
    p = review.plan(review.split(many, []), changes([]), [], [], _ctx())
    assert len(p.summary) <= review.MAX_COMMENT
    assert "cut to fit a comment" in p.summary and f"Checked at head `{'h' * 40}`" in p.summary


def test_inline_comments_are_capped_per_run() -> None:
    patch = "@@ -0,0 +1,40 @@\n" + "\n".join("+x" for _ in range(40))
    ch = changes([ChangedFile("s.sh", "added", patch)])
    many = [_finding("s.sh", i, message=f"problem {i}") for i in range(1, 41)]
    p = review.plan(review.split(many, []), ch, [], [], _ctx())
    assert len(p.review) == review.MAX_INLINE and "introduces 40 findings" in p.summary


def _section(body: str, code: str) -> str:
    """The part of an inline comment about the cause with this code."""
    return next(part for part in body.split("\n---\n") if f"**{code} " in part)


def test_causes_on_one_line_come_errors_first_and_each_fix_note_sits_under_its_cause() -> None:
    """A warning was listed before an error on the same line, and the error (which has no fix) got
    "The proposed fix is in the summary comment."."""
    ch = changes([ChangedFile("runners/l.sh", "modified", "@@ -1,2 +1,3 @@\n a\n+b\n c")])
    log_fix = Fix("Append an entry for e to the end of perf-changelog.yaml",
                  file_diff("perf-changelog.yaml", "- old\n", "- old\n\n- new\n"))
    warn = Finding("changelog-missing", "BB111", Severity.WARNING, "runners/l.sh", 2, 1, "no changelog entry", (),
                   ("e",), log_fix, key="log|e")
    err = Finding("ignored-variant", "BB103", Severity.ERROR, "runners/l.sh", 2, 1, "dispatches the plain script",
                  (), ("e-mtp",), key="l|v")
    info = Finding("dead-script", "BB102", Severity.INFO, "runners/l.sh", 2, 1, "nothing runs it", key="d")
    [draft] = review.plan(review.split([warn, err, info], []), ch, [], [], _ctx()).review
    body = draft.body
    assert body.index("**BB103 ") < body.index("**BB111 ") < body.index("**BB102 ")
    assert "fix" not in _section(body, "BB103").lower() and "summary comment" not in _section(body, "BB103")
    assert "fix" not in _section(body, "BB102").lower()
    assert ("Proposed fix: Append an entry for e to the end of perf-changelog.yaml (the diff is in the summary "
            "comment)") in _section(body, "BB111")
    assert "```suggestion" not in body
    # same severity: by rule code, whatever order the causes come in
    twin = Finding("dead-script", "BB102", Severity.WARNING, "runners/l.sh", 2, 1, "nothing runs it", key="d")
    for order in ([warn, twin], [twin, warn]):
        [d] = review.plan(review.split(order, []), ch, [], [], _ctx()).review
        assert d.body.index("**BB102 ") < d.body.index("**BB111 ")


def test_the_cause_whose_fix_is_the_suggestion_says_so_and_another_points_to_the_summary() -> None:
    old = "a\n# benchbot: ignore[dead-script] stale\nb\n"
    ch = changes([ChangedFile("x.sh", "modified", "@@ -1,2 +1,3 @@\n a\n+# benchbot: ignore[dead-script] stale\n b")])
    stale = Finding("unused-suppression", "BB004", Severity.WARNING, "x.sh", 2, 1, "a stale suppression",
                    fix=Fix("Delete the suppression comment", file_diff("x.sh", old, "a\nb\n"), safe=True), key="s")
    log = Finding("changelog-missing", "BB111", Severity.WARNING, "x.sh", 2, 1, "no changelog entry",
                  fix=Fix("Append an entry", file_diff("perf-changelog.yaml", "- old\n", "- old\n\n- new\n")),
                  key="c")
    [draft] = review.plan(review.split([log, stale], []), ch, [], [], _ctx()).review
    suggested = _section(draft.body, "BB004")
    assert "Suggested fix (apply the suggestion): Delete the suppression comment" in suggested
    assert "```suggestion\n\n```" in suggested and "summary comment" not in suggested
    assert "Proposed fix: Append an entry (the diff is in the summary comment)" in _section(draft.body, "BB111")
    assert (draft.path, draft.line) == ("x.sh", 2)
