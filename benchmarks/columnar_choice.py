"""Which columnar library the columnar runtime is built on: the same probe on polars, pyarrow
(compute) and DuckDB, plus each library's cold import, on the benchmark's shape.

One probe is what the columnar join does per batch and side: equi-join a batch of N rows
against a state of 3N rows on the key, keep the pairs inside the time range (two bound
columns), set the matched flags of the state rows and of the batch rows, evict the state rows
at or below a threshold, and build the output columns (k, lt, rt, lv, rv) in probe order.

    .venv/bin/python benchmarks/columnar_choice.py [--n 100000] [--repeat 5]

Prints one line per library: import ms (new process), probe ms (best of --repeat) and output
rows, which must agree.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import count

KEYS = 10_000
SPAN_US = 10_000_000
LOWER_US, UPPER_US = -5_000_000, 10_000_000  # L.t BETWEEN R.t - 5 s AND R.t + 10 s


def data(n: int, seed: int = 7) -> dict[str, dict[str, list[Any]]]:
    rng = random.Random(seed)

    def side(rows: int, base: int, prefix: str) -> dict[str, list[Any]]:
        return {
            "k": [rng.randint(1, KEYS) for _ in range(rows)],
            "t": [base + rng.randrange(SPAN_US // 1000) * 1000 for _ in range(rows)],
            "v": [f"{prefix}{i}" for i in range(rows)],
        }

    # state: three batches of older right rows; batch: N new left rows
    state = side(3 * n, -2 * SPAN_US, "r")
    state["t"] = [t + rng.randrange(3) * SPAN_US for t in state["t"]]
    return {"state": state, "batch": side(n, SPAN_US, "l")}


def polars_probe(d: dict[str, dict[str, list[Any]]]) -> Callable[[], int]:
    import polars as pl

    state = pl.DataFrame(d["state"]).with_columns(
        pl.int_range(pl.len(), dtype=pl.Int64).alias("_id"), pl.lit(False).alias("_m")
    )
    batch = pl.DataFrame(d["batch"]).with_columns(
        pl.int_range(pl.len(), dtype=pl.Int64).alias("_p")
    )
    threshold = -SPAN_US

    def probe() -> int:
        pairs = batch.join(state, on="k", how="inner", suffix="_r").filter(
            pl.col("t_r").is_between(pl.col("t") - UPPER_US, pl.col("t") - LOWER_US)
        )
        pairs = pairs.sort(["_p", "_id"])
        hit_ids = pairs.get_column("_id").unique()
        flags = state.with_columns(pl.col("_m") | pl.col("_id").is_in(hit_ids.implode()))
        batch_matched = batch.get_column("_p").is_in(pairs.get_column("_p").unique().implode())
        kept = flags.filter(pl.col("t") > threshold)
        out = pairs.select(
            pl.col("k"),
            pl.col("t").alias("lt"),
            pl.col("t_r").alias("rt"),
            pl.col("v").alias("lv"),
            pl.col("v_r").alias("rv"),
        )
        assert kept.height > 0 and batch_matched.len() == batch.height
        return out.height

    return probe


def pyarrow_probe(d: dict[str, dict[str, list[Any]]]) -> Callable[[], int]:
    import pyarrow as pa
    import pyarrow.compute as pc

    state = pa.table(d["state"]).append_column(
        "_id", pa.array(range(len(d["state"]["k"])), pa.int64())
    )
    state = state.append_column("_m", pa.array([False] * state.num_rows))
    batch = pa.table(d["batch"]).append_column(
        "_p", pa.array(range(len(d["batch"]["k"])), pa.int64())
    )
    threshold = -SPAN_US

    def probe() -> int:
        pairs = batch.join(state, keys="k", join_type="inner", right_suffix="_r")
        lo = pc.subtract(pairs["t"], UPPER_US)
        hi = pc.subtract(pairs["t"], LOWER_US)
        inside = pc.and_(pc.greater_equal(pairs["t_r"], lo), pc.less_equal(pairs["t_r"], hi))
        pairs = pairs.filter(inside).sort_by([("_p", "ascending"), ("_id", "ascending")])
        hit = pc.is_in(state["_id"], value_set=pc.unique(pairs["_id"]))
        flags = state.set_column(4, "_m", pc.or_(state["_m"], hit))
        batch_matched = pc.is_in(batch["_p"], value_set=pc.unique(pairs["_p"]))
        kept = flags.filter(pc.greater(flags["t"], threshold))
        out = pa.table(
            {
                "k": pairs["k"],
                "lt": pairs["t"],
                "rt": pairs["t_r"],
                "lv": pairs["v"],
                "rv": pairs["v_r"],
            }
        )
        assert kept.num_rows > 0 and len(batch_matched) == batch.num_rows
        return out.num_rows

    return probe


def duckdb_probe(d: dict[str, dict[str, list[Any]]]) -> Callable[[], int]:
    import duckdb
    import pyarrow as pa

    con = duckdb.connect()
    state = pa.table(d["state"]).append_column(
        "_id", pa.array(range(len(d["state"]["k"])), pa.int64())
    )
    state = state.append_column("_m", pa.array([False] * state.num_rows))
    batch = pa.table(d["batch"]).append_column(
        "_p", pa.array(range(len(d["batch"]["k"])), pa.int64())
    )
    con.register("state", state)
    con.register("batch", batch)
    threshold = -SPAN_US

    def probe() -> int:
        con.execute(
            "CREATE OR REPLACE TEMP TABLE pairs AS SELECT b._p, s._id, b.k, b.t AS lt, s.t AS rt, "
            "b.v AS lv, s.v AS rv FROM batch b JOIN state s ON b.k = s.k AND "
            f"s.t BETWEEN b.t - {UPPER_US} AND b.t - {LOWER_US} ORDER BY b._p, s._id"
        )
        con.execute(
            "CREATE OR REPLACE TEMP TABLE flags AS SELECT k, t, v, _id, "
            "_m OR _id IN (SELECT _id FROM pairs) AS _m FROM state"
        )
        kept = con.execute(f"SELECT count(*) FROM flags WHERE t > {threshold}").fetchone()
        matched = con.execute("SELECT count(DISTINCT _p) FROM pairs").fetchone()
        out = con.sql("SELECT k, lt, rt, lv, rv FROM pairs").to_arrow_table()
        assert kept is not None and matched is not None and kept[0] > 0
        return out.num_rows

    return probe


PROBES = {"polars": polars_probe, "pyarrow": pyarrow_probe, "duckdb": duckdb_probe}
IMPORTS = {
    "polars": "import polars",
    "pyarrow": "import pyarrow, pyarrow.compute",
    "duckdb": "import duckdb",
}


def cold_import_ms(statement: str, runs: int = 5) -> float:
    """Median over ``runs`` new processes of the time ``statement`` takes."""
    code = f"import time; s = time.perf_counter(); {statement}; print(time.perf_counter() - s)"
    times = sorted(
        float(
            subprocess.run(
                [sys.executable, "-c", code], check=True, capture_output=True, text=True
            ).stdout
        )
        for _ in range(runs)
    )
    return times[len(times) // 2] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=count, default=100_000)
    parser.add_argument("--repeat", type=count, default=5)
    args = parser.parse_args()
    d = data(args.n)
    print(f"probe: batch {args.n:,} rows against a state of {3 * args.n:,} rows, {KEYS:,} keys")
    print(f"| library | cold import ms | probe ms (best of {args.repeat}) | output rows |")
    print("|---|---|---|---|")
    for name, make in PROBES.items():
        probe = make(d)
        rows = probe()
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            probe()
            best = min(best, time.perf_counter() - start)
        print(f"| {name} | {cold_import_ms(IMPORTS[name]):.0f} | {best * 1000:.0f} | {rows:,} |")


if __name__ == "__main__":
    main()
