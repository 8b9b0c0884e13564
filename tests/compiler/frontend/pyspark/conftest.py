"""What the tests of the PySpark front end share: a job's text read offline and lowered."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from sjoin.compiler.diagnostics.diagnostics import Diagnostics
from sjoin.compiler.frontend import ast

LowerJob = Callable[[str, str], dict[str, ast.Statement]]


@pytest.fixture(scope="module")
def lower_job(tmp_path_factory: pytest.TempPathFactory) -> LowerJob:
    """``lower_job(name, text)``: the job ``text`` (a file ``name``.py) read in its child
    process and lowered with no error, its streams, views and joins by name."""
    from sjoin.compiler.frontend.pyspark import read_job
    from sjoin.compiler.frontend.pyspark.lower import lower

    def read(name: str, text: str) -> dict[str, ast.Statement]:
        path: Path = tmp_path_factory.mktemp(name) / f"{name}.py"
        path.write_text(text, encoding="utf-8")
        job = read_job(path)
        assert job.failure is None, job.failure
        diags = Diagnostics()
        spec = lower(job, text, diags)
        assert not [d for d in diags.items if d.severity == "error"], diags.items
        return {
            s.name.text: s
            for s in spec.statements
            if isinstance(s, ast.JoinDecl | ast.ViewDecl | ast.StreamDecl)
        }

    return read
