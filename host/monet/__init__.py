"""MONet-open: open, reproducible memory disaggregation over serial links (host harness, cores, SoC)."""

__version__ = "0.1.0"
