"""THE table of diagnostic codes.

Every code the compiler can emit is registered here, once, with its severity, a title and an
explanation; ``docs/diagnostics.md`` is generated from this table (``python -m
sjoin.compiler.diagnostics.codes``) and a test fails when the two drift apart.  Codes are stable: a
code is
never reused for another meaning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Code:
    id: str
    severity: Severity
    title: str
    explain: str


CODES: Final[dict[str, Code]] = {
    c.id: c
    for c in (
        # ------------------------------------------------------------ syntax and names
        Code(
            "E001",
            "error",
            "syntax error",
            "The text does not follow the grammar of the .sjoin language. The message names "
            "what was found and what the parser expected there.",
        ),
        Code(
            "E002",
            "error",
            "duplicate definition",
            "A relation (stream, join or aggregate), a column of a stream, an alias of a join "
            "or an output column is defined twice; or a source or sink option is given twice, "
            "in any case (Spark reads option names in any case and keeps the last).",
        ),
        Code(
            "E003",
            "error",
            "unknown relation",
            "A join, aggregate or sink names a relation that is not defined before it. "
            "Statements may come in any order, but a name must be defined before it is used.",
        ),
        Code(
            "E004",
            "error",
            "unknown column",
            "A column reference does not name a column of the relations in scope.",
        ),
        Code(
            "E005",
            "error",
            "unknown alias",
            "A qualified column (`a.x`) uses a qualifier that is neither an alias nor a "
            "relation name of the join.",
        ),
        Code(
            "E006",
            "error",
            "ambiguous column",
            "An unqualified column name exists on both sides of a join; qualify it.",
        ),
        Code(
            "E007",
            "error",
            "unknown type",
            "A column type is not a Spark SQL type that sjoin supports.",
        ),
        Code(
            "E008",
            "error",
            "character not allowed",
            "The spec holds a character that can hide or disguise what it says: a control "
            "character other than TAB, LF and CR (anywhere, comments included), a TAB in a "
            "quoted name, a lone surrogate, the line or paragraph separator (U+2028, U+2029), "
            "or a bidirectional embedding, override or isolate (U+202A to U+202E, U+2066 to "
            'U+2069: the "Trojan Source" characters, also in comments). A quoted name or a '
            "string cannot hold a line break (LF, CRLF or a lone CR). The diagnostic points at "
            "the character and names its code point.",
        ),
        # ------------------------------------------------------------ types and values
        Code(
            "E010",
            "error",
            "watermark on a non-timestamp column",
            "Spark's `withWatermark` needs a TIMESTAMP column of the stream itself.",
        ),
        Code(
            "E011",
            "error",
            "incompatible comparison",
            "The two operands of a comparison have types that cannot be compared, e.g. a "
            "TIMESTAMP and a STRING. Spark would silently cast the string (and yield NULL on "
            "a typo); sjoin asks for a typed literal instead. A number or a BOOLEAN compared "
            "with a STRING is no error: Spark casts the string, and so does sjoin (W013).",
        ),
        Code(
            "E012",
            "error",
            "type error",
            "An operator or function gets an operand of the wrong type, e.g. a join "
            "condition that is not boolean, or a number added to a timestamp.",
        ),
        Code(
            "E013",
            "error",
            "month or year duration",
            "Durations in months or years have no fixed length; Spark's join state "
            "watermark ignores such conditions. Use days or weeks.",
        ),
        Code(
            "E014",
            "error",
            "invalid duration",
            "A duration has an unknown unit, or is negative where it must not be; or a "
            "sliding window slides so little that each row falls in more than 10,000 windows "
            "(Spark's TimeWindowing expands each row into ceil(duration / slide) rows, and so "
            "does sjoin's runtime: a day sliding by a millisecond is 86,400,000 rows per row).",
        ),
        Code(
            "E015",
            "error",
            "unknown setting",
            "A `set` statement names a setting that sjoin does not know.",
        ),
        Code(
            "E016",
            "error",
            "invalid setting value",
            "A `set` statement or the `spark` statement gives a value the setting does not accept.",
        ),
        Code(
            "E017",
            "error",
            "unknown function",
            "A function call names a function that sjoin cannot type, compile or run.",
        ),
        Code(
            "E018",
            "error",
            "wrong number of arguments",
            "A function call has too few or too many arguments.",
        ),
        Code(
            "E019",
            "error",
            "invalid select item",
            "A SELECT item needs a name (use AS), aggregates belong in `aggregate` "
            "statements, and an aggregate's items must be grouping keys or aggregates.",
        ),
        Code(
            "E024",
            "error",
            "invalid sink or source",
            "A sink or source uses an unknown format, misses a required option, gives an "
            "option a value it cannot take (a Kafka source's value `format`; a column that "
            "the relation lacks or whose type does not fit, for a Kafka sink's `key` or a "
            "Kafka source's `timestamp_column` and `key_column`; those two on anything but a "
            "Kafka source; sjoin's own option names in another case), or a relation has more "
            "than one sink.",
        ),
        # ------------------------------------------------------------ Spark's analysis rules
        Code(
            "E020",
            "error",
            "join without an equality between its sides",
            "Spark plans a stream-stream join only as a symmetric hash join, which needs at "
            "least one equality between a left and a right expression. Without one Spark "
            "fails at the first batch with `Stream-stream join without equality predicate "
            "is not supported`. A null-safe equality between the sides (`a <=> b`, `a IS NOT "
            "DISTINCT FROM b`) is such an equality (Spark's two keys `coalesce(a, d)` and "
            "`isnull(a)`); `a IS DISTINCT FROM b` is not.",
        ),
        Code(
            "E021",
            "error",
            "join state can never be evicted",
            "Spark rejects outer and semi stream-stream joins unless the join keys hold a "
            "watermarked column, or a range condition gives the side whose unmatched rows "
            "must be emitted a state watermark from the other side's watermark (full outer "
            "needs either). sjoin applies the same rule to LEFT ANTI, planned as a left "
            "outer join. A `dedup ... WITHIN WATERMARK` whose input carries no watermark is "
            "refused too: Spark's dropDuplicatesWithinWatermark keeps each key until its "
            "event time plus the watermark delay has passed, and without a watermark it is "
            '"not supported on streaming DataFrames/DataSets without watermark".',
        ),
        Code(
            "E022",
            "error",
            "global watermark correctness",
            "A stateful operator is placed after one that may emit rows older than the "
            "watermark; the downstream operator would drop those rows as late. The rule "
            "depends on the Spark version (UnsupportedOperationChecker's "
            "checkStreamingQueryGlobalWatermarkLimit).",
        ),
        Code(
            "E023",
            "error",
            "output mode not allowed",
            "Spark allows a stream-stream join only in Append mode (Append or Update for "
            "inner and left semi joins from Spark 4.2, where Update emits the rows of "
            "Append), an aggregation in Append mode only with a watermarked column among its "
            "grouping keys, and Complete mode only for a query with an aggregate. The mode is "
            "the query's: an aggregate's or a join's `OUTPUT MODE`, a PySpark job's "
            "`outputMode(...)`.",
        ),
        Code(
            "E025",
            "error",
            "several event-time columns on one join input",
            "From Spark 3.5 a join input (or a dedup's) may carry only one column with "
            "watermark metadata; Spark fails at the first batch with "
            "MULTIPLE_EVENT_TIME_COLUMNS.",
        ),
        Code(
            "E026",
            "error",
            "non-deterministic join condition",
            "Spark rejects non-deterministic expressions (rand(), uuid(), ...) in a join "
            "condition.",
        ),
        Code(
            "E027",
            "error",
            "unsupported by the target Spark version",
            "The spec uses a feature that the `spark` version it targets does not have (e.g. "
            "`dedup ... WITHIN WATERMARK`, Spark's dropDuplicatesWithinWatermark, before 3.5).",
        ),
        Code(
            "E028",
            "error",
            "outer rows never emitted",
            "An outer (or LEFT ANTI) join whose preserved side's state is never evicted: Spark "
            "accepts it, but it emits a side's unmatched rows, null-padded, only when it "
            "evicts them, so they never come out: silent data loss. Give that side a "
            "watermark and a range condition that bounds it, or join on a window; "
            "`set allow_unemitted_outer_rows = true` accepts it on purpose (then W001 "
            "warns of the unbounded state).",
        ),
        Code(
            "E029",
            "error",
            "several windows in one SELECT",
            "A join's SELECT computes two different `window(...)` calls (of two columns, or "
            "of two durations). Spark computes windows in one projection and rejects more "
            'than one: "Multiple time/session window expressions would result in a '
            'cartesian product of rows". The fields `.start` and `.end` of one window are '
            "one window.",
        ),
        Code(
            "E030",
            "error",
            "window of a null-padded side",
            "An outer join's SELECT computes `window(...)` of a column that the join null-pads. "
            "Spark's TimeWindowing keeps only rows whose window time is not NULL, and its "
            "optimizer then runs the join as INNER (or a FULL OUTER join as one-sided): the "
            "unmatched rows the outer join exists for never come out. Window the preserved "
            "side's time, or take the start of the nullable side's time with `date_trunc`; "
            "`set allow_unemitted_outer_rows = true` accepts it on purpose (sjoin then plans "
            "the join as Spark runs it).",
        ),
        # ------------------------------------------------------------ size
        Code(
            "E031",
            "error",
            "spec too large",
            "The spec passes one of the limits under which sjoin checks, plans and compiles a "
            "spec within a few seconds: 1,000,000 characters, 50,000 tokens (names, numbers, "
            "strings, operators and punctuation), a name of 1,000 characters, a string literal "
            "of 100,000 characters, 1,000 relations (streams, joins and aggregates), or 20,000 "
            "columns in all relations together (a join without SELECT keeps every column of "
            "both sides). sjoin refuses the spec at the place where it passes the limit and "
            "checks nothing else. Split the spec into several files, one per pipeline, or "
            "keep only the columns you need with SELECT. (Expressions nested more than 100 "
            "levels deep are a syntax error, E001.) While planning, E031 also refuses a join "
            "condition whose equalities share columns so much that Spark's filter inference "
            "would rewrite more than 20,000 predicates (n equalities on one column rewrite "
            "each other, about n²); it is reported at the condition.",
        ),
        # ------------------------------------------------------------ pipeline target
        Code(
            "E032",
            "error",
            "not expressible as a pipeline",
            "Reported by `sjoin compile --target pipeline`: this part of the spec has no "
            "counterpart in a Spark Declarative Pipeline (docs/pipelines.md). Pipelines and the "
            "SQL WATERMARK clause their joins are written with need Spark 4.1 or later, so a "
            "spec for an older Spark is refused at its `spark` statement. Each stream, join and "
            "aggregate becomes a table or view of the pipeline, whose name Spark's session "
            "catalog takes only in letters, digits and `_`. A stream without "
            "a `from` source cannot be a streaming table (a pipeline reads its own inputs); an "
            "aggregate in OUTPUT MODE update or complete cannot feed a streaming table or a "
            "sink (a pipeline's flows append); a `memory` sink would live in the pipeline's "
            "server, out of reach; a Delta sink by table name is what the pipeline's own "
            "streaming tables are; and `spark-pipelines run` runs each flow over the data "
            "available when it starts, so a `trigger` other than 'available_now' has no "
            "meaning. (A `dedup`, which SDP's SQL cannot write, is a Python flow of the "
            "project.) The PySpark job (`--target pyspark`, the default) runs all of them.",
        ),
        # ------------------------------------------------------------ SQL pipelines
        Code(
            "E033",
            "error",
            "not modelled in a SQL pipeline",
            "Reported when sjoin reads a Spark Declarative Pipeline's SQL (a .sql file or a "
            "project directory, docs/pipelines.md): this part of the pipeline is valid Spark "
            "SQL, or is how Spark runs it, but sjoin cannot model it, or Spark refuses it in a "
            "streaming query. Among them: a read of a stream without STREAM (a batch read, a "
            "stream-static join), a streaming table between two joins or aggregates (reading it "
            "starts a second query, and no watermark crosses a table: make it a temporary "
            "view), two reads of one stream with different WATERMARK clauses (sjoin models one "
            "watermark per stream), a watermark on an expression, a WHERE after an outer join "
            "(other than `WHERE y.k IS NULL`, a left anti join), LEFT ANTI JOIN of two streams "
            "(Spark refuses it), more than one join in one query, a table-valued function as a "
            "source (open-source Spark's SQL has no streaming file or Kafka reader: define the "
            "stream in Python and declare its columns in sjoin-schemas.sql), NOT NULL columns, "
            "DISTINCT, HAVING, ORDER BY, RLIKE, IS [NOT] TRUE, and a conf or a "
            "`-- sjoin:` line given twice with different values. The message names the "
            "construct and the help the way to write it that sjoin reads.",
        ),
        # ------------------------------------------------------------ watermarks redefined
        Code(
            "E034",
            "error",
            "watermark redefined",
            "A `watermark` on a relation's read (`aggregate a = j watermark t delay 10 "
            "minutes ...`, `join k = j AS x watermark t delay 10 minutes INNER JOIN ...`, a "
            "pipeline's `STREAM(j) WATERMARK t DELAY OF ...` on a view) is Spark's "
            "withWatermark on a join's or aggregate's output. From Spark 3.5, with "
            "`spark.sql.streaming.statefulOperator.allowMultiple` true (its default), Spark "
            "refuses a watermark node above another one: the query fails at its first batch "
            "whose watermark is above 0 with `Redefining watermark is disallowed`. With "
            "`set allow_multiple_stateful_operators = false` (Spark 3.3 and 3.4 always) "
            "Spark runs it, with one global watermark for every operator (the minimum of all "
            "watermark nodes, the new one included). A watermark on the read of a stream is "
            "declared in its `stream` statement instead.",
        ),
        # ------------------------------------------------------------ unions
        Code(
            "E035",
            "error",
            "union inputs that differ",
            "The inputs of a `union` have the same columns: as many, with the same names, in "
            "the same order, of the same types (docs/language.md). Spark's UNION ALL matches "
            "columns by position and names them after the first input, so a column of "
            "another name would be read as the first input's; it widens two types where it "
            "can and refuses the rest (INCOMPATIBLE_COLUMN_TYPE), and refuses inputs with "
            "another number of columns (NUM_COLUMNS_MISMATCH). The message names the first "
            "column that differs.",
        ),
        # ------------------------------------------------------------ static tables
        Code(
            "E038",
            "error",
            "a static table where Spark refuses it",
            "A `table` is read in batch (`spark.read`) and may only be one side of a join with a "
            "streaming relation (a stream-static join, compiler/planning/tables.py). Spark refuses,"
            " in UnsupportedOperationChecker, a FULL OUTER join of a stream with a table, a LEFT "
            "OUTER or LEFT SEMI join with the table on the left (the stream on the right), a LEFT "
            "ANTI join with the stream on the right, and a RIGHT OUTER join with the table on the "
            "right: the message quotes Spark's own reason. An INNER join may have the table on "
            "either side. Also refused: a join of two tables, an aggregate or a sink of a table, "
            "and a watermark on a table's read (a table has no event time).",
        ),
        # ------------------------------------------------------------ PySpark jobs
        Code(
            "E041",
            "error",
            "not modelled in a PySpark job",
            "Reported when sjoin reads a PySpark job (`sjoin check job.py`, docs/pyspark.md): "
            "this DataFrame call, expression or sink is valid PySpark, but sjoin cannot model "
            "it yet, so it cannot say what Spark does with the query that holds it. Among "
            "them: a Python UDF, `foreachBatch` and `foreach` sinks, a source without a "
            "declared schema (`.schema(...)`, or Kafka's value parsed by `from_json` with a "
            "schema), a watermark on anything but a stream's read, a `spark.sql` query other "
            "than `SELECT ... FROM v [JOIN w ON ...] [WHERE ...] [GROUP BY ...]` over the "
            "job's temporary views (or one with parameters), a format sjoin "
            "has no reader or writer for. Also a LEFT ANTI join of two streams: Spark refuses "
            "it (`LeftAnti joins with a streaming DataFrame/Dataset on the right are not "
            "supported`), and a spec's `LEFT ANTI JOIN` is sjoin's rewrite of it as a left "
            "outer join, which the job does not write. The message names the call at its "
            "line; the rest of the job is still checked where it does not read the relation.",
        ),
        Code(
            "E042",
            "error",
            "the PySpark job could not be read",
            "sjoin runs a PySpark job offline (no JVM, nothing read, written or started) to "
            "capture the DataFrames it builds, and the job did not get there: it raised an "
            "exception (reported at the job's line that raised it), exited with a status, "
            "asked for something only a Spark server can answer (`df.columns`, `df.schema`, a "
            "batch action such as `count()`), names no `--entry` function, or did not finish "
            "in time; or pyspark 4 with its Spark Connect client cannot be imported here "
            "(install `sjoin[spark]`). Nothing of the job is checked; the exit status is 2 on "
            "every command, as for a file that cannot be read.",
        ),
        # ------------------------------------------------------------ internal
        Code(
            "E999",
            "error",
            "internal error",
            "sjoin failed on this input. This is a bug in sjoin: please report it with the "
            "spec that caused it.",
        ),
        # ------------------------------------------------------------ warnings
        Code(
            "W001",
            "warning",
            "state is never evicted",
            "One side of a join keeps every row forever: its state grows without bound. "
            "The message says which side and why (no watermark, or a range condition in a "
            "form Spark cannot use for state cleanup). A `dedup` keeps every key forever "
            "when no dedup column carries the watermark (add the event-time column to its "
            "columns, or deduplicate WITHIN WATERMARK).",
        ),
        Code(
            "W002",
            "warning",
            "unused watermark",
            "A stream declares a watermark that no join or aggregate downstream of it uses "
            "for state cleanup or late-row filtering; or the relation is never used.",
        ),
        Code(
            "W003",
            "warning",
            "condition is always false",
            "A join condition can never be true, e.g. its range has a lower bound above its "
            "upper bound. The join emits no matched rows.",
        ),
        Code(
            "W004",
            "warning",
            "range bound lost by Spark's rewrite",
            "Spark 4 rewrites `expr BETWEEN a AND b` on a non-column expression into a "
            "common-expression alias without watermark metadata, so one side loses its state "
            "watermark. Write the range with `>=` and `<=` instead.",
        ),
        Code(
            "W005",
            "warning",
            "null keys match in a full outer join",
            "In a stream-stream FULL OUTER join, Spark matches NULL keys with each other "
            "(unlike batch SQL), because no not-null filter is inferred for either side.",
        ),
        Code(
            "W006",
            "warning",
            "max watermark policy drops rows",
            "With `multiple_watermark_policy = max` the global watermark follows the fastest "
            "stream; rows of slower streams become late and are dropped.",
        ),
        Code(
            "W007",
            "warning",
            "global watermark check disabled",
            "`correctness_check = false` turns Spark's global-watermark correctness error "
            "into a log line: the downstream operator can silently drop rows as late.",
        ),
        Code(
            "W008",
            "warning",
            "stream without a source",
            "Reported by `sjoin compile`: the stream has no `from` clause, so the job's `main()` "
            "cannot read it and stops with an error naming it. Call `build(spark, inputs)` "
            "yourself with a streaming DataFrame for it in `inputs`, or add a `from` clause.",
        ),
        Code(
            "W009",
            "warning",
            "relation without a sink",
            "Reported by `sjoin compile`: no `sink` writes this join or aggregate, and nothing "
            "reads it, so the job's `main()` starts no query for it; `build()` still returns it "
            "by name. Add a `sink` to have `spark-submit job.py` write it.",
        ),
        Code(
            "W010",
            "warning",
            "relation that fails as its own query",
            "A join or aggregate that no sink writes fails on Spark when it runs as its own "
            "query (`sjoin run` or `verify --relation NAME`, or started from the job's "
            "`build()`), though the queries the job runs are fine: run alone, it keeps all "
            "its columns, so a relation below it may carry a column that its consumers "
            "prune, such as a second event-time column (E025). The message quotes the error "
            "that `--relation NAME` reports. Without a sink in the spec any relation may be "
            "started, so this is that error itself.",
        ),
        Code(
            "W011",
            "warning",
            "part of a pipeline sjoin does not check",
            "Reported when sjoin reads a SQL pipeline: this part of it is outside sjoin's "
            "model, and changes nothing sjoin checks: a materialized view or a persisted view "
            "(recomputed in batch), a streaming table whose query keeps no state and whose "
            "columns are not declared, a Spark conf sjoin does not model (the plan assumes "
            "Spark's default), a Python file sjoin cannot read, a dataset whose name a "
            "Python file computes, or a temporary view no table or flow reads (SDP runs a view "
            "only inlined into the flows that read it).",
        ),
        Code(
            "W012",
            "warning",
            "columns inferred from the trace",
            "A stream the pipeline defines in Python has no declared columns (sjoin-schemas.sql "
            "declares them, docs/pipelines.md), so sjoin took them from the trace: the message "
            "lists them as a column list to copy into the schema file. An integer is BIGINT, a "
            "number with a fraction DOUBLE, an ISO-8601 string TIMESTAMP, other text STRING.",
        ),
        Code(
            "W013",
            "warning",
            "an implicit cast can fail or changes which values are equal",
            "A STRING meets a number or a BOOLEAN in a comparison, IN, BETWEEN or arithmetic, "
            "so Spark's analyzer casts it, and sjoin inserts the same cast (shown in `sjoin "
            "plan`): with ANSI on (Spark 4) a STRING meeting an integer is cast to BIGINT, one "
            "meeting a DOUBLE, FLOAT or DECIMAL to DOUBLE, and a value that does not cast fails "
            "the query (CAST_INVALID_INPUT); with ANSI off (Spark 3) the STRING takes the other "
            "side's type (DOUBLE beside a DECIMAL, and in arithmetic), a value that does not "
            "cast is NULL, which matches nothing, and IN compares a STRING and numbers as "
            "text. Either way strings that differ as text can match (`'01'` and `' 1 '` equal "
            "1; without ANSI `'1.5'` equals an integer 1 too). The ANSI mode is `set "
            "ansi_enabled`, else the version's default. Also said where `-` casts a STRING to "
            "DOUBLE, and where numbers compared widen with a loss of exactness (a BIGINT or a "
            "DECIMAL of more than 15 digits to DOUBLE, an INT or BIGINT to FLOAT): distinct "
            "values then compare equal. Declare both with one type, or cast explicitly where "
            "the data is known to be clean.",
        ),
        Code(
            "W014",
            "warning",
            "a union loses a later input's event time",
            "A `union` keeps the watermark metadata of its first input only (Spark's "
            "`Union.mergeChildOutputs`): a column that is event time in a later input but "
            "not in the first is plain in the union's rows, so an operator reading the union "
            "neither evicts state nor drops late rows by it. The later input's watermark "
            "node still counts in the global watermark. Put an input with the watermark "
            "first, or give every input the same watermark column.",
        ),
        Code(
            "W015",
            "warning",
            "an outer join run as INNER for a reader's filter",
            "A relation reading an outer join drops the rows the join null-pads, and Spark's "
            "optimizer carries that filter down to the join (through views, unions and other "
            "joins) and runs the outer join as INNER (a FULL OUTER join as LEFT or RIGHT "
            "OUTER): an aggregate grouping by `window(...)` of a null-padded column (Spark's "
            "TimeWindowing keeps only rows whose time is not NULL), or an INNER (or LEFT SEMI) "
            "join on a null-padded column (its inferred `isnotnull`). The unmatched rows the "
            "outer join exists for never reach the reader, and the join stores, evicts and "
            "emits as the narrower join Spark runs (`sjoin plan` says so; the run follows it). "
            "Window or join on the preserved side's column if the unmatched rows should count, "
            "or write the narrower join. A relation that is also a query of its own (a sink, or "
            "nothing reads it) runs there unfiltered, so sjoin converts the join only when every "
            "read of it rejects the column.",
        ),
        Code(
            "W016",
            "warning",
            "an aggregate's output mode that no query runs it in",
            "An aggregate with `OUTPUT MODE update` (or `complete`) that is no query of the "
            "pipeline's (no sink of its own; without sinks, read by another operator), read by "
            "a query of another output mode (a join's is Append): Spark runs a query in one "
            "output mode, its sink's, so in the reader's query the aggregate runs in that "
            "query's mode, "
            "and the clause holds only when the aggregate runs as its own query "
            "(`--relation NAME`). A PySpark job that writes such a query in Update mode is "
            "refused by Spark (the global watermark correctness check); a spec cannot write "
            "it. Drop the clause, or give the aggregate a sink of its own.",
        ),
    )
}


def markdown_table() -> str:
    """The generated ``docs/diagnostics.md``."""
    lines = [
        "# Diagnostic codes",
        "",
        "Generated from `compiler/diagnostics/codes.py` by "
        "`python -m sjoin.compiler.diagnostics.codes > "
        "docs/diagnostics.md`; do not edit by hand.",
        "",
        "Every diagnostic prints as `FILE:LINE:COL: severity[CODE]: message`, then the source "
        "line with a caret under the span, and a `help:` line where a fix exists. "
        "`--format json` prints the same records as JSON. Exit status: 0 clean (warnings "
        "allowed), 1 the spec has errors, 2 usage error.",
        "",
        "| code | severity | title | explanation |",
        "|---|---|---|---|",
    ]
    for code in sorted(CODES.values(), key=lambda c: (c.severity != "error", c.id)):
        lines.append(f"| {code.id} | {code.severity} | {code.title} | {code.explain} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")
