"""One check of one document: its text and line index, the check's result (through
``api.py``), the index of its names and its LSP diagnostics.  Made off the event loop
(``editor/server.py`` runs ``analyse`` in a worker thread) and never changed afterwards: a
request reads the newest analysis whole.

A .sjoin document is checked from the editor's text (``api.check_text``), saved or not.  A
pipeline's .sql file is checked as its project (``api.check_pipeline`` of the folder that
holds spark-pipeline.yml, else the file alone) from the files on disk, so its diagnostics
follow the saved text; its names are indexed when the editor's text is the saved one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types as lsp

from .. import api
from ..compiler.vocabulary.source import SPEC_NAMES, PipelineError
from .diagnostics import convert_all
from .names import Names, index
from .positions import Encoding, LineIndex


@dataclass(frozen=True)
class Analysis:
    path: str  # the file's path (the URI's), or the URI itself when it names no file
    version: int | None
    lines: LineIndex
    result: api.CheckResult | None
    names: Names = field(default_factory=Names)
    diagnostics: tuple[lsp.Diagnostic, ...] = ()
    # where the document's text starts in the checked source (a file of a pipeline
    # project: the project's files are laid end to end), so that a span of the AST less
    # ``base`` is a place in the document
    base: int = 0
    # a pipeline .sql file's: the names of its whole project (spans in the project's text),
    # for a definition or a reference in another of its files
    project: Names | None = None

    @property
    def text(self) -> str:
        return self.lines.text


def is_pipeline_sql(path: str) -> bool:
    return path.lower().endswith(".sql")


def project_of(path: str) -> Path:
    """The pipeline project a .sql file belongs to: the nearest folder above it with a
    spark-pipeline.yml, else the file alone."""
    file = Path(path)
    for folder in file.parents:
        if any((folder / name).is_file() for name in SPEC_NAMES):
            return folder
    return file


def analyse(
    path: str,
    uri: str,
    text: str,
    version: int | None,
    docs: str | None = None,
    encoding: Encoding = "utf-16",
) -> Analysis:
    """Check ``text`` (the document at ``path``, the client's ``uri``) and index what the
    editor asks of it;
    positions in the client's ``encoding``."""
    lines = LineIndex(text, encoding)
    if is_pipeline_sql(path):
        try:
            result = api.check_pipeline(project_of(path))
        except PipelineError as e:
            problem = lsp.Diagnostic(
                range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
                message=str(e),
                severity=lsp.DiagnosticSeverity.Error,
                source="sjoin",
            )
            return Analysis(path, version, lines, None, Names(), (problem,))
        where = str(Path(path).resolve())
        parts = getattr(result.source, "parts", ()) or ((0, result.source),)
        base, file = next(
            ((start, f) for start, f in parts if str(Path(f.path).resolve()) == where),
            (0, result.source),
        )
        converted = convert_all(result.diagnostics, result.source, file.path, uri, lines, docs)
        project = index(result) if file.text == text else None
        names = project.within(base, len(file.text)) if project is not None else Names()
        return Analysis(path, version, lines, result, names, tuple(converted), base, project)
    result = api.check_text(text, path)
    converted = convert_all(result.diagnostics, result.source, result.source.path, uri, lines, docs)
    return Analysis(path, version, lines, result, index(result), tuple(converted))
