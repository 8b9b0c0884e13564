"""Text to AST: the .sjoin parser and the pipeline SQL front end, the size limits, the cascades of
a broken statement."""
