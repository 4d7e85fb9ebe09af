"""The board-free sim: `build` makes the Verilator model and the firmware (SimBuild, cached by hash),
`target` runs one and drives its firmware console (SimTarget, with `fw`, monet.firmware_console)."""

from monet.sim.build import (DEFAULT_BUILD_ROOT, FIRMWARE_DIR, GATEWARE_SOURCES, REPO, SimBuild, SimError,
                             gateware_hash, tool_versions)
from monet.sim.target import SimTarget

__all__ = ["DEFAULT_BUILD_ROOT", "FIRMWARE_DIR", "GATEWARE_SOURCES", "REPO", "SimBuild", "SimError", "SimTarget",
           "gateware_hash", "tool_versions"]
