"""`python -m sjoin ...` is the `sjoin` command."""

from .cli.main import main

main()
