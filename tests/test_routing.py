import json
import math
import time

import numpy as np
import pytest
from cli_run import evaluate

from bertjudge.core.records import normalize, write_records
from bertjudge.judges.interface import BaseJudge
from bertjudge.judges.loading import Judge
from bertjudge.judges.regex import RegexJudge
from bertjudge.judges.routing import ByCategoryJudge, CascadeJudge, HybridJudge, short_spec

MC_QUESTION = "Which one?\nA. red\nB. blue\nC. green"
UNPARSED = [
    "I am not sure about this one",
    "Hard to say without more work",
    "It could be anything really",
    "No idea at all, sorry",
    "Perhaps something else entirely",
    "I would rather not guess here",
]


def rows():
    """Two rows the rules parse (a match and a mismatch), then rows with no extractable answer."""
    raw = [
        {"question": MC_QUESTION, "candidate": "Some thought.\nFinal answer: B", "reference": "B", "label": 1},
        {"question": MC_QUESTION, "candidate": "Final answer: A", "reference": "B", "label": 0},
    ]
    raw += [{"question": MC_QUESTION, "candidate": c, "reference": "B", "label": i % 2} for i, c in enumerate(UNPARSED)]
    return [
        normalize({**r, "category": "multiple_choice", "task": "mc", "candidate_model": f"m{i % 2}"}, f"row {i}")
        for i, r in enumerate(raw)
    ]


@pytest.fixture(scope="module")
def folders(tiny_backbone, tmp_path_factory):
    """Two tiny exported encoder judges; the temperatures spread their scores (and make them differ)."""
    import torch

    from bertjudge.judges.encoder import EncoderJudge

    root = tmp_path_factory.mktemp("routing")
    with torch.random.fork_rng():  # seeded heads, and the global random state left as other tests expect it
        torch.manual_seed(0)
        return (
            str(EncoderJudge(backbone=tiny_backbone, temperature=0.01).export(root / "tiny")),
            str(EncoderJudge(backbone=tiny_backbone, temperature=0.3).export(root / "big")),
        )


class Spy:
    """A judge that records which rows it was asked to score."""

    def __init__(self, judge):
        self.judge, self.name, self.threshold, self.seen = judge, judge.name, judge.threshold, []

    def score_records(self, records, batch_size=32, progress=False):
        self.seen += [r["candidate"] for r in records]
        return self.judge.score_records(records, batch_size, progress)


def test_hybrid_routes_parsed_rows_to_regex_and_the_rest_to_the_model(folders):
    records = rows()
    model = Spy(Judge.load(folders[0]))
    hybrid = HybridJudge(model)
    details = hybrid.details(records)
    assert [d["stage"] for d in details] == ["rules", "rules"] + ["model"] * len(UNPARSED)
    assert model.seen == UNPARSED  # the model saw exactly the unparsed rows
    regex = RegexJudge().details(records)
    assert [d["unparsed"] for d in regex] == [False, False] + [True] * len(UNPARSED)
    scores = hybrid.score_records(records)
    np.testing.assert_array_equal(scores[:2], [r["score"] for r in regex[:2]])
    assert list(scores[:2]) == [1.0, 0.0]
    np.testing.assert_allclose(scores[2:], model.judge.score_records(records[2:]), atol=1e-6)
    assert len(set(np.round(scores[2:], 6))) > 1  # the model's scores, not a constant
    assert not any(d["unparsed"] for d in details)  # a hybrid has no unparsed rows unless its model does
    routing = hybrid.routing  # two calls counted
    assert routing["n"] == 2 * len(records)
    assert routing["stages"]["model"]["fraction"] == pytest.approx(len(UNPARSED) / len(records))
    assert routing["stages"]["model"]["seen"] == 2 * len(UNPARSED)
    hybrid.reset_routing()
    assert hybrid.routing["n"] == 0


def test_cascade_rules_decide_only_matches_and_the_band_goes_to_stage_3(folders):
    records = rows()
    model, expensive = Judge.load(folders[0]), Spy(Judge.load(folders[1]))
    model.set_precision("fp32")  # the tiny random model's scores differ past bf16's resolution: the band needs them
    rest = records[1:]  # the parsed mismatch is not decided by the rules under rules_accept="match"
    model_scores = model.score_records(rest)
    low, high = np.quantile(model_scores, [0.25, 0.75])
    in_band = (model_scores >= low) & (model_scores <= high)
    assert 0 < in_band.sum() < len(rest)  # the test needs rows on both sides
    cascade = CascadeJudge(model, expensive, band=(low, high))
    details = cascade.details(records)
    assert [d["stage"] for d in details] == ["rules"] + ["expensive" if b else "model" for b in in_band]
    assert expensive.seen == [r["candidate"] for r, b in zip(rest, in_band) if b]
    scores = np.array([d["score"] for d in details])
    banded = [r for r, b in zip(rest, in_band) if b]
    np.testing.assert_allclose(scores[1:][in_band], expensive.judge.score_records(banded), atol=1e-6)
    np.testing.assert_allclose(scores[1:][~in_band], model_scores[~in_band], atol=1e-6)
    assert not np.allclose(scores[1:][in_band], model_scores[in_band])  # stage 3's score replaced the model's
    routing = cascade.routing
    fractions = {s: v["fraction"] for s, v in routing["stages"].items()}
    assert sum(fractions.values()) == pytest.approx(1.0)
    assert fractions == pytest.approx(
        {"rules": 1 / len(records), "model": (~in_band).sum() / len(records), "expensive": in_band.sum() / len(records)}
    )
    assert routing["stages"]["model"]["seen"] == len(rest) and routing["reference_stage"] == "expensive"
    last = routing["stages"]["expensive"]
    assert routing["reference_seconds_estimate"] == pytest.approx(last["seconds"] / last["seen"] * len(records))
    # rules_accept="parsed": the mismatch is decided by the rules too, as in the hybrid
    parsed = CascadeJudge(model, rules_accept="parsed").details(records)
    assert [d["stage"] for d in parsed] == ["rules", "rules"] + ["model"] * len(UNPARSED)


class Fixed:
    """A stand-in stage-3 judge: a given score, after a given time per row."""

    name, threshold = "fixed", 0.5

    def __init__(self, score, seconds_per_row=0.0):
        self.value, self.seconds_per_row = score, seconds_per_row

    def score_records(self, records, batch_size=32, progress=False):
        time.sleep(self.seconds_per_row * len(records))
        return np.full(len(records), self.value)


def test_stage_3_without_a_verdict_leaves_the_model_score(folders):
    records = rows()
    model = Judge.load(folders[0])
    details = CascadeJudge(model, Fixed(math.nan), band=(0.0, 1.0)).details(records)
    assert [d["stage"] for d in details] == ["rules"] + ["model"] * (len(records) - 1)
    np.testing.assert_allclose([d["score"] for d in details[1:]], model.score_records(records[1:]), atol=1e-6)
    assert all(math.isnan(d["scores"]["expensive"]) for d in details[1:])


def test_compute_saved_when_few_rows_reach_a_slow_stage(folders):
    records = rows()
    model = Judge.load(folders[0])
    model.set_precision("fp32")  # one top-scored row: the tiny random model's scores tie in bf16
    model_scores = model.score_records(records[1:])
    band = (float(np.max(model_scores)), 1.0)  # only the top-scored row goes to stage 3
    cascade = CascadeJudge(model, Fixed(0.9, seconds_per_row=0.2), band=band)
    cascade.score_records(records)
    routing = cascade.routing
    assert routing["stages"]["expensive"]["seen"] == 1
    assert routing["reference_seconds_estimate"] >= 0.2 * len(records)
    assert routing["compute_saved_estimate"] == pytest.approx(
        1 - routing["seconds"] / routing["reference_seconds_estimate"]
    )
    assert routing["compute_saved_estimate"] > 0.5


def test_specs(folders):
    tiny, big = folders
    hybrid = Judge.load(f"hybrid:{tiny}")
    assert isinstance(hybrid, HybridJudge) and hybrid.model.temperature == 0.01
    cascade = Judge.load(f"cascade:{tiny},{big}?band=0.1,0.9&rules=parsed")
    assert type(cascade) is CascadeJudge and cascade.band == (0.1, 0.9) and cascade.rules_accept == "parsed"
    assert cascade.expensive.temperature == 0.3
    default = Judge.load(f"cascade:{tiny}")
    assert default.expensive is None and default.band == (0.2, 0.8) and default.rules_accept == "match"
    assert short_spec(f"cascade:{tiny},{big}?band=0.1,0.9") == "cascade:tiny,big?band=0.1,0.9"
    assert short_spec(tiny) == "tiny"
    scores = hybrid.score(["Which?"], ["Final answer: 7"], ["7"])
    assert list(scores) == [1.0]


@pytest.mark.parametrize(
    "spec, message",
    [
        ("hybrid:", "expected 'hybrid:<judge>'"),
        ("cascade:a,b,c", "expected"),
        ("cascade:missing?band=0.5", "band must be two numbers"),  # refused before loading anything
        ("cascade:missing?band=x,y", "band must be two numbers"),
        ("cascade:missing?band=0.9,0.1", "LOW <= HIGH"),
        ("cascade:missing?rules=all", "rules must be one of"),
        ("cascade:missing?speed=fast", r"unknown option\(s\) \['speed'\]"),
        ("hybrid:missing?band=0.1,0.9", "hybrid accepts none"),
    ],
)
def test_bad_specs_are_refused_clearly(spec, message):
    with pytest.raises(ValueError, match=message):
        Judge.load(spec)


def test_evaluate_and_judge_commands(folders, tmp_path, capsys):
    from bertjudge.cli.main import main

    records = rows()
    data = write_records(tmp_path / "data.jsonl", records)
    spec = f"hybrid:{folders[0]}"
    evaluate(data, ["regex", spec, f"cascade:{folders[0]},{folders[1]}"], tmp_path / "rep", "--bootstrap", "20")
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert set(report["judges"]) == {"regex", "hybrid:tiny", "cascade:tiny,big"}
    hybrid = report["judges"]["hybrid:tiny"]
    stages = hybrid["routing"]["stages"]
    assert stages["model"]["fraction"] == pytest.approx(len(UNPARSED) / len(records))
    assert sum(
        s["fraction"] for s in report["judges"]["cascade:tiny,big"]["routing"]["stages"].values()
    ) == pytest.approx(1)
    assert (
        hybrid["routing"]["by_stage"]["rules"]["n"] == 2 and hybrid["routing"]["by_stage"]["rules"]["accuracy"] == 1.0
    )
    assert hybrid["overall"]["unparsed_rate"] == 0.0 and report["judges"]["regex"]["overall"]["unparsed_rate"] > 0
    assert "## Routing" in (tmp_path / "rep" / "report.md").read_text()
    capsys.readouterr()
    assert (
        main(["judge", "--judge", spec, "--input", str(data), "--output", str(tmp_path / "out.jsonl"), "--no-progress"])
        == 0
    )
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    expected = Judge.load(spec).score_records(records)
    np.testing.assert_allclose([row["score"] for row in out], expected, atol=1e-6)
    assert out[0]["judge"] == "hybrid(encoder)"
    assert f"routing of {len(records)} rows: rules {2 / len(records):.1%}" in capsys.readouterr().err


class Watched(BaseJudge):
    """A judge (through the interface's own ``details``) that records which rows it scored."""

    def __init__(self, judge):
        self.judge, self.threshold, self.seen = judge, judge.threshold, []

    @property
    def name(self):
        return self.judge.name

    def score_records(self, records, batch_size=32, progress=False):
        self.seen += [r["candidate"] for r in records]
        return self.judge.score_records(records, batch_size)


def test_by_category_sends_each_category_to_its_judge_and_keeps_the_order(folders):
    regex, contains = Watched(RegexJudge()), Watched(Judge.load("contains"))
    default = Watched(Judge.load(folders[0]))
    records = rows()[:3] + [
        normalize({"category": "open_math", "candidate": "so x = 4", "reference": "4", "label": 1}, "math"),
        normalize({"category": "open_qa", "candidate": "It is Paris.", "reference": "Paris", "label": 1}, "qa"),
    ]
    judge = ByCategoryJudge(default, {"multiple_choice": regex, "open_math": contains})
    rows_ = judge.details(records)
    assert [r["route"] for r in rows_] == ["multiple_choice"] * 3 + ["open_math", "default"]
    assert regex.seen == [r["candidate"] for r in records[:3]] and contains.seen == ["so x = 4"]
    assert default.seen == ["It is Paris."]
    expected = [*RegexJudge().score_records(records[:3]), 1.0, *Judge.load(folders[0]).score_records(records[4:])]
    np.testing.assert_allclose(judge.score_records(records), expected, atol=1e-6)
    assert judge.describe()["rows_per_route"] == {"multiple_choice": 6, "open_math": 2, "default": 2}
    # from Python lists, a row's category routes it as in a file; without one, the category the row shows (options
    # in the question, a reference that is one of their labels: multiple choice) routes it the same way
    assert judge.score([MC_QUESTION], ["Final answer: B"], ["B"], categories="multiple_choice").tolist() == [1.0]
    assert regex.seen[-1] == "Final answer: B"
    seen_by_default = len(default.seen)
    assert judge.score([MC_QUESTION], ["Final answer: C"], ["B"]).tolist() == [0.0]
    assert regex.seen[-1] == "Final answer: C" and len(default.seen) == seen_by_default
    with pytest.raises(ValueError, match="2 categories for 1 rows"):
        judge.score([MC_QUESTION], ["B"], ["B"], categories=["multiple_choice", "other"])


def test_by_category_spec_and_its_refusals(folders):
    judge = Judge.load(f"by-category:{folders[0]}?multiple_choice=regex")
    assert isinstance(judge, ByCategoryJudge) and judge.name.startswith("by-category(")
    assert short_spec(f"by-category:{folders[0]}?multiple_choice=regex") == "by-category:tiny?multiple_choice=regex"
    with pytest.raises(ValueError, match=r"unknown category \['maths'\]"):
        Judge.load(f"by-category:{folders[0]}?maths=regex")
    with pytest.raises(ValueError, match="expected"):
        Judge.load(f"by-category:{folders[0]}")
    other = Judge.load(folders[1])
    other.threshold = 0.7  # e.g. a judge with a threshold fitted on its own
    with pytest.raises(ValueError, match="threshold 0.7 differs from the default judge's 0.5"):
        ByCategoryJudge(Judge.load(folders[0]), {"open_qa": other})


def test_evaluate_a_by_category_judge_whose_rows_come_from_rules_and_a_model(folders, tmp_path):
    records = (
        [  # the first row the model's (with a logit), the others the rules' (without)
            normalize(
                {"category": "open_qa", "candidate": f"It is {c}.", "reference": "Paris", "label": int(c == "Paris")}, c
            )
            for c in ("Paris", "Lyon", "Nice")
        ]
        + rows()[:4]
    )
    data = write_records(tmp_path / "mixed.jsonl", records)
    report = evaluate(data, [f"by-category:{folders[0]}?multiple_choice=regex"], tmp_path / "rep", "--bootstrap", "10")
    (result,) = report["judges"].values()
    assert result["overall"]["n"] == 7 and "ece_uncalibrated" not in result.get("calibration", {})
