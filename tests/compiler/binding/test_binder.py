"""Binder unit tests: names, aliases, output columns, event-time metadata and types."""

from __future__ import annotations

from typing import Any

import pytest
from sqlglot import exp

from sjoin.api import check_text
from sjoin.compiler.binding.bound import Aggregate, Join, Stream
from sjoin.compiler.vocabulary import types as t

STREAMS = (
    "stream a (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds\n"
    "stream b (k BIGINT, t TIMESTAMP, w DOUBLE) watermark t delay 10 seconds\n"
)


def bound(text: str):  # type: ignore[no-untyped-def]
    result = check_text(STREAMS + text, "t.sjoin")
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert not errors, [f"{d.code} {d.message}" for d in errors]
    assert result.bound is not None
    return result.bound


def codes(text: str) -> list[str]:
    return [d.code for d in check_text(STREAMS + text, "t.sjoin").diagnostics]


def test_streams_and_watermarks() -> None:
    spec = bound("")
    a = spec.relation("a")
    assert isinstance(a, Stream) and a.watermark is not None
    assert a.watermark.delay_ms == 10_000
    assert [c.event_time for c in a.columns] == [False, True, False]


def test_default_output_renames_shared_names() -> None:
    j = bound("join j = a AS x JOIN b AS y ON x.k = y.k AND x.t = y.t").relation("j")
    assert isinstance(j, Join)
    assert [c.name for c in j.columns] == ["x_k", "x_t", "v", "y_k", "y_t", "w"]


def test_semi_outputs_left_only() -> None:
    j = bound("join j = a LEFT SEMI JOIN b ON a.k = b.k AND a.t = b.t").relation("j")
    assert [c.name for c in j.columns] == ["k", "t", "v"]


def test_columns_are_qualified_and_annotated() -> None:
    j = bound(
        "join j = a AS x JOIN b AS y ON x.k = y.k AND v = 'z' AND w > 1 AND x.t = y.t"
    ).relation("j")
    cols = {(c.table, c.name, c.meta["side"]) for c in j.condition.find_all(exp.Column)}
    assert ("x", "v", "left") in cols  # the unqualified `v` resolved to the left side
    assert ("y", "w", "right") in cols


def test_relation_name_works_as_qualifier() -> None:
    bound("join j = a AS x JOIN b AS y ON a.k = b.k AND a.t = b.t")


def test_chain_uses_output_columns_and_keeps_event_time() -> None:
    spec = bound(
        "join j = a AS x JOIN b AS y ON x.k = y.k AND x.t = y.t SELECT x.k, x.t AS jt, y.w\n"
        "stream c (k BIGINT, t TIMESTAMP) watermark t delay 1 second\n"
        "join j2 = j JOIN c ON j.k = c.k AND j.jt = c.t\n"
    )
    j = spec.relation("j")
    assert isinstance(j, Join)
    assert [(c.name, c.event_time) for c in j.columns] == [("k", False), ("jt", True), ("w", False)]
    assert isinstance(spec.relation("j2"), Join)


def test_window_select_carries_event_time() -> None:
    spec = bound(
        "join j = a JOIN b ON a.k = b.k AND window(a.t, INTERVAL 10 SECONDS) = "
        "window(b.t, INTERVAL 10 SECONDS) SELECT a.k, window(a.t, INTERVAL 10 SECONDS) AS w\n"
    )
    j = spec.relation("j")
    assert isinstance(j, Join)
    assert [(c.name, str(c.type), c.event_time) for c in j.columns] == [
        ("k", "BIGINT", False),
        ("w", "WINDOW", True),
    ]


def test_aggregate_grouping_rules() -> None:
    spec = bound(
        "join j = a JOIN b ON a.k = b.k AND a.t = b.t SELECT a.k, a.t, b.w\n"
        "aggregate g = j GROUP BY j.k, window(j.t, INTERVAL 1 MINUTE) "
        "SELECT j.k, window(j.t, INTERVAL 1 MINUTE) AS win, count(*) AS n, avg(j.w) AS m\n"
    )
    g = spec.relation("g")
    assert isinstance(g, Aggregate)
    assert [str(c.type) for c in g.columns] == ["BIGINT", "WINDOW", "BIGINT", "DOUBLE"]
    assert g.mode == "append"


def test_types() -> None:
    j = bound(
        "join j = a JOIN b ON a.k = b.k AND a.t >= b.t - INTERVAL 5 SECONDS "
        "SELECT a.k + 1 AS k1, b.w * 2 AS w2, a.t + INTERVAL 1 HOUR AS later, "
        "a.t - b.t AS gap, lower(a.v) AS lv, CASE WHEN a.k > 1 THEN 'x' END AS c"
    ).relation("j")
    assert isinstance(j, Join)
    assert [c.type for c in j.columns] == [
        t.BIGINT,
        t.DOUBLE,
        t.TIMESTAMP,
        t.INTERVAL,
        t.STRING,
        t.STRING,
    ]


def test_errors_are_all_reported() -> None:
    found = codes(
        "join j = a JOIN b ON a.k = b.k AND a.t > 'yesterday' AND a.nope = 1 "
        "AND a.t + 1 > b.t AND x.k = 1\n"
        "join j = a JOIN c ON a.k = c.k\n"
        "set bogus = 1\nset shuffle_partitions = -3\n"
        "stream d (t STRING) watermark t delay 1 month\n"
    )
    for code in ("E011", "E004", "E012", "E005", "E002", "E003", "E015", "E010", "E013"):
        assert code in found, (code, found)


def test_ambiguous_column() -> None:
    assert "E006" in codes("join j = a JOIN b ON k = k")


def test_unknown_relation_does_not_cascade() -> None:
    found = codes("join j = a JOIN nope ON a.k = nope.k\nsink j to console\n")
    assert found.count("E003") == 1


FUNCTION_SPEC = (
    "stream a (k INT, t TIMESTAMP, s STRING) watermark t delay 1 second\n"
    "stream b (k INT, t TIMESTAMP, s STRING) watermark t delay 1 second\n"
    "join j = a INNER JOIN b ON a.k = b.k SELECT {} AS out\n"
)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("date_format(a.t, 'yyyy-ww')", "pattern letter `w` is not supported"),
        ("date_format(a.t, 'u')", "pattern letter `u` is not supported"),
        ("date_format(a.t, 'dddd')", "too many pattern letters"),
        ("date_format(a.t, 'HH''''mm')", ""),  # '' in the pattern is one quote
        ("date_format(a.t, a.s)", "argument 2 must be a string literal"),
        ("date_format(a.t, 'yyyy [x]')", "reserved in datetime patterns"),
        ("date_format(a.t, 'yyyy ''open')", "never closed"),
        ("split(a.s, '(')", "invalid regular expression"),
        ("split(a.s, '\\p{Alpha}')", "Unicode classes"),
        ("regexp_extract(a.s, '(x)(y)', 3)", "the pattern has 2 group(s)"),
        ("regexp_replace(a.s, '(x)', '$2')", "no group 2"),
        ("regexp_replace(a.s, 'x', 'a$')", "illegal group reference"),
        ("regexp_replace(a.s, 'x', '${name}')", "named group references"),
        ("element_at(a.s, 1)", "argument 1 must be array"),
        ("lpad(a.t, 3)", "argument 1 must be text"),
        ("exp(a.k)", "Spark's `exp` is not supported by sjoin"),
        ("size(split(a.s, ','))", "Spark's `size` is not supported"),
    ],
)
def test_function_arguments_are_checked_when_the_spec_is_read(
    expression: str, message: str
) -> None:
    result = check_text(FUNCTION_SPEC.format(expression))
    errors = [f"{d.code} {d.message}" for d in result.diagnostics if d.severity == "error"]
    if not message:
        assert errors == []
    else:
        assert len(errors) == 1 and message in errors[0], errors


def test_the_unsupported_function_message_says_why() -> None:
    result = check_text(FUNCTION_SPEC.format("pow(a.k, 2)"))
    (error,) = [d for d in result.diagnostics if d.code == "E017"]
    assert "StrictMath" in (error.help or "") and "date_format" in (error.help or "")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("window(a.t, INTERVAL 1 MINUTE).start", ""),
        ("window(a.t, INTERVAL 1 MINUTE).`end`", ""),
        ("window(a.t, INTERVAL 1 MINUTE).END", ""),
        ("window(a.t, INTERVAL 1 MINUTE).middle", "`.middle` is not a field of WINDOW"),
        ("lower(a.s).start", "`.start` is not a field of STRING"),
        (
            "window(a.t, INTERVAL 1 MINUTE, INTERVAL 30 SECONDS).start",
            "a sliding window has several windows per row",
        ),
    ],
)
def test_window_fields(expression: str, message: str) -> None:
    result = check_text(FUNCTION_SPEC.format(expression))
    errors = [f"{d.code} {d.message}" for d in result.diagnostics if d.severity == "error"]
    if not message:
        assert errors == []
        assert result.plan is not None
        (join,) = result.plan.joins
        assert join.output[0].type == t.TIMESTAMP
    else:
        assert len(errors) == 1 and message in errors[0], errors


def test_a_kafka_sink_key_must_be_a_column_of_the_relation() -> None:
    from sjoin.api import check_text

    spec = """
stream a (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
join j = a AS x INNER JOIN b AS y ON x.k = y.k AND x.t = y.t SELECT x.k AS id, x.t
sink j to kafka (topic = 'o', bootstrap_servers = 'h:1', key = '{key}')
"""
    assert check_text(spec.format(key="id")).ok
    bad = check_text(spec.format(key="ids"))
    (d,) = [d for d in bad.diagnostics if d.severity == "error"]
    assert d.code == "E024" and "`ids` is not a column of `j`" in d.message
    assert d.help is not None and "id" in d.help


RECORD_SPEC = """
stream a (k BIGINT, t TIMESTAMP, u STRING, n BIGINT) watermark t delay 1 minute
from {fmt} ({where})
stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
join j = a AS x INNER JOIN b AS y ON x.k = y.k AND x.t = y.t
{sink}"""
KAFKA_AT = "topic = 'a', bootstrap_servers = 'h:1'"


def _record_check(options: str, fmt: str = "kafka", sink: str = "") -> Any:
    from sjoin.api import check_text

    where = ", ".join(filter(None, [KAFKA_AT if fmt == "kafka" else "path = 'p'", options]))
    return check_text(RECORD_SPEC.format(fmt=fmt, where=where, sink=sink))


def test_a_kafka_source_reads_columns_from_the_record() -> None:
    result = _record_check("timestamp_column = 't', key_column = 'u', format = 'csv'")
    assert result.ok and result.plan is not None
    (a, _) = result.plan.streams
    assert a.source is not None
    assert a.source.record_columns() == {"t": "timestamp", "u": "key"}
    # the options stay in the source's options, as the plan JSON shows them
    assert a.source.option("timestamp_column") == "t"
    from sjoin.compiler.describe.explain import plan_json

    (stream, _) = plan_json(result.plan, [])["streams"]
    assert stream["source"] == {
        "format": "kafka",
        "options": {
            "topic": "a",
            "bootstrap_servers": "h:1",
            "timestamp_column": "t",
            "key_column": "u",
            "format": "csv",
        },
    }


@pytest.mark.parametrize(
    ("options", "fmt", "sink", "message", "help", "at"),
    [
        # not a column, with a did-you-mean; empty
        ("timestamp_column = 'tt'", "kafka", "", "`timestamp_column` names `tt`, which is "
         "not a column of `a`", "did you mean `t`?", "'tt'"),
        ("key_column = 'uu'", "kafka", "", "`key_column` names `uu`", "did you mean `u`?", "'uu'"),
        ("key_column = 'zzz'", "kafka", "", "not a column of `a`", "columns: k, t, u, n",
         "'zzz'"),
        ("timestamp_column = ''", "kafka", "", "`timestamp_column` is empty", "columns:", "''"),
        # the wrong type
        ("timestamp_column = 'n'", "kafka", "", "`n`, which is BIGINT: the record's timestamp "
         "is read as TIMESTAMP", "declare `n` as TIMESTAMP", "'n'"),
        ("key_column = 'k'", "kafka", "", "`k`, which is BIGINT: the record's key is read as "
         "STRING", "declare `k` as STRING", "'k'"),
        ("key_column = 't'", "kafka", "", "which is TIMESTAMP", "as STRING", "'t'"),
        # not a Kafka source
        ("timestamp_column = 't'", "json", "", "a `json` source has no Kafka records",
         "read the stream `from kafka`", "timestamp_column"),
        ("key_column = 'u'", "parquet", "", "a `parquet` source has no Kafka records",
         "remove the option", "key_column"),
        # sjoin's own option names in another case: Spark would take them as its own
        ("Timestamp_Column = 't'", "kafka", "", "`Timestamp_Column` is not an option of a "
         "`kafka` source", "did you mean `timestamp_column`?", "Timestamp_Column"),
        ("KEY_COLUMN = 'u'", "kafka", "", "`KEY_COLUMN` is not an option", "`key_column`",
         "KEY_COLUMN"),
        ("FORMAT = 'csv'", "kafka", "", "`FORMAT` is not an option", "`format`", "FORMAT"),
        ("Key_Column = 'u'", "json", "", "`Key_Column` is not an option of a `json` source",
         "`key_column`", "Key_Column"),
        # on a sink: a source's option
        ("", "kafka", "sink j to kafka (topic = 'o', bootstrap_servers = 'h:1', "
         "key_column = 'k')", "`key_column` is an option of a Kafka source, not of a `kafka` "
         "sink", "key = 'COLUMN'", "key_column"),
        ("", "kafka", "sink j to kafka (topic = 'o', bootstrap_servers = 'h:1', "
         "timestamp_column = 't')", "not of a `kafka` sink", "stamps each record with the "
         "time it is written", "timestamp_column"),
        ("", "kafka", "sink j to parquet (path = 'o', Timestamp_Column = 't')", "not of a "
         "`parquet` sink", "remove the option", "Timestamp_Column"),
    ],
)  # fmt: skip
def test_columns_from_the_record_are_checked(
    options: str, fmt: str, sink: str, message: str, help: str, at: str
) -> None:
    result = _record_check(options, fmt, sink)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert len(errors) == 1, [d.message for d in errors]
    (d,) = errors
    assert d.code == "E024" and message in d.message, d.message
    assert d.help is not None and help in d.help, d.help
    assert result.source.text[d.span.start : d.span.end] == at


def test_a_column_of_an_unknown_type_gives_one_error_only() -> None:
    from sjoin.api import check_text

    where = KAFKA_AT + ", timestamp_column = 'u'"
    text = RECORD_SPEC.format(fmt="kafka", where=where, sink="").replace("u STRING", "u STRNG")
    assert [d.code for d in check_text(text).diagnostics if d.severity == "error"] == ["E007"]


def test_spark_spellings_of_kafka_options_bind_as_sjoin_names_them() -> None:
    """`subscribe` and `kafka.bootstrap.servers` are the options sjoin calls `topic` and
    `bootstrap_servers`: a job read back and its .sjoin twin plan alike."""

    def source(options: str) -> Any:
        spec = (
            "stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 minute\n"
            f"from kafka ({options}, format = 'json')\n"
            "sink s to kafka (`kafka.bootstrap.servers` = 'h:1', topic = 'out')\n"
        )
        result = check_text(spec, "t.sjoin")
        assert not [d for d in result.diagnostics if d.severity == "error"]
        assert result.plan is not None
        read, written = result.plan.streams[0].source, result.plan.sinks[0].target
        assert read is not None
        return (read.format, read.options), (written.format, written.options)

    spark = source("`kafka.bootstrap.servers` = 'h:1', subscribe = 'a,b'")
    sjoin = source("bootstrap_servers = 'h:1', topic = 'a,b'")
    assert spark == sjoin
    assert dict(spark[0][1]) == {"bootstrap_servers": "h:1", "topic": "a,b", "format": "json"}
    assert dict(spark[1][1]) == {"bootstrap_servers": "h:1", "topic": "out"}
