"""Reusable widgets of the app: the live diff and the meter."""
