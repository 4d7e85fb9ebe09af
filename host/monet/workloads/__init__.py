"""The workloads the benchmarks run on a target's CPU: `stream` (our STREAM, built per target and parsed),
`ycsb` (YCSB's client against memcached, built with Maven) and `perf` (perf stat: cycles, instructions, IPC)."""
