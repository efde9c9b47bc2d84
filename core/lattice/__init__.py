"""Samarati's k-anonymity by generalization and suppression (IEEE TKDE 2001)."""
