"""Diagnostics: the code table and the collector."""
