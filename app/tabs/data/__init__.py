"""The Data tab: a bundled sample or an uploaded CSV, column roles, one hierarchy per QI, then the run."""
