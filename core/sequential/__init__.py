"""Relational + sequential data (US patent 9,230,132; RT-anonymity): k-anonymize entities whose
records span a relational table and sequences of sequences (e.g. patients and their visits)."""
