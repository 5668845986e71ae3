"""gang layer."""
