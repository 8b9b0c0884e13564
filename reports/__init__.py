"""What sjoin tells its user, made from the compiler's and the runtime's results: diagnostics
as text and JSON, a trace row's life (`sjoin why`), a run as an HTML page (`--report`), and
two specs' runs compared (`sjoin diff --trace`).  A library: the command, the API, the pytest
plugin and `verify` use it; it imports nothing of ``cli``."""
