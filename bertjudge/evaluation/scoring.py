"""Score files (``python -m bertjudge judge``, and ``predict``'s writer), atomically and resumably.

Each output row is the input row (every field kept) plus ``id`` (when it had none), ``score``
(calibrated P(correct)), ``verdict`` (score >= the judge's threshold), ``judge`` and
``input_hash``. Scored rows are appended to ``OUT.partial.jsonl`` as they are done; a rerun
after an interruption skips them, and the final file replaces the partial one in one rename.
"""

from __future__ import annotations

import json
from pathlib import Path

from lightning.pytorch.callbacks import BasePredictionWriter

from bertjudge.core.records import RecordError, input_hash, read_partial, read_with_raw, write_records
from bertjudge.judges.interface import verdict_fields


def _partial_path(output: Path) -> Path:
    return output.with_name(output.name + ".partial.jsonl")


def _load_partial(partial: Path, expected: dict[str, str], judge_name: str) -> dict[str, dict]:
    """Rows already scored by an interrupted run; refuse them if the input or the judge changed."""
    done = read_partial(partial)
    for row in done.values():
        if row.get("judge") != judge_name or expected.get(row["id"]) != row.get("input_hash"):
            raise RecordError(f"{partial}: row {row['id']} was scored by another judge or from other input; "
                              f"delete {partial} to start over")
    return done


def score_file(judge, input_path: str | Path, output_path: str | Path, batch_size: int = 32,
               chunk_size: int = 256, progress: bool = True) -> Path:
    """Score every row of ``input_path`` with ``judge`` into ``output_path`` (JSONL or Parquet)."""
    output = Path(output_path)
    pairs = read_with_raw(input_path)  # validates the whole file before anything is written
    hashes = {rec["id"]: input_hash(rec) for _, rec in pairs}
    judge_name = judge.name
    partial = _partial_path(output)
    done = _load_partial(partial, hashes, judge_name)
    todo = [(raw, rec) for raw, rec in pairs if rec["id"] not in done]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(pairs), initial=len(pairs) - len(todo), desc=f"judging {input_path}", unit="row")
    partial.parent.mkdir(parents=True, exist_ok=True)
    with open(partial, "a", encoding="utf-8") as handle:
        for start in range(0, len(todo), chunk_size):
            chunk = todo[start: start + chunk_size]
            scores = judge.score_records([rec for _, rec in chunk], batch_size=batch_size)
            for (raw, rec), score in zip(chunk, scores):
                row = {**raw, "id": rec["id"], **verdict_fields(score, judge.threshold),
                       "judge": judge_name, "input_hash": hashes[rec["id"]]}
                done[rec["id"]] = row
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            handle.flush()
            if bar is not None:
                bar.update(len(chunk))
    if bar is not None:
        bar.close()
    write_records(output, [done[rec["id"]] for _, rec in pairs])
    partial.unlink()
    return output


class ScoreFileWriter(BasePredictionWriter):
    """``predict`` callback: writes the predict split as a score file (as the ``judge`` command does).

    Args:
        output: the score file (.jsonl or .parquet), written atomically by rank 0.
    """

    def __init__(self, output: str):
        super().__init__(write_interval="epoch")
        self.output = output

    def write_on_epoch_end(self, trainer, pl_module, predictions, batch_indices) -> None:
        import torch.distributed as dist

        scores = {i: float(s) for batch in predictions for i, s in zip(batch["ids"], batch["scores"])}
        if trainer.world_size > 1:
            gathered = [None] * trainer.world_size
            dist.all_gather_object(gathered, scores)
            scores = {k: v for part in gathered for k, v in part.items()}
        if not trainer.is_global_zero:
            return
        rows = []
        for rec in trainer.datamodule.records["predict"]:
            rows.append({**rec, **verdict_fields(scores[rec["id"]], pl_module.threshold),
                         "judge": pl_module.name, "input_hash": input_hash(rec)})
        write_records(self.output, rows)
        print(f"wrote {len(rows)} scores to {self.output}")
