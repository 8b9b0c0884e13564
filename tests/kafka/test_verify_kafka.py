"""`sjoin verify --kafka`: the job's own Kafka sources read through a real broker."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from sjoin.cli import main

ROOT = Path(__file__).resolve().parents[2]
SPEC = str(ROOT / "examples" / "unpaid_orders.sjoin")
TRACE = str(ROOT / "examples" / "unpaid_orders.trace.jsonl")


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--kafka", "nohost"], "HOST:PORT or `local`"),
        (["--kafka", "a b:1"], "HOST:PORT or `local`"),
        (["--kafka", "local", "--spark", "3.5"], "drop --spark/--python"),
    ],
)
def test_bad_kafka_options_are_usage_errors(extra: list[str], said: str) -> None:
    result = CliRunner().invoke(main, ["verify", SPEC, "--trace", TRACE, *extra])
    assert result.exit_code == 2, result.output
    assert said in result.output


@pytest.mark.spark
def test_verify_through_the_broker_agrees(kafka_broker, kafka_spark) -> None:  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(
        main, ["verify", SPEC, "--trace", TRACE, "--kafka", kafka_broker.bootstrap]
    )
    assert result.exit_code == 0, result.output
    assert "Spark and the runtime agree" in result.output
