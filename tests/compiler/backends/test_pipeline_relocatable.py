"""A compiled pipeline project may be moved (issue 35, item 12).

SDP refuses a relative `storage` (PIPELINE_STORAGE_ROOT_INVALID, checked on Spark 4.3.0), so
`storage` is the project's one absolute path; everything else is relative to the folder of
spark-pipeline.yml, which SDP reads its globs from wherever it is.  A project compiled into
one folder and moved to another reads back in sjoin from there, and its spark-pipeline.yml's
header says how to run it as docs/pipelines.md does.  (The run on Spark from another folder,
of a project moved after it was compiled: tests/compiler/backends/test_pipeline_on_spark.py.)
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from click.testing import CliRunner

from sjoin.cli.main import main
from sjoin.compiler.backends.pipeline import PIPELINE_YML_HEADER

from ...conftest import ROOT

SPEC = """spark 4.3
stream a (id BIGINT, t TIMESTAMP) watermark t delay 1 minute from json (path = 'in/a')
stream b (id BIGINT, t TIMESTAMP) watermark t delay 1 minute from json (path = 'in/b')
join j = a AS x INNER JOIN b AS y ON x.id = y.id AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE
sink j to json (path = 'out/j')
"""


def test_a_moved_project_reads_back_and_only_storage_is_absolute(tmp_path: Path) -> None:
    (tmp_path / "s.sjoin").write_text(SPEC)
    made = CliRunner().invoke(
        main,
        ["compile", str(tmp_path / "s.sjoin"), "--target", "pipeline", "-o", str(tmp_path / "a")],
    )
    assert made.exit_code == 0, made.output
    # the command's own note says how to run it, as the header and the docs do
    assert "run it from the folder the spec's relative paths are relative to" in made.output
    assert f"spark-pipelines run --spec {tmp_path / 'a' / 'spark-pipeline.yml'}" in made.output
    shutil.move(tmp_path / "a", tmp_path / "b")
    checked = CliRunner().invoke(main, ["check", str(tmp_path / "b")])
    assert checked.exit_code == 0, checked.output
    text = (tmp_path / "b" / "spark-pipeline.yml").read_text()
    spec = yaml.safe_load(text)
    assert spec["storage"] == (tmp_path / "a" / "pipeline-storage").as_uri()
    assert [lib["glob"]["include"] for lib in spec["libraries"]] == ["transformations/**"]
    for line in PIPELINE_YML_HEADER:
        assert line in text


def test_the_yml_header_and_the_docs_say_the_same() -> None:
    docs = (ROOT / "docs" / "pipelines.md").read_text()
    header = " ".join(line.lstrip("# ") for line in PIPELINE_YML_HEADER)
    assert "spark-pipelines run --spec" in header
    assert "spark-pipelines run --spec DIR/spark-pipeline.yml" in docs
    for words in (
        "the folder the spec's relative paths are relative to",
        "finds",
        "storage",
        "refuses",
    ):
        assert words in header, words
    assert "Run it from the folder the spec's relative paths are relative to" in docs
    assert "PIPELINE_STORAGE_ROOT_INVALID" in docs
    assert "Run it in this directory" not in header
