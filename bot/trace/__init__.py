"""``benchbot trace``: run a repository's launcher and benchmark script with stand-in commands,
inside a sandbox (``bot.trace.sandbox``), and compare what really ran with the static answer.
Run only when a person asks, on a checkout they trust: it executes the repository's code."""
