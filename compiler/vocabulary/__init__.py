"""The vocabulary every stage speaks: source text and spans, SQL types, functions, expression walks
and annotations, Spark SQL and .sjoin text, Java's patterns, the model's enums, the settings'
table."""
