"""``JudgeDataModule``: records from sources, a training mixture, dynamic padding, length buckets."""

from __future__ import annotations

import random

import lightning as L
import numpy as np
from torch.utils.data import DataLoader, Sampler

from bertjudge.core.collate import Collator
from bertjudge.core.records import RecordError
from bertjudge.data.error_types import row_error_index
from bertjudge.data.sources import load_sources

ANY = "*"


def apply_mixture(records: list[dict], mixture: dict[str, dict[str, int]], seed: int = 0) -> list[dict]:
    """Sample ``mixture[task][candidate_model]`` records per cell (``*`` matches any task or model).

    A cell asking for more rows than it has is an error, so a mixture never silently shrinks.
    """
    cells = [(task, model, count) for task, models in mixture.items() for model, count in models.items()]
    pools: list[list[dict]] = [[] for _ in cells]
    for rec in records:
        matches = [
            i
            for i, (task, model, _) in enumerate(cells)
            if task in (ANY, rec["task"]) and model in (ANY, rec["candidate_model"] or "")
        ]
        if len(matches) > 1:
            raise RecordError(
                f"mixture cells overlap: row {rec['id']} matches "
                f"{[cells[i][:2] for i in matches]}; make the cells disjoint"
            )
        if matches:
            pools[matches[0]].append(rec)
    rng = random.Random(seed)
    chosen = []
    for (task, model, count), pool in zip(cells, pools):
        if count > len(pool):
            raise RecordError(f"mixture asks {count} rows of task={task} model={model}, the data has {len(pool)}")
        chosen += rng.sample(pool, count)
    return chosen


def approximate_length(record: dict) -> int:
    """A cheap proxy of a record's token length (characters the format keeps, roughly)."""
    return len(record["candidate"]) + min(len(record.get("question") or ""), 400) + len(record["references"][0])


class LengthGroupedSampler(Sampler[int]):
    """Random order in which neighbours have similar lengths, so batches need little padding.

    Each pass shuffles the rows, sorts them by length inside mega-batches of ``group`` batches,
    and shuffles the order of the resulting batches (as Hugging Face's ``group_by_length``).
    ``easy_first`` > 0 is a length curriculum: in the first pass, that fraction of the rows, the
    shortest, comes first (short candidates are mostly bare answers, the easiest comparisons).
    """

    def __init__(self, lengths: list[int], batch_size: int, seed: int = 0, group: int = 50, easy_first: float = 0.0):
        self.lengths, self.batch_size, self.seed, self.group = np.asarray(lengths), batch_size, seed, group
        self.easy_first = easy_first
        self.passes, self.skip = 0, 0

    def __len__(self) -> int:
        return len(self.lengths)

    def _grouped(self, rows: np.ndarray, rng: np.random.Generator) -> list[int]:
        order = rng.permutation(rows)
        mega = self.batch_size * self.group
        order = np.concatenate(
            [
                chunk[np.argsort(-self.lengths[chunk], kind="stable")]
                for chunk in np.split(order, range(mega, len(order), mega))
            ]
        )
        batches = np.split(order, range(self.batch_size, len(order), self.batch_size))
        return [int(i) for b in rng.permutation(len(batches)) for i in batches[b]]

    def resume(self, passes: int, rows_done: int) -> None:
        """Continue pass ``passes`` after its first ``rows_done`` rows (a run resumed from a checkpoint
        saved in the middle of an epoch): the rows already trained on are not drawn again, none is left out."""
        self.passes, self.skip = passes, rows_done

    def __iter__(self):
        rng = np.random.default_rng((self.seed, self.passes))
        rows = np.arange(len(self.lengths))
        if self.passes == 0 and self.easy_first > 0:
            by_length = np.argsort(self.lengths, kind="stable")
            k = int(self.easy_first * len(rows))
            order = self._grouped(by_length[:k], rng) + self._grouped(by_length[k:], rng)
        else:
            order = self._grouped(rows, rng)
        self.passes += 1
        skip, self.skip = self.skip, 0
        yield from order[skip:]


class JudgeDataModule(L.LightningDataModule):
    """Records for training and evaluating judges.

    Args:
        train, val, test, predict: sources for each stage (see ``bertjudge.data.sources``):
            ``embedded:train?n=20000``, ``hf:hgissbkh/BERTJudge-Dataset?configs=gsm8k``, file or folder paths.
        adversarial: sources of a stress suite whose rows carry ``meta['attack']`` (``embedded:adversarial``),
            tested beside ``test`` and reported apart: ``adversarial/acc`` and ``adversarial/acc/attack=<kind>``.
        real_test: sources of real model outputs tested beside ``test`` and reported apart
            (``real_test/acc``, ``real_test/acc/category=<kind>``): the frozen ``data/real/real-test-v1``,
            on which nothing is chosen (checkpoints are chosen on val).
        mixture: training rows per task and candidate model, ``{task: {model: count}}``; ``*`` is
            a wildcard (as the authors' ``training_mix``). None takes every training row.
        batch_size: the device batch for training (the judge's ``effective_batch_size`` sets
            gradient accumulation on top).
        eval_batch_size: the batch for validation, test and prediction (rows sorted by length).
        num_workers: DataLoader workers.
        seed: for the mixture sample and the training order.
        curriculum: the fraction of training rows, the shortest, served first in the first epoch
            (0 for none): small backbones otherwise sit at chance loss for hundreds of steps.
        answer_noise: the share of training rows whose extracted-answer segment (formats with ``A``) is absent,
            another extractor's reading or another row's answer (``core.collate.Collator``), so the judge reads the
            candidate for itself instead of following the extractor where it is wrong (0: none; val and test
            rows are never noised).
    """

    def __init__(
        self,
        train: list[str] | None = None,
        val: list[str] | None = None,
        test: list[str] | None = None,
        predict: list[str] | None = None,
        adversarial: list[str] | None = None,
        real_test: list[str] | None = None,
        mixture: dict[str, dict[str, int]] | None = None,
        batch_size: int = 16,
        eval_batch_size: int = 64,
        num_workers: int = 0,
        seed: int = 0,
        curriculum: float = 0.0,
        answer_noise: float = 0.0,
    ):
        super().__init__()
        for key, value, minimum in (
            ("batch_size", batch_size, 1),
            ("eval_batch_size", eval_batch_size, 1),
            ("num_workers", num_workers, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise RecordError(f"data.{key}: {value!r} must be a whole number of at least {minimum}")
        for key, share in (("curriculum", curriculum), ("answer_noise", answer_noise)):
            if not 0.0 <= share <= 1.0:
                raise RecordError(f"data.{key}: {share!r} must be in [0, 1]")
        self.answer_noise = answer_noise
        self.sources = {
            "train": train or [],
            "val": val or [],
            "test": test or [],
            "predict": predict or [],
            "adversarial": adversarial or [],
            "real_test": real_test or [],
        }
        for split, specs in self.sources.items():
            if isinstance(specs, str) or not all(isinstance(spec, str) and spec for spec in specs):
                raise RecordError(
                    f"data.{split}: {specs!r} must be a list of source specs (files, folders, "
                    "embedded:<split>, hf:<repo>)"
                )
        self.read_ahead: dict[str, list[dict]] = {}  # records that ``read`` checked before training; setup takes them
        self.mixture, self.seed, self.curriculum = mixture, seed, curriculum
        self.batch_size, self.eval_batch_size, self.num_workers = batch_size, eval_batch_size, num_workers
        self.records: dict[str, list[dict]] = {}
        self.task_names: list[str] = []
        self.attack_names: list[str] = []

    @property
    def test_suites(self) -> list[str]:
        """The test stage's splits, one dataloader each, in order."""
        return ["test"] + [suite for suite in ("adversarial", "real_test") if self.sources[suite]]

    def prepare_data(self) -> None:
        pass  # sources are read in setup: every process reads its own copy (files, or seeded generation)

    def stage_splits(self, stage: str) -> tuple[str, ...]:
        """The splits a stage reads (``fit``: train and val; ``test``: every test suite given)."""
        return {
            "fit": ("train", "val"),
            "validate": ("val",),
            "test": tuple(self.test_suites),
            "predict": ("predict",),
        }[stage]

    def read(self, splits) -> None:
        """Read and check the sources of ``splits`` now, before any model is built or step taken (``fit`` reads
        the test suites it tests after training too): a missing file, a bad spec or a bad row is a RecordError
        naming ``data.<split>`` and the file and line at once, not after training. ``setup`` takes these
        records instead of reading them again."""
        for split in splits:
            if split not in self.records and split not in self.read_ahead:
                self.read_ahead[split] = self._load(split)

    def _load(self, split: str) -> list[dict]:
        if not self.sources[split]:
            raise RecordError(f"data.{split}: no {split} data; set data.{split} to one or more sources")
        try:
            records = load_sources(self.sources[split])
            if split == "train":
                if self.mixture:
                    records = apply_mixture(records, self.mixture, self.seed)
                unlabelled = sum(r["label"] is None for r in records)
                if unlabelled:
                    raise RecordError(f"{unlabelled} training rows have no label in {self.sources['train']}")
        except ValueError as err:  # RecordError, or a mixture the data cannot fill
            raise RecordError(f"data.{split}: {err}") from None
        if split != "train":  # length buckets: neighbours in a batch have similar lengths, so padding is small
            records = sorted(records, key=approximate_length)
        return records

    def setup(self, stage: str) -> None:
        for split in self.stage_splits(stage):
            if split in self.records:
                continue
            if split == "val" and not self.sources[split]:
                continue
            self.records[split] = self.read_ahead.pop(split) if split in self.read_ahead else self._load(split)
        tasks = {r["task"] for rows in self.records.values() for r in rows}
        self.task_names = sorted(tasks | set(self.task_names))
        attacks = {(r.get("meta") or {}).get("attack") for rows in self.records.values() for r in rows}
        self.attack_names = sorted((attacks - {None}) | set(self.attack_names))

    def _error_targets(self, split: str):
        """``row_error_index`` (the error-type targets) when the judge has an error-type head, else None. Every
        row's type is worked out here first, so a bad ``meta.error_type`` fails now, naming ``data.<split>``,
        rather than at the batch that holds it."""
        if not getattr(self.trainer.lightning_module, "error_type_names", None):
            return None
        try:
            for record in self.records[split]:
                row_error_index(record)
        except RecordError as err:
            raise RecordError(f"data.{split}: {err}") from None
        return row_error_index

    def _loader(self, split: str, train: bool = False) -> DataLoader:
        encoder = self.trainer.lightning_module.encoder
        records = self.records[split]
        sampler = (
            LengthGroupedSampler(
                [approximate_length(r) for r in records], self.batch_size, self.seed, easy_first=self.curriculum
            )
            if train
            else None
        )
        loop = self.trainer.fit_loop
        if train and loop.restarting:  # resumed from a checkpoint saved mid-epoch: skip the batches done
            sampler.resume(
                self.trainer.current_epoch, loop.epoch_loop.batch_progress.current.completed * self.batch_size
            )
        return DataLoader(
            records,
            batch_size=self.batch_size if train else self.eval_batch_size,
            sampler=sampler,
            num_workers=self.num_workers,
            collate_fn=Collator(
                encoder,
                self.task_names,
                self.attack_names,
                references=1 if train else None,
                error_type=self._error_targets(split),
                answer_noise=self.answer_noise if train else 0.0,
                seed=self.seed,
            ),
            persistent_workers=self.num_workers > 0,
        )

    def train_dataloader(self) -> DataLoader:
        return self._loader("train", train=True)

    def val_dataloader(self) -> DataLoader:
        return self._loader("val") if "val" in self.records else []

    def test_dataloader(self) -> DataLoader | list[DataLoader]:
        loaders = [self._loader(split) for split in self.test_suites]
        return loaders if len(loaders) > 1 else loaders[0]

    def predict_dataloader(self) -> DataLoader:
        rows, processes = len(self.records["predict"]), self.trainer.world_size
        if rows < processes:  # Lightning gives every process at least one row (and asserts otherwise)
            raise RecordError(
                f"data.predict: {rows} rows for {processes} processes; predict on {rows} devices or fewer"
            )
        return self._loader("predict")  # no sampler: the split's order, which ScoreFileWriter's merge relies on
