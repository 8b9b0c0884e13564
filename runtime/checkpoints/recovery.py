"""A checkpointed run's side of the checkpoint protocol (``checkpoint.py`` keeps the
directory): what each commit records (the engine's state, the trace consumed so far, the
pending batch and each rewindable sink's size), and on restart the checks that refuse a
checkpoint of another spec, schedule or trace, or one whose parts do not fit, before its
state is restored."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ...compiler.planning.plan import Plan
from ..engine.batches import Batch, Rows
from ..errors import CheckpointError
from ..io.output import BatchOutput
from ..io.sinks import Sink
from ..io.trace import Trace, batch_facts
from ..query import Engine
from ..rows.join import Row
from .checkpoint import Checkpoint, fingerprint, legacy_fingerprint
from .snapshot import SnapshotError, check_snapshot

DIGEST = "_sha256"  # an offset's key + this: the SHA-256 of the file's first bytes up to it


class Recovery:
    """The commits of a run with ``--checkpoint``, and its resumption from the last one."""

    def __init__(
        self,
        checkpoint: Checkpoint,
        plan: Plan,
        relation: str | None,
        engine: Engine,
        trace: Trace,
        sinks: Sequence[Sink],
        keep_outputs: bool,
        late_rows: bool = False,
        saved: dict[str, Any] | None = None,
    ) -> None:
        self.checkpoint = checkpoint
        # the snapshot, when the runner had to read it before the trace (a Delta trace's
        # start versions); dropped once resumed, as it can be large
        self._saved = saved
        self.late_rows = late_rows  # the run writes --late-rows: each commit keeps them
        self.plan = plan
        self.relation = relation
        self.engine = engine
        self.trace = trace
        self.sinks = sinks
        self.keep_outputs = keep_outputs
        # running SHA-256 over the digests of the trace batches consumed so far
        self.consumed_hash = hashlib.sha256()
        self.consumed = 0

    def resume(self) -> tuple[BatchOutput | None, dict[str, Any], int, bool]:
        """The checkpoint's pending batch (None for a new run), each rewindable sink's
        recorded size (and, under ``KEY_sha256``, the SHA-256 of its content then), the step
        to run next, and whether the pending batch must be delivered again (it never got out
        to a sink that cannot be rewound)."""
        pending: BatchOutput | None = None
        offsets: dict[str, Any] = {}
        step = 0
        redeliver = False
        saved, self._saved = self._saved or self.checkpoint.load(), None
        if saved is not None:
            self._check_saved(saved)
            pending, offsets = self._restore(saved)
            step = saved["step"] + 1
            redeliver = self.checkpoint.delivered() < saved["step"]
        self.checkpoint.reset_trace_batches(self._trace_entries(0, self.consumed))
        return pending, offsets, step, redeliver

    def _check_saved(self, saved: dict[str, Any]) -> None:
        """Refuse a checkpoint of another spec, or a trace whose consumed part differs from
        the one the checkpoint consumed; on success the running hash stands where it was."""
        made_for = saved["fingerprint"]
        if made_for != fingerprint(self.plan, self.relation) and made_for != legacy_fingerprint(
            self.plan, self.relation
        ):  # (the identity a checkpoint of an sjoin before the canonical dump recorded)
            raise CheckpointError(
                f"the checkpoint in {self.directory} belongs to another spec or "
                "relation; use a new checkpoint directory"
            )
        backlog = saved.get("backlog")
        if type(backlog) is not bool:
            raise CheckpointError(self._malformed("its record of the run's schedule (backlog)"))
        if backlog is not self.trace.backlog:
            made = "with" if backlog else "without"
            raise CheckpointError(
                f"the checkpoint in {self.directory} was made by a run {made} --backlog, "
                "which schedules the batches otherwise; resume it the same way, or use a new "
                "checkpoint directory"
            )
        consumed, want = saved["trace"].get("batches"), saved["trace"].get("sha256")
        if type(consumed) is not int or not 0 <= consumed < 2**63 or type(want) is not str:
            raise CheckpointError(self._malformed("its record of the consumed trace"))
        batches = self.trace.batches
        found = hashlib.sha256()
        for index in range(min(consumed, len(batches))):
            digest = batch_facts(batches, index)[2]
            assert digest is not None
            found.update(digest)
        if len(batches) < consumed or found.hexdigest() != want:
            raise CheckpointError(
                f"the trace does not match the checkpoint in {self.directory}: "
                f"{self._first_difference(consumed)}; restart with the same trace (more "
                "batches may follow), or use a new checkpoint directory"
            )
        self.consumed_hash, self.consumed = found, consumed

    def _first_difference(self, consumed: int) -> str:
        """Which trace batch differs from the one the checkpoint consumed at its place."""
        recorded = self.checkpoint.trace_batches()
        batches = self.trace.batches
        for index in range(consumed):
            old = recorded.get(index)
            if old is None:
                break
            where = _batch_at(old.get("batch"), old.get("line"))
            if index >= len(batches):
                return (
                    f"it has {len(batches)} batch(es), but the checkpoint consumed {consumed}: "
                    f"the first one missing is the checkpoint's {where}"
                )
            value, line, digest = batch_facts(batches, index)
            assert digest is not None
            if old.get("sha256") != digest.hex():
                return (
                    f"its {_batch_at(value, line)} differs from the "
                    f"checkpoint's {where}, the {_ordinal(index + 1)} batch it consumed"
                )
        if len(batches) < consumed:
            return f"it has {len(batches)} batch(es), but the checkpoint consumed {consumed}"
        return f"one of its first {consumed} batches differs from the one the checkpoint consumed"

    def _restore(self, saved: dict[str, Any]) -> tuple[BatchOutput, dict[str, Any]]:
        """Load the engine's state and the pending batch; a snapshot whose parts do not fit
        is refused as a whole."""
        offsets = saved["offsets"]
        if not all(
            v is None or (type(v) is int and v >= 0) or (k.endswith(DIGEST) and type(v) is str)
            for k, v in offsets.items()
        ):
            raise CheckpointError(self._malformed("its output offsets"))
        names = {"parquet": "Parquet", "delta": "Delta tables"}
        made = next((names[k] for k in names if k in offsets), "JSON lines")
        now = next((names[s.offset_key] for s in self.sinks if s.offset_key in names), "JSON lines")
        parquet = made != "JSON lines"
        if made != now or (parquet and "pending_outputs" not in saved):
            raise CheckpointError(
                f"{self.directory} was made by a run writing {made}; resume it with the "
                f"same --output-format (not {now}), or start a new checkpoint directory"
            )
        reference = (
            self.engine
            if type(self.engine) is Engine
            else Engine(self.plan, self.relation, placements=self.engine.placements)
        )
        try:
            check_snapshot(saved, reference, self.keep_outputs)
        except SnapshotError as err:
            raise CheckpointError(
                f"the checkpoint in {self.directory} is malformed: its `{err.where}` "
                f"cannot be used ({err.problem}); use a new checkpoint directory"
            ) from None
        late = saved["pending"]["late"]
        if self.late_rows:
            self._check_late(late, offsets)
        try:
            self.engine.restore(saved["engine"])
            fields = {k: v for k, v in saved["pending"].items() if k != "late"}
            pending = BatchOutput.of(**fields)
            if late is not None:
                pending = replace(pending, late_lines=late.encode("utf-8"))
            if parquet:
                outputs: dict[str, Batch] = {
                    str(k): Rows(list(v)) for k, v in saved["pending_outputs"].items()
                }
                pending = replace(pending, make_outputs=lambda: outputs)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
            raise CheckpointError(
                self._malformed(f"its state ({type(err).__name__}: {err})")
            ) from None
        if type(saved["step"]) is not int or saved["step"] < 0:
            raise CheckpointError(self._malformed("its step"))
        cursor = self.engine.cursor
        if not (
            type(cursor.trace_index) is int
            and type(cursor.query_index) is int
            and type(cursor.data_done) is bool
            and 0 <= cursor.trace_index <= self.consumed
            and 0 <= cursor.query_index <= len(self.engine.queries)
        ):
            raise CheckpointError(self._malformed("its trace position"))
        return pending, offsets

    def _check_late(self, late: str | None, offsets: dict[str, Any]) -> None:
        """A run that writes --late-rows resumes only a checkpoint whose run wrote them to a
        file too: else the late rows of the batches it committed would be missing."""
        files = [s for s in self.sinks if s.kind == "late" and s.rewindable]
        recorded = all(
            s.offset_key in offsets and f"{s.offset_key}{DIGEST}" in offsets for s in files
        )
        if late is None or not recorded:
            made = "without --late-rows" if late is None else "writing its late rows elsewhere"
            raise CheckpointError(
                f"the checkpoint in {self.directory} was made by a run {made}: the late rows "
                "of the batches it committed are not in a file it recorded, and a resumed run "
                "would lack them; resume it without --late-rows, or start a new checkpoint "
                "directory to list them all"
            )

    def _malformed(self, what: str) -> str:
        return (
            f"the checkpoint in {self.directory} is malformed: {what} cannot be used; "
            "use a new checkpoint directory"
        )

    def _trace_entries(self, start: int, end: int) -> list[dict[str, Any]]:
        entries = []
        for index in range(start, end):
            value, line, digest = batch_facts(self.trace.batches, index)
            assert digest is not None
            entries.append(
                {
                    "index": index,
                    "batch": value,
                    "line": line,
                    "sha256": digest.hex(),
                }
            )
        return entries

    def _trace_record(self) -> dict[str, Any]:
        """What the checkpoint keeps of the trace: the batches consumed, their running
        digest and, for a Delta trace, each table's version when the job started."""
        record: dict[str, Any] = {
            "batches": self.consumed,
            "sha256": self.consumed_hash.hexdigest(),
        }
        if self.trace.delta_start:
            record["delta_start"] = dict(self.trace.delta_start)
        return record

    def commit(self, out: BatchOutput, step: int) -> None:
        """Commit the run after batch ``out`` (step ``step``), before any sink gets it."""
        cursor = self.engine.cursor
        consumed = min(
            cursor.trace_index + (1 if cursor.query_index or cursor.data_done else 0),
            len(self.trace.batches),
        )
        if consumed > self.consumed:
            for index in range(self.consumed, consumed):
                digest = batch_facts(self.trace.batches, index)[2]
                assert digest is not None
                self.consumed_hash.update(digest)
            self.checkpoint.add_trace_batches(self._trace_entries(self.consumed, consumed))
            self.consumed = consumed
        self.checkpoint.commit(
            {
                "fingerprint": fingerprint(self.plan, self.relation),
                "backlog": self.trace.backlog,
                "step": step,
                "trace": self._trace_record(),
                "engine": self.engine.snapshot(),
                "pending": {
                    "batch": out.batch,
                    "query": out.query,
                    "watermark": out.watermark,
                    "data": out.data,
                    "rows": out.rows,
                    "progress": out.progress,
                    "state_sides": out.state_sides,
                    "trace_batch": out.trace_batch,
                    # its --late-rows lines, written again on a restart (None: not kept)
                    "late": b"".join(out.late_text()).decode("utf-8") if self.late_rows else None,
                },
                "offsets": self._offsets(),
                **({"pending_outputs": raw_outputs(out)} if self.keep_outputs else {}),
            }
        )

    def _offsets(self) -> dict[str, Any]:
        """Each rewindable sink's size, and the SHA-256 of what a file holds."""
        offsets: dict[str, Any] = {}
        for sink in self.sinks:
            if sink.rewindable:
                offsets[sink.offset_key] = sink.size()
                digest = sink.digest()
                if digest is not None:
                    offsets[f"{sink.offset_key}{DIGEST}"] = digest
        return offsets

    @property
    def directory(self) -> str:
        return str(self.checkpoint.directory)

    def delivered(self, step: int) -> None:
        if not all(s.rewindable for s in self.sinks):
            self.checkpoint.mark_delivered(step)


def raw_outputs(out: BatchOutput) -> dict[str, list[Row]]:
    """A batch's outputs as runtime rows (plain data for the checkpoint)."""
    assert out.make_outputs is not None
    return {relation: values.to_rows() for relation, values in out.make_outputs().items()}


def _batch_at(batch: Any, line: Any) -> str:
    """ "batch 3 (line 9)"; a Parquet trace's batches have no line (0)."""
    return f"batch {batch} (line {line})" if line else f"batch {batch}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
