"""Headless front end: `run` and `watch` with their flags, JSON lines (schema.json), exit codes
and fix rounds."""
