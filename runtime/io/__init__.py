"""What a run reads and writes: traces, Kafka, files, sinks, output lines, values."""
