"""Spark's analysis rules and sjoin's warnings, read from the Plan."""
