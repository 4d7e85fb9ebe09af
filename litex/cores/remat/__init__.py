"""remat cores."""
