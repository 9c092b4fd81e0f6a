"""The app's widgets, one a module: the live diff, the files pane, the review pane, the prompt,
the meter, the header and the footer."""
