"""The production-shaped workloads of benchmarks/workload.py (issue 26) are seeded and have
the shapes the benchmark states: a hot key whose output stays bounded, 30% unmatched left
rows, 5% late rows of which some are beyond the watermark, DECIMAL amounts.  Not timed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pyarrow.parquet as pq
import pytest

from sjoin.api import check_file

from ...conftest import ROOT


def load_workload() -> ModuleType:
    spec = importlib.util.spec_from_file_location("workload", ROOT / "benchmarks" / "workload.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("workload", module)
    spec.loader.exec_module(module)
    return module


W = load_workload()
N = 20_000
BATCH_US = W.BATCH_SECONDS * 1_000_000


def base(batch: int) -> int:
    return int(W.T0_US + batch * BATCH_US)


@pytest.mark.parametrize("shape", list(W.SHAPES))
def test_batches_are_a_function_of_the_seed(shape: str) -> None:
    for batch in (0, 1, 5):
        one, two = W.shaped_batch(shape, 26, batch, 2_000), W.shaped_batch(shape, 26, batch, 2_000)
        other = W.shaped_batch(shape, 27, batch, 2_000)
        assert one.keys() == two.keys() == {"l", "r"}
        for stream in one:
            assert one[stream].keys() == two[stream].keys()
            for column in one[stream]:
                assert np.array_equal(one[stream][column], two[stream][column])
                assert len(one[stream][column]) == 2_000  # N rows per side per batch
            assert not np.array_equal(one[stream]["t"], other[stream]["t"])


@pytest.mark.parametrize("shape", list(W.SHAPES))
def test_generated_files_are_the_same_for_the_same_seed(shape: str, tmp_path: Path) -> None:
    one = W.generate_shape(tmp_path / "one", shape, 500, 3, jsonl=True)
    two = W.generate_shape(tmp_path / "two", shape, 500, 3, jsonl=True)
    files = sorted(p.relative_to(one.directory) for p in one.directory.rglob("*") if p.is_file())
    assert len(files) == 2 + 1 + 2 * 3  # two specs, the JSON-lines trace, a file per batch
    for name in files:
        assert (one.directory / name).read_bytes() == (two.directory / name).read_bytes(), name
        if name.suffix == ".parquet":  # Spark's file source takes the files in this order
            batch = int(name.stem.split("-")[1])
            assert (one.directory / name).stat().st_mtime == 1_700_000_000 + batch
    for output_format, sink in W.SINK_FORMATS.items():
        result = check_file(one.spec(output_format))
        assert result.ok and result.plan is not None
        assert result.plan.node(one.shape.relation) is not None
        assert f"sink {one.shape.relation} to {sink} " in one.spec(output_format).read_text()
    lines = one.jsonl_trace.read_text().splitlines()
    assert len(lines) == one.input_rows


def test_skewed_has_one_hot_key_and_bounded_output() -> None:
    hot, top_right, pairs_skewed, pairs_uniform = [], [], 0, 0
    for batch in range(4):
        skewed = W.shaped_batch("skewed", 26, batch, N)
        uniform = W.shaped_batch("uniform", 26, batch, N)
        left = np.bincount(skewed["l"]["k"], minlength=W.KEYS + 1)
        right = np.bincount(skewed["r"]["k"], minlength=W.KEYS + 1)
        assert left[0] == right[0] == 0 and len(left) == len(right) == W.KEYS + 1  # 1..KEYS
        hot.append(left[1] / N)
        top_right.append(right.max() / N)
        assert left[1] > 2 * left[2:].max()  # one hot key: twice the next one
        pairs_skewed += int((left * right).sum())
        pairs_uniform += int(
            (
                np.bincount(uniform["l"]["k"], minlength=W.KEYS + 1)
                * np.bincount(uniform["r"]["k"], minlength=W.KEYS + 1)
            ).sum()
        )
    expected = W.zipf_probabilities()[0]  # 1 / sum(k ** -1.1) over 1..10,000
    assert 0.14 < expected < 0.16
    assert all(abs(share - expected) < 0.01 for share in hot)  # ~15% of the left rows
    assert max(top_right) < 0.002  # the right side is uniform
    # the output is large but bounded: the key pairs are the uniform workload's, give or take
    # the hot key's luck on the right side (Zipf keys on both sides would give ~300x)
    assert 0.7 < pairs_skewed / pairs_uniform < 1.5


def test_outer_has_unmatched_and_late_rows() -> None:
    batches = 8
    data = [W.shaped_batch("outer", 26, b, N) for b in range(batches)]
    left_keys = np.concatenate([d["l"]["k"] for d in data[:-1]])  # the last batch's spill
    right_keys = np.concatenate([d["r"]["k"] for d in data])
    assert len(np.unique(np.concatenate([d["l"]["k"] for d in data]))) == batches * N
    unmatched = 1 - np.isin(left_keys, right_keys).mean()
    assert abs(unmatched - W.UNMATCHED_SHARE) < 0.005
    for stream in ("l", "r"):
        late = beyond = rows = 0
        for b, d in enumerate(data[1:], 1):
            t = d[stream]["t"]
            assert len(t) == N and (t < base(b + 1)).all()  # no row ahead of its batch
            late += int((t < base(b)).sum())
            beyond += int((t < base(b) - W.WATERMARK_DELAY_MS * 1000).sum())
            rows += len(t)
        assert abs(late / rows - W.LATE_SHARE) < 0.003, stream
        assert 0.3 < beyond / late < 0.7, stream  # some beyond the 10 s watermark delay
        assert (data[0][stream]["t"] >= base(0)).all()  # nothing is late in the first batch
    # each matched right row is inside the join's range: 0..10 s after its left row
    left_t = dict(
        zip(
            np.concatenate([d["l"]["k"] for d in data]).tolist(),
            np.concatenate([d["l"]["t"] for d in data]).tolist(),
            strict=True,
        )
    )
    for d in data:
        for k, t in zip(d["r"]["k"].tolist(), d["r"]["t"].tolist(), strict=True):
            if k > 0:
                assert 0 <= t - left_t[k] <= W.MATCH_DELAY_MS * 1000


def test_window_agg_amounts_are_decimals(tmp_path: Path) -> None:
    work = W.generate_shape(tmp_path, "window_agg", 1_000, 2)
    table = pq.read_table(work.parquet_dir("l") / "batch-0001.parquet")
    assert str(table.schema.field("amount").type) == "decimal128(12, 2)"
    amounts = table.column("amount").to_pylist()
    assert all(0 <= a <= 9_999.99 and a.as_tuple().exponent == -2 for a in amounts)
    assert "amount DECIMAL(12, 2)" in work.spec("parquet").read_text()
    assert "window(L.t, INTERVAL 10 SECONDS) = window(R.t" in work.spec("jsonl").read_text()
