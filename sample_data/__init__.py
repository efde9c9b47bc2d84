"""Bundled sample data sets; see README.md in this folder for provenance and licences."""
