"""view layer."""
