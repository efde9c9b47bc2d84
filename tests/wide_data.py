"""The wide table of the scale-in-QIs benchmark and tests: the product's generator
(:mod:`microrelease.app.wide`, also the dashboard's ``--sample wide12``), imported so there is one copy."""

from microrelease.app.wide import ADULT_QI, SEED, VALUES, synthetic_hierarchy, wide_dataset, wide_table

__all__ = ["ADULT_QI", "SEED", "VALUES", "synthetic_hierarchy", "wide_dataset", "wide_table"]
