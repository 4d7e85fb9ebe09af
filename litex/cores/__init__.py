"""MONet-open gateware cores (Migen/LiteX): ReMAT, link, PHY models, memory card."""
