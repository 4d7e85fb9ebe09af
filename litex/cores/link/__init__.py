"""link cores."""
