"""The lowering's readings of Connect expressions that the job catalogue's jobs need
(tests/compiler/frontend/pyspark/jobs/, planned against their twins in test_jobs.py), on
hand-built Connect JSON."""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.compiler.frontend.pyspark.exprs import sql_text
from sjoin.compiler.frontend.pyspark.lower import _kafka_record, _value_names

KAFKA = {"read": {"is_streaming": True, "data_source": {"format": "kafka"}}}
FILES = {"read": {"is_streaming": True, "data_source": {"format": "json", "schema": "v STRING"}}}


def attr(name: str) -> dict[str, Any]:
    return {"unresolved_attribute": {"unparsed_identifier": name}}


def as_string(node: dict[str, Any]) -> dict[str, Any]:
    return {"cast": {"expr": node, "type_str": "string"}}


def named(node: dict[str, Any], name: str) -> dict[str, Any]:
    return {"alias": {"expr": node, "name": [name]}}


def text(expression: str) -> dict[str, Any]:
    return {"expression_string": {"expression": expression}}


@pytest.mark.parametrize(
    ("items", "names"),
    [
        ([text("CAST(value AS STRING) AS json")], {"json"}),
        ([text("CAST(key AS STRING)"), text("CAST(value AS STRING)")], {"value"}),
        ([text("cast(`value` as string) json")], {"json"}),
        ([named(as_string(attr("value")), "payload")], {"payload"}),
        ([as_string(attr("value"))], {"value"}),
        ([attr("value")], None),  # the value as bytes
        ([text("CAST(key AS STRING) AS k")], None),
    ],
)
def test_a_projection_before_from_json_names_the_kafka_value_as_a_string(
    items: list[dict[str, Any]], names: set[str] | None
) -> None:
    assert _value_names({"input": KAFKA, "expressions": items}) == names


def test_only_a_projection_of_a_kafka_read_casts_its_value() -> None:
    assert _value_names({"input": FILES, "expressions": [text("CAST(value AS STRING)")]}) is None


def test_a_struct_field_is_its_column_dot_the_field() -> None:
    field = {
        "unresolved_extract_value": {
            "child": attr("window"),
            "extraction": {"literal": {"string": "start"}},
        }
    }
    assert sql_text(field) == "window.start"
    end = {
        "unresolved_extract_value": {
            "child": attr("window"),
            "extraction": {"literal": {"string": "end"}},
        }
    }
    assert sql_text(end) == "window.end"  # the parser reads `end` after a dot as a name


def call(name: str, *args: dict[str, Any]) -> dict[str, Any]:
    return {"unresolved_function": {"function_name": name, "arguments": list(args)}}


# a Kafka sink's value as `sjoin compile` writes it: F.to_json(F.struct("*")).alias("value")
JSON_VALUE = named(call("to_json", call("struct", {"unresolved_star": {}})), "value")


@pytest.mark.parametrize(
    ("items", "key"),
    [
        ([named(as_string(attr("order_id")), "key"), JSON_VALUE], "order_id"),
        ([named(as_string(attr("`odd name`")), "key"), JSON_VALUE], "odd name"),
        ([JSON_VALUE], None),
    ],
)
def test_a_kafka_sink_s_json_record_is_the_spec_s_kafka_sink(
    items: list[dict[str, Any]], key: str | None
) -> None:
    """The relation under the select is what the sink writes; the key's column its `key`."""
    assert _kafka_record({"project": {"input": FILES, "expressions": items}}) == (FILES, key)


@pytest.mark.parametrize(
    "items",
    [
        [named(attr("order_id"), "key"), JSON_VALUE],  # a key not cast to text
        [named(as_string(attr("o.order_id")), "key"), JSON_VALUE],  # a qualified key
        [named(call("to_json", call("struct", attr("order_id"))), "value")],  # some columns
        [JSON_VALUE, named(as_string(attr("order_id")), "key")],  # value first
        [named(as_string(attr("order_id")), "key"), JSON_VALUE, attr("topic")],
        [text("to_json(struct(*)) AS payload")],
    ],
)
def test_any_other_select_of_a_kafka_sink_is_read_as_written(items: list[dict[str, Any]]) -> None:
    assert _kafka_record({"project": {"input": FILES, "expressions": items}}) is None
