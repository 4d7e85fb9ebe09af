"""A pooled SoC (litex/soc/sim.py with requesters, remote.py's TrafficCard) and pool.h's map
(litex/soc/user_headers.py), made here without verilating: each traffic card has the compute card's
registers under its own prefix, every one of them mapped to the card's own word; the memory card's registers
(its memories and its ports) stay the memory card's; only the compute card's stage timers have no
counterpart; no two cards share a word. A SoC without traffic cards gets a map of none."""

from types import SimpleNamespace

import pytest

from monet.sim.build import POOLED_MODELS
from monet.soc.user_headers import (POOL_ABSENT, SHARED_PREFIXES, csr_words, has_second_link, pool_header, pool_map,
                                   write_user_headers)


REQUESTERS = 3   # the pooled model's cards on the SRAM alone, one traffic card fewer: half the time to make


@pytest.fixture(scope="module")
def pooled():
    from monet.soc.sim import MonetSimSoC
    soc = MonetSimSoC(with_ddr4=False, with_hmc=False, requesters=REQUESTERS)
    soc.finalize()
    return soc


def test_each_traffic_card_has_the_compute_card_s_registers_under_its_prefix(pooled):
    spans, maps = pool_map(pooled)
    maps = maps[:-1]                                     # the last: the compute card's second link (below)
    remote, pbb = csr_words(pooled, "remote"), csr_words(pooled, "pbb")
    assert spans == [(min(remote.values()), len(remote)), (min(pbb.values()), len(pbb))]
    assert len(maps) == REQUESTERS - 1 and POOLED_MODELS["pooled"]["requesters"] == 4
    names = sorted(remote.items(), key=lambda item: item[1]) + sorted(pbb.items(), key=lambda item: item[1])
    for card, card_map in enumerate(maps, 1):
        theirs = {index: name for name, index in csr_words(pooled, f"pool{card}").items()}
        absent = []
        for (name, index), mapped in zip(names, card_map):
            if name.startswith(SHARED_PREFIXES) and (name, index) in remote.items():
                assert mapped == index, name                 # the memory cards': shared
            elif mapped == POOL_ABSENT:
                absent.append(name)
            else:
                own = name if (name, index) in remote.items() else "pbb_" + name
                assert theirs[mapped] == own, (card, name)
        # The compute card's own: its stage timers and its second link.
        assert absent and all(name.startswith(("stages_c_", "stages_m_", "channel1_", "link1_c_", "link1_m_"))
                              for name in absent)
        assert len(set(theirs) - set(card_map)) == 0, "a traffic card's register no map reaches"
    owned = [set(m) - {POOL_ABSENT} - set(remote.values()) for m in maps]
    assert not (owned[0] & owned[1])
    assert any(name.startswith("ports_in_flight_limit") for name in remote)
    header = pool_header(pooled)
    assert "#define POOL_TRAFFIC_CARDS 2" in header and f"#define POOL_SPAN_WORDS {len(names)}" in header


def test_the_compute_card_s_second_link_is_the_last_card_under_the_first_link_s_names(pooled):
    """Card POOL_SECOND_LINK reaches the second link's channel and ends and the memory card behind it where the
    compute card has its first link's; the stage timers (the first link's) it lacks; everything else (ReMAT,
    the benchmark block, the ports) is the compute card's own."""
    assert has_second_link(pooled)
    spans, maps = pool_map(pooled)
    remote, pbb = csr_words(pooled, "remote"), csr_words(pooled, "pbb")
    names = sorted(remote.items(), key=lambda item: item[1]) + [("pbb " + n, i) for n, i in sorted(
        pbb.items(), key=lambda item: item[1])]
    by_index = {index: name for name, index in remote.items()}
    renamed = {"channel_": "channel1_", "link_c_": "link1_c_", "link_m_": "link1_m_", "memcard_": "memcard1_"}
    moved = 0
    for (name, index), mapped in zip(names, maps[-1]):
        first = next((f for f in renamed if name.startswith(f)), None)
        if name.startswith(("stages_c_", "stages_m_")):
            assert mapped == POOL_ABSENT, name
        elif first and mapped != POOL_ABSENT:
            assert by_index[mapped] == renamed[first] + name[len(first):], name
            moved += 1
        else:
            assert mapped == index or first and name.startswith("memcard_hmc"), name
    assert moved > 100 and any(name.startswith("channel_lanes") for name, _ in names)
    header = pool_header(pooled)
    assert "#define POOL_CARDS 3" in header and "#define POOL_SECOND_LINK 3" in header


def test_a_soc_without_traffic_cards_gets_a_map_of_none():
    csr = SimpleNamespace(name="channel_delay", size=32)
    region = SimpleNamespace(origin=0xF000_0000, busword=32, obj=[csr])
    soc = SimpleNamespace(csr_regions={"remote": region}, mem_regions={"csr": SimpleNamespace(origin=0xF000_0000)},
                          constants={})
    header = pool_header(soc)
    assert "#define POOL_TRAFFIC_CARDS 0" in header and "#define POOL_MAP" not in header


def _fake_soc(regions, base=0xF000_0000, page=0x800):
    """A SoC as pool_map reads it: CSR regions (name: [(csr name, bits)]) one page apart from the CSR base."""
    csr_regions = {}
    for n, (name, csrs) in enumerate(regions.items()):
        csr_regions[name] = SimpleNamespace(origin=base + n * page, busword=32,
                                            obj=[SimpleNamespace(name=c, size=bits) for c, bits in csrs])
    return SimpleNamespace(csr_regions=csr_regions, mem_regions={"csr": SimpleNamespace(origin=base)},
                           constants={"CONFIG_CSR_ALIGNMENT": 32})


def test_the_map_goes_by_name_word_by_word_whatever_the_order():
    """Two traffic cards whose registers lie in another order than the compute card's, a 64-bit register
    (two words), a stage timer they lack and the memory card's registers between the card's own."""
    remote = [("remat_tags", 32), ("memcard_memory", 32), ("channel_ber", 64), ("stages_c_count", 32),
              ("ports_share0", 4)]
    card = [("channel_ber", 64), ("remat_tags", 32), ("pbb_mode", 2)]
    soc = _fake_soc({"remote": remote, "pbb": [("mode", 2)], "pool1": card, "pool2": card})
    words = {region: 512 * n for n, region in enumerate(("remote", "pbb", "pool1", "pool2"))}
    spans, maps = pool_map(soc)
    assert spans == [(words["remote"], 6), (words["pbb"], 1)]
    for card_map, theirs in zip(maps, (words["pool1"], words["pool2"])):
        assert card_map == [theirs + 2, words["remote"] + 1, theirs, theirs + 1, POOL_ABSENT, words["remote"] + 5,
                            theirs + 3]
    assert csr_words(soc, "remote") == {"remat_tags": 0, "memcard_memory": 1, "channel_ber": 2, "channel_ber+1": 3,
                                        "stages_c_count": 4, "ports_share0": 5}
    header = pool_header(soc)
    assert "#define POOL_SPANS {{0, 6}, {512, 1}}" in header and "#define POOL_SPAN_WORDS 7" in header
    assert f"    {{{theirs + 2}, 1, {theirs}, {theirs + 1}, {POOL_ABSENT}, 5, {theirs + 3}}}, \\\n}}" in header


def test_the_second_link_s_map_renames_its_link_and_memory_card_and_keeps_the_rest():
    """A compute card with a second link (channel1_..., link1_c_..., memcard1_...) and one traffic card: the last
    map reaches the second link's words for the first link's, absent where the second has none or for a stage
    timer, the compute card's own word for everything else (ReMAT, the ports, the benchmark block)."""
    remote = [("remat_tags", 32), ("channel_ber", 32), ("link_c_frames", 32), ("link_m_frames", 32),
              ("memcard_memory", 2), ("memcard_refreshes", 32), ("stages_c_count", 32), ("ports_share0", 4),
              ("channel1_ber", 32), ("link1_c_frames", 32), ("link1_m_frames", 32), ("memcard1_memory", 2)]
    card = [("remat_tags", 32), ("channel_ber", 32), ("link_c_frames", 32), ("link_m_frames", 32), ("pbb_mode", 2)]
    soc = _fake_soc({"remote": remote, "pbb": [("mode", 2)], "pool1": card})
    assert has_second_link(soc)
    spans, maps = pool_map(soc)
    assert len(maps) == 2
    pbb = 512
    assert maps[-1] == [0, 8, 9, 10, 11, POOL_ABSENT, POOL_ABSENT, 7, 8, 9, 10, 11, pbb]
    header = pool_header(soc)
    assert "#define POOL_TRAFFIC_CARDS 1" in header and "#define POOL_CARDS 2" in header
    assert "#define POOL_SECOND_LINK 2" in header
    assert not has_second_link(_fake_soc({"remote": remote[:8], "pool1": card}))


def test_traffic_cards_must_be_pool1_onwards():
    soc = _fake_soc({"remote": [("remat_tags", 32)], "pool2": [("remat_tags", 32)]})
    with pytest.raises(AssertionError, match="pool1"):
        pool_map(soc)


def test_the_headers_are_written_where_asked_without_litex_s_access_functions(tmp_path):
    """csr.h, soc.h, mem.h and pool.h in the folder given (made if missing); csr.h with the addresses and no
    bare-metal access functions (firmware/lib's HAL brings its own); pool.h's absent word fits the C map's
    16-bit words."""
    soc = _fake_soc({"remote": [("remat_tags", 32)], "pbb": [("mode", 2)], "pool1": [("remat_tags", 32)]})
    soc.constants = {"CONFIG_CSR_ALIGNMENT": 32, "REMOTE_TAGS": 512}
    soc.mem_regions["csr"].size, soc.mem_regions["csr"].type = 0x10000, "io"
    folder = tmp_path / "include" / "generated"
    write_user_headers(soc, folder)
    assert sorted(p.name for p in folder.iterdir()) == ["csr.h", "mem.h", "pool.h", "soc.h"]
    csr = (folder / "csr.h").read_text()
    assert "CSR_REMOTE_REMAT_TAGS_ADDR" in csr and "csr_read_simple" not in csr and "static inline" not in csr
    assert "#define REMOTE_TAGS 512" in (folder / "soc.h").read_text()
    assert "CSR_BASE" in (folder / "mem.h").read_text()
    pool = (folder / "pool.h").read_text()
    assert f"#define POOL_ABSENT 0x{POOL_ABSENT:x}" in pool and POOL_ABSENT == 0xFFFF
    assert pool == pool_header(soc)
