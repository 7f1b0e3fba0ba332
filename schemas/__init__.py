"""JSON Schemas shipped with benchbot (installed as the package ``bot._schemas``)."""
