import itertools
import json

import numpy as np
import pytest
from cli_run import evaluate
from scipy.stats import kendalltau
from sklearn.metrics import accuracy_score, cohen_kappa_score

from bertjudge.cli.main import main
from bertjudge.core.records import RecordError, normalize, write_records
from bertjudge.evaluation.report import (
    accuracy_interval,
    borda,
    build_report,
    cohen_kappa,
    human_accuracy,
    load_labelled,
    write_report,
)
from bertjudge.judges.regex import RegexJudge


def labelled_set():
    """Three candidate models on two tasks; regex misses correct answers without a marker and
    accepts a right final answer that the label rejects (e.g. for flawed reasoning)."""
    rows = []
    answers = {  # model -> (math candidates, mc candidates); the label says which are right
        "strong": (
            [("Final answer: 4", 1), ("Final answer: 6", 1), ("The result is nine.", 1), ("Final answer: 12", 0)],
            [("Final answer: B", 1), ("Final answer: (A)", 1), ("The answer is C", 1)],
        ),
        "mid": (
            [("Final answer: 4", 1), ("It must be 6 apples", 1), ("Final answer: 7", 0), ("Final answer: 2", 0)],
            [("Final answer: B", 1), ("Final answer: C", 0), ("I am not sure", 0)],
        ),
        "weak": (
            [("Final answer: 5", 0), ("Final answer: 6", 1), ("Final answer: 8", 0), ("no idea", 0)],
            [("Final answer: A", 0), ("Final answer: B", 0), ("Final answer: C", 1)],
        ),
    }
    math_refs, mc_refs = ["4", "6", "9", "12"], ["B", "A", "C"]
    for model, (math, mc) in answers.items():
        for i, (cand, label) in enumerate(math):
            rows.append(
                {
                    "task": "gsm",
                    "category": "open_math",
                    "candidate": cand,
                    "reference": math_refs[i],
                    "label": label,
                    "candidate_model": model,
                    "question": f"q{i}",
                }
            )
        for i, (cand, label) in enumerate(mc):
            rows.append(
                {
                    "task": "mmlu",
                    "category": "multiple_choice",
                    "candidate": cand,
                    "reference": mc_refs[i],
                    "label": label,
                    "candidate_model": model,
                    "question": f"mc{i}\nA. x\nB. y\nC. z",
                }
            )
    rows.append(
        {
            "task": "mmlu",
            "category": "multiple_choice",
            "reference": "A",
            "label": 0,
            "candidate": "I am hesitating between A and B.\nFinal answer: A",
            "candidate_model": "weak",
            "question": "adv",
            "meta": {"attack": "hedging"},
        }
    )
    return [normalize(r, f"row {i}") for i, r in enumerate(rows)]


@pytest.fixture(scope="module")
def regex_run():
    records = labelled_set()
    judge = RegexJudge()
    details = judge.details(records)
    return records, np.array([d["score"] for d in details]), details


def test_kappa_matches_sklearn():
    rng = np.random.default_rng(0)
    for _ in range(5):
        a = rng.integers(0, 2, 200)
        b = np.where(rng.random(200) < 0.7, a, 1 - a)
        assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))
    assert np.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))


def test_bootstrap_interval_matches_explicit_resampling():
    rng = np.random.default_rng(1)
    correct = (rng.random(300) < 0.7).astype(float)
    low, high = accuracy_interval(correct, n_boot=4000, seed=3)
    resampled = correct[rng.integers(0, len(correct), (4000, len(correct)))].mean(axis=1)
    ref_low, ref_high = np.quantile(resampled, [0.025, 0.975])
    assert low == pytest.approx(ref_low, abs=0.01) and high == pytest.approx(ref_high, abs=0.01)
    assert low < correct.mean() < high
    assert accuracy_interval(correct, seed=5) == accuracy_interval(correct, seed=5)


def test_cluster_bootstrap_resamples_whole_questions():
    rng = np.random.default_rng(4)
    # 60 questions with 10 answers each, a question's answers all judged right or all wrong
    questions = np.repeat(np.arange(60), 10)
    correct = np.repeat((rng.random(60) < 0.7).astype(float), 10)
    low, high = accuracy_interval(correct, n_boot=4000, seed=3, clusters=questions)
    drawn = rng.integers(0, 60, (4000, 60))  # explicit resampling of questions
    per_question = correct.reshape(60, 10).mean(axis=1)
    ref_low, ref_high = np.quantile(per_question[drawn].mean(axis=1), [0.025, 0.975])
    assert low == pytest.approx(ref_low, abs=0.015) and high == pytest.approx(ref_high, abs=0.015)
    row_low, row_high = accuracy_interval(correct, n_boot=4000, seed=3)
    assert high - low > 2.5 * (row_high - row_low)  # ~sqrt(10) wider: 60 independent units, not 600
    # one answer per question: the same interval as resampling rows
    singles = (rng.random(500) < 0.8).astype(float)
    one, two = accuracy_interval(singles, 4000, 1, clusters=np.arange(500)), accuracy_interval(singles, 4000, 1)
    assert one == pytest.approx(two, abs=0.01)
    assert all(map(np.isnan, accuracy_interval(correct[:10], clusters=questions[:10])))  # one question: no interval


def test_cluster_bootstrap_pools_rows_of_unequal_questions():
    # one big question answered wrong, 30 one-answer questions answered right: the pooled accuracy
    # (30/130) is the estimate, not the mean of per-question accuracies (30/31)
    correct = np.r_[np.zeros(100), np.ones(30)]
    questions = np.r_[np.zeros(100, int), np.arange(1, 31)]
    low, high = accuracy_interval(correct, n_boot=4000, seed=0, clusters=questions)
    drawn = np.random.default_rng(7).integers(0, 31, (4000, 31))
    ones, sizes = np.r_[0.0, np.ones(30)], np.r_[100.0, np.ones(30)]
    ref_low, ref_high = np.quantile(ones[drawn].sum(1) / sizes[drawn].sum(1), [0.025, 0.975])
    assert low == pytest.approx(ref_low, abs=0.02) and high == pytest.approx(ref_high, abs=0.02)
    assert low < 30 / 130 < high


def test_report_intervals_draw_a_questions_answers_together():
    records = [
        {
            "id": f"{q}-{i}",
            "task": "t",
            "category": "other",
            "question": f"question {q}",
            "candidate": "c",
            "references": ["r"],
            "label": 1,
        }
        for q in range(20)
        for i in range(10)
    ]
    scores = np.repeat(np.arange(20) % 2, 10).astype(float)  # every other question judged wrong
    clustered = build_report(records, {"j": scores}, n_boot=2000)["judges"]["j"]["overall"]["ci95"]
    for i, record in enumerate(records):
        record["question"] = f"question {i}"  # now every answer has its own question
    rows = build_report(records, {"j": scores}, n_boot=2000)["judges"]["j"]["overall"]["ci95"]
    assert clustered[1] - clustered[0] > 2 * (rows[1] - rows[0])
    for record in records:
        record["question"] = None  # no question: every row is its own cluster
    assert build_report(records, {"j": scores}, n_boot=2000)["judges"]["j"]["overall"]["ci95"] == rows


def test_human_accuracy_formula_matches_simulation():
    rng = np.random.default_rng(2)
    n, rho, a = 400_000, 0.9, 0.8
    humans = rng.integers(0, 2, n)
    labels = np.where(rng.random(n) < rho, humans, 1 - humans)
    verdicts = np.where(rng.random(n) < a, labels, 1 - labels)
    assert np.mean(verdicts == humans) == pytest.approx(human_accuracy(a, rho), abs=0.005)
    assert human_accuracy(0.8, 1.0) == pytest.approx(0.8) and human_accuracy(0.8, 0.5) == pytest.approx(0.5)


def test_borda_hand_example():
    by_task = {
        "t1": {"a": 0.9, "b": 0.5, "c": 0.1},
        "t2": {"a": 0.2, "b": 0.6, "c": 0.6},
        "t3": {"a": 0.7, "b": 0.3},
    }  # c did not run t3
    assert borda(by_task) == {"a": 2 + 0 + 1, "b": 1 + 1.5 + 0, "c": 0 + 1.5}


def test_report_metrics_against_reference_implementations(regex_run):
    records, scores, details = regex_run
    labels = np.array([r["label"] for r in records])
    report = build_report(records, {"regex": scores}, {"regex": details}, n_boot=200)
    res = report["judges"]["regex"]
    assert res["overall"]["accuracy"] == pytest.approx(accuracy_score(labels, scores >= 0.5))
    assert res["overall"]["kappa"] == pytest.approx(cohen_kappa_score(labels, (scores >= 0.5).astype(int)))
    assert res["overall"]["unparsed_rate"] == pytest.approx(np.mean([d["unparsed"] for d in details]))
    tasks = np.array([r["task"] for r in records])
    for task in ("gsm", "mmlu"):
        assert res["by_task"][task]["accuracy"] == pytest.approx(
            accuracy_score(labels[tasks == task], scores[tasks == task] >= 0.5)
        )
        assert res["by_task"][task]["n"] == int((tasks == task).sum())
    assert set(res["by_category"]) == {"open_math", "multiple_choice"}
    assert res["attacks"] == {"hedging": {"n": 1, "pass_rate": 0.0}}  # regex accepts a hedged answer
    assert "calibration" not in res  # 0/1 scores


def test_leaderboard(regex_run):
    records, scores, details = regex_run
    board = build_report(records, {"regex": scores}, {"regex": details}, n_boot=50)["judges"]["regex"]["leaderboard"]
    models = board["models"]
    names = sorted(models)
    for row in models.values():  # Δ splits exactly into parse failures and post-parse mismatches
        assert row["delta"] == pytest.approx(row["delta_parse_failures"] + row["delta_post_parse"])
    assert models["strong"]["delta_parse_failures"] < 0  # correct answers without a marker are missed
    assert models["strong"]["label_rank"] == 1 and models["weak"]["label_rank"] == 3
    assert all(row["delta_rank"] == row["judge_rank"] - row["label_rank"] for row in models.values())
    ref = kendalltau([models[m]["label_accuracy"] for m in names], [models[m]["judge_accuracy"] for m in names])
    assert board["kendall_tau"] == pytest.approx(ref.statistic)
    # tau-b by hand when there are no ties: (concordant − discordant) / pairs
    x, y = [models[m]["label_accuracy"] for m in names], [models[m]["judge_accuracy"] for m in names]
    if len(set(x)) == len(x) and len(set(y)) == len(y):
        signs = [np.sign((x[i] - x[j]) * (y[i] - y[j])) for i, j in itertools.combinations(range(len(x)), 2)]
        assert board["kendall_tau"] == pytest.approx(sum(signs) / len(signs))
    assert board["borda"]["strong"]["label_points"] == 4.0  # first on both tasks, two models beaten each


def test_probabilistic_judge_gets_calibration(regex_run):
    records, scores, details = regex_run
    labels = np.array([r["label"] for r in records], dtype=float)
    probs = np.clip(0.15 + 0.7 * labels + np.linspace(-0.1, 0.1, len(labels)), 0, 1)
    report = build_report(
        records, {"regex": scores, "enc": probs}, {"regex": details}, {"enc": 0.5}, rho=0.9, n_boot=50
    )
    enc = report["judges"]["enc"]
    assert enc["overall"]["accuracy"] == 1.0
    assert enc["overall"]["human_accuracy_estimate"] == pytest.approx(0.9)
    assert "unparsed_rate" not in enc["overall"] and "delta_parse_failures" not in enc["leaderboard"]["models"]["mid"]
    from bertjudge.core.stats import expected_calibration_error

    assert enc["calibration"]["ece"] == pytest.approx(expected_calibration_error(probs, labels))
    assert enc["calibration"]["oracle_accuracy"] == 1.0
    band = enc["calibration"]["ece_if_calibrated"]
    assert 0 < band["mean"] < band["q95"] and 0 < band["p_value"] <= 1
    assert set(enc["calibration"]["ece_if_calibrated_by_data"]) == set(enc["calibration"]["ece_by_data"])
    assert set(enc["calibration"]["oracle_threshold_by_category"]) == {"open_math", "multiple_choice"}


def test_write_report_files(regex_run, tmp_path):
    records, scores, details = regex_run
    labels = np.array([r["label"] for r in records], dtype=float)
    probs = np.where(labels == 1, 0.8, 0.3)
    report = build_report(records, {"regex": scores, "enc": probs}, {"regex": details}, rho=0.95, n_boot=50)
    paths = write_report(report, tmp_path / "out")
    for name in ("report.md", "report.json", "leaderboards.png", "reliability.png", "threshold.png"):
        assert (tmp_path / "out" / name).stat().st_size > 100
    data = json.loads((tmp_path / "out" / "report.json").read_text())  # strict JSON, no NaN
    assert data["judges"]["regex"]["overall"]["accuracy"] == pytest.approx(
        report["judges"]["regex"]["overall"]["accuracy"]
    )
    markdown = paths["report.md"].read_text()
    for section in (
        "## Overall",
        "## Accuracy by task",
        "## Accuracy by candidate model",
        "### regex",
        "Δ parse fail",
        "## Calibration",
        "## Adversarial suites",
        "hedging",
        "ρ=0.95",
        "![reliability](reliability.png)",
    ):
        assert section in markdown
    band = report["judges"]["enc"]["calibration"]["ece_if_calibrated"]
    assert f"(calibrated: {band['mean']:.3f} / {band['q95']:.3f}, p {band['p_value']:.2f})" in markdown


def test_unlabelled_file_is_refused_by_name(tmp_path):
    path = write_records(
        tmp_path / "half.jsonl",
        [{"candidate": "x", "reference": "y", "label": 1}, {"candidate": "z", "reference": "y"}],
    )
    with pytest.raises(RecordError, match="half.jsonl: 1 of 2 records have no label"):
        load_labelled([str(path)])
    with pytest.raises(ValueError, match="label"):
        build_report([normalize({"candidate": "x", "reference": "y"})], {"j": np.array([1.0])})


def test_cli_with_regex(regex_run, tmp_path, capsys):
    records, _, _ = regex_run
    data = write_records(tmp_path / "data.jsonl", records)
    evaluate(data, ["regex"], tmp_path / "rep", "--bootstrap", "50")
    assert (tmp_path / "rep" / "report.md").exists()
    assert (
        main(
            ["evaluate", "--data", str(tmp_path / "missing.jsonl"), "--judge", "regex", "--output", str(tmp_path / "x")]
        )
        == 2
    )
    assert "missing.jsonl" in capsys.readouterr().err


def test_cli_with_exported_encoder_and_regex(regex_run, tiny_backbone, tmp_path):
    from bertjudge.judges.encoder import EncoderJudge

    records, _, _ = regex_run
    EncoderJudge(backbone=tiny_backbone, temperature=0.25).export(tmp_path / "tiny")
    data = write_records(tmp_path / "data.jsonl", records)
    out = tmp_path / "rep"
    evaluate(data, ["regex", str(tmp_path / "tiny")], out, "--bootstrap", "50", "--rho", "0.9")
    report = json.loads((out / "report.json").read_text())
    assert set(report["judges"]) == {"regex", "tiny"}
    assert "calibration" in report["judges"]["tiny"] and (out / "reliability.png").exists()
    # the ECE before the judge's temperature is reported beside the calibrated one, and differs from it
    tiny = report["judges"]["tiny"]["calibration"]
    assert 0 <= tiny["ece_uncalibrated"] <= 1 and tiny["ece_uncalibrated"] != tiny["ece"]
    assert "ECE before temperature" in (out / "report.md").read_text()


def test_each_data_file_is_reported_on_its_own(regex_run, tiny_backbone, tmp_path):
    from bertjudge.core import stats
    from bertjudge.judges.encoder import EncoderJudge
    from bertjudge.judges.loading import Judge

    records, _, _ = regex_run
    EncoderJudge(backbone=tiny_backbone).export(tmp_path / "tiny")
    half = len(records) // 2
    first = write_records(tmp_path / "synthetic.jsonl", records[:half])
    second = write_records(tmp_path / "real.jsonl", records[half:])
    out = tmp_path / "rep"
    evaluate([str(first), str(second)], ["regex", str(tmp_path / "tiny")], out, "--bootstrap", "20")
    report = json.loads((out / "report.json").read_text())
    regex = report["judges"]["regex"]["by_data"]
    assert {k: v["n"] for k, v in regex.items()} == {"synthetic.jsonl": half, "real.jsonl": len(records) - half}
    scores = Judge.load(str(tmp_path / "tiny")).score_records(records[half:])
    labels = np.array([r["label"] for r in records[half:]])
    ece = report["judges"]["tiny"]["calibration"]["ece_by_data"]["real.jsonl"]
    assert ece == pytest.approx(stats.expected_calibration_error(scores, labels, 15), abs=1e-6)
    assert "## ECE by data file" in (out / "report.md").read_text()


def test_rescue_and_damage_count_rows_against_the_reference_judge():
    from scipy.stats import binomtest

    from bertjudge.core.stats import rescue_damage

    reference = np.array([1, 1, 1, 1, 0, 0, 0, 1, 1, 0], dtype=bool)  # 6 right, 4 wrong
    judge = np.array([1, 1, 0, 1, 1, 1, 0, 1, 1, 1], dtype=bool)  # rescues 3 of the 4, damages 1 of the 6
    out = rescue_damage(reference, judge)
    assert (out["rescued"], out["reference_wrong"], out["damaged"], out["reference_right"]) == (3, 4, 1, 6)
    assert out["rescue"] == 0.75 and out["damage"] == pytest.approx(1 / 6)
    assert out["mcnemar_p"] == pytest.approx(binomtest(3, 4, 0.5).pvalue)
    same = rescue_damage(reference, reference)
    assert same["rescue"] == 0 and same["damage"] == 0 and same["mcnemar_p"] == 1.0
    assert rescue_damage(np.ones(3, bool), np.ones(3, bool))["rescue"] is None  # no wrong rows to rescue
    with pytest.raises(ValueError, match="rows"):
        rescue_damage(reference, judge[:3])


def test_evaluate_against_the_rules_reports_rescue_and_damage_per_category(regex_run, tmp_path):
    records, _, _ = regex_run
    data = write_records(tmp_path / "data.jsonl", records)
    out = tmp_path / "rep"
    report = evaluate(data, ["contains"], out, "--bootstrap", "20", "--against", "regex")
    assert set(report["judges"]) == {"contains", "regex"} and report["against"] == "regex"
    got = report["judges"]["contains"]["against"]
    labels = np.array([r["label"] for r in records], dtype=bool)
    verdict = {name: np.array([r["score"] >= 0.5 for r in rows]) for name, rows in _scores(out).items()}
    ref_right, judge_right = verdict["regex"] == labels, verdict["contains"] == labels
    assert got["overall"]["rescued"] == int((~ref_right & judge_right).sum())
    assert got["overall"]["damaged"] == int((ref_right & ~judge_right).sum())
    math = np.array([r["category"] == "open_math" for r in records])
    assert got["by_category"]["open_math"]["reference_wrong"] == int((~ref_right & math).sum())
    assert "against" not in report["judges"]["regex"]
    text = (out / "report.md").read_text()
    assert "## Row by row against regex: rescue and damage" in text and "| contains |" in text
    with pytest.raises(ValueError, match="not one of the judges"):
        build_report(records, {"j": np.ones(len(records))}, against="regex")


def test_evaluate_reports_mcnemars_test_for_every_pair_of_judges(tmp_path):
    from scipy.stats import binomtest

    from bertjudge.data.sources import load_source
    from bertjudge.evaluation.report import render_markdown

    out = tmp_path / "rep"
    report = evaluate("embedded:test?n=200", ["regex", "contains"], out, "--bootstrap", "10")
    records = load_source("embedded:test?n=200")
    labels = np.array([r["label"] for r in records], dtype=bool)
    right = {name: np.array([r["score"] >= 0.5 for r in rows]) == labels for name, rows in _scores(out).items()}
    (pair,) = report["mcnemar"]
    a, b = right[pair["judge_a"]], right[pair["judge_b"]]
    a_only, b_only = int((a & ~b).sum()), int((~a & b).sum())
    assert (pair["judge_a"], pair["judge_b"]) == ("regex", "contains")
    assert (pair["n"], pair["a_right_b_wrong"], pair["a_wrong_b_right"]) == (200, a_only, b_only)
    assert a_only + b_only > 0  # the two judges disagree on some rows: the test has something to count
    assert pair["p"] == pytest.approx(binomtest(b_only, a_only + b_only, 0.5).pvalue)
    text = (out / "report.md").read_text()
    assert "## Pairs of judges: McNemar's exact test" in text
    assert f"| regex | contains | 200 | {a_only} | {b_only} | {pair['p']:.2g} |" in text
    # every pair, in the judges' order; a single judge has none
    scores = {"regex": right["regex"] == labels, "contains": right["contains"] == labels, "yes": np.ones(len(labels))}
    pairs = build_report(records, scores, n_boot=5)["mcnemar"]
    assert [(t["judge_a"], t["judge_b"]) for t in pairs] == [
        ("regex", "contains"),
        ("regex", "yes"),
        ("contains", "yes"),
    ]
    assert pairs[1]["a_wrong_b_right"] == int((~right["regex"] & labels).sum())  # "yes" is right on every correct row
    single = build_report(records, {"regex": scores["regex"]}, n_boot=5)
    assert "mcnemar" not in single and "McNemar" not in render_markdown(single)


def _scores(out) -> dict[str, list[dict]]:
    return {
        path.stem: [json.loads(line) for line in path.read_text().splitlines()]
        for path in (out / "scores").glob("*.jsonl")
    }


def test_accuracy_is_reported_by_the_candidates_length_bucket(regex_run):
    from bertjudge.evaluation.report import length_bucket, render_markdown

    assert length_bucket("Final answer: 4") == "< 256"
    assert length_bucket("word " * 255 + "end") == "256–1k"  # 257 tokens
    assert length_bucket("x, " * 600) == "1k–4k" and length_bucket("x " * 5000) == "≥ 4k"
    records, scores, details = regex_run
    long = [{**r, "candidate": "Let me think. " * 100 + r["candidate"]} if i % 2 else r for i, r in enumerate(records)]
    report = build_report(long, {"regex": scores}, n_boot=10)
    by_length = report["judges"]["regex"]["by_length"]
    assert {k: v["n"] for k, v in by_length.items()} == {"< 256": (len(long) + 1) // 2, "256–1k": len(long) // 2}
    text = render_markdown(report)
    assert "## Accuracy by length" in text and text.index("| < 256 |") < text.index("| 256–1k |")
