"""Re-identification risk models (prosecutor, journalist, marketer), population uniqueness and
individual risk: estimated from class sizes, for a table or for every node of a lattice at once."""
