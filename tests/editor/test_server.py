"""`sjoin lsp` end to end: pytest-lsp's client drives the installed server over stdio, one
test per feature (diagnostics, hover, definition, references, outline, completion, code
actions) and per bad input (text that was not UTF-8, a spec past the size limit, edits
faster than checks, positions past the end, a check that raises)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from sjoin import check_text
from sjoin.compiler.frontend.limits import MAX_SPEC_CHARS

from .session import FAULT, ROOT, at, change, diagnostics_of, opened, uri_of

TYPO = """\
stream a (k BIGINT, t TIMESTAMP) watermark t delay 1 second
stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 second
join j = a AS x INNER JOIN bb AS y ON x.k = y.k AND x.t BETWEEN y.t AND y.t + INTERVAL 1 MINUTE
"""
FIXED = TYPO.replace(" bb ", " b ")
AD = (ROOT / "examples" / "ad_attribution.sjoin").read_text(encoding="utf-8")


def doc(uri: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri)


async def hover_at(client: LanguageClient, uri: str, where: lsp.Position) -> str | None:
    found = await client.text_document_hover_async(lsp.HoverParams(doc(uri), where))
    if found is None:
        return None
    assert isinstance(found.contents, lsp.MarkupContent)
    return found.contents.value


# ---------------------------------------------------------------------- diagnostics


@pytest.mark.asyncio
async def test_diagnostics_on_open_are_those_of_sjoin_check(client: LanguageClient) -> None:
    _uri, diags = await opened(client, "typo.sjoin", TYPO)
    (d,) = diags
    (expected,) = check_text(TYPO, "typo.sjoin").diagnostics
    assert d.code == expected.code == "E003"
    assert d.severity == lsp.DiagnosticSeverity.Error
    assert d.range == lsp.Range(lsp.Position(2, 27), lsp.Position(2, 29))  # `bb`
    assert (
        d.message
        == (f"{expected.message}\n{expected.label}\nhelp: {expected.help}")
        == "unknown relation `bb`\nnot defined before this statement\nhelp: did you mean `b`?"
    )
    assert d.source == "sjoin"
    assert d.code_description is not None
    assert d.code_description.href == (ROOT / "docs" / "diagnostics.md").as_uri() + "#e003"


@pytest.mark.asyncio
async def test_diagnostics_on_change_replace_the_old_ones(client: LanguageClient) -> None:
    uri, diags = await opened(client, "change.sjoin", TYPO)
    assert [d.code for d in diags] == ["E003"]
    waiting = asyncio.ensure_future(diagnostics_of(client, uri, 2))
    await asyncio.sleep(0)
    change(client, uri, 2, FIXED)
    assert await waiting == []
    waiting = asyncio.ensure_future(diagnostics_of(client, uri, 3))
    await asyncio.sleep(0)
    change(client, uri, 3, FIXED.replace("x.k = y.k", "x.kk = y.k"))
    (d,) = await waiting
    assert (d.code, d.range.start, d.range.end) == (
        "E004",
        lsp.Position(2, 37),
        lsp.Position(2, 41),
    )


@pytest.mark.asyncio
async def test_incremental_changes(client: LanguageClient) -> None:
    # the server syncs incrementally: an edit of one range, after an emoji (two UTF-16 units)
    text = TYPO.replace("join j", "-- 🎉\njoin j")
    uri, (d,) = await opened(client, "incremental.sjoin", text)
    assert d.range.start == lsp.Position(3, 27)
    waiting = asyncio.ensure_future(diagnostics_of(client, uri, 2))
    await asyncio.sleep(0)
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [
                lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(lsp.Position(3, 27), lsp.Position(3, 28)), text=""
                ),
                lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(lsp.Position(2, 3), lsp.Position(2, 5)), text="🎉!"
                ),
            ],
        )
    )
    assert await waiting == []


@pytest.mark.asyncio
async def test_a_warning_is_a_warning(client: LanguageClient) -> None:
    spec = AD.replace("delay 3 hours", "delay 3 hours").replace(
        "AND c.click_time BETWEEN i.impression_time AND i.impression_time + INTERVAL 1 HOUR\n", ""
    )
    expected = check_text(spec, "w.sjoin").diagnostics
    _, diags = await opened(client, "warning.sjoin", spec)
    assert [(d.code, d.severity) for d in diags] == [
        (
            e.code,
            lsp.DiagnosticSeverity.Error
            if e.severity == "error"
            else lsp.DiagnosticSeverity.Warning,
        )
        for e in expected
    ]
    assert diags  # the outer join without a range condition: E021


@pytest.mark.asyncio
async def test_positions_count_utf16_units(client: LanguageClient) -> None:
    # an emoji is two UTF-16 units, an é one: the typo's column counts them so
    text = TYPO.replace("join j = a AS x", "join j = a AS x /* é 🎉 */")
    _, (d,) = await opened(client, "utf16.sjoin", text)
    line = text.splitlines()[2]
    start = line.index(" bb ") + 1
    assert d.range.start == lsp.Position(2, start + 1)  # the emoji's second unit
    assert d.range.end == lsp.Position(2, start + 3)


@pytest.mark.asyncio
async def test_crlf_lines(client: LanguageClient) -> None:
    _, (d,) = await opened(client, "crlf.sjoin", TYPO.replace("\n", "\r\n"))
    assert d.range == lsp.Range(lsp.Position(2, 27), lsp.Position(2, 29))


# ---------------------------------------------------------------------- hover


@pytest.mark.asyncio
async def test_hover_on_a_join_shows_its_plan(client: LanguageClient) -> None:
    uri, diags = await opened(client, "ad.sjoin", AD)
    assert diags == []
    text = await hover_at(client, uri, at(AD, "join attributed", shift=6))
    assert text is not None
    assert "join attributed = impressions AS i LEFT OUTER JOIN clicks AS c" in text
    assert "keys             i.ad_id = c.ad_id" in text
    assert "i.campaign <> 'internal' (in the join" in text  # the filter before it
    assert "left state       value watermark: i.impression_time <= watermark - 1 hour 1 ms" in text
    assert "unmatched `i` rows come out null-padded when the watermark reaches" in text
    # the same text on the join's keywords and on the sink's reference to it
    assert await hover_at(client, uri, at(AD, "LEFT OUTER JOIN", shift=3)) == text
    assert await hover_at(client, uri, at(AD, "sink attributed", shift=6)) == text


@pytest.mark.asyncio
async def test_hover_on_a_stream_shows_its_watermark(client: LanguageClient) -> None:
    uri, _ = await opened(client, "ad.sjoin", AD)
    text = await hover_at(client, uri, at(AD, "clicks AS c", shift=2))
    assert text is not None
    assert "stream clicks: watermark click_time delay 3 hours" in text
    assert "`click_time` TIMESTAMP" in text


@pytest.mark.asyncio
async def test_hover_on_a_column_shows_its_type(client: LanguageClient) -> None:
    uri, _ = await opened(client, "ad.sjoin", AD)
    text = await hover_at(client, uri, at(AD, "c.ad_id", shift=3))
    assert text == "`ad_id`: **BIGINT**\n\ncolumn of `clicks`, right side"
    declared = await hover_at(client, uri, at(AD, "campaign         STRING", shift=1))
    assert declared is not None and declared.startswith("`campaign`: **STRING**")
    marked = await hover_at(client, uri, at(AD, "c.click_time BETWEEN", shift=4))
    assert marked is not None and "event time: stream clicks: watermark click_time" in marked
    # a join's output column: where it comes from
    downstream = AD + "\nview v = SELECT campaign FROM attributed\n"
    uri, _ = await opened(client, "origin.sjoin", downstream)
    made = await hover_at(client, uri, at(downstream, "SELECT campaign", shift=8))
    assert made == "`campaign`: **STRING**\n\ncolumn of `attributed`, made as `i.campaign`"


@pytest.mark.asyncio
async def test_hover_on_a_diagnostic_code_shows_its_documentation(
    client: LanguageClient,
) -> None:
    text = "-- about E021 and W001\n" + AD
    uri, _ = await opened(client, "codes.sjoin", text)
    shown = await hover_at(client, uri, lsp.Position(0, 10))
    assert shown is not None
    assert shown.startswith("**E021** (error): join state can never be evicted")
    assert "Spark rejects outer and semi stream-stream joins" in shown


# ---------------------------------------------------------------------- navigation


@pytest.mark.asyncio
async def test_definition_of_a_relation_an_alias_and_a_column(client: LanguageClient) -> None:
    uri, _ = await opened(client, "ad.sjoin", AD)

    async def target(where: lsp.Position) -> lsp.Range:
        found = await client.text_document_definition_async(lsp.DefinitionParams(doc(uri), where))
        assert isinstance(found, lsp.Location) and found.uri == uri
        return found.range

    def word(needle: str, shift: int, length: int) -> lsp.Range:
        start = at(AD, needle, shift=shift)
        return lsp.Range(start, lsp.Position(start.line, start.character + length))

    assert await target(at(AD, "clicks AS c", shift=1)) == word("stream clicks", 7, 6)
    assert await target(at(AD, "c.ad_id")) == word("clicks AS c", 10, 1)
    assert await target(at(AD, "c.click_time BETWEEN", shift=3)) == word(
        "click_time  TIMESTAMP", 0, 10
    )


@pytest.mark.asyncio
async def test_references_of_a_relation(client: LanguageClient) -> None:
    uri, _ = await opened(client, "ad.sjoin", AD)
    found = await client.text_document_references_async(
        lsp.ReferenceParams(
            context=lsp.ReferenceContext(True),
            text_document=doc(uri),
            position=at(AD, "join attributed", shift=6),
        )
    )
    assert found is not None
    assert [loc.range.start for loc in found] == [
        at(AD, "join attributed", shift=5),
        at(AD, "sink attributed", shift=5),
    ]
    aliases = await client.text_document_references_async(
        lsp.ReferenceParams(
            context=lsp.ReferenceContext(False),
            text_document=doc(uri),
            position=at(AD, "AS i", shift=3),
        )
    )
    assert aliases is not None and len(aliases) == AD.count(" i.") + AD.count("(i.")


@pytest.mark.asyncio
async def test_references_of_a_column(client: LanguageClient) -> None:
    uri, _ = await opened(client, "ad.sjoin", AD)
    found = await client.text_document_references_async(
        lsp.ReferenceParams(
            context=lsp.ReferenceContext(True),
            text_document=doc(uri),
            position=at(AD, "i.ad_id", shift=3),
        )
    )
    assert found is not None
    # impressions.ad_id: its declaration, then `i.ad_id` in the ON and in the SELECT
    assert [loc.range.start for loc in found] == [
        at(AD, "ad_id            BIGINT"),
        at(AD, "i.ad_id", shift=2),
        at(AD, "i.ad_id", nth=1, shift=2),
    ]


@pytest.mark.asyncio
async def test_outline_has_a_symbol_per_statement(client: LanguageClient) -> None:
    uri, _ = await opened(client, "ad.sjoin", AD)
    found = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(doc(uri)))
    assert found is not None
    assert [(s.name, s.detail) for s in found if isinstance(s, lsp.DocumentSymbol)] == [
        ("spark 4.0", "target Spark"),
        ("impressions", "stream"),
        ("clicks", "stream"),
        ("attributed", "join"),
        ("sink attributed", "parquet"),
    ]
    stream = found[1]
    assert isinstance(stream, lsp.DocumentSymbol) and stream.children is not None
    assert [c.name for c in stream.children] == ["ad_id", "impression_time", "campaign"]


# ---------------------------------------------------------------------- completion


async def completions(client: LanguageClient, uri: str, where: lsp.Position) -> list[str]:
    found = await client.text_document_completion_async(lsp.CompletionParams(doc(uri), where))
    assert isinstance(found, lsp.CompletionList)
    return [item.label for item in found.items]


@pytest.mark.asyncio
async def test_completion_of_an_alias_columns(client: LanguageClient) -> None:
    text = AD.replace("SELECT i.ad_id,", "SELECT c.")
    uri, _ = await opened(client, "complete.sjoin", text)
    labels = await completions(client, uri, at(text, "SELECT c.", shift=9))
    assert labels == ["ad_id", "click_time", "user_id"]


@pytest.mark.asyncio
async def test_completion_of_keywords_relations_functions_settings_units(
    client: LanguageClient,
) -> None:
    text = AD + "\njoin x = \nset \nstream s (k BIGINT, t TIMESTAMP) watermark t delay 5 "
    uri, _ = await opened(client, "complete.sjoin", text)
    general = await completions(client, uri, at(text, "join x = ", shift=9))
    assert {"impressions", "clicks", "attributed", "JOIN", "stream", "window", "lower"} <= set(
        general
    )
    settings = await completions(client, uri, at(text, "set \n", shift=4))
    assert "multiple_watermark_policy" in settings and "JOIN" not in settings
    units = await completions(
        client, uri, lsp.Position(text.count("\n"), len(text.splitlines()[-1]))
    )
    assert "seconds" in units and "hours" in units


# ---------------------------------------------------------------------- code actions


@pytest.mark.asyncio
async def test_code_action_applies_the_did_you_mean(client: LanguageClient) -> None:
    uri, diags = await opened(client, "fix.sjoin", TYPO)
    actions = await client.text_document_code_action_async(
        lsp.CodeActionParams(doc(uri), diags[0].range, lsp.CodeActionContext(list(diags)))
    )
    assert actions is not None
    (action,) = actions
    assert isinstance(action, lsp.CodeAction)
    assert action.title == "Replace `bb` with `b`"
    assert action.kind == lsp.CodeActionKind.QuickFix
    assert action.edit is not None and action.edit.changes is not None
    assert list(action.edit.changes[uri]) == [lsp.TextEdit(diags[0].range, "b")]


@pytest.mark.asyncio
async def test_code_actions_for_column_function_and_setting_typos(client: LanguageClient) -> None:
    text = (
        "set watermark_polcy = 'min'\n"
        + FIXED.replace("x.k = y.k", "x.kk = y.k").rstrip("\n")
        + " SELECT x.k, lenth('a') AS n\n"
    )
    uri, diags = await opened(client, "fixes.sjoin", text)
    edits = {}
    for d in diags:
        actions = await client.text_document_code_action_async(
            lsp.CodeActionParams(doc(uri), d.range, lsp.CodeActionContext([d]))
        )
        for a in actions or []:
            assert isinstance(a, lsp.CodeAction) and a.edit and a.edit.changes
            edits[d.code] = a.edit.changes[uri][0].new_text
    assert edits == {"E015": "multiple_watermark_policy", "E004": "k", "E017": "length"}


@pytest.mark.asyncio
async def test_a_code_action_bounds_a_join_s_state_with_a_range_condition(
    client: LanguageClient,
) -> None:
    """W001 (state never evicted) offers the range condition its help suggests, inserted
    after the ON condition; the spec it makes has no W001 (the hour is a start to tune)."""
    text = FIXED.replace(" AND x.t BETWEEN y.t AND y.t + INTERVAL 1 MINUTE", " AND x.t > y.t")
    uri, diags = await opened(client, "unbounded.sjoin", text)
    unbounded = [d for d in diags if d.code == "W001"]
    assert unbounded, diags
    actions = await client.text_document_code_action_async(
        lsp.CodeActionParams(doc(uri), unbounded[0].range, lsp.CodeActionContext(unbounded[:1]))
    )
    assert actions is not None
    (action,) = actions
    assert isinstance(action, lsp.CodeAction) and action.edit and action.edit.changes
    (edit,) = action.edit.changes[uri]
    end = at(text, "x.t > y.t", shift=len("x.t > y.t"))
    assert edit == lsp.TextEdit(
        lsp.Range(end, end), " AND y.t BETWEEN x.t AND x.t + INTERVAL 1 HOUR"
    )
    assert action.title == "Insert `AND y.t BETWEEN x.t AND x.t + INTERVAL 1 HOUR`"
    line = text.splitlines()[end.line]
    fixed = text.replace(line, line[: end.character] + edit.new_text + line[end.character :])
    assert "W001" not in [d.code for d in check_text(fixed, "f.sjoin").diagnostics]


# ---------------------------------------------------------------------- bad input


@pytest.mark.asyncio
async def test_text_that_was_not_utf8(client: LanguageClient) -> None:
    raw = TYPO.encode("utf-8").replace(b"-- ", b"") + b"-- caf\xe9 \xff\xfe\n"
    # an editor shows undecodable bytes as U+FFFD, or keeps them as lone surrogates
    for n, text in enumerate(
        (raw.decode("utf-8", "replace"), raw.decode("utf-8", "surrogateescape"))
    ):
        _, diags = await opened(client, f"latin{n}.sjoin", text)
        codes = [d.code for d in diags]
        assert "E003" in codes
        if n == 1:  # a lone surrogate is a character a spec may not hold
            assert "E008" in codes
    # and the server still answers
    _uri, diags = await opened(client, "after.sjoin", FIXED)
    assert diags == []


@pytest.mark.asyncio
async def test_a_spec_past_the_size_limit_is_refused_quickly(client: LanguageClient) -> None:
    filler = "-- " + "x" * 96 + "\n"
    text = FIXED + filler * (MAX_SPEC_CHARS // len(filler) + 1)
    assert len(text) > MAX_SPEC_CHARS
    started = time.monotonic()
    _, diags = await opened(client, "big.sjoin", text)
    assert [d.code for d in diags] == ["E031"]
    assert time.monotonic() - started < 30


@pytest.mark.asyncio
async def test_a_1mb_spec_within_the_limit_is_checked(client: LanguageClient) -> None:
    filler = "-- " + "x" * 96 + "\n"
    text = TYPO + filler * ((MAX_SPEC_CHARS - len(TYPO)) // len(filler))
    assert MAX_SPEC_CHARS - len(filler) < len(text) <= MAX_SPEC_CHARS
    uri, diags = await opened(client, "onemb.sjoin", text)
    assert [(d.code, d.range.start) for d in diags] == [("E003", lsp.Position(2, 27))]
    # a change near its end is checked again, and hover still answers
    waiting = asyncio.ensure_future(diagnostics_of(client, uri, 2))
    await asyncio.sleep(0)
    change(client, uri, 2, text.replace(" bb ", " b ", 1))
    assert await waiting == []
    assert await hover_at(client, uri, at(TYPO, "a AS x")) is not None


@pytest.mark.asyncio
async def test_edits_faster_than_checks_publish_the_last_text(client: LanguageClient) -> None:
    uri, _ = await opened(client, "fast.sjoin", FIXED)
    last = asyncio.ensure_future(diagnostics_of(client, uri, 41))
    await asyncio.sleep(0)
    for version in range(2, 42):  # 40 edits without a pause; the last one has a typo
        change(client, uri, version, TYPO if version == 41 else FIXED + f"-- {version}\n")
    (d,) = await last
    assert d.code == "E003"
    # the server answers about the newest text: `bb` is where the typo is
    text = await hover_at(client, uri, at(TYPO, "a AS x"))
    assert text is not None and "`k` BIGINT" in text


@pytest.mark.asyncio
async def test_positions_past_the_end(client: LanguageClient) -> None:
    uri, _ = await opened(client, "end.sjoin", AD)
    for where in (lsp.Position(10_000, 0), lsp.Position(3, 10_000)):
        assert await hover_at(client, uri, where) is None
        found = await client.text_document_definition_async(lsp.DefinitionParams(doc(uri), where))
        assert found is None
        await client.text_document_completion_async(lsp.CompletionParams(doc(uri), where))
    # an unknown document
    assert await hover_at(client, uri_of("never-opened.sjoin"), lsp.Position(0, 0)) is None
    assert await hover_at(client, uri, at(AD, "join attributed", shift=6)) is not None


@pytest.mark.asyncio
async def test_a_check_that_raises_does_not_end_the_server(faulty_client: LanguageClient) -> None:
    client = faulty_client
    uri, diags = await opened(client, "crash.sjoin", TYPO + f"-- {FAULT}\n")
    (d,) = diags  # the old diagnostics are gone, replaced by one that says what happened
    assert d.code == "E999"
    assert "a fault injected by SJOIN_LSP_FAULT" in d.message
    assert any("Traceback" in m.message for m in client.log_messages)
    assert await hover_at(client, uri, lsp.Position(2, 6)) is None
    waiting = asyncio.ensure_future(diagnostics_of(client, uri, 2))
    await asyncio.sleep(0)
    change(client, uri, 2, TYPO)
    assert [d.code for d in await waiting] == ["E003"]


# ---------------------------------------------------------------------- pipeline SQL


@pytest.mark.asyncio
async def test_a_pipeline_sql_file_gets_its_project_s_diagnostics(
    client: LanguageClient, tmp_path: Path
) -> None:
    sql = tmp_path / "ad.sql"
    done = subprocess.run(
        [sys.executable, "-m", "sjoin", "fmt", str(ROOT / "examples" / "ad_attribution.sjoin"),
         "--to", "sql", "-o", str(sql)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = sql.read_text(encoding="utf-8").replace("STREAM(clicks)", "STREAM(clickz)")
    sql.write_text(text, encoding="utf-8")
    uri = sql.as_uri()
    waiting = asyncio.ensure_future(diagnostics_of(client, uri, 1))
    await asyncio.sleep(0)
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=uri, language_id="sql", version=1, text=text)
        )
    )
    (d,) = await waiting
    start = at(text, "clickz")
    assert d.code == "E003"
    assert d.message.startswith("unknown dataset `clickz`")
    assert d.range == lsp.Range(start, lsp.Position(start.line, start.character + 6))


@pytest.mark.asyncio
async def test_hover_definition_outline_and_completion_in_a_pipeline_sql_file(
    client: LanguageClient, tmp_path: Path
) -> None:
    sql = tmp_path / "ad.sql"
    done = subprocess.run(
        [sys.executable, "-m", "sjoin", "fmt", str(ROOT / "examples" / "ad_attribution.sjoin"),
         "--to", "sql", "-o", str(sql)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = sql.read_text(encoding="utf-8")
    uri = sql.as_uri()
    waiting = asyncio.ensure_future(diagnostics_of(client, uri, 1))
    await asyncio.sleep(0)
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=uri, language_id="sql", version=1, text=text)
        )
    )
    assert await waiting == []
    shown = await hover_at(client, uri, at(text, "TABLE attributed AS", shift=7))
    assert shown is not None and "keys             i.ad_id = c.ad_id" in shown
    found = await client.text_document_definition_async(
        lsp.DefinitionParams(doc(uri), at(text, "STREAM(clicks)", shift=8))
    )
    assert isinstance(found, lsp.Location)
    assert found.range.start == at(text, "TABLE clicks", shift=6)
    symbols = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(doc(uri)))
    names = [s.name for s in symbols or [] if isinstance(s, lsp.DocumentSymbol)]
    assert {"impressions", "clicks", "attributed"} <= set(names)
    labels = await completions(client, uri, at(text, "c.click_time AS", shift=2))
    assert "user_id" in labels


PROJECT = ROOT / "tests" / "integration" / "pipelines" / "catalogue" / "inner_range"


def sql_project(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of a two-file pipeline project: ``streams.sql`` defines the streaming tables
    ``orders`` and ``payments``, ``paid.sql`` joins them."""
    (tmp_path / "spark-pipeline.yml").write_text(
        (PROJECT / "spark-pipeline.yml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (tmp_path / "transformations").mkdir()
    for name in ("streams.sql", "paid.sql"):
        text = (PROJECT / "transformations" / name).read_text(encoding="utf-8")
        (tmp_path / "transformations" / name).write_text(text, encoding="utf-8")
    return tmp_path / "transformations" / "streams.sql", tmp_path / "transformations" / "paid.sql"


async def open_sql(client: LanguageClient, path: Path) -> tuple[str, str]:
    text, uri = path.read_text(encoding="utf-8"), path.as_uri()
    waiting = asyncio.ensure_future(diagnostics_of(client, uri, 1))
    await asyncio.sleep(0)
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=uri, language_id="sql", version=1, text=text)
        )
    )
    assert await waiting == []
    return uri, text


def span_at(text: str, needle: str, length: int, shift: int = 0) -> lsp.Range:
    start = at(text, needle, shift=shift)
    return lsp.Range(start, lsp.Position(start.line, start.character + length))


@pytest.mark.asyncio
async def test_definition_and_references_across_a_pipeline_s_files(
    client: LanguageClient, tmp_path: Path
) -> None:
    streams, paid = sql_project(tmp_path)
    streams_text = streams.read_text(encoding="utf-8")
    paid_uri, paid_text = await open_sql(client, paid)
    # a table paid.sql reads, defined in streams.sql (a file the editor has not opened)
    found = await client.text_document_definition_async(
        lsp.DefinitionParams(doc(paid_uri), at(paid_text, "STREAM(orders)", shift=8))
    )
    assert found == lsp.Location(streams.as_uri(), span_at(streams_text, "orders (order_id", 6))
    # a column of it, through its alias
    found = await client.text_document_definition_async(
        lsp.DefinitionParams(doc(paid_uri), at(paid_text, "p.paid_at BETWEEN", shift=3))
    )
    assert found == lsp.Location(streams.as_uri(), span_at(streams_text, "paid_at TIMESTAMP", 7))
    # its references: the definition in streams.sql and the use in paid.sql
    refs = await client.text_document_references_async(
        lsp.ReferenceParams(
            context=lsp.ReferenceContext(True),
            text_document=doc(paid_uri),
            position=at(paid_text, "STREAM(payments)", shift=8),
        )
    )
    assert sorted(refs or [], key=lambda r: r.uri) == [
        lsp.Location(paid_uri, span_at(paid_text, "STREAM(payments)", 8, shift=7)),
        lsp.Location(streams.as_uri(), span_at(streams_text, "payments (order_id", 8)),
    ]
    # and from the defining file, the uses in the other
    streams_uri, _ = await open_sql(client, streams)
    refs = await client.text_document_references_async(
        lsp.ReferenceParams(
            context=lsp.ReferenceContext(False),
            text_document=doc(streams_uri),
            position=at(streams_text, "orders (order_id", shift=2),
        )
    )
    assert list(refs or []) == [
        lsp.Location(paid_uri, span_at(paid_text, "STREAM(orders)", 6, shift=7))
    ]
    # a name of this file still answers in this file
    found = await client.text_document_definition_async(
        lsp.DefinitionParams(doc(paid_uri), at(paid_text, "o.order_time AND", shift=0))
    )
    assert found == lsp.Location(paid_uri, span_at(paid_text, "AS o\n", 1, shift=3))


@pytest.mark.asyncio
async def test_definition_of_a_stream_declared_in_the_schema_file(
    client: LanguageClient, tmp_path: Path
) -> None:
    spec = tmp_path / "ad.sjoin"
    spec.write_text(AD.replace("spark 4.0\n", "spark 4.1\n"), encoding="utf-8")
    project = tmp_path / "project"
    done = subprocess.run(
        [sys.executable, "-m", "sjoin", "compile", "--target", "pipeline", str(spec),
         "-o", str(project)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    schemas = project / "sjoin-schemas.sql"
    schemas_text = schemas.read_text(encoding="utf-8")
    uri, text = await open_sql(client, project / "transformations" / "relation_000.sql")
    found = await client.text_document_definition_async(
        lsp.DefinitionParams(doc(uri), at(text, "STREAM(clicks)", shift=8))
    )
    assert found == lsp.Location(
        schemas.as_uri(), span_at(schemas_text, "CREATE STREAMING TABLE clicks", 6, shift=23)
    )


@pytest.mark.asyncio
async def test_code_actions_for_syntax_slips(client: LanguageClient) -> None:
    text = FIXED.replace("INNER JOIN", "OUTER JOIN").replace("stream b", "strem b")
    uri, diags = await opened(client, "slips.sjoin", text)
    found = {}
    for d in diags:
        actions = await client.text_document_code_action_async(
            lsp.CodeActionParams(doc(uri), d.range, lsp.CodeActionContext([d]))
        )
        for a in actions or []:
            assert isinstance(a, lsp.CodeAction) and a.edit and a.edit.changes
            (edit,) = a.edit.changes[uri]
            found[a.title] = edit
    outer = at(text, "OUTER JOIN")
    assert found == {
        "Replace `strem` with `stream`": lsp.TextEdit(
            lsp.Range(lsp.Position(1, 0), lsp.Position(1, 5)), "stream"
        ),
        "Insert `LEFT`": lsp.TextEdit(lsp.Range(outer, outer), "LEFT "),
    }


@pytest.mark.asyncio
async def test_a_name_defined_twice_points_at_the_first_definition(
    client: LanguageClient,
) -> None:
    text = FIXED + "stream a (k BIGINT)\nstream c (k BIGINT, k STRING)\n"
    uri, diags = await opened(client, "twice.sjoin", text)
    by_message = {d.message.split("\n")[0]: d for d in diags}
    again = by_message["relation `a` is already defined"]
    assert again.range.start == lsp.Position(3, 7)
    assert list(again.related_information or ()) == [
        lsp.DiagnosticRelatedInformation(
            lsp.Location(uri, lsp.Range(lsp.Position(0, 7), lsp.Position(0, 8))),
            "`a` is first defined here",
        )
    ]
    column = by_message["column `k` is declared twice in `c`"]
    assert column.related_information is not None
    (first,) = column.related_information
    assert (first.location.range.start, first.message) == (
        lsp.Position(4, 10),
        "first declared here",
    )
