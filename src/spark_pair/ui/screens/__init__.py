"""The app's screens: the main screen (prompt, files, live diff, review, meter), the help
screen and the check's output."""
