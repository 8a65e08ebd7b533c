"""``predict``'s writer: the predict split written as a score file, as the ``judge`` command writes it."""

from __future__ import annotations

from lightning.pytorch.callbacks import BasePredictionWriter

from bertjudge.core.records import input_hash, write_records
from bertjudge.judges.interface import verdict_fields


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
            rows.append(
                {
                    **rec,
                    **verdict_fields(scores[rec["id"]], pl_module.threshold),
                    "judge": pl_module.name,
                    "input_hash": input_hash(rec),
                }
            )
        write_records(self.output, rows)
        print(f"wrote {len(rows)} scores to {self.output}")
