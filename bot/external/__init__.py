"""Adapters for the formats and tools of other projects (lm-evaluation-harness results, ...).

Each adapter reads another tool's output into our own typed records; nothing here runs
anything from its input.
"""
