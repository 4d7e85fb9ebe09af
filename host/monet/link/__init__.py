"""The link's physics on the host: `model` (lane rates, PHY and fiber latencies, their cost in cycles, the
latency breakdown), `reliability` (what a bit error rate costs go-back-N replay, the power budget) and
`profiles` (the link profiles and memory models a sim build runs at run time)."""
