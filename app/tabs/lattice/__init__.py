"""The Lattice tab: the lattice of distance vectors, drawn in layers by height, coloured by status."""
