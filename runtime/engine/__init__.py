"""Spark's algorithms written once, below both storages: the join and aggregate cores, the Spark
rules, watermarks, expression evaluation, a batch's rows, values."""
