"""Generated jobs on real local Spark: build() runs for every example, the rows come out, and
the executed plan carries the state cleanup the planner predicted."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from sjoin.api import check_file, check_text
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.planning.plan import Plan
from sjoin.jvm.spark_driver import StreamDriver, parse_join_plan

from ...conftest import ROOT

pytestmark = pytest.mark.spark


def load_job(plan: Plan, tmp_path: Path, name: str) -> ModuleType:
    path = tmp_path / f"{name}_job.py"
    path.write_text(compile_pyspark(plan, name))
    spec = importlib.util.spec_from_file_location(f"{name}_job", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def t(hms: str) -> str:
    return f"2026-01-01T{hms}Z"


# example -> (relation to read, batches, a projection of each output row, expected multiset)
SCENARIOS: dict[
    str, tuple[str, list[dict[str, list[dict[str, Any]]]], tuple[str, ...], list[tuple[Any, ...]]]
] = {
    "ad_attribution": (
        "attributed",
        [
            {
                "impressions": [
                    {"ad_id": 1, "impression_time": t("10:00:00"), "campaign": "a"},
                    {"ad_id": 2, "impression_time": t("10:00:00"), "campaign": "internal"},
                    {"ad_id": 3, "impression_time": t("10:00:00"), "campaign": "b"},
                ],
                "clicks": [{"ad_id": 1, "click_time": t("10:30:00"), "user_id": "u1"}],
            },
            {
                "impressions": [{"ad_id": 9, "impression_time": t("16:00:00"), "campaign": "z"}],
                "clicks": [{"ad_id": 9, "click_time": t("16:00:00"), "user_id": "u9"}],
            },
        ],
        ("ad_id", "campaign", "user_id"),
        # 1 matched; 2 fails the pre-join filter (null-padded at once); 3 evicted unmatched
        # once the watermark (min(14:00, 13:00) = 13:00) passes 10:00 + 1 h 1 ms; 9 matched.
        [(1, "a", "u1"), (2, "internal", None), (3, "b", None), (9, "z", "u9")],
    ),
    "iot_window_join": (
        "climate",
        [
            {
                "temperature": [
                    {"device_id": "d1", "reading_time": t("00:00:03"), "celsius": 20.5},
                    {"device_id": "d2", "reading_time": t("00:00:04"), "celsius": 7.0},
                ],
                "humidity": [
                    {"device_id": "d1", "reading_time": t("00:00:07"), "percent": 55.0},
                    {"device_id": "d2", "reading_time": t("00:00:12"), "percent": 80.0},
                ],
            },
        ],
        ("device_id", "celsius", "percent"),
        [("d1", 20.5, 55.0)],  # d2's readings fall in different windows
    ),
    "unpaid_orders": (
        "unpaid",
        [
            {
                "orders": [
                    {
                        "order_id": 1,
                        "customer_id": 7,
                        "amount": "10.00",
                        "order_time": t("10:00:00"),
                    },
                    {
                        "order_id": 2,
                        "customer_id": 8,
                        "amount": "20.00",
                        "order_time": t("10:00:00"),
                    },
                ],
                "payments": [{"order_id": 1, "payment_time": t("10:05:00"), "method": "card"}],
            },
            {
                "orders": [
                    {"order_id": 3, "customer_id": 9, "amount": "5.00", "order_time": t("11:00:00")}
                ],
                "payments": [{"order_id": 99, "payment_time": t("11:00:00"), "method": "cash"}],
            },
        ],
        ("order_id", "customer_id"),
        [(2, 8)],  # order 1 was paid; order 3 is still within its 15 minutes
    ),
    "checkout_funnel": (
        "revenue",
        [
            {
                "impressions": [
                    {"ad_id": 1, "campaign": "spring", "impression_time": t("10:00:00")}
                ],
                "clicks": [{"ad_id": 1, "click_id": "k1", "click_time": t("10:05:00")}],
                "purchases": [{"click_id": "k1", "amount": 9.5, "purchase_time": t("10:20:00")}],
            },
            {
                "impressions": [{"ad_id": 5, "campaign": "x", "impression_time": t("13:00:00")}],
                "clicks": [{"ad_id": 5, "click_id": "k5", "click_time": t("13:00:00")}],
                "purchases": [{"click_id": "k5", "amount": 1.0, "purchase_time": t("13:00:00")}],
            },
        ],
        ("campaign", "purchases", "revenue"),
        [("spring", 1, 9.5)],
    ),
    "ride_matching": (
        "matched",
        [
            {
                "requests": [
                    {
                        "zone": "z1",
                        "request_id": "r1",
                        "rider_id": "a",
                        "request_time": t("10:00:00"),
                    },
                    {
                        "zone": "z1",
                        "request_id": "r2",
                        "rider_id": "b",
                        "request_time": t("10:00:00"),
                    },
                ],
                "offers": [
                    {
                        "zone": "z1",
                        "request_id": "r1",
                        "driver_id": "d1",
                        "offer_time": t("10:01:00"),
                    },
                    {
                        "zone": "z1",
                        "request_id": "rX",
                        "driver_id": "d9",
                        "offer_time": t("10:00:30"),
                    },
                ],
            },
            {
                "requests": [
                    {
                        "zone": "z2",
                        "request_id": "r7",
                        "rider_id": "c",
                        "request_time": t("11:00:00"),
                    }
                ],
                "offers": [
                    {
                        "zone": "z2",
                        "request_id": "r8",
                        "driver_id": "d7",
                        "offer_time": t("11:00:00"),
                    }
                ],
            },
        ],
        ("r_request_id", "o_request_id", "driver_id"),
        [("r1", "r1", "d1"), ("r2", None, None), (None, "rX", "d9")],
    ),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_example_job_on_spark(spark: Any, name: str, tmp_path: Path) -> None:
    result = check_file(ROOT / "examples" / f"{name}.sjoin")
    assert result.plan is not None
    job = load_job(result.plan, tmp_path, name)
    relation, batches, fields, expected = SCENARIOS[name]
    modes = {a.name: a.mode for a in result.plan.aggregates}
    with StreamDriver(spark, job.SCHEMAS) as driver:
        rels = job.build(spark, driver.inputs)
        driver.start(rels[relation], output_mode=modes.get(relation, "append"))
        for batch in batches:
            driver.feed(batch)
        rows = [tuple(r.get(f) for f in fields) for b in driver.results() for r in b.rows]
        plan_text = driver.executed_plan()
    got = Counter(tuple(float(v) if hasattr(v, "as_tuple") else v for v in r) for r in rows)
    assert got == Counter(expected)
    _assert_state_cleanup(result.plan, plan_text)


def _assert_state_cleanup(plan: Plan, plan_text: str) -> None:
    """Spark's `state cleanup [...]` and condition split of each join equal the plan's."""
    nodes = parse_join_plan(plan_text)
    joins = list(reversed(plan.joins))  # the executed plan lists the last join first
    assert len(nodes) == len(joins)
    for node, join in zip(nodes, joins, strict=True):
        split = node["condition"]
        assert (split["leftOnly"] is None) == (join.left.pre_join_filter is None), split
        assert (split["rightOnly"] is None) == (join.right.pre_join_filter is None), split
        assert (split["both"] is None) == (join.post_join_filter is None), split
        watermark = node["eviction_watermark_ms"]
        for side in (join.left, join.right):
            found = node["state_cleanup"][side.name]
            if side.state.eviction == "never":
                assert found is None, (join.name, side.name, found)
            else:
                assert found is not None, (join.name, side.name)
                assert found["kind"] == side.state.eviction
                assert found["value_ms"] == side.state.state_watermark(watermark), (
                    join.name,
                    side.name,
                    found,
                    watermark,
                )


def test_left_anti_matched_row_with_null_values_is_not_unmatched(
    spark: Any, tmp_path: Path
) -> None:
    """The anti filter reads a right-side marker, not the (nullable) right columns."""
    spec = (
        "stream o (id BIGINT, t TIMESTAMP) watermark t delay 1 second\n"
        "stream p (id BIGINT, t TIMESTAMP, note STRING) watermark t delay 1 second\n"
        "join unpaid = o LEFT ANTI JOIN p ON o.id = p.id AND p.t >= o.t "
        "AND p.t <= o.t + INTERVAL 10 SECONDS\n"
    )
    result = check_text(spec)
    assert result.ok and result.plan is not None
    job = load_job(result.plan, tmp_path, "anti")
    with StreamDriver(spark, job.SCHEMAS) as driver:
        rels = job.build(spark, driver.inputs)
        driver.start(rels["unpaid"])
        driver.feed(
            {
                "o": [{"id": 1, "t": t("00:00:00")}, {"id": 2, "t": t("00:00:00")}],
                "p": [{"id": 1, "t": t("00:00:05"), "note": None}],
            }
        )
        driver.feed(
            {
                "o": [{"id": 3, "t": t("00:01:00")}],
                "p": [{"id": 3, "t": t("00:01:00"), "note": "x"}],
            }
        )
        ids = sorted(r["id"] for b in driver.results() for r in b.rows)
    assert ids == [2]


def test_job_runs_with_spark_submit_style_main(spark: Any, tmp_path: Path) -> None:
    """`python job.py` with json file sources and a parquet sink runs to completion on a
    bounded input (trigger available_now) and writes the expected rows."""
    for stream in ("temperature", "humidity"):
        (tmp_path / "in" / stream).mkdir(parents=True)
    rows = {
        "temperature": [{"device_id": "d1", "reading_time": t("00:00:03"), "celsius": 20.5}],
        "humidity": [{"device_id": "d1", "reading_time": t("00:00:07"), "percent": 55.0}],
    }
    for stream, items in rows.items():
        (tmp_path / "in" / stream / "part-0.json").write_text(
            "\n".join(json.dumps(r) for r in items) + "\n"
        )
    spec = (ROOT / "examples" / "iot_window_join.sjoin").read_text()
    spec = spec.replace(
        "set state_store = rocksdb", "set state_store = rocksdb\nset trigger = available_now"
    )
    result = check_text(spec, "iot.sjoin")
    assert result.ok and result.plan is not None
    (tmp_path / "job.py").write_text(compile_pyspark(result.plan, "iot.sjoin"))
    done = subprocess.run(
        [sys.executable, "job.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "sjoin: warning" not in done.stderr  # Spark's defaults are the values planned for
    out = spark.read.parquet(str(tmp_path / "out" / "climate")).collect()
    assert [(r.device_id, r.celsius, r.percent) for r in out] == [("d1", 20.5, 55.0)]


# Column, relation and alias names that Spark's DataFrame API would read as paths (`x.y`),
# stars (`*`, `a.*`) or quoted parts (a back-quote), in every place a name reaches the job:
# stream schemas, watermark columns, join keys (window keys: F.window on the time column),
# conditions, SELECT items, aggregate keys and items, LEFT ANTI's marker (F.col on alias.name).
PATH_NAMES_SPEC = """spark 4.3
stream `s.a` (`x.y` BIGINT, `*` STRING, `t.s` TIMESTAMP, `a.*` BIGINT)
    watermark `t.s` delay 1 second
stream `s b` (`x.y` BIGINT, ` q` STRING, `a``b` TIMESTAMP)
    watermark `a``b` delay 1 second
join `j.k` = `s.a` AS `l.x` INNER JOIN `s b` AS `r``y`
    ON `l.x`.`x.y` = `r``y`.`x.y`
    AND window(`l.x`.`t.s`, INTERVAL 10 SECONDS) = window(`r``y`.`a``b`, INTERVAL 10 SECONDS)
    AND `l.x`.`*` <> 'no'
    SELECT `l.x`.`x.y` AS `k.k`, `l.x`.`*` AS `*`, `r``y`.` q` AS `.q.`,
        window(`l.x`.`t.s`, INTERVAL 10 SECONDS) AS `w.*`, `l.x`.`a.*` AS `a.*`
aggregate `g.g` = `j.k` AS `c.c`
    GROUP BY `c.c`.`k.k`, `c.c`.`w.*`
    SELECT `c.c`.`k.k` AS `k.k`, `c.c`.`w.*` AS `w.w`, count(*) AS `n*`, max(`c.c`.`a.*`) AS `x.`
    OUTPUT MODE append
join `u.*` = `s.a` AS `l.x` LEFT ANTI JOIN `s b` AS `r.y`
    ON `l.x`.`x.y` = `r.y`.`x.y`
    AND `r.y`.`a``b` BETWEEN `l.x`.`t.s` AND `l.x`.`t.s` + INTERVAL 5 SECONDS
"""


def path_names_trace() -> list[dict[str, Any]]:
    def at(second: int) -> str:
        return f"2026-01-01T00:00:{second:02}Z"

    left = [(0, 1, "a", 1, 10), (0, 2, "no", 2, 20), (0, 3, "c", 3, 30), (1, 4, "d", 12, 40)]
    right = [(0, 1, "p", 3), (0, 2, "q", 2), (0, 9, "z", 5), (1, 4, "r", 15)]
    left.append((2, 5, "e", 40, 50))
    right.append((2, 5, "s", 50))
    rows = [
        {"batch": b, "stream": "s.a", "row": {"x.y": k, "*": s, "t.s": at(t), "a.*": v}}
        for b, k, s, t, v in left
    ] + [
        {"batch": b, "stream": "s b", "row": {"x.y": k, " q": q, "a`b": at(t)}}
        for b, k, q, t in right
    ]
    return sorted(rows, key=lambda r: r["batch"])


def test_names_spark_reads_as_paths_run_as_the_runtime_runs(spark: Any) -> None:
    """The generated job quotes every column reference the DataFrame API parses
    (``pytext.column_ref``): on real Spark it resolves each name as written and agrees with
    the runtime batch by batch (rows, watermark, state metrics, state cleanup)."""
    from sjoin.jvm.verify import verify_spec

    result = check_text(PATH_NAMES_SPEC, "paths.sjoin")
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    code = compile_pyspark(result.plan, "paths.sjoin")
    assert '.select("`x.y`", "`*`", "`t.s`", "`a.*`")' in code
    assert '.withWatermark("`t.s`", "1 second")' in code
    report = verify_spec(result, path_names_trace(), spark=spark)
    assert [q.relation for q in report.queries] == ["g.g", "u.*"]
    assert report.agree, "\n" + report.text()
    assert {q.relation: q.rows for q in report.queries} == {"g.g": 2, "u.*": 1}
    assert all(len(q.state_cleanup) == 2 for q in report.queries)


def test_check_conf_reads_sparks_own_conf_values(
    spark: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The job's start-up check compares ASSUMED_CONF with what Spark itself reports: silent
    at the values planned for, one warning for a policy the cluster sets otherwise."""
    result = check_text((ROOT / "examples" / "ride_matching.sjoin").read_text(), "r.sjoin")
    assert result.ok and result.plan is not None
    text = compile_pyspark(result.plan, "r.sjoin")
    job: dict[str, Any] = {}
    exec(compile(text, "job.py", "exec"), job)
    key = "spark.sql.streaming.noDataMicroBatches.enabled"
    before = spark.conf.get(key)
    job["check_conf"](spark)
    assert capsys.readouterr().err == ""
    spark.conf.set(key, "false")
    try:
        job["check_conf"](spark)
    finally:
        spark.conf.set(key, before)
    err = capsys.readouterr().err
    assert f"{key} is 'false' on this cluster" in err
    assert "`set no_data_micro_batches = true`" in err
