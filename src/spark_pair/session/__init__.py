"""The session: one turn at a time from prompt to written files, and what opens one.

A front end opens a repository with `runtime.open_runtime` and drives `session.Session`
(docs/seam.md is the contract): the turn's events (`events`), approval (`approval`), and the
review of what a person decided (`review`). Inside: `parts` (what a session is built from and
each turn gets as a value), `turn` (the stream loop, stale files, the apply step), `proposals`,
`frames`. No textual, no rich.
"""
