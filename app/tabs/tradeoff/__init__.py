"""The Trade-off tab: two metrics of every satisfying node against each other, with the Pareto front."""
