"""The app (Textual): the main screen, its widgets and dialogs, the driver that turns the core's
frames into messages, and the review state behind the approve pane."""
