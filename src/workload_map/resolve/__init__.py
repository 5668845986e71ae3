"""resolve layer."""
