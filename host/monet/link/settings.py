"""A point's link and memory as one object: what every sim benchmark's run takes instead of loose arguments."""

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class LinkSettings:
    """The link (round-trip fiber length, lanes, lane rate, profile) and the memory behind it (which memory,
    an HMC's width, local or remote, an HMC link run natively over the fiber): a campaign point's link axes."""

    distance_m: float = 8.0
    lanes: int = 8
    rate_gbps: float = 15.0
    profile: str = "ours"
    memory: str = "sram"
    hmc_width: str = "full"
    placement: str = "remote"
    hmc_native: int = 0

    @classmethod
    def of(cls, point):
        """The settings of a campaign or CLI point (its other keys are the benchmark's own)."""
        return cls(**{name: point[name] for name in AXES if name in point})


AXES = tuple(f.name for f in fields(LinkSettings))   # the campaign's link axes, in this order
