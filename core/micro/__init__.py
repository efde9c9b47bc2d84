"""Microaggregation (Soria-Comas's thesis, ch. 3-4): MDAV and its methods, information loss, linkage risk."""
