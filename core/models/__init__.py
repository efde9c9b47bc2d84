"""Privacy models on a sensitive attribute beside k-anonymity: l-diversity and t-closeness."""
