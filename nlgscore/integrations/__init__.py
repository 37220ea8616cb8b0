"""Adapters over scores: datasets, the Trainer, TRL, lighteval, inspect-ai, Ray, Spark, Daft, Dask, NeMo Curator, RL rewards."""
