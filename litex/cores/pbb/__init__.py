"""Programmable benchmark block."""
