"""The MONet paper's figures and our own targets: the one place the CLI's verdicts and the report read them.

The paper: Mishra, Benjamin and Zervas, "MONet: Heterogeneous Memory over Optical Network for Large-Scale
Data Centre Resource Disaggregation" (its tables and figures are named where each value is given).
"""

# Figure: (value, unit, whether the paper states it ("stated") or it was derived from stated numbers
# ("derived"), where: T1 its Table 1 (8 m), T2 its latency results (Figs 5, 6 and Eq. 1), T3 its DDR4
# bandwidth (Fig 7)).
PAPER = {
    "remote DDR4 write latency, 8 m": (526.6, "ns", "stated", "T1"),
    "remote HMC write latency, 8 m": (387.2, "ns", "stated", "T1"),
    "remote DDR4 write latency, 100 m (Eq. 1)": (1030.0, "ns", "stated", "T2"),
    "remote DDR4 read latency, 100 m (Eq. 1)": (1230.0, "ns", "stated", "T2"),
    "latency per round-trip metre, DDR4": (5.45, "ns/m", "derived", "T2 (5.42-5.47 fitted)"),
    "remote DDR4 bandwidth, 8 x 10 Gb/s": (6.8, "GB/s", "stated", "T3"),
    "remote DDR4 bandwidth, 8 x 12.5 Gb/s": (7.6, "GB/s", "stated", "T3"),
    "remote DDR4 bandwidth, 8 x 15 Gb/s": (8.1, "GB/s", "stated", "T1/T3"),
    "link utilisation, 8 x 15 Gb/s": (0.27, "", "derived", "T3 (8.1 / 30 GB/s)"),
}


def paper(figure):
    """The paper's value of one figure of PAPER."""
    return PAPER[figure][0]


# The paper's Table 1 (T1, 8 m round trip), MONet's column: per memory configuration STREAM / baseline (the
# PBB's bandwidth) in GB/s, keyed by the report's memory label (monet.report.tables.memory_label: HW is half width).
PAPER_T1_BANDWIDTH_GBPS = {
    "ddr4 local": ("local DDR4", 3.7, 15.5),
    "hmc full local": ("local HMC FW", 3.8, 37.8),
    "hmc half local": ("local HMC HW", 3.2, 22.6),
    "ddr4": ("remote DDR4", 2.6, 8.1),
    "hmc half": ("remote HMC HW", 3.0, 22.5),
}
# T1's STREAM / baseline remote against local (SB %), STREAM and PBB: (remote label, local label, STREAM, PBB).
PAPER_T1_SB = {"DDR4": ("ddr4", "ddr4 local", 0.70, 0.52), "HMC HW": ("hmc half", "hmc half local", 0.94, 0.99)}
# T1's write latencies at 8 m and their overheads over local (R_DOV a range: 526.6 ns over a local write of
# 17.4 to 65.8 ns; R_HOV as stated, though 387.2 / 332.8 is 1.16): (remote label, local label, ns, overhead).
PAPER_T1_WRITE = {"DDR4": ("ddr4", "ddr4 local", 526.6, (8.0, 30.0)),
                  "HMC HW": ("hmc half", "hmc half local", 387.2, (1.6, 1.6))}

# What the MONet-compatible profile is checked against (8 m, 8 lanes, DDR4): T1's remote DDR4 write latency
# (the paper states no remote read latency at 8 m) and T3's remote bandwidth per lane rate.
PAPER_LATENCY_NS = {"write": paper("remote DDR4 write latency, 8 m")}
PAPER_LATENCY_100M_NS = {op: paper(f"remote DDR4 {op} latency, 100 m (Eq. 1)") for op in ("write", "read")}
PAPER_BANDWIDTH_GBPS = {rate: paper(f"remote DDR4 bandwidth, 8 x {rate:g} Gb/s") for rate in (10.0, 12.5, 15.0)}
PAPER_TOLERANCE = 0.15

# The paper's Fig 11 (T6): sustained bandwidth at BER 1e-12, against error-free, per lane rate (8 lanes).
PAPER_BER_EFFICIENCY = {10.0: 0.857, 12.5: 0.812, 15.0: 0.636}

# The paper's STREAM at 8 m against local (T1's SB %, 8 x 15 Gb/s; 2.6 / 3.7 and 3 / 3.2 GB/s), per memory.
PAPER_STREAM_8M = {"DDR4": 0.70, "HMC": 0.94}

# The paper's STREAM at 36 m (T7, Fig 14): sustained % of local per memory and lane rate, and IPC (T9).
PAPER_STREAM_36M = {("HMC", 15.0): 0.911, ("DDR4", 15.0): 0.622, ("HMC", 10.0): 0.89, ("DDR4", 10.0): 0.516}
PAPER_IPC_SLOPE_PER_M = -0.0053

# The paper's YCSB and IPC on the A53 (T8, T9): local DDR4 / HW HMC summary.
PAPER_YCSB = {"ops_per_s": 1400, "avg_latency_ms": 2.5, "ipc": 0.36}

# openHMC's unloaded read latency from its user application through the HMC and back, 16 lanes (Schmidt's
# thesis, s.3.2, Table 3.6: 224 ns at 10 Gb/s, 192 ns at 12.5 Gb/s): our local full-width HMC must beat it.
OPENHMC_READ_NS = {10.0: 224.0, 12.5: 192.0}

# Schmidt's thesis (openHMC, s.3.2 and Eq. 3.5): one HMC link, 16 lanes at 10 Gb/s, linear 128 B accesses,
# reads only or writes only 17.7 GB/s (88.5 % of the 20 GB/s one way), the best mix (53 % reads) 33.5 GB/s.
THESIS_HMC_LINK_GBPS = {"read": 17.7, "write": 17.7, "mixed": 33.5}
# The paper's T4 (Fig 8): local full-width HMC against the 40 GB/s a link's quadrant (4 vaults of 10 GB/s)
# serves, per lane rate.
HMC_QUADRANT_GBPS = 40.0
PAPER_HMC_LOCAL_FW_SHARE = {15.0: 0.945, 12.5: 0.885, 10.0: 0.725}

# Our link's targets.
LOGIC_CYCLES_TARGET = 12                             # ReMAT + link logic of one 64 B remote read, cycles (issue 44)
PAYLOAD_UTILISATION_TARGET = {"seq": 0.90, "random": 0.85}   # 64 B accesses at 8 x 15 Gb/s
BER_TARGETS = {1e-9: 0.95, 1e-6: 0.80}               # bandwidth kept under errors at 36 m, vs error-free
SR_BER_TARGETS = {1e-6: 0.99, 1e-5: 0.97}            # the same with selective repeat, at 36 m and 100 m (issue 47)
STREAM_CACHED_TARGET = 0.50   # soft CPU's Triad over remote DDR4 at 8 m, cacheable window, of its local Triad
