"""The board-free sim: `build` makes a Verilator model (one of MODELS, by the memories its card holds, or the pooled model) and the
firmware (SimBuild, cached by hash) with `verilator` (the pinned Verilator); `target` runs one and drives its
firmware console (SimTarget, with `fw`, `firmware_console`); `link_setup` sets a point's link and memory up
through it; `ctl` runs monet-ctl against a running sim's CSR bridge; `speed` is `monet sim speed`."""

from monet.sim.build import (BUILDS, DEFAULT_BUILD_ROOT, DEFAULT_MODEL, FIRMWARE_DIR, GATEWARE_SOURCES, MODELS,
                             POOLED_MODELS, SimBuild, SimError, covers, gateware_hash, serves, smallest_model, tool_versions)
from monet.sim.target import SimTarget

__all__ = ["BUILDS", "POOLED_MODELS", "DEFAULT_BUILD_ROOT", "DEFAULT_MODEL", "FIRMWARE_DIR", "GATEWARE_SOURCES", "MODELS", "SimBuild",
           "SimError", "SimTarget", "covers", "gateware_hash", "serves", "smallest_model", "tool_versions"]
