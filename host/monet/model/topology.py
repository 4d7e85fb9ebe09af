"""Switch-plane topology simulator (issue 15): MONet's 2-tier parallel switch planes against a non-parallel fat
tree built from the same optical switch modules (OSMs), loaded with Poisson VM requests that a locality-aware
allocator places on disaggregated CPU and memory cards and that circuits connect over K shortest paths. It
reports the hop-count and round-trip latency distributions, utilisation, drops and switch power, and the switch
power of both architectures against the card count.

Sources (the MONet paper, seeds/000; reference brief item T10):
- s.3, Fig 1: a tray (resource-plane) holds cards; every card has one port on each switch plane; a switch plane
  has one intra-tray OSM per tray (all the tray's cards) and a tier of inter-tray OSMs above them (spine-leaf);
  planes are not connected to each other. 1 hop within a tray, 3 hops between trays. One 8-channel SDM MBO per
  card gives 8 planes; 48x48 OSMs in both tiers at 1:1 subscription; 24 cards per tray x 4096 trays.
- s.5.A: Poisson VM arrivals, mean inter-arrival 10 time units; holding time 6300 units plus 360 per 100
  requests; 1000 requests; 12-24 trays, 8-24 cards per tray (so at most 24 x 24 = 576 resources); CPU:MEM
  cards 1:1; 4 cores per CPU card; memory cards 2-16 GB serial (HMC) or 4-8 GB parallel (DDR4); locality-based
  allocation ([37]), modified K-shortest-path set-up; a request is dropped when resources run out; links
  0.25 m card to intra-tray OSM, 3 m intra- to inter-tray OSM, +10 m intra- to inter-rack OSM in the fat tree.
  Results: 77 % of traffic in 1 hop, 23 % in 3, round-trip network latency 95 ns (Fig 4 right); 5 W per port of
  a 48-port OSM; at 576 resources 4.5 kW (non-parallel) against 1.4 kW (MONet), 68 % less (Fig 4 left).
- [37] (Zervas et al., JOCN 10(2) A270, 2018; its abstract): the locality-based allocator gives 15 ns, 95 ns
  and 315 ns round trips on 63 %, 22 % and 15 % of the VMs. Used only as a cross-check of the latency terms.

Latency (derived; `physics`): a circuit's round trip is RTT(h) = 2 (L_h * fibre_ns_per_m + h * hop_latency_ns),
with L_h the one-way fibre of an h-hop path. MONet's 3-hop path is 0.25 + 3 + 3 + 0.25 = 6.5 m; with 5 ns/m
(fibre, n ~ 1.47, ~4.9 ns/m; the paper's own Eq 1 fits 5.08 ns/m) 95 ns = 2 (32.5 + 3 t) gives t = 5 ns per
switch traversal (the paper does not split it further). The same two constants give RTT(1) = 2 (0.5 * 5 + 5)
= 15 ns and, for the fat tree's 5 hops over 0.25 + 3 + 10 + 10 + 3 + 0.25 = 26.5 m, RTT(5) = 2 (132.5 + 25) =
315 ns: exactly [37]'s three figures, so the paper's 95 ns is the 3-hop round trip (the top of MONet's CDF),
not a mean; the mean follows from the hop split (0.77 x 15 + 0.23 x 95 = 33.4 ns). With --from RESULTS,
`physics.fibre_ns_per_m: measured` takes the latency per metre our link measured (Eq. 1's slope, our remote
series' mean) and `physics.link_GBps: measured` one channel's bandwidth (our best remote bandwidth over its
lanes); the defaults are the derivation above and the paper's top lane rate, 15 Gb/s = 1.875 GB/s. Our
switch is the sim's channel model (zero cycles), so hop_latency_ns stays a number.

Contention at a memory card (`physics.memory_card_GBps`): the paper's model lets a memory card serve every
circuit it holds at full rate. Given a figure, a memory card holds circuits on at most floor(memory_card_GBps /
link_GBps) of its channels (at least one, at most its planes), so VMs that would share a card past what its
memory serves go elsewhere or are dropped (`memory`). `measured` takes the highest aggregate bandwidth our
pooled memory card served several requesters (`monet bench pool`, campaigns/pooling.yaml); the default, null,
is the paper's unbounded card. The latency a VM's accesses see behind the others' (the pool benchmark's loaded
p50/p99) is reported there, not modelled here: the model's latency is the network's round trip.

Topology (ours where the paper is silent):
- MONet: each intra-tray OSM has cards_per_tray ports down and as many up (1:1), so radix >= 2 x cards_per_tray.
  Uplink u of every tray on plane p goes to one inter-tray OSM of the slot (p, u). With trays <= radix, each
  slot has one inter-tray OSM holding every tray (any-to-any via every slot). With more trays (the paper's
  scale-out case (b), which it does not spell out) the trays form clusters of radix/2 and each slot's OSMs join
  two clusters: slot s joins the cluster pairs of round s mod R of a round-robin tournament between the m
  clusters (R = m - 1 rounds for even m, m for odd, a cluster sitting out once). Every pair of trays then shares
  at least one inter-tray OSM, so every path stays within 3 hops, as long as R <= planes x cards_per_tray.
  24 x 4096 with 48-port OSMs: 171 clusters of 24 trays, 171 rounds <= 8 x 24 = 192 slots; at most 4608 trays.
  Pairs of trays in different clusters share one or two slots, so such circuits get one or two channels: at
  that scale the planes buy reach, not multi-routing (the paper's either/or in s.3).
- Fat tree ("non-parallel"): no switch planes, so all of a card's channels land on one edge (intra-tray) OSM:
  radix/2 ports down hold radix/2 / planes cards (3 for 48 ports and 8 channels), radix/2 up. A pod (rack) is
  radix/2 edges with radix/2 aggregation (intra-rack) OSMs; core (inter-rack) OSM (u, v) joins uplink v of
  aggregation u of every pod (a k-ary fat tree, Al-Fares et al. 2008), so at most radix pods: 1 hop within an
  edge, 3 within a pod, 5 between pods. With 48 ports and 8 channels at most 3456 cards; beyond that the fat
  tree is reported as not buildable from these modules.
- Power: port_power_W (5 W, s.5.A) per connected switch port of a full build, all planes: MONet has per plane
  one port per card, one uplink and one inter-tray port per card (3 x cards x planes); the fat tree 5 x cards x
  planes (edge down and up, aggregation down and up, core) once it has more than one pod. At 576 cards and 8
  planes that is 13,824 ports (69.1 kW) against 23,040 (115.2 kW), 40 % less. The paper's 1.4 kW is 280 ports,
  fewer than the 576 card-facing ports that any network reaching 576 cards needs (2.88 kW), so its figure counts
  something the paper does not state; we do not fit it (`checks` reports the gap). The ports above the first
  tier alone are 1 : 3 (MONet's inter-tray ports against the fat tree's aggregation down, up and core), the
  paper's "< 33 %". Lit ports (those carrying circuits, 2 per hop per channel) are reported time-averaged.

Seeds (`workload.repeats`): one seed's hop split swings by several points, so the run repeats the whole
simulation (cards, requests and allocator draws) for seeds seed, seed + 1, ..., each on a fresh build, and
pools them: counts, hop split and CDFs over every seed's VMs, utilisation and lit power the seeds' mean,
each seed's split and drop rate beside (`per_seed`, `hop_share_range`). `auto` is 10 seeds up to 10,000
cards (1 s at 576) and one above (the paper's scale, about 18 s a seed).

Workload (s.5.A where it says; ours where it does not, each a parameter):
- Arrivals Poisson with mean interarrival_mean; holding time holding_start + holding_step x floor(i /
  holding_every). workload_copies superposes that many copies of the paper's stream (requests x copies, mean
  inter-arrival / copies, holding steps every holding_every x copies requests) so the load per card stays the
  paper's on a bigger system; `auto` is max(1, cards / 576).
- A VM asks vm_cores cores on one CPU card, vm_ram_gb GB on one memory card, vm_bandwidth_GBps between them
  (ceil(bandwidth / link_GBps) channels, one circuit each) and a round-trip bound vm_latency_ns; each uniform
  over its range. Defaults: 1-4 cores (one 4-core card); 1-8 GB, so the mean VM takes the same ~60 % of a memory
  card (mean 7.5 GB below) as of a CPU card (2.5 of 4 cores), in keeping with the 1:1 card ratio; 1-8.1 GB/s,
  from the ~1 GB/s of Table 1's peers to MONet's best remote DDR4 bandwidth (8.1 GB/s, s.6); 1000 ns, the
  sub-microsecond premise (s.1), which no path here exceeds.
- Memory cards are serial with probability serial_fraction, holding whole modules of the range's low end: HMC
  2 GB modules cascaded up to 16 GB (Fig 2), DDR4 4 or 8 GB.
- Cards alternate CPU and memory within a tray (cpu_fraction spread evenly), the same cards in both
  architectures.

Allocator (`allocator`; [37]'s algorithm is not given, and the hop split is its property, not the topology's):
- locality (default, our reading of "locality-based"): the CPU card first, the first that fits in a 1-hop
  domain (tray; fat-tree edge) drawn at random among those holding one, then the memory card nearest to it:
  its own domain (1 hop), then MONet's same cluster and other trays (3 hops), or the fat tree's pod (3) and
  other pods (5), first fit in domain order. Only if no CPU card of the drawn domain reaches a memory card
  are the others tried, nearest to memory first, so a request is dropped only when no CPU card can be served.
  With the defaults (seeds 1-10 pooled): MONet 72.8 / 27.2 % in 1 / 3 hops, each seed 70.0-77.8 % in 1 hop
  (seed 1: 73.4 / 26.6), paper 77 / 23; the fat tree 41 / 44 / 15 % in 1 / 3 / 5 hops ([37]'s architecture:
  63 / 22 / 15). At 98,304 cards (one seed) MONet gives 76.5 / 23.5.
- joint: 1 hop whenever any domain holds both halves, else as locality from the first CPU card that fits:
  the fewest hops an allocator can reach (MONet 97.0-98.8 % in 1 hop). A first-fit CPU choice instead of the
  random draw swings between 42 and 82 % with the seed (whether a tray's memory or its cores run out first
  sets the cross-tray share that follows), so it cannot be what yields one stated split; we did not keep it.
Path set-up: paths are taken shortest first, lowest plane (or uplink) first, skipping occupied ports: the K
shortest paths with K = channels. A request is dropped when no CPU card has the cores and K free ports (`cpu`),
no memory card the GB and K free ports (`memory`), or such cards exist but no circuit of K free paths within
the latency bound joins any two of them (`network`). Path search exploits the structure (1 hop in a tray, 3
between trays) with port bitmasks, so no graph search runs per request; `links()` gives the explicit graph of a
small build, against which the tests check the path sets.

Input (YAML; every key optional, the defaults are the paper's where it has them):

    topology:
      cards_per_tray: 24        # s.3 / s.5.A
      trays: 24                 # 24 x 24 = 576 resources, Fig 4's largest
      switch_planes: 8          # one 8-channel SDM MBO per card
      radix: 48                 # 48x48 OSMs, both tiers
      cpu_fraction: 0.5         # CPU:MEM 1:1
    physics:
      card_to_intra_m: 0.25
      intra_to_inter_m: 3.0
      fat_tree_extra_m: 10.0
      fibre_ns_per_m: 5.0
      hop_latency_ns: 5.0       # derived above; a measured figure with --from
      link_GBps: 1.875          # 15 Gb/s per channel; a measured figure with --from
      memory_card_GBps: null    # unbounded (the paper's); a measured figure with --from
      port_power_W: 5.0
    workload:
      requests: 1000
      interarrival_mean: 10
      holding_start: 6300
      holding_step: 360
      holding_every: 100
      workload_copies: auto
      cores_per_cpu: 4
      vm_cores: [1, 4]
      vm_ram_gb: [1, 8]
      vm_bandwidth_GBps: [1.0, 8.1]
      vm_latency_ns: [1000, 1000]
      serial_memory_gb: [2, 16]
      parallel_memory_gb: [4, 8]
      serial_fraction: 0.5
      seed: 1
      repeats: auto             # 10 seeds pooled up to 10,000 cards, else 1
    allocator: locality         # or joint
    architectures: [monet, fat_tree]
    power_vs_cards: [48, 96, 144, 192, 240, 288, 336, 384, 432, 480, 528, 576, 98304]

The paper's scale (runs MONet only: the fat tree is not buildable there):

    topology: {cards_per_tray: 24, trays: 4096}
"""

import heapq
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from monet.model import ModelInputError, check_lines, measured, paper_check

# The paper's stated results (s.5.A, Fig 4) and the scale the workload was set for.
PAPER_ONE_HOP_SHARE = 0.77
PAPER_THREE_HOP_SHARE = 0.23
PAPER_RTT_NS = 95.0
PAPER_POWER_W_AT_576 = {"monet": 1400.0, "fat_tree": 4500.0}
PAPER_RESOURCES = 576
REF37_RTT_NS = {1: 15.0, 3: 95.0, 5: 315.0}
TOLERANCE = 0.10
ARCHITECTURES = ("monet", "fat_tree")
# One seed's hop split swings by several points (70-78 % in 1 hop at 576 cards): below this many cards the
# default pools this many seeds (0.1 s each at 576 cards); the paper's scale runs once.
AUTO_REPEATS = 10
AUTO_REPEATS_MAX_CARDS = 10_000
# Ports and planes are held in 64-bit masks.
MAX_MASK_BITS = 64
PROGRESS_EVERY = 2000
# A first look at few 1-hop domains before all of them: at low load the first candidate fits.
FIRST_DOMAINS = 8

BIT = np.left_shift(np.uint64(1), np.arange(MAX_MASK_BITS, dtype=np.uint64))


@dataclass(frozen=True)
class Param:
    default: object
    kind: str        # count, seed, positive, nonnegative, fraction, int_range, range, copies, repeats
    source: str


SCHEMA = {
    "topology": {
        "cards_per_tray": Param(24, "count", "s.3 (24 cards per tray), s.5.A (8-24 resources per plane)"),
        "trays": Param(24, "count", "s.5.A (12-24 planes); 24 x 24 = 576, Fig 4's largest system"),
        "switch_planes": Param(8, "count", "s.3: one 8-channel SDM MBO per card, one plane per channel"),
        "radix": Param(48, "count", "s.3: 48x48 OSMs in both tiers (a 48-port Polatis OCS, s.4)"),
        "cpu_fraction": Param(0.5, "fraction", "s.5.A: CPU-MEM resource card ratio 1:1"),
    },
    "physics": {
        "card_to_intra_m": Param(0.25, "nonnegative", "s.5.A: resource to intra-tray OSM"),
        "intra_to_inter_m": Param(3.0, "nonnegative", "s.5.A: intra-tray to inter-tray OSM"),
        "fat_tree_extra_m": Param(10.0, "nonnegative", "s.5.A: intra-rack to inter-rack OSM, non-parallel only"),
        "fibre_ns_per_m": Param(5.0, "positive", "fibre ~4.9 ns/m; the paper's Eq 1 fits 5.08 ns/m (brief T2)"),
        "hop_latency_ns": Param(5.0, "nonnegative", "derived: 95 ns = 2 (6.5 m x 5 ns/m + 3 hops x 5 ns); "
                                                    "a measured figure with --from"),
        "link_GBps": Param(1.875, "positive", "15 Gb/s per channel, the paper's top lane rate (s.4.C); "
                                              "a measured figure with --from"),
        "memory_card_GBps": Param(None, "positive_or_unbounded",
                                  "ours: what one memory card serves its circuits together; null (unbounded): all of "
                                  "its channels, the paper's assumption; a measured figure with --from (a pooled "
                                  "memory card's aggregate under several requesters, monet bench pool)"),
        "port_power_W": Param(5.0, "nonnegative", "s.5.A: measured per-port power of a 48-port Polatis OCS [14]"),
    },
    "workload": {
        "requests": Param(1000, "count", "s.5.A"),
        "interarrival_mean": Param(10.0, "positive", "s.5.A: Poisson, mean 10 time units"),
        "holding_start": Param(6300.0, "positive", "s.5.A"),
        "holding_step": Param(360.0, "nonnegative", "s.5.A: +360 time units per 100 requests"),
        "holding_every": Param(100, "count", "s.5.A"),
        "workload_copies": Param("auto", "copies", "ours: the paper's stream superposed max(1, cards / 576) "
                                                   "times, so the load per card is the paper's"),
        "cores_per_cpu": Param(4, "count", "s.5.A: 4 cores per CPU card"),
        "vm_cores": Param([1, 4], "int_range", "ours: up to one CPU card"),
        "vm_ram_gb": Param([1, 8], "int_range", "ours: the mean VM takes ~60 % of a mean card, as of cores"),
        "vm_bandwidth_GBps": Param([1.0, 8.1], "range", "ours: Table 1 peers' ~1 GB/s to MONet's 8.1 GB/s (s.6)"),
        "vm_latency_ns": Param([1000.0, 1000.0], "range", "ours: sub-microsecond CPU-memory (s.1); never binds"),
        "serial_memory_gb": Param([2, 16], "int_range", "s.5.A, Fig 2: HMC 2 GB modules cascaded up to 16 GB"),
        "parallel_memory_gb": Param([4, 8], "int_range", "s.5.A: DDR4 4-8 GB"),
        "serial_fraction": Param(0.5, "fraction", "ours: half of the memory cards serial"),
        "seed": Param(1, "seed", "ours"),
        "repeats": Param("auto", "repeats", "ours: seeds seed, seed + 1, ... pooled, each seed's split beside; "
                                            f"auto is {AUTO_REPEATS} up to {AUTO_REPEATS_MAX_CARDS:,} cards, else 1"),
    },
}
TOP_LEVEL = (*SCHEMA, "allocator", "architectures", "power_vs_cards")
ALLOCATORS = ("locality", "joint")
DEFAULT_POWER_VS_CARDS = [48 * i for i in range(1, 13)] + [24 * 4096]


# ---------------------------------------------------------------------------------------------------------
# Inputs

def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _check_value(where, value, kind):
    """`value` if it is a `kind`, else a ModelInputError naming `where`, the value and what would do."""
    if kind == "count" and _is_int(value) and value >= 1:
        return value
    if kind == "seed" and _is_int(value) and value >= 0:
        return value
    if kind == "positive" and _is_number(value) and value > 0:
        return float(value)
    if kind == "nonnegative" and _is_number(value) and value >= 0:
        return float(value)
    if kind == "positive_or_unbounded" and (value is None or (_is_number(value) and value > 0)):
        return None if value is None else float(value)
    if kind == "fraction" and _is_number(value) and 0 <= value <= 1:
        return float(value)
    if kind == "copies" and (value == "auto" or (_is_number(value) and value >= 1)):
        return value if value == "auto" else float(value)
    if kind == "repeats" and (value == "auto" or (_is_int(value) and value >= 1)):
        return value
    if kind in ("int_range", "range") and isinstance(value, list) and len(value) == 2:
        lo, hi = value
        element_ok = _is_int if kind == "int_range" else _is_number
        if element_ok(lo) and element_ok(hi) and 0 < lo <= hi:
            return [lo, hi] if kind == "int_range" else [float(lo), float(hi)]
    wanted = {"count": "an integer >= 1", "seed": "an integer >= 0", "positive": "a number > 0",
              "nonnegative": "a number >= 0", "positive_or_unbounded": "a number > 0, or null (unbounded)",
              "fraction": "a number from 0 to 1", "copies": "'auto' or a number >= 1",
              "repeats": "'auto' or an integer >= 1",
              "int_range": "[low, high], integers with 0 < low <= high",
              "range": "[low, high], numbers with 0 < low <= high"}[kind]
    raise ModelInputError(f"{where}: {value!r} is not accepted; give {wanted}")


def parameters(config):
    """Every input with its default filled in and checked: {section: {key: value}}, plus the top-level lists."""
    config = {} if config is None else config
    if not isinstance(config, dict):
        raise ModelInputError(f"topology input: {config!r} is not a mapping; give sections among "
                              f"{', '.join(TOP_LEVEL)}")
    unknown = sorted(set(config) - set(TOP_LEVEL))
    if unknown:
        raise ModelInputError(f"{unknown[0]}: not an input of the topology model; give {', '.join(TOP_LEVEL)}")
    p = {}
    for section, spec in SCHEMA.items():
        given = config.get(section)
        given = {} if given is None else given
        if not isinstance(given, dict):
            raise ModelInputError(f"{section}: {given!r} is not a mapping; give keys among {', '.join(spec)}")
        unknown = sorted(set(given) - set(spec))
        if unknown:
            raise ModelInputError(f"{section}.{unknown[0]}: not a {section} input; give {', '.join(spec)}")
        p[section] = {key: _check_value(f"{section}.{key}", given.get(key, param.default), param.kind)
                      for key, param in spec.items()}
    allocator = config.get("allocator", ALLOCATORS[0])
    if allocator not in ALLOCATORS:
        raise ModelInputError(f"allocator: {allocator!r} is not an allocator; give one of {', '.join(ALLOCATORS)}")
    p["allocator"] = allocator
    archs = config.get("architectures", list(ARCHITECTURES))
    if not isinstance(archs, list) or not archs or any(a not in ARCHITECTURES for a in archs):
        raise ModelInputError(f"architectures: {archs!r} is not accepted; give a list among {', '.join(ARCHITECTURES)}")
    p["architectures"] = archs
    counts = config.get("power_vs_cards", DEFAULT_POWER_VS_CARDS)
    if not isinstance(counts, list) or any(not _is_int(n) or n < 1 for n in counts):
        raise ModelInputError(f"power_vs_cards: {counts!r} is not accepted; give a list of card counts >= 1")
    p["power_vs_cards"] = counts
    _check_consistency(p)
    return p


def _check_consistency(p):
    """Inputs that are each fine but do not fit together."""
    t, w, ph = p["topology"], p["workload"], p["physics"]
    c, radix = t["cards_per_tray"], t["radix"]
    if t["switch_planes"] > MAX_MASK_BITS:
        raise ModelInputError(f"topology.switch_planes: {t['switch_planes']} is more than the {MAX_MASK_BITS} "
                              f"planes a card's port mask holds; give at most {MAX_MASK_BITS}")
    if 2 * c > radix:
        raise ModelInputError(f"topology.cards_per_tray: {c} cards need {2 * c} ports on an intra-tray OSM at 1:1 "
                              f"({c} down, {c} up) but topology.radix is {radix}; give cards_per_tray <= "
                              f"{radix // 2} or radix >= {2 * c}")
    if c > MAX_MASK_BITS:
        raise ModelInputError(f"topology.cards_per_tray: {c} uplinks per tray exceed the {MAX_MASK_BITS} an uplink "
                              f"mask holds; give at most {MAX_MASK_BITS}")
    max_trays = SwitchPlanes.max_trays(c, t["switch_planes"], radix)
    if t["trays"] > max_trays:
        raise ModelInputError(f"topology.trays: {t['trays']} trays cannot all meet within 3 hops with radix {radix}, "
                              f"{t['switch_planes']} planes and {c} uplinks per tray; give trays <= {max_trays} or a "
                              "larger radix, more planes or more cards per tray")
    if w["vm_cores"][1] > w["cores_per_cpu"]:
        raise ModelInputError(f"workload.vm_cores: {w['vm_cores']} asks more cores than a CPU card has "
                              f"(workload.cores_per_cpu {w['cores_per_cpu']}); give a high end <= {w['cores_per_cpu']}")
    biggest = max(_largest_card(w["serial_memory_gb"]) if w["serial_fraction"] > 0 else 0,
                  _largest_card(w["parallel_memory_gb"]) if w["serial_fraction"] < 1 else 0)
    if w["vm_ram_gb"][1] > biggest:
        raise ModelInputError(f"workload.vm_ram_gb: {w['vm_ram_gb']} asks more than the largest memory card "
                              f"({biggest} GB); give a high end <= {biggest}")
    most = t["switch_planes"] * ph["link_GBps"]
    if w["vm_bandwidth_GBps"][1] > most:
        raise ModelInputError(f"workload.vm_bandwidth_GBps: {w['vm_bandwidth_GBps']} exceeds a card's "
                              f"{t['switch_planes']} channels x {ph['link_GBps']} GB/s = {most:g} GB/s; give a "
                              f"high end <= {most:g}")
    served, biggest_vm = memory_channels(t, ph), math.ceil(w["vm_bandwidth_GBps"][1] / ph["link_GBps"] - 1e-9)
    if served < biggest_vm:
        raise ModelInputError(f"physics.memory_card_GBps: {ph['memory_card_GBps']:g} GB/s serves {served} channel(s) "
                              f"of {ph['link_GBps']:g} GB/s, and workload.vm_bandwidth_GBps {w['vm_bandwidth_GBps']} "
                              f"needs {biggest_vm}; give memory_card_GBps >= {biggest_vm * ph['link_GBps']:g}, null, "
                              f"or a lower bandwidth high end")
    cpus = sum(1 for i in range(c) if _is_cpu_slot(i, t["cpu_fraction"]))
    if not 0 < cpus < c:
        raise ModelInputError(f"topology.cpu_fraction: {t['cpu_fraction']} leaves a tray of {c} cards with "
                              f"{cpus} CPU cards; give a fraction that leaves both CPU and memory cards")


def memory_channels(topology, physics):
    """The channels a memory card's circuits may hold at once (on any of its planes): all its planes, or as
    many of link_GBps as its memory_card_GBps serves (a card serving less than its links carry takes fewer
    circuits: the contention measured at a pooled memory card, instead of none)."""
    planes = topology["switch_planes"]
    if physics["memory_card_GBps"] is None:
        return planes
    return max(1, min(planes, math.floor(physics["memory_card_GBps"] / physics["link_GBps"] + 1e-9)))


def _workload_copies(w, cards):
    return max(1.0, cards / PAPER_RESOURCES) if w["workload_copies"] == "auto" else w["workload_copies"]


def _repeats(w, cards):
    if w["repeats"] != "auto":
        return w["repeats"]
    return AUTO_REPEATS if cards <= AUTO_REPEATS_MAX_CARDS else 1


# ---------------------------------------------------------------------------------------------------------
# Cards and requests

def _is_cpu_slot(slot, cpu_fraction):
    """Spread CPU cards evenly over a tray's slots (alternating at 1:1)."""
    return math.floor((slot + 1) * cpu_fraction) > math.floor(slot * cpu_fraction)


@dataclass
class CardSet:
    """The physical cards, the same for both architectures: which are CPUs, their cores and memory GB."""
    is_cpu: np.ndarray
    cores: np.ndarray
    memory_gb: np.ndarray

    @property
    def count(self):
        return len(self.is_cpu)


def make_cards(topology, workload, rng):
    c, trays = topology["cards_per_tray"], topology["trays"]
    slot_is_cpu = np.array([_is_cpu_slot(i, topology["cpu_fraction"]) for i in range(c)])
    is_cpu = np.tile(slot_is_cpu, trays)
    serial = rng.random(len(is_cpu)) < workload["serial_fraction"]
    gb = np.where(serial, _module_multiples(workload["serial_memory_gb"], rng, len(is_cpu)),
                  _module_multiples(workload["parallel_memory_gb"], rng, len(is_cpu)))
    return CardSet(is_cpu, np.where(is_cpu, workload["cores_per_cpu"], 0), np.where(is_cpu, 0, gb))


def _module_multiples(gb_range, rng, n):
    """Card sizes of whole modules of the range's low end, up to its high end, uniformly."""
    module, most = gb_range
    return module * rng.integers(1, most // module + 1, size=n)


def _largest_card(gb_range):
    module, most = gb_range
    return most // module * module


@dataclass
class Requests:
    arrival: np.ndarray
    holding: np.ndarray
    cores: np.ndarray
    ram_gb: np.ndarray
    channels: np.ndarray
    latency_bound_ns: np.ndarray

    @property
    def count(self):
        return len(self.arrival)


def make_requests(workload, link_gbps, copies, rng):
    """The paper's Poisson VM stream, `copies` times over (s.5.A)."""
    n = round(workload["requests"] * copies)
    arrival = np.cumsum(rng.exponential(workload["interarrival_mean"] / copies, size=n))
    holding = workload["holding_start"] + workload["holding_step"] * \
        np.floor(np.arange(n) / (workload["holding_every"] * copies))
    bandwidth = rng.uniform(*workload["vm_bandwidth_GBps"], size=n)
    return Requests(arrival=arrival, holding=holding,
                    cores=rng.integers(workload["vm_cores"][0], workload["vm_cores"][1] + 1, size=n),
                    ram_gb=rng.integers(workload["vm_ram_gb"][0], workload["vm_ram_gb"][1] + 1, size=n),
                    # A demand of exactly k channels' worth is k channels, whatever the float rounding.
                    channels=np.maximum(1, np.ceil(bandwidth / link_gbps - 1e-9)).astype(int),
                    latency_bound_ns=rng.uniform(*workload["vm_latency_ns"], size=n))


class Pool:
    """Free cores, GB and card ports, and the channels each card may still take (`room`: a memory card's
    `memory_ports` at most, on any of its ports), laid out as 1-hop domains (rows) of `domain_size` cards;
    padding cards have nothing. For each k, each domain keeps the most free cores (GB) of its cards with k free
    channels or more, so the allocator knows from the domains alone whether a card fits and where."""

    def __init__(self, cards, domain_size, ports_per_card, memory_ports=None):
        self.domain_size = domain_size
        self.domains = -(-cards.count // domain_size)
        padded = self.domains * domain_size
        self.cores = np.zeros(padded, dtype=np.int64)
        self.gb = np.zeros(padded, dtype=np.int64)
        self.ports = np.zeros(padded, dtype=np.uint64)
        self.cores[:cards.count], self.gb[:cards.count] = cards.cores, cards.memory_gb
        self.ports[:cards.count] = _all_bits(ports_per_card)
        self.room = np.zeros(padded, dtype=np.int64)
        self.room[:cards.count] = np.where(cards.is_cpu, ports_per_card,
                                           ports_per_card if memory_ports is None else memory_ports)
        self.is_cpu = np.zeros(padded, dtype=bool)
        self.is_cpu[:cards.count] = cards.is_cpu
        self.is_memory = np.zeros(padded, dtype=bool)
        self.is_memory[:cards.count] = ~cards.is_cpu
        self.port_levels = np.arange(ports_per_card + 1)
        # best_cores[k, d]: the most free cores on a CPU card of domain d with >= k free channels (GB alike).
        free = self.free_channels(slice(None)).reshape(self.domains, domain_size, 1) >= self.port_levels
        self.best_cores = (self.cores.reshape(self.domains, domain_size, 1) * free).max(axis=1).T.copy()
        self.best_gb = (self.gb.reshape(self.domains, domain_size, 1) * free).max(axis=1).T.copy()

    def refresh(self, domain):
        cut = slice(domain * self.domain_size, (domain + 1) * self.domain_size)
        free = self.free_channels(cut)[:, None] >= self.port_levels
        self.best_cores[:, domain] = (self.cores[cut, None] * free).max(axis=0)
        self.best_gb[:, domain] = (self.gb[cut, None] * free).max(axis=0)

    def free_channels(self, cards):
        """The channels `cards` may still take: their free ports, at most their room."""
        return np.minimum(_popcount(self.ports[cards]), self.room[cards])

    def grid(self, array, domains):
        return array.reshape(self.domains, self.domain_size)[domains]

    def cards_of(self, domains):
        return (domains[:, None] * self.domain_size + np.arange(self.domain_size)).ravel()


def _all_bits(n):
    return np.uint64((1 << n) - 1)


def _popcount(a):
    return np.bitwise_count(a)


def _lowest_bits(mask, k):
    """The positions of the k lowest set bits of an integer mask."""
    mask, out = int(mask), []
    while len(out) < k:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _bits_to_mask(flags):
    """Rows of booleans (..., n) to integer masks, bit i set where flags[..., i]."""
    return (flags.astype(np.uint64) * BIT[:flags.shape[-1]]).sum(axis=-1, dtype=np.uint64)


# ---------------------------------------------------------------------------------------------------------
# Topologies

def _rtt_ns(fibre_m, hops, physics):
    """Round trip over a path of `fibre_m` one way and `hops` switch traversals each way."""
    return 2 * (fibre_m * physics["fibre_ns_per_m"] + hops * physics["hop_latency_ns"])


@dataclass
class Circuit:
    card_a: int
    card_b: int
    ports_a: int
    ports_b: int
    uplinks: list      # (array, index, bit) reservations above the cards
    hops: int
    channels: int


class SwitchPlanes:
    """MONet (s.3, Fig 1): `planes` disjoint 2-tier switch planes over all trays."""

    name = "monet"

    @staticmethod
    def tournament(trays, radix):
        """(cluster size, clusters, rounds) of the inter-tray tier; one round of one cluster when all trays fit
        on one inter-tray OSM."""
        if trays <= radix:
            return trays, 1, 1
        size = radix // 2
        clusters = -(-trays // size)
        return size, clusters, clusters - 1 if clusters % 2 == 0 else clusters

    @staticmethod
    def max_trays(cards_per_tray, planes, radix):
        slots = planes * cards_per_tray
        most_clusters = slots + slots % 2       # the largest cluster count whose rounds fit the slots
        return max(radix, (radix // 2) * most_clusters)

    def __init__(self, cards_per_tray, trays, planes, radix, physics):
        self.cards_per_tray, self.trays, self.planes, self.radix = cards_per_tray, trays, planes, radix
        self.uplinks_per_tray = cards_per_tray
        self.domain_size = cards_per_tray
        self.cluster_size, self.clusters, self.rounds = self.tournament(trays, radix)
        # With an odd cluster count a dummy cluster makes the tournament even; its partner sits out.
        self.tournament_size = self.clusters + self.clusters % 2
        self.cluster_of_tray = np.arange(trays) // self.cluster_size
        all_uplinks = _all_bits(self.uplinks_per_tray) if trays > 1 else np.uint64(0)
        self.uplinks = np.full((trays, planes), all_uplinks, dtype=np.uint64)
        slot_round = np.arange(planes * self.uplinks_per_tray).reshape(planes, self.uplinks_per_tray) % self.rounds
        self.round_uplinks = np.stack([_bits_to_mask(slot_round == r) for r in range(self.rounds)])
        # The planes with a slot in a round bound the channels between two clusters that meet in it.
        self.round_planes = (self.round_uplinks != 0).sum(axis=1)
        self.card_m, self.uplink_m = physics["card_to_intra_m"], physics["intra_to_inter_m"]
        self.rtt = {1: _rtt_ns(2 * self.card_m, 1, physics), 3: _rtt_ns(2 * (self.card_m + self.uplink_m), 3, physics)}

    def domain_of(self, card):
        return card // self.cards_per_tray

    def round_of(self, cluster, others):
        """The tournament round in which `cluster` meets each of `others` (circle method: x + y = 2r mod n, the
        last vertex meets r in round r); 0 for `cluster` itself, which shares every slot (callers mask it)."""
        n, fixed = self.tournament_size - 1, self.tournament_size - 1
        r = ((cluster + others) * ((n + 1) // 2)) % n
        r = np.where(others == fixed, cluster, r)
        r = np.where(cluster == fixed, others, r)
        return np.where(others == cluster, 0, r)

    def group_of(self, cluster, rnd):
        """Which inter-tray OSM of a slot of round `rnd` holds `cluster` (its pair's index in the round)."""
        n = self.tournament_size - 1
        if self.clusters == 1 or cluster == n or cluster == rnd:
            return 0
        d = (cluster - rnd) % n
        return min(d, n - d)

    def shared_uplinks(self, tray, trays):
        """Per plane, the uplinks u whose inter-tray OSM holds both `tray` and each of `trays`: (n, planes)."""
        full = _all_bits(self.uplinks_per_tray)
        if self.clusters == 1:
            return np.full((len(trays), self.planes), full, dtype=np.uint64)
        mine, theirs = self.cluster_of_tray[tray], self.cluster_of_tray[trays]
        meet = self.round_uplinks[self.round_of(mine, theirs)]
        return np.where((theirs == mine)[:, None], full, meet)

    def local_channels(self, ports_a, ports_b):
        """1-hop channels: planes where both cards' ports are free."""
        return _popcount(ports_a & ports_b)

    def neighbourhood(self, trays):
        """The group of trays with the most paths between them (their cluster)."""
        return self.cluster_of_tray[trays]

    def remote_classes(self, domain, candidates):
        """`candidates` (trays) split by distance from `domain`, nearest first: [(hops, trays), ...]."""
        others = candidates[candidates != domain]
        same_cluster = self.cluster_of_tray[others] == self.cluster_of_tray[domain]
        return [(3, others[same_cluster]), (3, others[~same_cluster])]

    def _route_planes(self, tray, trays):
        """Per candidate tray, planes with a free uplink at both ends into a shared inter-tray OSM: (n, planes)."""
        return self.uplinks[tray][None, :] & self.uplinks[trays] & self.shared_uplinks(tray, trays)

    def reachable(self, pool, card, trays, channels):
        """The trays among `trays` with `channels` planes free from `card` up to a shared inter-tray OSM."""
        home = self.domain_of(card)
        if self.clusters > 1:
            mine, theirs = self.cluster_of_tray[home], self.cluster_of_tray[trays]
            most = np.where(theirs == mine, self.planes, self.round_planes[self.round_of(mine, theirs)])
            trays = trays[most >= channels]
        planes = _bits_to_mask(self._route_planes(home, trays) != 0)
        return trays[_popcount(pool.ports[card] & planes) >= channels]

    def remote_channels(self, pool, card, cards):
        trays = self.domain_of(cards)
        planes = _bits_to_mask(self._route_planes(self.domain_of(card), trays) != 0)
        return _popcount(pool.ports[card] & pool.ports[cards] & planes)

    def connect(self, pool, card_a, card_b, channels, hops):
        a, b = self.domain_of(card_a), self.domain_of(card_b)
        usable = int(pool.ports[card_a] & pool.ports[card_b])
        if hops == 3:
            route = self._route_planes(a, np.array([b]))[0]
            usable &= int(_bits_to_mask(route != 0))
        planes = _lowest_bits(usable, channels)
        reserved = []
        if hops == 3:
            for p in planes:
                u = _lowest_bits(route[p], 1)[0]
                reserved += [(self.uplinks, (a, p), u), (self.uplinks, (b, p), u)]
        mask = sum(1 << p for p in planes)
        return Circuit(card_a, card_b, mask, mask, reserved, hops, channels)

    def port_counts(self):
        """Connected switch ports of the full build, by tier, all planes."""
        per_plane = self.cards_per_tray * self.trays
        above = per_plane if self.trays > 1 else 0
        return {"card_facing": per_plane * self.planes, "tray_uplinks": above * self.planes,
                "upper_tiers": above * self.planes}

    def modules(self):
        inter = self.planes * self.uplinks_per_tray * (self.tournament_size // 2 if self.clusters > 1 else 1)
        return {"intra_tray": self.trays * self.planes, "inter_tray": inter if self.trays > 1 else 0}

    def links(self, pool):
        """The explicit graph of the build (small cases): (node, node, metres, free)."""
        out = []
        for card in range(self.cards_per_tray * self.trays):
            tray = self.domain_of(card)
            for p in range(self.planes):
                out.append((("card", card), ("intra", p, tray), self.card_m, bool(int(pool.ports[card]) >> p & 1)))
        if self.trays > 1:
            for tray in range(self.trays):
                for p in range(self.planes):
                    for u in range(self.uplinks_per_tray):
                        rnd = (p * self.uplinks_per_tray + u) % self.rounds
                        osm = ("inter", p, u, self.group_of(int(self.cluster_of_tray[tray]), rnd))
                        out.append((("intra", p, tray), osm, self.uplink_m, bool(int(self.uplinks[tray, p]) >> u & 1)))
        return out


class FatTree:
    """Non-parallel fat tree: every channel of a card on one edge OSM; edges, pods, core (k-ary fat tree)."""

    name = "fat_tree"

    @staticmethod
    def unbuildable(cards, channels, radix):
        """Why a fat tree of these modules cannot hold `cards` cards of `channels` channels, or None."""
        half = radix // 2
        if channels > half:
            return f"a card's {channels} channels exceed an edge OSM's {half} down ports"
        edges = -(-cards // (half // channels))
        pods = -(-edges // half)
        if pods > radix:
            most = radix * half * (half // channels)
            return f"{pods} pods exceed the {radix} a core OSM reaches; radix {radix} holds at most {most} cards"
        return None

    def __init__(self, cards, planes, radix, physics):
        self.cards, self.planes, self.radix = cards, planes, radix
        self.half = radix // 2
        self.domain_size = self.half // planes
        self.edges = -(-cards // self.domain_size)
        self.pods = -(-self.edges // self.half)
        self.edge_up = np.full(self.edges, _all_bits(self.half) if self.edges > 1 else 0, dtype=np.uint64)
        self.agg_up = np.full((self.pods, self.half), _all_bits(self.half) if self.pods > 1 else 0, dtype=np.uint64)
        self.card_m, self.uplink_m = physics["card_to_intra_m"], physics["intra_to_inter_m"]
        self.core_m = physics["fat_tree_extra_m"]
        self.rtt = {1: _rtt_ns(2 * self.card_m, 1, physics), 3: _rtt_ns(2 * (self.card_m + self.uplink_m), 3, physics),
                    5: _rtt_ns(2 * (self.card_m + self.uplink_m + self.core_m), 5, physics)}

    def domain_of(self, card):
        return card // self.domain_size

    def pod_of(self, edge):
        return edge // self.half

    def local_channels(self, ports_a, ports_b):
        """1-hop channels: the edge OSM joins any free port of one card to any free port of the other."""
        return np.minimum(_popcount(ports_a), _popcount(ports_b))

    def neighbourhood(self, edges):
        return self.pod_of(edges)

    def remote_classes(self, domain, candidates):
        others = candidates[candidates != domain]
        same_pod = self.pod_of(others) == self.pod_of(domain)
        return [(3, others[same_pod]), (5, others[~same_pod])]

    def _paths(self, edge, edges):
        """Per candidate edge, the aggregation indices u with a free path: (n,) masks."""
        up = self.edge_up[edge] & self.edge_up[edges]
        pod, pods = self.pod_of(edge), self.pod_of(edges)
        via_core = _bits_to_mask((self.agg_up[pod][None, :] & self.agg_up[pods]) != 0)
        return np.where(pods == pod, up, up & via_core)

    def reachable(self, pool, card, edges, channels):
        """The edges among `edges` with `channels` free paths up from `card`'s edge and down to them."""
        return edges[_popcount(self._paths(self.domain_of(card), edges)) >= channels]

    def remote_channels(self, pool, card, cards):
        free = np.minimum(_popcount(pool.ports[card]), _popcount(pool.ports[cards]))
        return np.minimum(free, _popcount(self._paths(self.domain_of(card), self.domain_of(cards))))

    def connect(self, pool, card_a, card_b, channels, hops):
        ports_a = sum(1 << i for i in _lowest_bits(pool.ports[card_a], channels))
        ports_b = sum(1 << i for i in _lowest_bits(pool.ports[card_b], channels))
        reserved = []
        if hops > 1:
            ea, eb = self.domain_of(card_a), self.domain_of(card_b)
            pa, pb = self.pod_of(ea), self.pod_of(eb)
            for u in _lowest_bits(self._paths(ea, np.array([eb]))[0], channels):
                reserved += [(self.edge_up, (ea,), u), (self.edge_up, (eb,), u)]
                if hops == 5:
                    v = _lowest_bits(self.agg_up[pa, u] & self.agg_up[pb, u], 1)[0]
                    reserved += [(self.agg_up, (pa, u), v), (self.agg_up, (pb, u), v)]
        return Circuit(card_a, card_b, ports_a, ports_b, reserved, hops, channels)

    def port_counts(self):
        card_ports = self.cards * self.planes
        edge_up = self.edges * self.half if self.edges > 1 else 0
        agg = edge_up + (self.pods * self.half * self.half if self.pods > 1 else 0)
        core = self.pods * self.half * self.half if self.pods > 1 else 0
        return {"card_facing": card_ports, "tray_uplinks": edge_up, "upper_tiers": agg + core}

    def modules(self):
        return {"edge": self.edges, "aggregation": self.pods * self.half if self.edges > 1 else 0,
                "core": self.half * self.half if self.pods > 1 else 0}

    def links(self, pool):
        out = []
        for card in range(self.cards):
            edge = self.domain_of(card)
            for i in range(self.planes):
                out.append((("card", card, i), ("edge", edge), self.card_m, bool(int(pool.ports[card]) >> i & 1)))
        for edge in range(self.edges if self.edges > 1 else 0):
            for u in range(self.half):
                out.append((("edge", edge), ("agg", self.pod_of(edge), u), self.uplink_m,
                            bool(int(self.edge_up[edge]) >> u & 1)))
        for pod in range(self.pods if self.pods > 1 else 0):
            for u in range(self.half):
                for v in range(self.half):
                    out.append((("agg", pod, u), ("core", u, v), self.core_m, bool(int(self.agg_up[pod, u]) >> v & 1)))
        return out


def build(name, topology, physics):
    """An architecture over the configured cards, or the reason it cannot be built from these modules."""
    cards = topology["cards_per_tray"] * topology["trays"]
    if name == "monet":
        return SwitchPlanes(topology["cards_per_tray"], topology["trays"], topology["switch_planes"],
                            topology["radix"], physics), None
    reason = FatTree.unbuildable(cards, topology["switch_planes"], topology["radix"])
    if reason:
        return None, reason
    return FatTree(cards, topology["switch_planes"], topology["radix"], physics), None


def power_w(arch, physics):
    return sum(arch.port_counts().values()) * physics["port_power_W"]


# ---------------------------------------------------------------------------------------------------------
# Allocation and circuits

def _cards_that_fit(pool, domains, need, channels, cpu):
    """The CPU (or memory) cards of `domains` with `need` cores (GB) and `channels` free ports, in order."""
    cards = pool.cards_of(domains)
    enough = (pool.is_cpu[cards] & (pool.cores[cards] >= need)) if cpu else \
        (pool.is_memory[cards] & (pool.gb[cards] >= need))
    return cards[enough & (pool.free_channels(cards) >= channels)]


def _first_local_pair(arch, pool, domains, cores, gb, channels):
    """The first (cpu card, memory card) in `domains` that fit with `channels` free 1-hop paths, or None."""
    ports = pool.grid(pool.ports, domains)
    free = pool.free_channels(pool.cards_of(domains)).reshape(len(domains), pool.domain_size)
    cpu = pool.grid(pool.is_cpu, domains) & (pool.grid(pool.cores, domains) >= cores) & (free >= channels)
    mem = pool.grid(pool.is_memory, domains) & (pool.grid(pool.gb, domains) >= gb) & (free >= channels)
    fits = cpu[:, :, None] & mem[:, None, :] & (arch.local_channels(ports[:, :, None], ports[:, None, :]) >= channels)
    flat = fits.reshape(len(domains), -1)
    hit = np.flatnonzero(flat.any(axis=1))
    if not len(hit):
        return None
    d = hit[0]
    i, j = divmod(int(np.argmax(flat[d])), pool.domain_size)
    base = int(domains[d]) * pool.domain_size
    return base + i, base + j


def _nearest_memory(arch, pool, cpu, gb, channels, bound_ns, memory_domains):
    """(memory card, hops) nearest to `cpu` with `gb` free and `channels` free paths within the latency bound:
    its own domain, then the architecture's remote classes, each in domain order; None if there is none.
    `memory_domains` are the domains that hold a memory card with the GB and ports."""
    home = int(arch.domain_of(cpu))
    classes = [(1, memory_domains[memory_domains == home])] + arch.remote_classes(home, memory_domains)
    for hops, domains in classes:
        if arch.rtt[hops] > bound_ns:
            continue
        if hops > 1:
            domains = arch.reachable(pool, cpu, domains, channels)
        for chunk in (domains[:FIRST_DOMAINS], domains[FIRST_DOMAINS:]):
            memory = _cards_that_fit(pool, chunk, gb, channels, cpu=False) if len(chunk) else chunk
            if not len(memory):
                continue
            paths = arch.local_channels(pool.ports[cpu], pool.ports[memory]) if hops == 1 else \
                arch.remote_channels(pool, cpu, memory)
            ok = np.flatnonzero(paths >= channels)
            if len(ok):
                return int(memory[ok[0]]), hops
    return None


def allocate(arch, pool, cores, gb, channels, bound_ns, policy, rng):
    """(cpu card, memory card, hops) for a VM, or why it is dropped: cpu, memory or network.

    locality: a CPU card first (the first that fits in a domain drawn at random among those with one), then
    the memory card nearest to it. joint: 1 hop whenever any domain holds both halves (the fewest hops any
    allocator reaches), else as locality from the first CPU card that fits."""
    cpu_domains = np.flatnonzero(pool.best_cores[channels] >= cores)
    memory_domains = np.flatnonzero(pool.best_gb[channels] >= gb)
    if not len(cpu_domains):
        return "cpu"
    if not len(memory_domains):
        return "memory"
    first = 0
    if policy == "joint" and arch.rtt[1] <= bound_ns:
        both = np.flatnonzero(np.isin(cpu_domains, memory_domains, assume_unique=True))
        for chunk in (cpu_domains[both[:FIRST_DOMAINS]], cpu_domains[both[FIRST_DOMAINS:]]):
            pair = _first_local_pair(arch, pool, chunk, cores, gb, channels) if len(chunk) else None
            if pair:
                return (*pair, 1)
    elif policy == "locality":
        first = int(rng.integers(len(cpu_domains)))
    for cpu in _cpu_cards_from(arch, pool, cpu_domains, first, memory_domains, cores, channels):
        found = _nearest_memory(arch, pool, cpu, gb, channels, bound_ns, memory_domains)
        if found:
            return int(cpu), *found
    return "network"


def _cpu_cards_from(arch, pool, domains, first, memory_domains, cores, channels):
    """The CPU cards that fit: those of domain `first`, then, only if none of them leads to a memory card, all
    the others, nearest to memory first (domains holding one, then their cluster or pod, then the rest; in
    domain order from `first` on within each), so every CPU card is tried before a request is dropped."""
    yield from _cards_that_fit(pool, domains[first:first + 1], cores, channels, cpu=True)
    rest = np.roll(domains, -first)[1:]
    near = np.isin(arch.neighbourhood(rest), arch.neighbourhood(memory_domains))
    distance = 2 - near - np.isin(rest, memory_domains, assume_unique=True)
    yield from _cards_that_fit(pool, rest[np.argsort(distance, kind="stable")], cores, channels, cpu=True)


def _reserve(pool, arch, circuit, cores, gb, sign):
    """Take (sign -1) or give back (+1) a circuit's cores, GB, card ports, room and uplinks."""
    a, b = circuit.card_a, circuit.card_b
    pool.cores[a] += sign * cores
    pool.gb[b] += sign * gb
    pool.room[[a, b]] += sign * circuit.channels
    for card, bits in ((a, circuit.ports_a), (b, circuit.ports_b)):
        pool.ports[card] = np.uint64(int(pool.ports[card]) ^ bits)
    for array, index, bit in circuit.uplinks:
        array[index] = np.uint64(int(array[index]) ^ (1 << bit))
    for d in {int(arch.domain_of(a)), int(arch.domain_of(b))}:
        pool.refresh(d)


# ---------------------------------------------------------------------------------------------------------
# Simulation and metrics

def simulate(arch, cards, requests, ports_per_card, policy="locality", seed=0, progress=None, label=None,
             memory_ports=None):
    """Run the request stream through `arch`: per-VM hops (0 when dropped), drop reasons and time averages
    (over the time to the last arrival). The allocator's random draws come from `seed`; a memory card holds
    at most `memory_ports` channels at once, on any of its ports (None: all of them)."""
    pool = Pool(cards, arch.domain_size, ports_per_card, memory_ports)
    rng = np.random.default_rng(seed)
    hops = np.zeros(requests.count, dtype=np.int64)
    reasons = {"cpu": 0, "memory": 0, "network": 0}
    departures = []
    used = {"cores": 0.0, "gb": 0.0, "card_ports": 0.0, "switch_ports": 0.0}
    area = dict.fromkeys(used, 0.0)
    clock = 0.0

    def advance(t):
        nonlocal clock
        for key in used:
            area[key] += used[key] * (t - clock)
        clock = t

    def account(circuit, cores, gb, sign):
        used["cores"] -= sign * cores
        used["gb"] -= sign * gb
        used["card_ports"] -= sign * 2 * circuit.channels
        used["switch_ports"] -= sign * 2 * circuit.hops * circuit.channels

    for i in range(requests.count):
        now = float(requests.arrival[i])
        while departures and departures[0][0] <= now:
            t, _, circuit, cores, gb = heapq.heappop(departures)
            advance(t)
            _reserve(pool, arch, circuit, cores, gb, +1)
            account(circuit, cores, gb, +1)
        advance(now)
        cores, gb, k = int(requests.cores[i]), int(requests.ram_gb[i]), int(requests.channels[i])
        placed = allocate(arch, pool, cores, gb, k, float(requests.latency_bound_ns[i]), policy, rng)
        if isinstance(placed, str):
            reasons[placed] += 1
        else:
            circuit = arch.connect(pool, *placed[:2], k, placed[2])
            _reserve(pool, arch, circuit, cores, gb, -1)
            account(circuit, cores, gb, -1)
            hops[i] = circuit.hops
            heapq.heappush(departures, (now + float(requests.holding[i]), i, circuit, cores, gb))
        if progress and (i + 1) % PROGRESS_EVERY == 0:
            progress(i + 1, requests.count, label or f"{arch.name} requests")
    if progress:
        progress(requests.count, requests.count, label or f"{arch.name} requests")
    horizon = clock or 1.0
    return hops, reasons, {key: value / horizon for key, value in area.items()}


def _cdf(values):
    """[[value, fraction of values <= it], ...] over the distinct values."""
    if not len(values):
        return []
    distinct, counts = np.unique(values, return_counts=True)
    return [[float(v), float(c)] for v, c in zip(distinct, np.cumsum(counts) / len(values))]


@dataclass(frozen=True)
class SeedRun:
    """One seed's run of an architecture: its cards, per-VM hops (0 when dropped), drop reasons and time
    averages."""
    seed: int
    cards: CardSet
    hops: np.ndarray
    reasons: dict
    averages: dict


def _hop_share(arch, hops):
    accepted = int((hops > 0).sum())
    return {str(h): (int((hops == h).sum()) / accepted if accepted else 0.0) for h in sorted(arch.rtt)}


def _utilisation(arch, run):
    ports = arch.port_counts()
    return {"cpu_cores": run.averages["cores"] / int(run.cards.cores.sum()),
            "memory_gb": run.averages["gb"] / int(run.cards.memory_gb.sum()),
            "card_ports": run.averages["card_ports"] / ports["card_facing"],
            "switch_ports": run.averages["switch_ports"] / sum(ports.values())}


def metrics(arch, runs, physics):
    """The JSON-ready outcome of one architecture over its seeds' runs: counts, hop split and latency CDFs
    pooled over every seed's VMs, utilisation and lit power the seeds' mean, and each seed's hop split and
    drop rate with their range."""
    hops = np.concatenate([r.hops for r in runs])
    accepted = hops > 0
    n_ok = int(accepted.sum())
    by_hops = {str(h): int((hops == h).sum()) for h in sorted(arch.rtt)}
    rtt = np.array([arch.rtt[int(h)] for h in hops[accepted]])
    ports = arch.port_counts()
    connected = sum(ports.values())
    per_seed = [{"seed": r.seed, "accepted": int((r.hops > 0).sum()), "drop_rate": float((r.hops == 0).mean()),
                 "hop_share": _hop_share(arch, r.hops)} for r in runs]
    uses = [_utilisation(arch, r) for r in runs]
    return {
        "buildable": True, "seeds": [r.seed for r in runs],
        "requests": len(hops), "accepted": n_ok, "dropped": len(hops) - n_ok,
        "drop_rate": (len(hops) - n_ok) / len(hops) if len(hops) else 0.0,
        "drop_reasons": {key: sum(r.reasons[key] for r in runs) for key in runs[0].reasons},
        "hop_counts": by_hops,
        "hop_share": _hop_share(arch, hops),
        "hop_share_range": {h: [min(s["hop_share"][h] for s in per_seed), max(s["hop_share"][h] for s in per_seed)]
                            for h in by_hops},
        "drop_rate_range": [min(s["drop_rate"] for s in per_seed), max(s["drop_rate"] for s in per_seed)],
        "per_seed": per_seed,
        "hop_cdf": _cdf(hops[accepted]),
        "rtt_ns_by_hops": {str(h): v for h, v in arch.rtt.items()},
        "rtt_cdf_ns": _cdf(rtt),
        "mean_rtt_ns": float(rtt.mean()) if n_ok else None,
        "max_rtt_ns": float(rtt.max()) if n_ok else None,
        "utilisation": {key: float(np.mean([u[key] for u in uses])) for key in uses[0]},
        "switch_modules": arch.modules(),
        "ports": ports, "ports_total": connected,
        "power_W": connected * physics["port_power_W"],
        "lit_power_W": float(np.mean([r.averages["switch_ports"] for r in runs])) * physics["port_power_W"],
    }


def power_vs_cards(counts, topology, physics):
    """Full-build switch power of both architectures against the card count (cards_per_tray per tray)."""
    series = {"cards": [], "monet_W": [], "fat_tree_W": [], "notes": []}
    c = topology["cards_per_tray"]
    for n in counts:
        layout = dict(topology, trays=-(-n // c))
        notes = []
        if layout["trays"] > SwitchPlanes.max_trays(c, topology["switch_planes"], topology["radix"]):
            monet, notes = None, [f"{n} cards: more trays than 3 hops reach at this radix, planes and tray size"]
        else:
            monet = power_w(build("monet", layout, physics)[0], physics)
        tree, why = build("fat_tree", dict(layout, trays=1, cards_per_tray=n), physics)
        if why:
            notes.append(f"{n} cards: fat tree not buildable: {why}")
        series["cards"].append(n)
        series["monet_W"].append(monet)
        series["fat_tree_W"].append(power_w(tree, physics) if tree else None)
        series["notes"] += notes
    return series


def _check(figure, paper, model, note=None):
    return paper_check(figure, paper, model, TOLERANCE, note)


def _share_check(figure, paper, arch, hops):
    """A hop share pooled over the seeds, with the seeds' range as the check's caveat."""
    check = _check(figure, paper, arch["hop_share"][hops], "the split is the allocator's ([37]'s is not given; "
                   "see `allocator` in the model's docstring)")
    if len(arch["seeds"]) > 1:
        lo, hi = arch["hop_share_range"][hops]
        check["caveat"] = f"{len(arch['seeds'])} seeds pooled, each {lo:.3f}-{hi:.3f}"
    return check


def checks(result):
    """The paper's stated results beside ours (meaningful with the default inputs)."""
    monet = result["architectures"].get("monet", {})
    tree = result["architectures"].get("fat_tree", {})
    out = []
    if monet.get("buildable"):
        out += [_share_check(f"MONet traffic within {h} hop{'s' * (h > 1)} (s.5.A)", paper, monet, str(h))
                for h, paper in ((1, PAPER_ONE_HOP_SHARE), (3, PAPER_THREE_HOP_SHARE))]
        out.append(_check("MONet round-trip network latency, ns (s.5.A; the 3-hop round trip)", PAPER_RTT_NS,
                          monet["rtt_ns_by_hops"]["3"]))
    note = ("the paper's accounting is unstated; 1.4 kW is fewer ports (280) than the 576 card-facing ports "
            "any network reaching 576 cards needs")
    for name, arch in (("monet", monet), ("fat_tree", tree)):
        if arch.get("buildable") and result["cards"] == PAPER_RESOURCES:
            out.append(_check(f"{name} switch power at 576 cards, W (Fig 4)", PAPER_POWER_W_AT_576[name],
                              arch["power_W"], note))
    if monet.get("buildable") and tree.get("buildable"):
        upper = monet["ports"]["upper_tiers"] / tree["ports"]["upper_tiers"] if tree["ports"]["upper_tiers"] else None
        out.append(_check("MONet / fat tree power ratio (Fig 4: 1.4 / 4.5 kW)",
                          PAPER_POWER_W_AT_576["monet"] / PAPER_POWER_W_AT_576["fat_tree"],
                          monet["power_W"] / tree["power_W"]))
        out.append(_check("MONet / fat tree ports above the first tier", PAPER_POWER_W_AT_576["monet"] /
                          PAPER_POWER_W_AT_576["fat_tree"], upper, "the part of the power that the extra tiers add"))
    return out


def with_measured(config, records):
    """`config` with physics.fibre_ns_per_m: measured (the mean Eq. 1 slope of our remote latency series),
    physics.link_GBps: measured (our best remote bandwidth over its lanes: one channel's) and
    physics.memory_card_GBps: measured (a pooled memory card's best aggregate under several requesters) taken
    from a results store's `records`; and what was taken."""
    physics = config.get("physics") if isinstance(config, dict) else None
    if not isinstance(physics, dict):
        return config, {}
    taken = {}
    if physics.get("fibre_ns_per_m") == "measured":
        taken["fibre_ns_per_m"] = measured.ns_per_m(records, "physics.fibre_ns_per_m")
    if physics.get("link_GBps") == "measured":
        best = measured.best_bandwidth_point(records, "physics.link_GBps")
        taken["link_GBps"] = best["result"]["bandwidth_GBps"] / best["point"]["lanes"]
    if physics.get("memory_card_GBps") == "measured":
        taken["memory_card_GBps"] = measured.pooled_memory_GBps(records, "physics.memory_card_GBps")
    return {**config, "physics": {**physics, **taken}}, taken


def run(config, progress=None, records=None):
    """Simulate both architectures on `config` (see the module docstring), with the figures it asks to be
    `measured` taken from a results store's `records`."""
    start = time.time()
    config, taken = with_measured(config, records)
    p = parameters(config)
    topology, physics, workload = p["topology"], p["physics"], p["workload"]
    n_cards = topology["cards_per_tray"] * topology["trays"]
    copies = _workload_copies(workload, n_cards)
    seeds = [workload["seed"] + r for r in range(_repeats(workload, n_cards))]
    memory_ports = memory_channels(topology, physics)
    result = {"model": "topology", "cards": n_cards, "workload_copies": copies, "seeds": seeds,
              "memory_card_channels": memory_ports,
              "parameters": {section: {key: {"value": p[section][key], "source": SCHEMA[section][key].source}
                                       for key in SCHEMA[section]} for section in SCHEMA},
              "measured_from_results": taken,
              "allocator": p["allocator"], "architectures_run": p["architectures"], "architectures": {}}
    runs = {}
    for name in p["architectures"]:
        why = build(name, topology, physics)[1]
        if why:
            result["architectures"][name] = {"buildable": False, "reason": why}
        else:
            runs[name] = []
    walls, archs = dict.fromkeys(runs, 0.0), {}
    for seed in seeds:
        rng = np.random.default_rng(seed)
        cards = make_cards(topology, workload, rng)
        requests = make_requests(workload, physics["link_GBps"], copies, rng)
        for name in runs:
            t0 = time.time()
            # A fresh build each seed: circuits still up at the end of a run hold the build's uplinks.
            arch = archs[name] = build(name, topology, physics)[0]
            label = f"{arch.name} requests" + (f", seed {seed}" if len(seeds) > 1 else "")
            runs[name].append(SeedRun(seed, cards, *simulate(arch, cards, requests, topology["switch_planes"],
                                                             p["allocator"], seed, progress, label,
                                                             memory_ports)))
            walls[name] += time.time() - t0
    for name, seed_runs in runs.items():
        result["architectures"][name] = dict(metrics(archs[name], seed_runs, physics), wall_s=walls[name])
    result["power_vs_cards"] = power_vs_cards(p["power_vs_cards"], topology, physics)
    result["paper"] = {"hop_share": {"1": PAPER_ONE_HOP_SHARE, "3": PAPER_THREE_HOP_SHARE}, "rtt_ns": PAPER_RTT_NS,
                       "power_W_at_576": PAPER_POWER_W_AT_576,
                       "ref37_rtt_ns": {str(h): v for h, v in REF37_RTT_NS.items()}}
    result["checks"] = checks(result)
    result["wall_s"] = time.time() - start
    return result


# ---------------------------------------------------------------------------------------------------------
# Report

def _seeds(seeds):
    return f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}-{seeds[-1]}"


def _split(a, unit):
    """The hop split, each share with its range over the seeds when there are several."""
    def share(h):
        lo, hi = a["hop_share_range"][h]
        spread = f" ({100 * lo:.1f}-{100 * hi:.1f})" if len(a["seeds"]) > 1 else ""
        return f"{h}:{100 * a['hop_share'][h]:.1f}{unit}{spread}"
    return " / ".join(share(h) for h in a["hop_share"])


def summary(result):
    """Per architecture: acceptance, hop split, latency, utilisation and power; then the paper's checks."""
    from monet.report.tables import fmt, table_lines
    rows = []
    for name, a in result["architectures"].items():
        if not a["buildable"]:
            rows.append([name, "not buildable: " + a["reason"]] + ["-"] * 7)
            continue
        rows.append([name, f"{a['accepted']}/{a['requests']}", fmt(100 * a["drop_rate"]), _split(a, "%"),
                     fmt(a["mean_rtt_ns"]), fmt(a["max_rtt_ns"]), fmt(100 * a["utilisation"]["cpu_cores"]),
                     fmt(a["power_W"] / 1000, 2), fmt(a["lit_power_W"] / 1000, 2)])
    lines = [f"{result['cards']} cards, workload x {result['workload_copies']:.2f}, {_seeds(result['seeds'])}"
             + (" pooled (each seed's range in brackets)" if len(result["seeds"]) > 1 else "")]
    served = result["parameters"]["physics"]["memory_card_GBps"]["value"]
    if served is not None:
        lines.append(f"a memory card serves {served:.2f} GB/s: circuits on {result['memory_card_channels']} of its "
                     f"{result['parameters']['topology']['switch_planes']['value']} channels at most")
    lines += table_lines(rows, ["architecture", "accepted", "drop %", "hops", "mean RTT ns", "max RTT ns",
                                "CPU use %", "power kW", "lit kW"])
    lines += check_lines(result["checks"])
    lines.append(f"wall time {result['wall_s']:.1f} s")
    return lines


def sections(result, out):
    """Report sections: the latency CDFs and hop split, and switch power against the card count."""
    from monet.report.tables import fmt, figure
    out = Path(out)
    built = {n: a for n, a in result["architectures"].items() if a["buildable"]}
    with figure(out / "topology_rtt_cdf.png", "Round-trip network latency (Fig 4 right)", "round trip (ns)",
                "fraction of VMs") as ax:
        for name, a in built.items():
            points = [[0.0, 0.0]] + a["rtt_cdf_ns"]
            ax.step([x for x, _ in points], [y for _, y in points], where="post", label=name)
    series = result["power_vs_cards"]
    with figure(out / "topology_power.png", "Switch power, full build (Fig 4 left)", "cards", "kW") as ax:
        for key, label in (("monet_W", "MONet"), ("fat_tree_W", "fat tree (non-parallel)")):
            points = [(n, w / 1000) for n, w in zip(series["cards"], series[key]) if w is not None]
            if points:
                ax.plot(*zip(*points), "o-", label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
    rows = [[name, f"{a['accepted']}/{a['requests']}", fmt(100 * a["drop_rate"]),
             _split(a, " %"), fmt(a["mean_rtt_ns"]),
             fmt(a["max_rtt_ns"]), fmt(100 * a["utilisation"]["cpu_cores"]), fmt(100 * a["utilisation"]["memory_gb"]),
             fmt(100 * a["utilisation"]["switch_ports"]), a["ports_total"], fmt(a["power_W"] / 1000, 2)]
            for name, a in built.items()]
    checks_rows = [[c["figure"], f"{c['paper']:g}", fmt(c["model"], 3),
                    fmt(100 * c["deviation"]) if c["deviation"] is not None else "-", "PASS" if c["pass"] else "FAIL"]
                   for c in result["checks"]]
    return [("Switch-plane topology: simulation (s.5.A, Fig 4)",
             ["architecture", "accepted", "drop %", "hop share", "mean RTT ns", "max RTT ns", "CPU %", "memory %",
              "switch ports %", "ports", "power kW"], rows, "topology_rtt_cdf.png",
             f"{result['cards']} cards, {_seeds(result['seeds'])} (pooled; each seed's range in brackets); Poisson "
             "VM requests (s.5.A) placed by a locality-aware allocator, circuits over the K shortest free paths; "
             "round trip 2 (fibre x ns/m + hops x per-hop ns)."),
            ("Switch-plane topology: the paper's figures", ["figure", "paper", "model", "deviation %", "verdict"],
             checks_rows, "topology_power.png",
             "Power counts every connected port of a full build at the per-port power (5 W); see the model's "
             "docstring for why the paper's 1.4 / 4.5 kW cannot be a full build's.")]
