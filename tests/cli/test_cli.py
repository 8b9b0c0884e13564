"""The command line: exit codes 0/1/2, --help everywhere, JSON output, no tracebacks, and no
pyspark import on the check path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sjoin import __version__
from sjoin.cli.main import main

from ..conftest import EXAMPLES, ROOT

BAD = "stream s (a BIGINT, t STRING) watermark t delay 1 hour\n"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_version() -> None:
    code, out, _ = run("--version")
    assert code == 0 and __version__ in out


@pytest.mark.parametrize("command", [[], ["check"], ["plan"]])
def test_help_everywhere(command: list[str]) -> None:
    code, out, _ = run(*command, "--help")
    assert code == 0 and "Usage:" in out


def test_check_examples_exit_zero() -> None:
    code, _, err = run("check", *map(str, EXAMPLES))
    assert code == 0, err
    assert err.count(": ok") == len(EXAMPLES)


def test_check_errors_exit_one_with_rustc_style(tmp_path: Path) -> None:
    spec = tmp_path / "bad.sjoin"
    spec.write_text(BAD)
    code, _, err = run("check", str(spec))
    assert code == 1
    assert f"{spec}:1:41: error[E010]: watermark column `t` is STRING, not TIMESTAMP" in err
    assert "1 | stream s (a BIGINT, t STRING) watermark t delay 1 hour" in err
    assert "  |                                         ^ declared as STRING" in err
    assert "= help: " in err


def test_check_json(tmp_path: Path) -> None:
    spec = tmp_path / "bad.sjoin"
    spec.write_text(BAD)
    code, out, _ = run("check", "--format", "json", str(spec))
    assert code == 1
    (diag,) = json.loads(out)["diagnostics"]
    assert {k: diag[k] for k in ("code", "line", "col", "severity")} == {
        "code": "E010",
        "line": 1,
        "col": 41,
        "severity": "error",
    }


def test_usage_errors_exit_two(tmp_path: Path) -> None:
    assert run("check")[0] == 2
    assert run("check", str(tmp_path / "missing.sjoin"))[0] == 2
    assert run("plan", "--format", "yaml", str(EXAMPLES[0]))[0] == 2
    binary = tmp_path / "bin.sjoin"
    binary.write_bytes(b"\xff\xfe\x00")
    code, _, err = run("check", str(binary))
    assert code == 2 and "not UTF-8" in err
    assert run("nonsense")[0] == 2


def test_plan_text_and_json() -> None:
    spec = str(ROOT / "examples" / "ad_attribution.sjoin")
    code, out, _ = run("plan", spec)
    assert code == 0
    assert "i.impression_time <= watermark - 1 hour 1 ms" in out
    code, out, _ = run("plan", "--format", "json", spec)
    data = json.loads(out)
    assert data["spark"] == "4.0" and data["joins"][0]["name"] == "attributed"


def test_plan_of_a_broken_spec_exits_one(tmp_path: Path) -> None:
    spec = tmp_path / "bad.sjoin"
    spec.write_text(BAD + "join j = s a JOIN s b ON a.a < b.a\n")
    code, _, err = run("plan", str(spec))
    assert code == 1 and "E020" in err


def test_no_traceback_on_internal_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sjoin.cli.main

    def boom(path: Path) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(sjoin.cli.main, "load", boom)
    code, _, err = run("check", str(EXAMPLES[0]))
    assert code == 1
    assert "internal error" in err and "Traceback" not in err


def test_check_never_imports_pyspark() -> None:
    script = (
        "import sys, sjoin\n"
        f"r = sjoin.check_file({str(EXAMPLES[0])!r})\n"
        "from sjoin.cli.main import main\n"
        "assert r.ok\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_color_only_when_asked(tmp_path: Path) -> None:
    spec = tmp_path / "bad.sjoin"
    spec.write_text(BAD)
    _, _, plain = run("check", str(spec))
    _, _, colored = run("check", "--color", "always", str(spec))
    assert "\x1b[" not in plain
    assert "\x1b[" in colored and "error[E010]" in colored


def test_plan_mermaid_and_init(tmp_path: Path) -> None:
    code, out, _ = run(
        "plan", "--format", "mermaid", str(ROOT / "examples" / "ride_matching.sjoin")
    )
    assert code == 0 and out.startswith("flowchart LR")
    code, _, err = run("init", "shipped", "--dir", str(tmp_path))
    assert code == 0 and "wrote" in err
    assert run("check", str(tmp_path / "shipped.sjoin"))[0] == 0
    assert run("init", "shipped", "--dir", str(tmp_path))[0] == 2  # never overwrites


def test_compile_warns_what_the_job_will_expect(tmp_path: Path) -> None:
    """Without `from` and `sink`, `compile` says what the job then needs (W008 per stream,
    W009 for the join) and still writes it (exit 0); `check` does not warn, since `sjoin run`
    needs neither.  The `sjoin init` scaffold has both, so it compiles without them."""
    from sjoin.cli.scaffold import SPEC

    full = SPEC.format(name="shipped")
    bare = "".join(
        line for line in full.splitlines(keepends=True) if not line.startswith(("from", "sink"))
    )
    spec = tmp_path / "shipped.sjoin"
    spec.write_text(bare)
    code, _, err = run("compile", str(spec), "-o", str(tmp_path / "job.py"))
    assert code == 0, err
    assert err.count("warning[W008]") == 2 and err.count("warning[W009]") == 1
    assert 'inputs["orders"]' in err and 'inputs["shipments"]' in err
    assert "`shipped` has no sink" in err
    code, _, err = run("check", str(spec))
    assert code == 0 and "W008" not in err and "W009" not in err
    spec.write_text(full)
    code, _, err = run("compile", str(spec), "-o", str(tmp_path / "job.py"))
    assert code == 0 and "W00" not in err, err


@pytest.mark.parametrize(
    "argv", [["--version"], ["--help"], ["run", "--help"], ["verify", "--help"], ["init", "--help"]]
)
def test_version_and_help_import_no_parser(argv: list[str]) -> None:
    """`sjoin --version` and `--help` answer at once: they import neither the parser (lark)
    nor sqlglot nor an engine (polars, pyspark); `import sjoin` loads its API on first use."""
    script = (
        "import sys\n"
        f"sys.argv = ['sjoin', *{argv!r}]\n"
        "from sjoin.cli.main import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as stop:\n"
        "    assert stop.code in (0, None), stop.code\n"
        "heavy = ('sqlglot', 'lark', 'polars', 'pyspark', 'py4j')\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in heavy})\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


def test_the_package_api_loads_on_first_use() -> None:
    script = (
        "import sys, sjoin\n"
        "assert 'sqlglot' not in sys.modules\n"
        "assert callable(sjoin.check_text) and 'sqlglot' in sys.modules\n"
        "try:\n"
        "    sjoin.nothing\n"
        "except AttributeError as err:\n"
        "    assert 'nothing' in str(err)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_the_runtime_names_load_on_first_use() -> None:
    """``sjoin.runtime``'s names come from their own modules on first use (PEP 562): `sjoin
    compile` checks its output path with ``runtime.files`` without loading the engine."""
    script = (
        "import sys\n"
        "from sjoin.runtime import Place, UsageError\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('sjoin.runtime'))\n"
        "assert loaded == ['sjoin.runtime', 'sjoin.runtime.errors', 'sjoin.runtime.io', "
        "'sjoin.runtime.io.files'], loaded\n"
        "import sjoin.runtime as runtime\n"
        "for name in runtime.__all__:\n"
        "    assert getattr(runtime, name) is not None, name\n"
        "assert set(runtime.__all__) <= set(dir(runtime))\n"
        "try:\n"
        "    runtime.nothing\n"
        "except AttributeError as err:\n"
        "    assert 'nothing' in str(err)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


@pytest.mark.parametrize(
    "argv",
    [
        ["check", str(EXAMPLES[0])],
        ["plan", "--format", "json", str(EXAMPLES[0])],
        ["compile", str(EXAMPLES[0]), "-o", "{tmp}/job.py"],
    ],
    ids=lambda a: a[0] + ("-json" if "json" in a else ""),
)
def test_check_plan_and_compile_load_no_engine(argv: list[str], tmp_path: Path) -> None:
    """Cold `check`, `plan` and `compile` import no engine (the runner, the operators,
    polars, pyarrow, pyspark), no printer they do not print with (rich), for a .sjoin spec
    no SQL front end (``project.py``, ``sqlparse.py``, ...: ``source.is_pipeline`` tells
    them apart) and, for a spec without a regex, no regex engine (``javaregex.py``, RE2)."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    script = (
        "import sys\n"
        f"sys.argv = ['sjoin', *{args!r}]\n"
        "from sjoin.cli.main import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as stop:\n"
        "    assert stop.code in (0, None), stop.code\n"
        "heavy = ('polars', 'pyarrow', 'pyspark', 'py4j', 'rich', 'numpy', 're2')\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in heavy})\n"
        "engine = sorted(m for m in sys.modules if m.startswith('sjoin.runtime.')\n"
        "                and m not in ('sjoin.runtime.errors', 'sjoin.runtime.io',\n"
        "                              'sjoin.runtime.io.files'))\n"
        "assert not bad and not engine, (bad, engine)\n"
        "assert 'sjoin.compiler.vocabulary.javaregex' not in sys.modules\n"
        "front = [m for m in sys.modules if m.rpartition('.')[2] in\n"
        "         ('project', 'sqlast', 'sqlparse', 'sqllower', 'inference')]\n"
        "assert not front, front\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_compiler_is_loaded_once_with_its_objects_frozen() -> None:
    """The first command of a process loads the compiler with the collector paused and
    freezes what it loaded (``cli.main._load_compiler``); the collector is on again after,
    and a second command freezes nothing more."""
    script = (
        "import gc, sys\n"
        "from sjoin.cli import main as cli\n"
        f"spec = {str(EXAMPLES[0])!r}\n"
        "assert gc.get_freeze_count() == 0 and 'sjoin.api' not in sys.modules\n"
        "cli.load(__import__('pathlib').Path(spec))\n"
        "frozen = gc.get_freeze_count()\n"
        "assert frozen > 50_000, frozen\n"
        "assert gc.isenabled()\n"
        "cli.load(__import__('pathlib').Path(spec))\n"
        "assert gc.get_freeze_count() == frozen\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


@pytest.mark.parametrize("target", ["pyspark", "pipeline"])
def test_compile_of_a_kafka_spec_prints_the_line_that_works_here(
    tmp_path: Path, target: str
) -> None:
    """Beside the cluster's `--packages` line (the spec's Spark version's connector, which
    the registry may not serve), `compile` prints the line that runs the job with this
    machine's pyspark: `--jars "$(sjoin jars SPEC)"`; its command substitution, run by a
    shell where the user runs the job (here, or the pipeline project's folder), prints the
    connector's jars, files that exist (issue 35)."""
    import re
    import shlex

    spec = ROOT / "examples" / "unpaid_orders.sjoin"
    out = tmp_path / ("job.py" if target == "pyspark" else "project")
    code, _, err = run("compile", str(spec), "--target", target, "-o", str(out))
    assert code == 0, err
    assert "--packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.3.0" in err
    command = "spark-submit" if target == "pyspark" else "spark-pipelines"
    rest = shlex.quote(str(out)) if target == "pyspark" else "run"
    found = re.search(
        rf'with this machine\'s pyspark: {command} --jars "\$\((.+?) jars (.+?)\)" '
        rf"{re.escape(rest)} \(sjoin jars\)",
        err,
    )
    assert found is not None, err
    where = Path.cwd() if target == "pyspark" else out
    jars = subprocess.run(
        ["bash", "-c", f"{found.group(1)} jars {found.group(2)}"],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert jars.returncode == 0, jars.stderr
    paths = [Path(p) for p in jars.stdout.strip().split(",")]
    assert any("spark-sql-kafka-0-10" in p.name for p in paths), paths
    assert all(p.is_file() for p in paths), paths
