"""Binder unit tests: names, aliases, output columns, event-time metadata and types."""

from __future__ import annotations

import pytest
from sqlglot import exp

from sjoin.api import check_text
from sjoin.compiler import types as t
from sjoin.compiler.bound import Aggregate, Join, Stream

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
        assert join.output[0].type == "TIMESTAMP"
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
