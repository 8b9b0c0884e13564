"""Opt-in observers of a run: `sjoin why`'s lineage."""
