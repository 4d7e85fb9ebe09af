"""The sim's link and memory set-up for a point, through the firmware console: the link (lanes, rate, delay,
the profile's framing, the memory and where it is: `configure_link`), the retry policy, one BFCT section per
memory-card section (`map_remote_windows`) and the windows the soft CPU reaches them through, the memory
card's service figures over a run, and the link settings and counters stored with every result
(`link_record`, `link_counters`). Every
benchmark that runs on the sim sets its point up through here."""

from monet.link import model as link_model
from monet.link import reliability
from monet.link.profiles import HMC_WIDTHS, PROFILES, memory_refusal
from monet.soc.facts import MEMORIES, TARGET_LOCAL, TARGET_REMOTE0, hmc_delay_cycles, hmc_flit_ps

# How the soft CPU reaches remote memory: the uncached window (every word a round trip) or the cacheable
# one (its data cache's refills and write-through words combined into line transactions by ReMAT); STREAM
# and memtest take these.
WINDOWS = ("uncached", "cached")


def configure_link(target, link, card=None):
    """Programs a sweep point's LinkSettings `link` (no rebuild): lanes, lane rate, PHY + fiber delay, the
    profile's framing and streamer, the memory card's memory (an HMC's link at its width and the point's lane
    rate) and where it is (placement; with hmc_native the HMC link itself runs over the fiber, not our link).
    `card`: the pooled model's traffic card whose link it is (None: the compute card's).
    Returns the firmware's answer with the settings echoed; `bfct_target` is the BFCT target that reaches the
    memory (map_remote_windows)."""
    refusal = memory_refusal(link.memory, link.rate_gbps, link.lanes, link.placement, link.hmc_width,
                             link.hmc_native)
    if refusal:
        raise ValueError(refusal)
    prof = PROFILES[link.profile]
    answer = target.fw.link(lanes=link.lanes, block_ps=prof.block_ps(link.rate_gbps),
                            delay=prof.delay_cycles(link.distance_m, link.rate_gbps), skew=0,
                            memory=MEMORIES[link.memory], memlat=prof.extra_cycles, max_units=prof.max_units,
                            pairing=prof.pairing, issue_rate=prof.issue_rate, card=card)
    answer.update(profile=link.profile, memory=link.memory, placement=link.placement, hmc_native=link.hmc_native)
    # Native HMC reaches the memory without our link, as a local memory does; the fiber is in its channel.
    answer["bfct_target"] = TARGET_LOCAL if link.placement == "local" or link.hmc_native else TARGET_REMOTE0
    answer["hmc"] = None
    if link.memory == "hmc":
        hmc_lanes = HMC_WIDTHS[link.hmc_width]
        fiber = link_model.fiber_ns(link.distance_m) if link.hmc_native else 0.0
        delay = hmc_delay_cycles(link.rate_gbps, fiber_ns=fiber, lanes=hmc_lanes)
        max_delay = target.build.constants["hmc_max_delay"]     # csr.json, read once
        if delay > max_delay:
            raise ValueError(f"native HMC over {link.distance_m:g} m needs a channel delay of {delay} cycles; the "
                             f"sim's HMC channel holds {max_delay}")
        answer["hmc"] = target.fw.hmc(flit_ps=hmc_flit_ps(hmc_lanes, link.rate_gbps), delay=delay)
        answer["hmc"].update(width=link.hmc_width, lanes=hmc_lanes, rate_gbps=link.rate_gbps, fiber_ns=fiber)
    return answer


def grew(after, before, keys):
    """How much each of the firmware's 32-bit counters `keys` grew from one answer to a later one."""
    return {k: (after[k] - before[k]) % 2**32 for k in keys}


def settled(read, reads=64):
    """`read()`'s answer once two answers in a row agree: counters that were still moving (a replay after the
    run, a nak on its way) read as one snapshot, since the firmware reads them one register at a time. Raises
    RuntimeError when they still move after `reads` answers."""
    answer = read()
    for _ in range(reads - 1):
        previous, answer = answer, read()
        if answer == previous:
            return answer
    raise RuntimeError(f"the link's counters still moved after {reads} reads with the traffic over")


def memory_service(target, run):
    """Runs `run()` and returns its result and the memory card's figures over it: its mean service time
    (cycles: the memory's share of each answer), the DDR4 refreshes that fell inside it and the requests that
    waited for one."""
    before = target.fw.memcard()
    result = run()
    growth = grew(target.fw.memcard(), before, ("service_count", "service_sum", "refreshes", "refresh_waits"))
    count = growth["service_count"]
    return result, {"memory_service_cycles": growth["service_sum"] / count if count else None,
                    "refreshes": growth["refreshes"], "refresh_waits": growth["refresh_waits"]}


def link_counters(target):
    """Each end's link counters (replays by cause, naks, drops, overflows: firmware/lib/link.h's list) with its
    lanes' losses of alignment (`lane_losses`), and ReMAT's request timeouts, as the firmware reads them: what
    every sim result carries."""
    answer = target.fw.retry()
    return {"request_timeouts": answer["request_timeouts"],
            **{end: answer[end] for end in ("compute", "memory") if end in answer}}


def configure_retry(target, profile, delay_cycles, replay="gbn"):
    """Sets the replay timer and nak policy of `profile` for a one-way delay, and go-back-N or selective repeat
    (`replay`, one of reliability.REPLAYS); returns (timeout, nak)."""
    timeout, nak = reliability.replay_settings(profile, delay_cycles, replay)
    target.fw.retry(timeout=timeout, nak=nak, selective=int(replay != "gbn"), repair=int(replay == "sr-repair"))
    return timeout, nak


def link_record(link):
    """The link settings stored with every result."""
    keys = ("profile", "memory", "placement", "hmc_native", "bfct_target", "block_ps", "delay", "memlat", "max_units",
            "pairing", "issue_rate")
    record = {k: link[k] for k in keys}
    if link.get("hmc"):
        record["hmc"] = {k: link["hmc"][k] for k in ("width", "lanes", "rate_gbps", "flit_ps", "delay", "fiber_ns")}
    record["delay_cycles"] = record.pop("delay")
    record["memlat_cycles"] = record.pop("memlat")
    return record


def map_remote_windows(target, info=None, bfct_target=TARGET_REMOTE0):
    """Maps one BFCT section per memory-card section, read/write, identity, to `bfct_target` (a link's
    `bfct_target`: the link, or the local port); returns their offsets. `info` is the firmware's `info`
    answer, asked for when not given."""
    info = info or target.fw.facts()
    section = info["section_bytes"]
    count = min(info["sections"], info["memcard_bytes"] // section)
    for idx in range(count):
        target.fw.set_bfct(idx, en=1, r=1, w=1, target=bfct_target, base=idx)
    return [idx * section for idx in range(count)]
