"""The pooled model's SoC (litex/soc/sim.py with requesters, remote.py's TrafficCard) and pool.h's map
(litex/soc/user_headers.py), made here without verilating: each traffic card has the compute card's
registers under its own prefix, every one of them mapped to the card's own word; the memory card's registers
(its memories and its ports) stay the memory card's; only the compute card's stage timers have no
counterpart; no two cards share a word. A SoC without traffic cards gets a map of none."""

from types import SimpleNamespace

import pytest

from monet.sim.build import POOLED_MODELS
from monet.soc.user_headers import POOL_ABSENT, csr_words, pool_header, pool_map


@pytest.fixture(scope="module")
def pooled():
    from monet.soc.sim import MonetSimSoC
    soc = MonetSimSoC(**POOLED_MODELS["pooled"])
    soc.finalize()
    return soc


def test_each_traffic_card_has_the_compute_card_s_registers_under_its_prefix(pooled):
    spans, maps = pool_map(pooled)
    remote, pbb = csr_words(pooled, "remote"), csr_words(pooled, "pbb")
    assert spans == [(min(remote.values()), len(remote)), (min(pbb.values()), len(pbb))]
    assert len(maps) == 3 == POOLED_MODELS["pooled"]["requesters"] - 1
    names = sorted(remote.items(), key=lambda item: item[1]) + sorted(pbb.items(), key=lambda item: item[1])
    for card, card_map in enumerate(maps, 1):
        theirs = {index: name for name, index in csr_words(pooled, f"pool{card}").items()}
        absent = []
        for (name, index), mapped in zip(names, card_map):
            if name.startswith(("memcard_", "ports_")) and (name, index) in remote.items():
                assert mapped == index, name                 # the memory card's: shared
            elif mapped == POOL_ABSENT:
                absent.append(name)
            else:
                own = name if (name, index) in remote.items() else "pbb_" + name
                assert theirs[mapped] == own, (card, name)
        assert absent and all(name.startswith(("stages_c_", "stages_m_")) for name in absent)
        assert len(set(theirs) - set(card_map)) == 0, "a traffic card's register no map reaches"
    owned = [set(m) - {POOL_ABSENT} - set(remote.values()) for m in maps]
    assert not (owned[0] & owned[1]) and not (owned[1] & owned[2])
    assert any(name.startswith("ports_in_flight_limit") for name in remote)
    header = pool_header(pooled)
    assert "#define POOL_TRAFFIC_CARDS 3" in header and f"#define POOL_SPAN_WORDS {len(names)}" in header


def test_a_soc_without_traffic_cards_gets_a_map_of_none():
    csr = SimpleNamespace(name="channel_delay", size=32)
    region = SimpleNamespace(origin=0xF000_0000, busword=32, obj=[csr])
    soc = SimpleNamespace(csr_regions={"remote": region}, mem_regions={"csr": SimpleNamespace(origin=0xF000_0000)},
                          constants={})
    header = pool_header(soc)
    assert "#define POOL_TRAFFIC_CARDS 0" in header and "#define POOL_MAP" not in header
