"""Rescale baselines shipped with nlgscore (data only; see README.md in this folder)."""
