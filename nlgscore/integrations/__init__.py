"""Adapters over scores for other frameworks: datasets, the Trainer, TRL, lighteval, inspect-ai, Ray, RL rewards."""
