"""Fuzzing runs bounded: a fixed number of derandomized examples per property in CI (the whole
directory takes well under a minute), more with ``BENCHBOT_FUZZ=N`` locally (N examples each,
random seeds). Every crash found is kept as an ``@example`` on its property."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_N = int(os.environ.get("BENCHBOT_FUZZ", "0") or 0)

settings.register_profile(
    "ci", max_examples=150, deadline=None, derandomize=True, database=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(
    "long", max_examples=max(_N, 1), deadline=None, derandomize=False, database=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("long" if _N else "ci")
