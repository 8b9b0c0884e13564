"""sjoin's version, in a module of its own: the back ends stamp it on what they write without
importing the package's API (`sjoin/__init__.py` names it lazily) or reading the installed
distribution's metadata (`importlib.metadata`: 10-20 ms of a cold `sjoin compile`)."""

__version__ = "0.1.0"  # pyproject.toml's [project] version; tests/test_layout.py holds them equal
