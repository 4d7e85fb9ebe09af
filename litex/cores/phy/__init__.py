"""phy cores."""
