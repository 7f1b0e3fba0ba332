"""Workflow texts the workflow-checker tests share: a clean pull_request workflow, and the same
one with an injectable ``${{ github.event.pull_request.title }}`` in its ``run:`` (line 9)."""

CLEAN = """\
name: ci
on: pull_request
permissions: {}
jobs:
  greet:
    runs-on: ubuntu-latest
    steps:
      - name: Greet
        run: echo "hello"
"""
INJECTABLE = CLEAN.replace('echo "hello"', 'echo "${{ github.event.pull_request.title }}"')
