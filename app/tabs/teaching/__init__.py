"""The Teaching tab: Find_vector step by step, the outlier matrix VT, and why pairs of QIs are not enough."""
