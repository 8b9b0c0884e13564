"""The `sjoin` command: its commands (``main``: options in, the API called, results out),
how it prints (``printer``, the run's tables), `sjoin why`'s ROW argument and the scaffold of
``sjoin init``.  What the commands tell is made in ``reports/``; nothing outside this folder
imports it."""
