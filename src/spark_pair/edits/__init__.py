"""From the model's text to safe file operations: the incremental diff parser, operations,
locating and applying hunks with atomic writes, and the undo journal."""
