"""A window-key join recomputes each side's time column without watermark metadata; an
Append aggregate over it that groups by a window of that column is refused with E023 (as
Spark refuses it: tests/integration/spark/test_window_key_time_on_spark.py), and the help says
why."""

from __future__ import annotations

from sjoin.api import check_text

SPEC = """spark 4.3
stream a (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds
stream b (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds
join j = a AS L INNER JOIN b AS R
  ON L.k = R.k AND window(L.t, INTERVAL 10 SECONDS) = window(R.t, INTERVAL 10 SECONDS)
  SELECT L.k AS k, L.t AS t, window(L.t, INTERVAL 10 SECONDS) AS w
aggregate g = j AS x GROUP BY x.k, {key}
  SELECT x.k AS k, count(*) AS n
  OUTPUT MODE append
"""


def test_a_window_of_the_joins_recomputed_time_is_refused_with_why() -> None:
    for key in ("window(x.t, INTERVAL 1 MINUTE)", "x.t"):
        result = check_text(SPEC.format(key=key), "g.sjoin")
        (error,) = [d for d in result.diagnostics if d.severity == "error"]
        assert error.code == "E023"
        assert error.help is not None and "`x.t` carries no watermark" in error.help


def test_the_joins_output_window_and_a_range_joins_time_are_accepted() -> None:
    assert check_text(SPEC.format(key="x.w"), "g.sjoin").ok
    range_join = SPEC.replace(
        "window(L.t, INTERVAL 10 SECONDS) = window(R.t, INTERVAL 10 SECONDS)",
        "L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t",
    ).replace(", window(L.t, INTERVAL 10 SECONDS) AS w", "")
    assert check_text(range_join.format(key="window(x.t, INTERVAL 1 MINUTE)"), "g.sjoin").ok
