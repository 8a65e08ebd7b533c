"""The error-type head beside the encoder judge's verdict (issue #33): the corpus-kind mapping, training
through the real datamodule and Lightning trainer, export and load, and the report's error-type section."""

import json
import math

import lightning as L
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from safetensors import safe_open

from bertjudge.cli.main import main
from bertjudge.core.collate import Collator
from bertjudge.core.error_types import CORRECT_TYPES, ERROR_TYPES, UNKNOWN, error_type_index
from bertjudge.core.judge_file import JudgeFileError
from bertjudge.core.records import RecordError, write_records
from bertjudge.data import synth
from bertjudge.data.corpus import ATTACKS, KINDS, LABEL_SOURCE, generate
from bertjudge.data.datamodule import JudgeDataModule
from bertjudge.data.error_types import (
    ATTACK_ERROR_TYPES,
    KIND_ERROR_TYPES,
    names_a_reference,
    row_error_index,
    row_error_type,
)
from bertjudge.evaluation.report import build_report, error_type_report, render_markdown, write_report
from bertjudge.judges.encoder import ERROR_HEAD_WEIGHTS, EncoderJudge, deciding_sequences
from bertjudge.judges.loading import Judge

FORMAT = {"order": "QCR", "max_length": 96, "references": "each", "max_references": 2}
NO_HEAD_JUDGE_JSON = {"class", "format", "threshold", "temperature", "bias", "bertjudge_version", "provenance"}


def corpus_row(candidate, references, label=1, kind="plain", source=LABEL_SOURCE, **meta):
    return {
        "id": f"r-{candidate[:12]}",
        "candidate": candidate,
        "references": references,
        "label": label,
        "label_source": source,
        "meta": {"kind": kind, **meta},
    }


# ---------------------------------------------------------------- the mapping
def test_every_wrong_kind_and_attack_of_the_corpus_has_an_error_type():
    """Fails when the corpus gains a wrong candidate kind (or an attack) without a type here."""
    wrong_kinds = {name for name, kind in KINDS.items() if kind.label == 0}
    assert set(KIND_ERROR_TYPES) == wrong_kinds
    for kind, name in KIND_ERROR_TYPES.items():
        assert name in ERROR_TYPES and name not in CORRECT_TYPES, kind
    assert set(ATTACK_ERROR_TYPES) == set(ATTACKS)
    for attack, (wrong, right, _) in ATTACKS.items():
        assert ATTACK_ERROR_TYPES[attack] == KIND_ERROR_TYPES[wrong]
        assert KINDS[right].label == 1  # its counterpart is typed by the none / format_only rule


def test_corpus_rows_get_their_kinds_type_and_every_type_occurs():
    rows = generate("adversarial", 4 * len(ATTACKS)) + generate("train", 200)
    types = [row_error_type(r) for r in rows]
    assert None not in types  # every corpus row has a known type
    for row, name in zip(rows, types):
        if row["label"] == 1:
            assert name in CORRECT_TYPES
        elif "attack" in row["meta"]:
            assert name == ATTACK_ERROR_TYPES[row["meta"]["attack"]]
        else:
            assert name == KIND_ERROR_TYPES[row["meta"]["kind"]]
    assert set(types) == set(ERROR_TYPES)  # the corpus teaches the head every type
    by_kind = {kind: {t for r, t in zip(rows, types) if r["meta"]["kind"] == kind} for kind in ("plain", "alt_form")}
    assert (
        by_kind["plain"] == by_kind["alt_form"] == set(CORRECT_TYPES)
    )  # why a correct row's text, not its kind, decides
    assert [row_error_index(r) for r in rows] == [ERROR_TYPES.index(t) for t in types]


@pytest.mark.parametrize(
    "candidate, references, expected",
    [
        ("Final answer: 1/2", ["0.5"], "format_only"),
        ("**Final answer:** twelve", ["12"], "format_only"),
        ("The answer is (B).", ["B"], "none"),
        ("8,800,000.", ["8.8 million", "8800000"], "none"),
        ("It is in Perú.", ["Peru"], "none"),
        ("PARIS!", ["Paris"], "none"),
        ("Paris", ["B"], "format_only"),  # the option's text for its letter
        ("$18.50", ["18.5"], "format_only"),
    ],
)
def test_a_correct_row_is_format_only_when_it_names_no_reference_as_written(candidate, references, expected):
    row = corpus_row(candidate, references)
    assert names_a_reference(row) == (expected == "none")
    assert row_error_type(row) == expected


def test_rows_without_a_corpus_kind_are_unknown_and_a_given_type_is_checked():
    assert row_error_type({"id": "a", "candidate": "x", "references": ["y"], "label": 0, "meta": {}}) is None
    assert row_error_index({"id": "a", "candidate": "x", "references": ["y"], "label": 0}) == UNKNOWN
    relabelled = corpus_row("Lyon", ["Paris"], label=0, kind="other_entity", source="human:reviewer")
    assert row_error_type(relabelled) is None  # a person's label: the kind is no guide any more
    other_corpus = corpus_row("Lyon", ["Paris"], label=0, kind="other_entity", source="synthetic:corpus-fr")
    assert row_error_type(other_corpus) is None  # the multilingual corpus's kinds are its own
    synthesized = corpus_row("Lyon", ["Paris"], label=0, kind="other_entity", source=synth.LABEL_SOURCE)
    assert row_error_type(synthesized) == "wrong_entity"  # synth writes user rows with the corpus's kinds
    mislabelled = corpus_row("Paris", ["Paris"], label=0, kind="plain")
    assert row_error_type(mislabelled) is None  # a correct kind on a wrong row
    given = {"id": "g", "candidate": "12 km", "references": ["12 m"], "label": 0, "meta": {"error_type": "wrong_unit"}}
    assert row_error_type(given) == "wrong_unit"
    with pytest.raises(RecordError, match=r"row 'g': meta.error_type 'wrong_unit' contradicts its label 1"):
        row_error_type({**given, "label": 1})
    with pytest.raises(RecordError, match="'typo' is not an error type"):
        row_error_type({**given, "meta": {"error_type": "typo"}})
    with pytest.raises(ValueError, match="unknown error type 'typo'"):
        error_type_index("typo")


def test_deciding_sequences_picks_each_records_largest_logit():
    logits = torch.tensor([0.1, 0.9, 0.3, -1.0, -2.0, 0.5, 0.5])
    owner = torch.tensor([0, 0, 1, 2, 2, 3, 3])
    assert deciding_sequences(logits, owner, 4).tolist() == [1, 2, 3, 5]  # a tie: the first


# ---------------------------------------------------------------- the model
@pytest.mark.filterwarnings("ignore:You are trying to `self.log\\(\\)`")  # a training step outside a trainer
def test_the_head_leaves_the_verdict_alone_and_its_loss_skips_unknown_rows(tiny_backbone):
    torch.manual_seed(0)
    plain = EncoderJudge(backbone=tiny_backbone, format=FORMAT, dropout=0.0)
    torch.manual_seed(0)
    headed = EncoderJudge(backbone=tiny_backbone, format=FORMAT, dropout=0.0, error_head=True, error_head_weight=0.5)
    assert plain.error_classifier is None and headed.error_classifier.out_features == len(ERROR_TYPES)
    rows = generate("adversarial", 8) + [{**generate("test", 2)[0], "label_source": "human:x", "id": "unknown"}]
    batch = Collator(headed.encoder, references=1, error_type=row_error_index)(rows)
    assert batch["error_type"][-1].item() == UNKNOWN and (batch["error_type"][:-1] >= 0).all()
    plain.eval()
    headed.eval()
    with torch.no_grad():
        torch.testing.assert_close(headed(batch), plain(batch))  # same backbone, same verdict logits
        logits, error_logits = headed.forward_heads(batch)
        torch.testing.assert_close(logits, plain(batch))
        known = batch["error_type"] >= 0
        expected = F.cross_entropy(error_logits[known], batch["error_type"][known])
        torch.testing.assert_close(headed.error_loss(error_logits, batch["error_type"]), expected)
        loss = headed.training_step(batch, 0)
        binary = F.binary_cross_entropy_with_logits(logits, batch["labels"])
        torch.testing.assert_close(loss, binary + 0.5 * expected)
    none_known = torch.full_like(batch["error_type"], UNKNOWN)
    zero = headed.error_loss(error_logits.requires_grad_(), none_known)
    assert zero.item() == 0.0 and zero.requires_grad
    with pytest.raises(ValueError, match="error_head_weight"):
        EncoderJudge(backbone=tiny_backbone, error_head=True, error_head_weight=-1.0)


class ErrorLosses(L.Callback):
    """The error-type loss the judge logs at each training step."""

    def __init__(self):
        self.values = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.values.append(float(trainer.callback_metrics["train/error_loss"]))


@pytest.fixture(scope="module")
def trained(tiny_backbone):
    """A tiny judge with the head, trained 30 steps on one batch of 16 corpus rows (an overfit)."""
    L.seed_everything(0)
    judge = EncoderJudge(
        backbone=tiny_backbone, format=FORMAT, dropout=0.0, lr=1e-2, effective_batch_size=None, error_head=True
    )
    data = JudgeDataModule(train=["embedded:train?n=16"], batch_size=16)
    losses = ErrorLosses()
    trainer = L.Trainer(
        max_steps=30,
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[losses],
    )
    trainer.fit(judge, datamodule=data)
    return judge.eval(), losses.values


@pytest.mark.slow
def test_the_head_trains_through_the_datamodule_and_trainer(trained):
    _, losses = trained
    assert len(losses) == 30 and all(math.isfinite(v) for v in losses)
    assert losses[0] > math.log(len(ERROR_TYPES)) * 0.8  # starts near chance over the types
    assert np.mean(losses[-5:]) < 0.7 * np.mean(losses[:5])  # and falls as it overfits the batch


@pytest.mark.slow
def test_export_and_load_keep_the_head_and_its_outputs(trained, tmp_path):
    judge, _ = trained
    rows = generate("adversarial", 12) + generate("test", 6)
    types = judge.error_types(rows)
    assert [set(t) for t in types] == [{"error_type", "error_type_prob"}] * len(rows)
    verdicts = judge.score_records(rows) >= judge.threshold
    for row, verdict in zip(types, verdicts):  # the type agrees with the verdict
        assert (row["error_type"] in CORRECT_TYPES) == verdict and 0 < row["error_type_prob"] <= 1
    one_at_a_time = judge.error_types(rows, batch_size=1)  # batching changes nothing
    assert [t["error_type"] for t in one_at_a_time] == [t["error_type"] for t in types]
    np.testing.assert_allclose(
        [t["error_type_prob"] for t in one_at_a_time], [t["error_type_prob"] for t in types], atol=1e-5
    )
    details = judge.details(rows)
    assert [{k: d[k] for k in ("error_type", "error_type_prob")} for d in details] == types

    folder = judge.export(tmp_path / "judge")
    config = json.loads((folder / "judge.json").read_text())
    assert config["error_types"] == list(ERROR_TYPES)
    with safe_open(str(folder / ERROR_HEAD_WEIGHTS), framework="pt") as weights:
        assert sorted(weights.keys()) == ["bias", "weight"]
    loaded = Judge.load(str(folder))
    assert loaded.error_type_names == list(ERROR_TYPES)
    np.testing.assert_allclose(loaded.score_records(rows), judge.score_records(rows), rtol=1e-5, atol=1e-6)
    again = loaded.error_types(rows)
    assert [t["error_type"] for t in again] == [t["error_type"] for t in types]
    np.testing.assert_allclose([t["error_type_prob"] for t in again], [t["error_type_prob"] for t in types], atol=1e-6)
    from transformers import AutoModelForSequenceClassification

    assert AutoModelForSequenceClassification.from_pretrained(folder).config.num_labels == 1  # still plain HF

    (folder / ERROR_HEAD_WEIGHTS).unlink()
    with pytest.raises(JudgeFileError, match=f"{ERROR_HEAD_WEIGHTS}: missing"):
        Judge.load(str(folder))
    judge.export(folder)
    config["error_types"] = ["none", "wrong_entity", "other"]
    (folder / "judge.json").write_text(json.dumps(config))
    with pytest.raises(JudgeFileError, match="do not fit an error-type head of 3 types"):
        Judge.load(str(folder))


def test_a_judge_without_the_head_keeps_its_folder_and_outputs(tiny_backbone, tmp_path):
    torch.manual_seed(0)
    plain = EncoderJudge(backbone=tiny_backbone, format=FORMAT)
    torch.manual_seed(0)
    headed = EncoderJudge(backbone=tiny_backbone, format=FORMAT, error_head=True)
    rows = generate("test", 6)
    assert plain.error_types(rows) is None
    assert [set(d) for d in plain.details(rows)] == [{"unparsed", "logit", "score", "verdict"}] * len(rows)
    plain_dir, headed_dir = plain.export(tmp_path / "plain"), headed.export(tmp_path / "headed")
    plain_files = {p.name for p in plain_dir.iterdir()}
    assert {p.name for p in headed_dir.iterdir()} == plain_files | {ERROR_HEAD_WEIGHTS}
    assert ERROR_HEAD_WEIGHTS not in plain_files
    plain_config = json.loads((plain_dir / "judge.json").read_text())
    assert set(plain_config) == NO_HEAD_JUDGE_JSON | {"num_labels"}
    assert set(json.loads((headed_dir / "judge.json").read_text())) == set(plain_config) | {"error_types"}
    with (
        safe_open(str(plain_dir / "model.safetensors"), framework="pt") as a,
        safe_open(str(headed_dir / "model.safetensors"), framework="pt") as b,
    ):
        assert sorted(a.keys()) == sorted(b.keys())  # the head lives in its own file
    loaded = Judge.load(str(plain_dir))
    assert loaded.error_classifier is None and loaded.error_types(rows) is None
    np.testing.assert_allclose(loaded.score_records(rows), plain.score_records(rows), rtol=1e-5, atol=1e-6)


def test_a_bad_error_type_in_the_training_data_fails_before_training(tiny_backbone, tmp_path):
    rows = generate("train", 4)
    rows[2] = {**rows[2], "meta": {**rows[2]["meta"], "error_type": "typo"}}
    write_records(tmp_path / "bad.jsonl", rows)
    judge = EncoderJudge(backbone=tiny_backbone, format=FORMAT, error_head=True, effective_batch_size=None)
    trainer = L.Trainer(fast_dev_run=True, accelerator="cpu", logger=False, enable_progress_bar=False)
    with pytest.raises(RecordError, match=r"data.train: row .*meta.error_type 'typo' is not an error type"):
        trainer.fit(judge, datamodule=JudgeDataModule(train=[str(tmp_path / "bad.jsonl")], batch_size=2))
    assert trainer.global_step == 0


# ---------------------------------------------------------------- the report
def test_precision_recall_and_confusion_of_the_types():
    records = [
        corpus_row("Lyon", ["Paris"], label=0, kind="other_entity"),
        corpus_row("Nice", ["Paris"], label=0, kind="other_entity"),
        corpus_row("13", ["12"], label=0, kind="off_by_one"),
        corpus_row("Paris", ["Paris"]),
        {"id": "real", "candidate": "x", "references": ["y"], "label": 0, "meta": {}},
    ]
    predicted = ["wrong_entity", "wrong_number", "wrong_number", "none", "refusal_or_no_answer"]
    verdicts = [False, False, False, True, False]
    rows = [{"error_type": p, "verdict": v} for p, v in zip(predicted, verdicts)]
    section = error_type_report(records, rows)
    assert section["n"] == 4 and section["n_unknown"] == 1
    assert section["accuracy"] == pytest.approx(3 / 4)
    entity, number, none = (section["per_type"][t] for t in ("wrong_entity", "wrong_number", "none"))
    assert (entity["labelled"], entity["predicted"], entity["precision"], entity["recall"]) == (2, 1, 1.0, 0.5)
    assert (number["labelled"], number["predicted"], number["precision"], number["recall"]) == (1, 2, 0.5, 1.0)
    assert (none["precision"], none["recall"]) == (1.0, 1.0)
    assert math.isnan(section["per_type"]["partial"]["precision"])  # never predicted
    confusion = np.array(section["confusion"])
    assert confusion.sum() == 4
    assert confusion[ERROR_TYPES.index("wrong_entity"), ERROR_TYPES.index("wrong_number")] == 1
    assert error_type_report(records, [{"verdict": v} for v in verdicts]) is None  # a judge without the head


@pytest.mark.slow
def test_the_report_has_an_error_type_section_and_plot_when_types_are_present(trained, tmp_path):
    judge, _ = trained
    records = generate("adversarial", 2 * len(ATTACKS))
    records.append({**records[0], "id": "real-row", "label_source": "human:x"})  # a row of unknown type
    details = judge.details(records)
    scores = {"headed": np.array([d["score"] for d in details]), "plain": np.array([d["score"] for d in details])}
    report = build_report(
        records, scores, details={"headed": details, "plain": [{"unparsed": False}] * len(records)}, n_boot=20
    )
    section = report["judges"]["headed"]["error_types"]
    assert "error_types" not in report["judges"]["plain"]
    assert section["n"] == len(records) - 1 and section["n_unknown"] == 1
    assert np.array(section["confusion"]).sum() == section["n"]
    truth = [row_error_type(r) for r in records[:-1]]
    hits = sum(t == d["error_type"] for t, d in zip(truth, details))
    assert section["accuracy"] == pytest.approx(hits / len(truth))
    paths = write_report(report, tmp_path / "out")
    plot = paths["error types (headed)"]
    assert plot.name == "error-types-headed.png" and plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list((tmp_path / "out").glob("error-types-plain*"))
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "## Error types" in markdown and "### headed" in markdown and "error-types-headed.png" in markdown
    assert "## Error types" not in render_markdown(
        build_report(records, {"plain": scores["plain"]}, details={"plain": [{"unparsed": False}] * len(records)})
    )


def test_the_judge_command_writes_each_rows_error_type(trained, tmp_path):
    judge, _ = trained
    folder = judge.export(tmp_path / "judge")
    rows = generate("adversarial", 8)
    src = tmp_path / "in.jsonl"
    write_records(src, rows)
    out = tmp_path / "out.jsonl"
    assert main(["judge", "--judge", str(folder), "--input", str(src), "--output", str(out), "--no-progress"]) == 0
    written = [json.loads(line) for line in out.read_text().splitlines()]
    expected = Judge.load(str(folder)).error_types(rows)
    assert [r["error_type"] for r in written] == [t["error_type"] for t in expected]
    np.testing.assert_allclose(
        [r["error_type_prob"] for r in written], [t["error_type_prob"] for t in expected], atol=1e-5
    )
    for row in written:  # the type agrees with the verdict written beside it
        assert (row["error_type"] in CORRECT_TYPES) == row["verdict"]
