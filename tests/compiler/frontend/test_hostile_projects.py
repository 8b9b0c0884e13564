"""Hostile pipeline projects (issue 35, items 20 and 21).

Item 20: what a project's files may say that made Python fail (a glob pathlib refuses, a
spark-pipeline.yml or a Python file nested past what a parser recurses through, a glob that
walks the whole file system) is a diagnostic at its file and place: E033 where SDP itself
fails on it (pyspark/pipelines/cli.py: ``Path(root).glob(pattern)``, ``yaml.safe_load``,
the module's import), E031 past sjoin's size limits (compiler/frontend/limits.py), never E999.  The
SQL side nests as deep as a .sjoin spec, from one limit (``limits.MAX_NESTING``).

Item 21: a file outside the project's folder (a link, or a glob that climbs out) is read as
SDP reads it, and no diagnostic shows a line of it, in text or JSON: its path and place only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from sjoin.api import check_pipeline
from sjoin.cli.main import main
from sjoin.compiler.diagnostics.diagnostics import OUTSIDE_HELP, Diagnostic, shown
from sjoin.compiler.frontend import limits
from sjoin.compiler.vocabulary.source import ProjectSource, Source, Span

SQL = """CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP);
CREATE STREAMING TABLE b (k BIGINT, t TIMESTAMP);
CREATE STREAMING TABLE j AS SELECT x.k FROM STREAM(a) WATERMARK t DELAY OF INTERVAL 1 MINUTE AS x
JOIN STREAM(b) WATERMARK t DELAY OF INTERVAL 1 MINUTE AS y
  ON {key} = y.k AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE
"""


def sjoin(*args: str) -> Result:
    return CliRunner().invoke(main, [*args, "--color", "never"])


def project(root: Path, include: str, sql: str = SQL.format(key="x.k")) -> Path:
    (root / "transformations").mkdir(parents=True, exist_ok=True)
    (root / "transformations" / "j.sql").write_text(sql)
    (root / "spark-pipeline.yml").write_text(
        f"name: p\nstorage: file:///tmp/p\nlibraries:\n  - glob:\n      include: {include}\n"
    )
    return root


def checked(root: Path, code: str, line: int, file: str = "spark-pipeline.yml") -> Result:
    """`sjoin check` of ``root`` fails (exit 1) with ``code`` at ``file``:``line``, in text and
    in JSON, and nowhere E999."""
    out = sjoin("check", str(root))
    assert out.exit_code == 1, out.output
    assert "E999" not in out.output
    data = json.loads(sjoin("check", str(root), "--format", "json").output)
    found = [(d["code"], Path(d["file"]).name, d["line"]) for d in data["diagnostics"]]
    assert (code, Path(file).name, line) in found, found
    assert f"{file}:{line}:" in out.output.replace(str(root) + "/", ""), out.output
    return out


# ------------------------------------------------------------------ item 20: globs


@pytest.mark.parametrize(
    ("include", "says"),
    [
        ("/etc/**", "is an absolute path"),
        ("/**", "is an absolute path"),
        ('""', "is empty"),
        ('!!str ""', "is empty"),
        (".", "names the project's folder"),
        ("./", "names the project's folder"),
        (".//.", "names the project's folder"),
        ("!!int 5", "is no string"),
        ("~", "is no string"),
        ("true", "is no string"),
        ('!!binary ""', "is no string"),
        ("2001-01-01", "is no string"),
        ("transformations/*.sql", "SDP refuses the glob"),
    ],
)
def test_a_glob_sdp_fails_on_is_E033_at_it(tmp_path: Path, include: str, says: str) -> None:
    out = checked(project(tmp_path, include), "E033", 5)
    assert says in out.output


def test_a_glob_of_5000_characters_is_E031(tmp_path: Path) -> None:
    out = checked(project(tmp_path, "a/" * 2500 + "x.sql"), "E031", 5)
    assert "longer than 1,000 characters" in out.output


def test_a_glob_that_climbs_to_the_root_is_bounded(tmp_path: Path) -> None:
    """`../` twelve times and `**`: the whole file system under /, which pathlib would walk
    (and fail in /proc); sjoin stops at MAX_GLOB_ENTRIES or at the first folder it cannot
    list, at the glob."""
    root = tmp_path / "p"
    out = sjoin("check", str(project(root, "../" * 12 + "**")), "--format", "json")
    assert out.exit_code == 1, out.output
    codes = {
        (d["code"], Path(d["file"]).name, d["line"]) for d in json.loads(out.output)["diagnostics"]
    }
    assert codes & {("E031", "spark-pipeline.yml", 5), ("E033", "spark-pipeline.yml", 5)}, codes


def test_the_globs_walk_at_most_max_glob_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "MAX_GLOB_ENTRIES", 50)
    root = project(tmp_path, "transformations/**")
    for i in range(60):
        (root / "transformations" / f"f{i}.sql").write_text("")
    result = check_pipeline(root)
    assert [d.code for d in result.diagnostics] == ["E031"]
    assert "walk more than 50 files and folders" in result.diagnostics[0].message
    for i in range(60):
        (root / "transformations" / f"f{i}.sql").unlink()
    assert check_pipeline(root).ok


def test_a_glob_matches_as_pathlib_does(tmp_path: Path) -> None:
    """A file path, a folder/** (every file below, no folder link entered, no __pycache__), a
    trailing slash (folders only: no file), `./` and `//` dropped, `..` kept as written."""
    root = project(tmp_path / "p", "transformations/**")
    (root / "transformations" / "sub").mkdir()
    (root / "transformations" / "sub" / "k.sql").write_text("")
    (root / "transformations" / "__pycache__").mkdir()
    (root / "transformations" / "__pycache__" / "x.sql").write_text("SELECT")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "e.sql").write_text("SELECT")
    (root / "transformations" / "linked").symlink_to(tmp_path / "elsewhere")
    from sjoin.compiler.diagnostics.diagnostics import Diagnostics
    from sjoin.compiler.frontend.project import _glob

    def matched(pattern: str) -> list[str]:
        diags = Diagnostics()
        found = _glob(root, pattern, Span(0, 0), diags, [0])
        assert not diags.items, [d.message for d in diags.items]
        return [p.relative_to(root).as_posix() for p in found]

    assert matched("transformations/**") == ["transformations/j.sql", "transformations/sub/k.sql"]
    assert matched("./transformations//j.sql") == ["transformations/j.sql"]
    assert matched("transformations/j.sql/") == []
    assert matched("transformations/") == []
    assert matched("transformations/sub/../j.sql") == ["transformations/sub/../j.sql"]
    assert matched("transformations/linked/**") == ["transformations/linked/e.sql"]
    assert matched("missing/**") == []


# ------------------------------------------------------------------ item 20: nesting


def test_a_deep_yaml_flow_is_E031(tmp_path: Path) -> None:
    (tmp_path / "spark-pipeline.yml").write_text(
        "name: p\nstorage: x\nlibraries: " + "[" * 50_000 + "]" * 50_000 + "\n"
    )
    out = checked(tmp_path, "E031", 3)
    assert "nests more than 100 levels" in out.output


def test_a_deep_yaml_block_is_E031(tmp_path: Path) -> None:
    text = "name: p\nx:\n" + "".join(" " * i + "-\n" for i in range(1, 300))
    (tmp_path / "spark-pipeline.yml").write_text(text)
    checked(tmp_path, "E031", 2 + limits.MAX_NESTING)  # the top mapping is level 1


def test_a_yaml_at_the_nesting_limit_is_read(tmp_path: Path) -> None:
    root = project(tmp_path, "transformations/**")
    with (root / "spark-pipeline.yml").open("a") as f:
        f.write(
            "catalog: " + "[" * (limits.MAX_NESTING - 1) + "]" * (limits.MAX_NESTING - 1) + "\n"
        )
    codes = [d.code for d in check_pipeline(root).diagnostics]
    assert "E031" not in codes and "E999" not in codes


@pytest.mark.parametrize(
    "expression",
    [
        "-" * 100_000 + "1",
        "+".join(["1"] * 100_000),
        "a" + ".b" * 100_000,
        "f" + "()" * 50_000,
        "lambda: " * 5_000 + "1",
        "not " * 5_000 + "x",
    ],
    ids=["unary", "sum", "attributes", "calls", "lambdas", "nots"],
)
def test_a_python_file_too_deep_for_python_is_E031(tmp_path: Path, expression: str) -> None:
    root = project(tmp_path, "transformations/**")
    (root / "transformations" / "s.py").write_text(f"import os\n\ny = 1\nz = {expression}\n")
    out = checked(root, "E031", 4, "transformations/s.py")
    assert "nests an expression too deeply for Python's parser" in out.output


@pytest.mark.parametrize("depth", [97, 98, 99, 100])
def test_sql_nests_as_deep_as_a_sjoin_spec(tmp_path: Path, depth: int) -> None:
    """The same condition, nested ``depth`` parentheses deep, in both syntaxes: the same
    verdict from one limit (a .sjoin spec stopped at 100 levels, the SQL side at none)."""
    from sjoin.api import check_text

    key = "(" * depth + "x.k" + ")" * depth
    spec = (
        "stream a (k BIGINT, t TIMESTAMP) watermark t delay 1 minute\n"
        "stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 minute\n"
        f"join j = a AS x INNER JOIN b AS y ON {key} = y.k "
        "AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE\n"
    )
    (tmp_path / "p.sql").write_text(SQL.format(key=key))
    sjoin_codes = [d.code for d in check_text(spec).diagnostics if d.severity == "error"]
    sql_codes = [
        d.code for d in check_pipeline(tmp_path / "p.sql").diagnostics if d.severity == "error"
    ]
    assert sjoin_codes == sql_codes == ([] if depth < 99 else ["E001"])


def test_sql_nested_thousands_deep_is_E001_not_recursion(tmp_path: Path) -> None:
    key = "(" * 5_000 + "x.k" + ")" * 5_000
    (tmp_path / "p.sql").write_text(SQL.format(key=key))
    out = sjoin("check", str(tmp_path / "p.sql"))
    assert out.exit_code == 1 and "E999" not in out.output
    assert "nests expressions too deeply (more than 100 levels)" in out.output


def test_a_project_past_the_length_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    root = project(tmp_path, "transformations/**")
    chunk = "SELECT " + "(" * 300 + "1" + ")" * 300 + ";\n"
    for i in range(4):
        (root / "transformations" / f"big{i}.sql").write_text(chunk * (300_000 // len(chunk)))
    result = check_pipeline(root)
    assert [d.code for d in result.diagnostics] == ["E031"]
    assert "longer than 1,000,000 characters" in result.diagnostics[0].message


# ------------------------------------------------------------------ item 21: outside files

SECRET = "SECRETLINE"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the project with a file that is no SQL, Python or YAML."""
    folder = tmp_path / "secret"
    folder.mkdir()
    (folder / "creds").write_text(f"root:x:0:0:{SECRET}\nAWS_KEY={SECRET}\n")
    (folder / "bad.py").write_text(f"x = (\n{SECRET}\n")
    (folder / "t.sql").write_text(
        f"CREATE STREAMING TABLE s (k BIGINT);\nSELECT {SECRET} FROM x y z;\n"
    )
    (folder / "spec.yml").write_text(f"name: p\n{SECRET}: [\n")
    return folder


def no_secret(root: Path, where: str) -> list[dict[str, object]]:
    """`sjoin check` of ``root`` in text and JSON: exit 1, the diagnostics name ``where``
    and show no text of the outside file."""
    text = sjoin("check", str(root))
    data = sjoin("check", str(root), "--format", "json")
    for out in (text, data):
        assert out.exit_code == 1, out.output
        assert SECRET not in out.output, out.output
        assert "E999" not in out.output
    assert where in text.output and "outside the project" in text.output, text.output
    found = [d for d in json.loads(data.output)["diagnostics"] if where in str(d["file"])]
    assert found and all(d["help"] == OUTSIDE_HELP and d["label"] == "" for d in found)
    return found


def test_a_linked_sql_file_outside_is_not_quoted(tmp_path: Path, outside: Path) -> None:
    root = project(tmp_path / "p", "transformations/**")
    (root / "transformations" / "creds.sql").symlink_to(outside / "creds")
    no_secret(root, "creds.sql")


def test_a_linked_python_file_outside_is_not_quoted(tmp_path: Path, outside: Path) -> None:
    root = project(tmp_path / "p", "transformations/**")
    (root / "transformations" / "bad.py").symlink_to(outside / "bad.py")
    text = sjoin("check", str(root))
    assert SECRET not in text.output and "bad.py:1:1" in text.output, text.output


def test_a_python_file_too_deep_outside_is_not_quoted(tmp_path: Path, outside: Path) -> None:
    (outside / "deep.py").write_text(f"{SECRET} = " + "-" * 100_000 + "1\n")
    root = project(tmp_path / "p", "transformations/**")
    (root / "transformations" / "deep.py").symlink_to(outside / "deep.py")
    no_secret(root, "deep.py")


def test_a_linked_schema_file_outside_is_not_quoted(tmp_path: Path, outside: Path) -> None:
    root = project(tmp_path / "p", "transformations/**")
    (root / "sjoin-schemas.sql").symlink_to(outside / "creds")
    no_secret(root, "sjoin-schemas.sql")


def test_a_schema_file_beside_a_sql_file_outside_is_not_quoted(
    tmp_path: Path, outside: Path
) -> None:
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "p.sql").write_text(SQL.format(key="x.k"))
    (tmp_path / "q" / "sjoin-schemas.sql").symlink_to(outside / "creds")
    text = sjoin("check", str(tmp_path / "q" / "p.sql"))
    assert SECRET not in text.output and "sjoin-schemas.sql:1:1" in text.output, text.output


def test_an_include_that_climbs_out_is_read_and_not_quoted(tmp_path: Path, outside: Path) -> None:
    root = project(tmp_path / "p", "../secret/t.sql")
    (root / "transformations" / "j.sql").unlink()
    found = no_secret(root, "t.sql")
    assert {d["line"] for d in found} == {2}  # read as SDP reads it: its second statement


def test_a_folder_glob_that_climbs_out_is_not_quoted(tmp_path: Path, outside: Path) -> None:
    (outside / "creds").rename(outside / "creds.sql")
    (outside / "spec.yml").unlink()
    root = project(tmp_path / "p", "../secret/**")
    no_secret(root, "creds.sql")


def test_a_spec_linked_outside_is_not_quoted(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "spark-pipeline.yml").symlink_to(outside / "spec.yml")
    no_secret(root, "spark-pipeline.yml")


def test_a_compile_of_an_outside_file_is_not_quoted(tmp_path: Path, outside: Path) -> None:
    root = project(tmp_path / "p", "transformations/**")
    (root / "transformations" / "creds.sql").symlink_to(outside / "creds")
    out = sjoin("compile", str(root), "--target", "pipeline", "-o", str(tmp_path / "out"))
    assert out.exit_code == 1 and SECRET not in out.output and "creds.sql:1:1" in out.output


def test_a_file_inside_that_links_inside_is_quoted(tmp_path: Path) -> None:
    root = project(tmp_path / "p", "transformations/**")
    (root / "lib").mkdir()
    (root / "lib" / "x.sql").write_text(f"SELECT {SECRET} FROM a b c;\n")
    (root / "transformations" / "x.sql").symlink_to(root / "lib" / "x.sql")
    out = sjoin("check", str(root))
    assert SECRET in out.output and "outside the project" not in out.output


def test_a_name_only_an_outside_file_holds_is_not_quoted() -> None:
    """A diagnostic in the project that quotes a name only an outside file holds (a
    did-you-mean) shows `...` for it; a name the project holds too is shown."""
    inside = Source("p/j.sql", "SELECT zcol FROM t\n")
    hidden = Source(
        "p/s.sql", "CREATE STREAMING TABLE t (zsecretcol BIGINT, zcol BIGINT)\n", outside=True
    )
    source = ProjectSource(
        "p", inside.text + hidden.text, parts=((0, inside), (len(inside.text), hidden))
    )
    d = Diagnostic(
        "E003", "no column `zsecretcox`: did you mean `zsecretcol`?", Span(7, 11), "`zcol`"
    )
    assert shown(d, source).message == "no column `zsecretcox`: did you mean `...`?"
    assert shown(d, source).label == "`zcol`"
    there = Diagnostic(
        "E001", f"unexpected `{SECRET}`", Span(len(inside.text) + 1, len(inside.text) + 2)
    )
    assert SECRET not in shown(there, source).message
    assert shown(shown(there, source), source) == shown(there, source)


def test_outside_files_are_named_by_their_place_only_in_every_printer(
    tmp_path: Path, outside: Path
) -> None:
    """The plan JSON's diagnostics too (`sjoin plan --format json`)."""
    root = project(tmp_path / "p", "transformations/**")
    (root / "transformations" / "creds.sql").symlink_to(outside / "creds")
    for args in (["plan"], ["plan", "--format", "json"], ["check", "--format", "json"]):
        out = sjoin(*args, str(root))
        assert SECRET not in out.output and "E999" not in out.output, (args, out.output)
    assert os.path.islink(root / "transformations" / "creds.sql")


@pytest.mark.parametrize("name", ["p.sql", "spark-pipeline.yml"])
def test_a_fifo_or_a_device_given_is_a_usage_error_not_a_hang(tmp_path: Path, name: str) -> None:
    os.mkfifo(tmp_path / name)
    out = sjoin("check", str(tmp_path / name))
    assert out.exit_code == 2 and "is not a regular file" in out.output, out.output
    (tmp_path / "z.sql").symlink_to("/dev/zero")
    out = sjoin("check", str(tmp_path / "z.sql"))
    assert out.exit_code == 2 and "is not a regular file" in out.output, out.output


def test_a_fifo_a_glob_matches_is_left_out_as_pathlib_leaves_it(tmp_path: Path) -> None:
    root = project(tmp_path, "transformations/**")
    os.mkfifo(root / "transformations" / "f.sql")
    (root / "transformations" / "z.sql").symlink_to("/dev/zero")
    assert check_pipeline(root).ok
