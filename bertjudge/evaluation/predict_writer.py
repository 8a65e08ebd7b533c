"""``predict``'s writer: the predict split written as a score file, as the ``judge`` command writes it.

On one process or many (DDP over GPUs or nodes), every process appends the rows it scores to its own shard as it
goes (``OUT.shards/rank-<r>.jsonl``: nothing is held in memory, nothing is sent between processes), and after a
barrier the first process merges the shards into OUT in the predict split's order and removes them. The merge is
a k-way merge by dataset index: each shard is in increasing index order (the predict dataloader keeps the split's
order; Lightning gives each process every k-th row), so it holds one row per shard at a time, and a row that
two processes scored (a distributed sampler that pads the last batch by repeating rows) is written once.
"""

from __future__ import annotations

import heapq
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

from lightning.pytorch.callbacks import BasePredictionWriter

from bertjudge.core.records import RecordError, input_hash, write_records
from bertjudge.judges.interface import verdict_fields

ORDER_HINT = "the predict dataloader must keep the split's order (no shuffling sampler)"


class ScoreFileWriter(BasePredictionWriter):
    """``predict`` callback: writes the predict split as a score file (as the ``judge`` command does), one row per
    input row in the split's order: the record, ``score``/``verdict``, ``judge`` and ``input_hash``.

    Works on any number of processes (``--trainer.devices 2 --trainer.strategy ddp``, ``--trainer.num_nodes``):
    each writes its rows to its shard batch by batch, and the first merges the shards into ``output``.

    Args:
        output: the score file (.jsonl, .jsonl.gz or .parquet), written atomically by the first process.
        shards: the folder of the per-process shards, on a file system every process sees (on several nodes, a
            shared one); default ``<output>.shards``. It is removed after the merge.
    """

    def __init__(self, output: str, shards: str | None = None):
        super().__init__(write_interval="batch")
        self.output = output
        self.shards = shards
        self._handle = None
        self._last = -1  # the largest dataset index this process has written

    @property
    def shard_dir(self) -> Path:
        return Path(self.shards) if self.shards else Path(f"{self.output}.shards")

    def setup(self, trainer, pl_module, stage: str) -> None:
        if stage != "predict":
            return
        # the rows go to the shards: Lightning need not also keep every batch's prediction in memory
        trainer.predict_loop.return_predictions = False
        self.shard_dir.mkdir(parents=True, exist_ok=True)
        self._handle = open(self.shard_dir / f"rank-{trainer.global_rank}.jsonl", "w", encoding="utf-8")  # noqa: SIM115
        self._last = -1

    def write_on_batch_end(
        self, trainer, pl_module, prediction, batch_indices, batch, batch_idx, dataloader_idx=0
    ) -> None:
        """Append the batch's rows to this process's shard, as ``[dataset index, row]`` lines."""
        if not batch_indices:
            raise RecordError("ScoreFileWriter: Lightning gave no dataset indices for the batch; " + ORDER_HINT)
        records = trainer.datamodule.records["predict"]
        lines = []
        for index, row_id, score in zip(batch_indices, prediction["ids"], prediction["scores"].tolist()):
            if index <= self._last:  # a repeated row (sampler padding), or a shuffled order: the merge checks
                continue
            rec = records[index]
            if rec["id"] != row_id:
                raise RecordError(f"ScoreFileWriter: dataset index {index} is row {rec['id']!r}, scored as {row_id!r}")
            row = {
                **rec,
                **verdict_fields(score, pl_module.threshold),
                "judge": pl_module.name,
                "input_hash": input_hash(rec),
            }
            lines.append(json.dumps([index, row], ensure_ascii=False) + "\n")
            self._last = index
        self._handle.writelines(lines)

    def teardown(self, trainer, pl_module, stage: str) -> None:
        """After a successful predict (also on a process that had no rows): close the shard, wait for every
        process, and merge on the first. Not called after an exception (``on_exception`` cleans up)."""
        if stage != "predict" or self._handle is None:
            return
        self._close()
        trainer.strategy.barrier("ScoreFileWriter.merge")
        if not trainer.is_global_zero:
            return
        shards = [self.shard_dir / f"rank-{rank}.jsonl" for rank in range(trainer.world_size)]
        missing = [path.name for path in shards if not path.is_file()]
        if missing:  # another node's shard, written where this node cannot see it
            raise RecordError(
                f"ScoreFileWriter: no shard {', '.join(missing)} in {self.shard_dir}; on several nodes, put the "
                "shards on a file system every node sees (--trainer.callbacks.shards DIR)"
            )
        total = len(trainer.datamodule.records["predict"])
        write_records(self.output, merge_shards(shards, total))
        shutil.rmtree(self.shard_dir)
        print(f"wrote {total} scores to {self.output}")

    def on_exception(self, trainer, pl_module, exception: BaseException) -> None:
        """Close and remove this process's shard, and the folder once empty: a later run starts afresh anyway."""
        if self._handle is not None:
            path = Path(self._handle.name)
            self._close()
            path.unlink(missing_ok=True)
            try:
                self.shard_dir.rmdir()
            except OSError:  # another process's shard is still there: that process removes the folder
                pass

    def _close(self) -> None:
        self._handle.close()
        self._handle = None


def read_shard(path: Path) -> Iterator[tuple[int, dict]]:
    """The ``(dataset index, row)`` pairs of a shard, one at a time."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            index, row = json.loads(line)
            yield index, row


def merge_shards(shards: list[Path], total: int) -> Iterator[dict]:
    """The rows of ``shards`` (each in increasing index order) in dataset order, each index once; a RecordError
    when an index in ``range(total)`` is missing (a row no process scored) or one past it appears."""
    expected = 0
    for index, row in heapq.merge(*(read_shard(path) for path in shards), key=lambda pair: pair[0]):
        if index < expected:  # the same row from a second process
            continue
        if index != expected or index >= total:
            missing = f"row {expected} ({total} rows)" if expected < total else f"index {index} past the {total} rows"
            raise RecordError(f"ScoreFileWriter: the shards in {shards[0].parent} miss {missing}; {ORDER_HINT}")
        expected += 1
        yield row
    if expected != total:
        raise RecordError(
            f"ScoreFileWriter: the shards in {shards[0].parent} hold {expected} of {total} rows; {ORDER_HINT}"
        )
