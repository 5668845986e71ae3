"""jq layer."""
