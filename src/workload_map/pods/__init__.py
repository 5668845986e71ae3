"""pods layer."""
