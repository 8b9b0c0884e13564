"""What Spark makes of a source option's name in another case, and of one option given twice
in two cases (issue 35, item 6), checked on Spark 4.3 with a streaming JSON source.

Spark keeps a reader's options in a CaseInsensitiveMap: `PATH` is `path`, and of `path` and
`Path` given one after the other only the last is kept. So sjoin refuses both (E024 for one
of its own names in another case, with a did-you-mean; E002 for an option given twice in any
case): the first would be dropped without a word, and an option sjoin reads itself (`topic`,
`path`, ...) in another spelling would reach Spark as an option it does not use.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_text

pytestmark = pytest.mark.spark


def _rows_read(spark: Any, options: list[tuple[str, str]], name: str) -> int:
    reader = spark.readStream.format("json").schema("id BIGINT")
    for key, value in options:
        reader = reader.option(key, value)
    query = (
        reader.load()
        .writeStream.format("memory")
        .queryName(name)
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination(120)
    finally:
        query.stop()
    return int(spark.sql(f"SELECT count(*) AS n FROM {name}").collect()[0]["n"])


def test_option_names_are_case_insensitive_and_the_last_wins(spark: Any, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, n in ((a, 3), (b, 5)):
        folder.mkdir()
        (folder / "part.json").write_text("".join(json.dumps({"id": i}) + "\n" for i in range(n)))
    assert _rows_read(spark, [("PATH", str(b))], "opt_upper") == 5
    assert _rows_read(spark, [("path", str(a)), ("Path", str(b))], "opt_last_b") == 5
    assert _rows_read(spark, [("Path", str(b)), ("path", str(a))], "opt_last_a") == 3
    # and sjoin refuses both spellings of the spec that would mean this
    twice = check_text(
        "stream s (id BIGINT) from json (path = 'a', Path = 'b')\n", "s.sjoin"
    ).diagnostics
    assert [d.code for d in twice if d.severity == "error"] == ["E002"]
    upper = check_text("stream s (id BIGINT) from json (PATH = 'b')\n", "s.sjoin").diagnostics
    assert [(d.code, d.help) for d in upper if d.severity == "error"] == [
        ("E024", "did you mean `path`? sjoin reads its own options only as written here")
    ]
