"""What runs on a JVM: real Spark (``verify``, the test driver, another Spark version's
environment), Spark's Kafka and Delta connectors and a Kafka broker, fetched from Maven."""
