"""The one Kafka broker of a test run (a real KRaft node on loopback), and a Spark session
that has Spark's Kafka connector. Without Java, the broker's jars or the connector, the tests
skip with the command that fetches what is missing (in CI they fail: CI must run them)."""

from __future__ import annotations

import os

import pytest


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def kafka_broker():  # type: ignore[no-untyped-def]
    from sjoin.jvm.jars import JarsUnavailable
    from sjoin.jvm.kafka_broker import BrokerError, KafkaBroker

    broker = KafkaBroker()
    try:
        broker.start()
    except JarsUnavailable as err:
        _unavailable(f"{err}; fetch them with: {err.command}")
    except BrokerError as err:
        broker.stop()
        pytest.fail(str(err))
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def kafka_spark(spark):  # type: ignore[no-untyped-def]
    """The run's Spark session, known to have the Kafka connector on its classpath."""
    from py4j.protocol import Py4JJavaError

    try:
        spark._jvm.java.lang.Class.forName(
            "org.apache.spark.sql.kafka010.KafkaSourceProvider",
            True,
            spark._jvm.Thread.currentThread().getContextClassLoader(),
        )
    except Py4JJavaError:
        import pyspark

        from sjoin.jvm.jars import JarsUnavailable, connector_jars

        try:
            connector_jars(pyspark.__version__, ["kafka"])
            reason = "it was fetched after the session started; run the tests again"
        except JarsUnavailable as err:
            reason = f"{err}; fetch it with: {err.command}"
        _unavailable(f"Spark's Kafka connector is not on the session's classpath: {reason}")
    return spark
