"""The Differential privacy tab: Laplace against the staircase noises, and what DP microdata costs."""
