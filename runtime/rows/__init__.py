"""The row storages under the cores: the reference engine."""
