"""The `set` statement's settings: name, accepted values, default and the Spark conf each
one stands for.  One table, read by the binder (validation), the plan (values) and the
PySpark back end (conf keys)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class SettingSpec:
    name: str
    kind: str  # "choice", "positive_int", "bool" or "string"
    default: str | int | bool
    spark_conf: str | None
    doc: str
    choices: tuple[str, ...] = ()


SETTINGS: Final[dict[str, SettingSpec]] = {
    s.name: s
    for s in (
        SettingSpec(
            "multiple_watermark_policy",
            "choice",
            "min",
            "spark.sql.streaming.multipleWatermarkPolicy",
            "how the global watermark is chosen from the streams' watermarks",
            ("min", "max"),
        ),
        SettingSpec(
            "shuffle_partitions",
            "positive_int",
            200,
            "spark.sql.shuffle.partitions",
            "number of shuffle partitions, hence of state store instances per side",
        ),
        SettingSpec(
            "state_store",
            "choice",
            "hdfs",
            "spark.sql.streaming.stateStore.providerClass",
            "state store provider",
            ("hdfs", "rocksdb"),
        ),
        SettingSpec(
            "no_data_micro_batches",
            "bool",
            True,
            "spark.sql.streaming.noDataMicroBatches.enabled",
            "run no-data batches after a watermark advance (outer rows, eviction)",
        ),
        SettingSpec(
            "allow_multiple_stateful_operators",
            "bool",
            True,
            "spark.sql.streaming.statefulOperator.allowMultiple",
            "3.4+: separate late-row and eviction watermarks (false: one watermark)",
        ),
        SettingSpec(
            "correctness_check",
            "bool",
            True,
            "spark.sql.streaming.statefulOperator.checkCorrectness.enabled",
            "reject chains of stateful operators that can drop rows (else warn)",
        ),
        SettingSpec(
            "allow_unemitted_outer_rows",
            "bool",
            False,
            None,
            "accept an outer join whose unmatched rows of a side are never emitted (E028)",
        ),
        SettingSpec(
            "session_timezone",
            "string",
            "UTC",
            "spark.sql.session.timeZone",
            "session time zone of generated jobs",
        ),
        SettingSpec(
            "trigger",
            "string",
            "",
            None,
            "trigger of generated jobs: a duration such as '10 seconds', "
            "'available_now' or 'once' (default: as fast as possible)",
        ),
    )
}

STATE_STORE_PROVIDERS: Final = {
    "hdfs": "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider",
    "rocksdb": "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
}
