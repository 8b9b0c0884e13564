"""Bound model to Plan: the planner and the Spark rules it ports; the Plan and its graph."""
