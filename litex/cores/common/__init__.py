"""common cores."""
