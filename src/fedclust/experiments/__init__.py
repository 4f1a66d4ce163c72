"""Experiment runners: the logic behind each pipeline rule, importable and tested."""
