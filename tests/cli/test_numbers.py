"""Every number and version a user writes, in an option or a spec, is ASCII digits of a
bounded length: other digits (`²`, `٣`, a full-width 3), signs, `_`, spaces, words and thousands of
digits give a clear error at the option or the spec line (exit 2 for options), never E999
and never a silently different value (Python's `int` reads `٣` as 3, `str.isdigit` takes
`²`, a regex's `\\d` takes every Unicode digit)."""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from types import ModuleType

import pytest
from click.testing import CliRunner

from sjoin.api import check_text
from sjoin.cli.main import main

from ..conftest import EXAMPLES, ROOT

HOSTILE = {
    "superscript": "²",
    "arabic-indic": "٣",
    "full-width": "\uff13",
    "5000-digits": "9" * 5000,
    "minus-zero": "-0",
    "plus": "+1",
    "underscore": "1_000",
    "leading-space": " 1",
    "trailing-space": "1 ",
    "empty": "",
    "nan": "NaN",
    "inf": "inf",
    "exponent": "1e3",
}
SPACES = {"leading-space", "trailing-space"}  # between tokens a space is no part of a number

BASE = [
    "spark 4.3",
    "set shuffle_partitions = 4",
    "set trigger = '10 seconds'",
    "stream a (k BIGINT, t TIMESTAMP, s STRING, d DECIMAL(10, 2)) watermark t delay 1 second",
    "stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 second",
    "join j = a INNER JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 SECOND",
    "    AND a.k <> 7",
    "  SELECT a.k, regexp_replace(a.s, '(x)', '$1') AS r, window(a.t, '1 minute') AS w",
]
STREAM_A = "stream a (k BIGINT, t TIMESTAMP, s STRING, d {type}) watermark t delay 1 second"
CONDITION = "join j = a INNER JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + {interval}"
SELECT = "  SELECT a.k, regexp_replace(a.s, '(x)', '{replacement}') AS r, window(a.t, {size}) AS w"

# every numeric field of a spec: (line of BASE it replaces, the line, the values it accepts)
PLACES: dict[str, tuple[int, str, set[str]]] = {
    "spark-major": (0, "spark {v}.3", set()),
    "spark-minor": (0, "spark 4.{v}", SPACES),
    "setting": (1, "set shuffle_partitions = {v}", SPACES),
    "setting-string": (1, "set shuffle_partitions = '{v}'", set()),
    "trigger": (2, "set trigger = '{v} seconds'", set()),
    "decimal-precision": (3, STREAM_A.format(type="DECIMAL({v}, 0)"), SPACES),
    "decimal-scale": (3, STREAM_A.format(type="DECIMAL(10, {v})"), SPACES),
    "watermark-delay": (4, "stream b (k BIGINT, t TIMESTAMP) watermark t delay {v} second", SPACES),
    "interval": (5, CONDITION.format(interval="INTERVAL {v} SECOND"), SPACES),
    "interval-string": (5, CONDITION.format(interval="INTERVAL '{v}' SECOND"), set()),
    "number-literal": (6, "    AND a.k <> {v}", SPACES | {"minus-zero", "plus"}),
    # Java reads `$1` and then `_000` or `e3` as text, as Spark's regexp_replace does
    "group-reference": (
        7,
        SELECT.format(replacement="${v}", size="'1 minute'"),
        {"underscore", "exponent", "trailing-space"},
    ),
    # Spark trims an interval string
    "window-string": (7, SELECT.format(replacement="$1", size="'{v} minute'"), SPACES),
    "window-interval": (7, SELECT.format(replacement="$1", size="INTERVAL {v} MINUTE"), SPACES),
}


def spec_with(place: str, value: str) -> str:
    line, text, _ = PLACES[place]
    lines = list(BASE)
    lines[line] = text.replace("{v}", value)
    return "\n".join(lines) + "\n"


def test_the_base_spec_and_plain_digits_pass() -> None:
    assert check_text("\n".join(BASE) + "\n").ok
    for place in PLACES:
        value = "3" if place.startswith("spark") else "1"
        result = check_text(spec_with(place, value))
        assert result.ok, (place, [d.message for d in result.diagnostics])


@pytest.mark.parametrize("key", sorted(HOSTILE))
@pytest.mark.parametrize("place", sorted(PLACES))
def test_numeric_spec_field(place: str, key: str) -> None:
    result = check_text(spec_with(place, HOSTILE[key]))
    codes = [d.code for d in result.diagnostics]
    assert "E999" not in codes
    if key in PLACES[place][2]:
        assert result.ok, [d.message for d in result.diagnostics]
        return
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert errors, f"{HOSTILE[key][:20]!r} accepted in {place}"
    line = result.source.line_col(errors[0].span.start)[0]
    # a missing number is reported at the token that stands where it should be
    lines = (
        {PLACES[place][0] + 1, PLACES[place][0] + 2} if key == "empty" else {PLACES[place][0] + 1}
    )
    assert line in lines, (line, errors[0].message)
    assert len(errors[0].message) < 200, "a long value is not echoed whole"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stderr


SPEC = next(p for p in EXAMPLES if p.stem == "ad_attribution")
TRACE = SPEC.with_suffix(".trace.jsonl")
OPTIONS = {  # every option that takes a number or a version: (arguments, option)
    "diff --spark": (["diff", str(SPEC), "--spark", "{v}", "--to", "4.3"], "--spark"),
    "diff --to": (["diff", str(SPEC), "--spark", "3.5", "--to", "{v}"], "--to"),
    "diff --to, patch": (["diff", str(SPEC), "--spark", "3.5", "--to", "4.3.{v}"], "--to"),
    "verify --spark": (["verify", str(SPEC), "--trace", str(TRACE), "--spark", "{v}"], "--spark"),
    "plan --rates": (["plan", str(SPEC), "--rates", "impressions={v}/s,clicks=1/s"], "--rates"),
    "plan --keys": (
        ["plan", str(SPEC), "--rates", "impressions=1/s,clicks=1/s", "--keys", "{v}"],
        "--keys",
    ),
    "plan --trigger": (
        ["plan", str(SPEC), "--rates", "impressions=1/s,clicks=1/s", "--trigger", "{v}"],
        "--trigger",
    ),
    "plan --string-bytes": (
        ["plan", str(SPEC), "--rates", "impressions=1/s,clicks=1/s", "--string-bytes", "{v}"],
        "--string-bytes",
    ),
    "verify --spark, minor": (
        ["verify", str(SPEC), "--trace", str(TRACE), "--spark", "3.{v}"],
        "--spark",
    ),
}


@pytest.mark.parametrize("key", sorted(HOSTILE))
@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_numeric_option(option: str, key: str) -> None:
    args, name = OPTIONS[option]
    code, err = invoke(*(a.replace("{v}", HOSTILE[key]) for a in args))
    assert code == 2, err
    assert "E999" not in err and "Traceback" not in err
    assert f"{name} takes" in err and "digits 0-9" in err, err
    assert len(err) < 400, "a long value is not echoed whole"


@pytest.mark.parametrize(
    ("value", "message"),
    [("3.9", "sjoin models Spark"), ("9999.9999", "sjoin models Spark"), ("3.5.1.2", "takes")],
)
def test_versions_of_the_right_form_sjoin_does_not_model(value: str, message: str) -> None:
    code, err = invoke("diff", str(SPEC), "--spark", value, "--to", "4.3")
    assert code == 2 and message in err and "--spark" in err, err


def test_the_issue_reproductions() -> None:
    """`diff --spark ².5` and a 5000-digit `--to` ended in E999; `--spark` with Arabic-Indic
    digits for 3.5 was read as Spark 3.5."""
    for args in (
        ["--spark", "².5", "--to", "4.3"],
        ["--spark", "3.5", "--to", "9" * 5000],
        ["--spark", "\u0663.\u0665", "--to", "4.3"],
    ):
        code, err = invoke("diff", str(SPEC), *args)
        assert code == 2 and "E999" not in err, err
    code, _ = invoke("diff", str(SPEC), "--spark", "3.5", "--to", "4.3")
    assert code in (0, 1)


# ---------------------------------------------------------------- the developer scripts


def load_workload() -> ModuleType:
    spec = importlib.util.spec_from_file_location("workload", ROOT / "benchmarks" / "workload.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("key", sorted(HOSTILE))
def test_benchmark_counts_are_ascii_digits(key: str) -> None:
    """``--sizes``, ``--repeat``, ``--n``, ``--runs`` and ``ROWS`` of the benchmarks."""
    count = load_workload().count
    with pytest.raises(argparse.ArgumentTypeError) as raised:
        count(HOSTILE[key])
    assert "digits 0-9" in str(raised.value) and len(str(raised.value)) < 120
    with pytest.raises(argparse.ArgumentTypeError):
        count("0")
    assert count("1") == 1 and count("000020000") == 20_000


# every numeric option of the scripts under benchmarks/ and scripts/, given a bad value
SCRIPTS = {
    "bench --sizes": (["benchmarks/bench.py", "--sizes", "10", "{v}"], "--sizes"),
    "bench --repeat": (["benchmarks/bench.py", "--repeat", "{v}"], "--repeat"),
    "bench --startup-runs": (["benchmarks/bench.py", "--startup-runs", "{v}"], "--startup-runs"),
    "profile_runtime --n": (["benchmarks/profile_runtime.py", "--n", "{v}"], "--n"),
    "columnar_choice --n": (["benchmarks/columnar_choice.py", "--n", "{v}"], "--n"),
    "columnar_choice --repeat": (["benchmarks/columnar_choice.py", "--repeat", "{v}"], "--repeat"),
    "check_startup --runs": (["benchmarks/check_startup.py", "--runs", "{v}"], "--runs"),
    "engine_crossover --rows": (["benchmarks/engine_crossover.py", "--rows", "{v}"], "--rows"),
    "engine_crossover --batches": (
        ["benchmarks/engine_crossover.py", "--batches", "10", "{v}"],
        "--batches",
    ),
    "engine_crossover --max-rows": (
        ["benchmarks/engine_crossover.py", "--max-rows", "{v}"],
        "--max-rows",
    ),
    "engine_crossover --cells": (
        ["benchmarks/engine_crossover.py", "--cells", "10x{v}"],
        "--cells",
    ),
    "engine_crossover --repeat": (
        ["benchmarks/engine_crossover.py", "--repeat", "{v}"],
        "--repeat",
    ),
    "eviction ROWS": (["benchmarks/eviction.py", "{v}"], "ROWS"),
    "eviction_columnar ROWS": (["benchmarks/eviction_columnar.py", "{v}"], "ROWS"),
    "spark_standalone --timeout": (
        ["scripts/spark_standalone.py", "start", "/nonexistent", "--timeout", "{v}"],
        "--timeout",
    ),
}


@pytest.mark.parametrize("value", ["\u0663", "\xb2", "1_000", "9" * 5000])
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script_options_refuse_other_digits(script: str, value: str) -> None:
    args, name = SCRIPTS[script]
    done = subprocess.run(
        [
            sys.executable,
            *(str(ROOT / a) if a.endswith(".py") else a.replace("{v}", value) for a in args),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert name in done.stderr and "digits 0-9" in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and len(done.stderr) < 1000
