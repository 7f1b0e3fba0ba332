"""The ``workflows:`` section of ``.benchbot.yml``: how the workflow checkers run.

```
workflows:
  zizmor: {enabled: true, persona: regular, min-severity: informational, min-confidence: low, timeout: 120}
  actionlint: {enabled: true, shellcheck: true, timeout: 120}
```
Read from the base in a pull request, like the rest of the configuration. Which findings are
reported is the ordinary rule selection (``ignore: [zizmor/obfuscation]``, ``severity:``,
``per-path-ignores:``); this section says how the tools run. The schema
(``schemas/benchbot.schema.json``) has checked the shape before :func:`parse` reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TIMEOUT = 120.0


@dataclass(frozen=True)
class ZizmorSettings:
    enabled: bool = True
    persona: str = "regular"
    min_severity: str | None = None
    min_confidence: str | None = None
    timeout: float = DEFAULT_TIMEOUT


@dataclass(frozen=True)
class ActionlintSettings:
    enabled: bool = True
    shellcheck: bool = True
    timeout: float = DEFAULT_TIMEOUT


@dataclass(frozen=True)
class WorkflowSettings:
    zizmor: ZizmorSettings = field(default_factory=ZizmorSettings)
    actionlint: ActionlintSettings = field(default_factory=ActionlintSettings)


def parse(data: Mapping[str, Any]) -> WorkflowSettings:
    section = data.get("workflows") or {}
    z = section.get("zizmor") or {}
    a = section.get("actionlint") or {}
    zizmor = ZizmorSettings(bool(z.get("enabled", True)), str(z.get("persona", "regular")),
                            _opt(z.get("min-severity")), _opt(z.get("min-confidence")),
                            float(z.get("timeout", DEFAULT_TIMEOUT)))
    actionlint = ActionlintSettings(bool(a.get("enabled", True)), bool(a.get("shellcheck", True)),
                                    float(a.get("timeout", DEFAULT_TIMEOUT)))
    return WorkflowSettings(zizmor, actionlint)


def _opt(value: Any) -> str | None:
    return str(value) if value is not None else None
