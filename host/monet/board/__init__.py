"""The boards: `build` is `monet board build` (its command line, its manifest and monet-ctl for the compute
card's PS, around the SoC side's generation in monet.soc.board); `target` is the `board` target (Linux on the
compute card: the FPGA loaded, then the same workloads as every other target)."""
