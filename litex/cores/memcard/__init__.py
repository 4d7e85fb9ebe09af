"""memcard cores."""
