"""What is in the benchmark repo, as typed facts (no judgement).

From the bottom up: ``files`` (the tree: a work tree, an index or a git revision; the per-lint
memo), ``load`` (YAML with positions, master configs, schemas, policies, changelogs, recipe
files), ``cache`` (evaluations and envs kept across lints, behind keyed stores), ``workflows``
(the workflow model and the calls that reach a launcher), ``env`` (the profile and the env each
launcher starts with); then the facts themselves: ``facts`` (``gather``: everything the rules
read, with every (entry, point, launcher) evaluated), ``runs`` (a run's record), the gatherers
``jobs`` (hand-offs to external tools), ``paths`` (the other workflow paths), ``references``
(scripts that other scripts run), and ``labels``, ``changed`` (which entries a change touches).
"""
