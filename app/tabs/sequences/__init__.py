"""The Sequences tab: patients and their visits anonymized over both parts, and the attack against k."""
