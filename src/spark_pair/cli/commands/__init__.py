"""One module per sub-command; each exposes a click command named `command`."""
