"""The sim models (monet.sim.MODELS): which memories each holds, what serves what, and that each smaller one's SoC
is made with only its memories (the full one is what every sim test runs on)."""

import pytest

from monet.sim import DEFAULT_MODEL, MODELS, covers, serves, smallest_model


def test_each_model_holds_the_sram_and_its_own_memories_and_covers_the_smaller():
    assert [name for name in MODELS if serves(name, "ddr4")] == ["ddr4", "full"]
    assert [name for name in MODELS if serves(name, "hmc")] == ["hmc", "full"]
    assert all(serves(name, "sram") for name in MODELS)
    assert [smallest_model(m) for m in ("sram", "ddr4", "hmc")] == ["sram", "ddr4", "hmc"]
    assert covers("full", "ddr4") and covers("ddr4", "sram") and covers("hmc", "hmc")
    assert not covers("hmc", "ddr4") and not covers("ddr4", "hmc") and not covers("sram", "ddr4")


@pytest.mark.parametrize("name", [name for name in MODELS if name != DEFAULT_MODEL])
def test_a_smaller_models_soc_has_only_its_memories(name):
    from monet.soc.sim import MonetSimSoC
    soc = MonetSimSoC(**MODELS[name])
    memcard, memories = soc.remote.memcard, MODELS[name]
    assert (hasattr(memcard, "ddr4"), hasattr(memcard, "hmc")) == (memories["with_ddr4"], memories["with_hmc"])
    # The benchmark block's direct port and the HMC's facts come with the HMC only.
    assert soc.pbb.with_block_port == ("HMC_MAX_DELAY" in soc.constants) == memories["with_hmc"]
