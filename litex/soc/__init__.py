"""MONet-open SoC assembly: the remote memory path and the board-free sim SoC."""
