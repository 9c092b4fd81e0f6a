"""Package."""

__all__ = []
