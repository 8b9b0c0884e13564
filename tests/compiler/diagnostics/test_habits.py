"""Help for habits from other engines (issue 35, item 7): the rewrite a help proposes is a
spec that `check` accepts, so a user can paste it."""

from __future__ import annotations

import re

from sjoin.api import check_text

FLINK = """CREATE TABLE orders (
  order_id BIGINT,
  amount DECIMAL(10, 2),
  order_time TIMESTAMP(3),
  PRIMARY KEY (order_id) NOT ENFORCED,
  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'properties.bootstrap.servers' = 'h:9092',
        'format' = 'json');
"""


def _help(text: str) -> str:
    (error,) = [d for d in check_text(text, "s.sjoin").diagnostics if d.severity == "error"]
    assert error.code == "E001" and error.help, error
    return error.help


def test_flinks_create_table_is_rewritten_as_a_stream_that_checks() -> None:
    for text in (FLINK, "spark 4.3\n\n" + FLINK, FLINK.replace("WITH (", "WITH (\n")):
        found = re.search(r"`(stream .*)`$", _help(text))
        assert found is not None, _help(text)
        rewrite = found[1]
        assert "watermark order_time delay 5 seconds" in rewrite
        assert "from kafka (topic = 'orders', bootstrap_servers = 'h:9092'" in rewrite
        assert check_text(rewrite + "\n", "r.sjoin").ok, rewrite


def test_a_table_too_complex_to_rewrite_gets_the_form() -> None:
    computed = FLINK.replace("  amount DECIMAL(10, 2),\n", "  cost AS amount * 2,\n")
    assert "`stream s (..., t TIMESTAMP) watermark t delay 5 seconds" in _help(computed)


def test_a_trailing_semicolon_says_to_remove_it() -> None:
    text = "stream s (k BIGINT, t TIMESTAMP) watermark t delay 5 seconds;\n"
    assert _help(text).startswith("remove the `;`")
