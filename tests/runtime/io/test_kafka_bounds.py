"""``--starting-offsets`` and the brokers of ``kafka://`` are bounded before they reach
``json`` or the Kafka client (issue 35, item 23): JSON nested 30,000 deep, a 5,000-digit
partition and 5,000 brokers (which aborted the process inside librdkafka) are clear usage
errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from sjoin.cli.main import main
from sjoin.runtime import UsageError
from sjoin.runtime.io.kafka_offsets import OffsetError, parse_starting
from sjoin.runtime.io.kafka_trace import MAX_BROKERS, check_servers, parse_url

SPEC = Path(__file__).resolve().parents[3] / "examples" / "ad_attribution.sjoin"


def cli(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stderr


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[" * 30_000 + "]" * 30_000, "nests 30,000 levels deep"),
        ('{"t": {"0": {"x": 1}}}', "nests 3 levels deep"),
        ('{"t": {"' + "9" * 5_000 + '": 1}}', "a partition is a number from 0 to 2147483647"),
        ('{"t": {"2147483648": 1}}', "a partition is a number from 0 to 2147483647"),
        ('{"t": {"0": 9223372036854775808}}', "at most 9223372036854775807"),
        ('{"t": {"0": ' + "9" * 5_000 + "}}", "must be earliest, latest or JSON"),
    ],
    ids=["30k deep", "3 deep", "5,000 digits", "past Int", "past Long", "5,000-digit offset"],
)
def test_starting_offsets_are_bounded(text: str, said: str) -> None:
    with pytest.raises(OffsetError, match=said) as caught:
        parse_starting(text, "--starting-offsets")
    assert len(str(caught.value)) < 400  # the text is not quoted whole


def test_the_largest_starting_offsets_still_read() -> None:
    assert parse_starting('{"t": {"2147483647": 9223372036854775807, "0": -2}}', "x") == {
        "t": {2147483647: 9223372036854775807, 0: -2}
    }


def test_brokers_are_bounded_before_the_client() -> None:
    many = "kafka://" + ",".join(f"h{i}:9092" for i in range(5_000))
    with pytest.raises(UsageError, match="names 5,000 brokers") as caught:
        parse_url(many)
    assert len(str(caught.value)) < 300
    with pytest.raises(UsageError, match="a broker address of 1,005 characters"):
        parse_url("kafka://" + "h" * 1_000 + ":9092")
    assert parse_url("kafka://" + ",".join(f"h{i}:9092" for i in range(MAX_BROKERS)))
    with pytest.raises(UsageError, match="bootstrap_servers names 101 brokers"):
        check_servers(",".join(["h:1"] * 101), "stream `s`: bootstrap_servers")


def test_a_replay_with_5000_brokers_is_a_usage_error() -> None:
    many = "kafka://" + ",".join(f"127.0.0.{i % 250}:{9000 + i}" for i in range(5_000))
    code, err = cli("run", SPEC, "--trace", many)
    assert code == 2 and "names 5,000 brokers" in err, err


def test_a_spec_naming_5000_brokers_is_refused_before_the_client(tmp_path: Path) -> None:
    """`--trace kafka://` reads the spec's own bootstrap_servers: bounded the same way."""
    many = ",".join(f"10.0.{i // 250}.{i % 250}:9092" for i in range(5_000))
    spec = tmp_path / "s.sjoin"
    spec.write_text(SPEC.read_text().replace("localhost:9092", many))
    code, err = cli("run", spec, "--trace", "kafka://")
    assert code == 2 and "bootstrap_servers names 5,000 brokers" in err, err
    assert len(err) < 2_000
