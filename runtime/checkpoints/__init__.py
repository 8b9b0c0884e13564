"""Checkpoints: snapshots, their checks, recovery on restart."""
