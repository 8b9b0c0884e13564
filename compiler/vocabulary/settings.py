"""The `set` statement's settings: name, accepted values, default and the Spark conf each
one stands for.  One table, read by the binder (validation), the plan (values) and the
PySpark back end (conf keys)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Final, get_args

from .model import Settings, SparkVersion, StateStoreName, WatermarkPolicy


@dataclass(frozen=True, slots=True)
class SettingSpec:
    name: str
    kind: str  # "choice", "positive_int", "bool" or "string"
    # the value a spec that leaves the setting alone plans with; None: the target version's
    # (``version_default``)
    default: str | int | bool | None
    spark_conf: str | None
    doc: str
    choices: tuple[str, ...] = ()
    # the job's results depend on the conf (else it changes only how state is laid out)
    changes_results: bool = False
    # recorded in the checkpoint's offset log at the first start, and wins over the
    # session's value at every restart (OffsetSeqMetadata.relevantSQLConfs)
    pinned_by_checkpoint: bool = False


SETTINGS: Final[dict[str, SettingSpec]] = {
    s.name: s
    for s in (
        SettingSpec(
            "multiple_watermark_policy",
            "choice",
            "min",
            "spark.sql.streaming.multipleWatermarkPolicy",
            "how the global watermark is chosen from the streams' watermarks",
            get_args(WatermarkPolicy),
            changes_results=True,
            pinned_by_checkpoint=True,
        ),
        SettingSpec(
            "shuffle_partitions",
            "positive_int",
            200,
            "spark.sql.shuffle.partitions",
            "number of shuffle partitions, hence of state store instances per side",
            pinned_by_checkpoint=True,
        ),
        SettingSpec(
            "state_store",
            "choice",
            "hdfs",
            "spark.sql.streaming.stateStore.providerClass",
            "state store provider",
            get_args(StateStoreName),
            pinned_by_checkpoint=True,
        ),
        SettingSpec(
            "no_data_micro_batches",
            "bool",
            True,
            "spark.sql.streaming.noDataMicroBatches.enabled",
            "run no-data batches after a watermark advance (outer rows, eviction)",
            changes_results=True,
        ),
        SettingSpec(
            "allow_multiple_stateful_operators",
            "bool",
            True,
            "spark.sql.streaming.statefulOperator.allowMultiple",
            "3.4+: separate late-row and eviction watermarks (false: one watermark)",
            changes_results=True,
        ),
        SettingSpec(
            "correctness_check",
            "bool",
            True,
            "spark.sql.streaming.statefulOperator.checkCorrectness.enabled",
            "reject chains of stateful operators that can drop rows (else warn)",
            changes_results=True,
        ),
        SettingSpec(
            "ansi_enabled",
            "bool",
            None,
            "spark.sql.ansi.enabled",
            "ANSI mode: an implicit cast that fails, an overflow or a division by zero fails "
            "the query (else NULL), and how a STRING meets a number (default: true on Spark "
            "4, false on Spark 3)",
            changes_results=True,
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
            changes_results=True,
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

if tuple(SETTINGS) != tuple(f.name for f in fields(Settings)):  # pragma: no cover
    raise ImportError("compiler.settings.SETTINGS and model.Settings name different settings")


def version_default(name: str, spark: SparkVersion) -> str | int | bool:
    """The value a spec that leaves ``name`` alone plans with on ``spark``: the table's
    default, or for ``ansi_enabled`` Spark's default for the version (spark.sql.ansi.enabled
    is true from Spark 4.0, SPARK-44444, false before)."""
    if name == "ansi_enabled":
        return spark.major >= 4
    default = SETTINGS[name].default
    assert default is not None, name
    return default


def settings_of(chosen: Mapping[str, str | int | bool], spark: SparkVersion) -> Settings:
    """Every setting's value: the ``chosen`` ones (the spec's `set` statements, already
    checked by the binder), the version's default for the rest (``version_default``);
    ValueError for an unknown name or a value the setting does not take."""
    unknown = sorted(set(chosen) - SETTINGS.keys())
    if unknown:
        raise ValueError("unknown settings: " + ", ".join(unknown))
    values: dict[str, Any] = {
        name: chosen[name] if name in chosen else version_default(name, spark) for name in SETTINGS
    }
    return Settings(**values)


STATE_STORE_PROVIDERS: Final = {
    "hdfs": "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider",
    "rocksdb": "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
}


def conf_value(name: str, value: str | int | bool) -> str:
    """A setting's value as its Spark conf's value."""
    if name == "state_store":
        return STATE_STORE_PROVIDERS[str(value)]
    return str(value).lower() if isinstance(value, bool) else str(value)


def job_conf(settings: Settings, chosen: Iterable[str]) -> dict[str, str]:
    """The Spark confs a generated job sets: those of the settings the spec sets
    (``chosen``), and no other, so that a cluster keeps its own tuning (partitions, state
    store provider) for everything the spec leaves alone."""
    return {
        spec.spark_conf: conf_value(name, settings.value(name))
        for name, spec in sorted(SETTINGS.items())
        if spec.spark_conf is not None and name in chosen
    }


def assumed_conf(settings: Settings, chosen: Iterable[str]) -> dict[str, tuple[str, str]]:
    """The confs the results depend on that the spec leaves to the cluster: conf -> (the
    value the plan was made for, the `set` statement that would pin it).  A generated job
    checks them at start and warns where the cluster's value differs."""
    taken = set(chosen)
    return {
        spec.spark_conf: (
            conf_value(name, settings.value(name)),
            f"set {name} = {setting_literal(name, settings.value(name))}",
        )
        for name, spec in sorted(SETTINGS.items())
        if spec.spark_conf is not None and spec.changes_results and name not in taken
    }


def own_settings(settings: Settings, chosen: Iterable[str]) -> tuple[str, ...]:
    """The `set` statements of the settings in ``chosen`` that are no Spark conf (sjoin's
    own: what no Spark conf of a pipeline can say)."""
    return tuple(
        f"set {name} = {setting_literal(name, settings.value(name))}"
        for name, spec in SETTINGS.items()
        if spec.spark_conf is None and name in set(chosen)
    )


def semantic_conf(settings: Settings) -> dict[str, str]:
    """Every conf the results depend on, at the value the plan was made for: what a
    verification run sets, so that Spark runs the plan sjoin explained."""
    return {
        spec.spark_conf: conf_value(name, settings.value(name))
        for name, spec in sorted(SETTINGS.items())
        if spec.spark_conf is not None and spec.changes_results
    }


def setting_literal(name: str, value: str | int | bool) -> str:
    """``value`` as a `set` statement writes it: quoted text for a string setting."""
    spec = SETTINGS[name]
    if isinstance(value, bool):
        return str(value).lower()
    if spec.kind == "string":
        return "'" + str(value).replace("'", "''") + "'"
    return str(value)
