"""Plotting: each figure is one small function fed by a results table."""
