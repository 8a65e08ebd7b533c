import numpy as np
import pytest
from cli_run import evaluate

from bertjudge.core.calibration import cross_fitted, fit_platt, fit_temperature
from bertjudge.core.stats import (
    accuracy_at_thresholds,
    best_threshold,
    best_thresholds_by,
    ece_if_calibrated,
    expected_calibration_error,
    reliability,
)
from bertjudge.evaluation.plots import plot_reliability, plot_threshold_curves


def _numpy_ece(probs, labels, n_bins):
    edges = np.linspace(0, 1, n_bins + 1)
    ece = 0.0
    for b in range(n_bins):
        last = b == n_bins - 1
        mask = (probs >= edges[b]) & ((probs <= edges[b + 1]) if last else (probs < edges[b + 1]))
        if mask.any():
            ece += mask.mean() * abs(probs[mask].mean() - labels[mask].mean())
    return ece


@pytest.mark.parametrize("true_t", [0.5, 2.5])
def test_fit_temperature_recovers_known_temperature(true_t):
    rng = np.random.default_rng(0)
    logits = rng.normal(0, 4, 20000)
    labels = (rng.random(20000) < 1 / (1 + np.exp(-logits / true_t))).astype(int)
    assert fit_temperature(logits, labels) == pytest.approx(true_t, rel=0.06)


def test_ece_matches_numpy_and_reliability():
    rng = np.random.default_rng(1)
    probs = rng.random(3000) ** 2
    probs[:10] = [0.0, 1.0, 1 / 15, 2 / 15, 0.5, 0.5, 1.0, 0.2, 0.4, 0.6]  # bin edges
    labels = (rng.random(3000) < np.sqrt(probs)).astype(int)
    ece = expected_calibration_error(probs, labels, n_bins=15)
    assert ece == pytest.approx(_numpy_ece(probs, labels, 15), abs=1e-5)
    assert ece > 0.05  # miscalibrated by construction
    data = reliability(probs, labels, n_bins=15)
    weights = np.array(data["count"]) / len(probs)
    gaps = [abs(p - f) if p is not None else 0 for p, f in zip(data["mean_pred"], data["frequency"])]
    assert float(np.dot(weights, gaps)) == pytest.approx(ece, abs=1e-5)


def test_ece_of_calibrated_scores_is_small():
    rng = np.random.default_rng(2)
    probs = rng.random(50000)
    labels = (rng.random(50000) < probs).astype(int)
    assert expected_calibration_error(probs, labels) < 0.02


def test_ece_if_calibrated_is_the_ece_of_calibrated_labels_and_flags_miscalibration():
    rng = np.random.default_rng(3)
    for n in (400, 6400):
        probs = rng.random(n)
        calibrated = (rng.random(n) < probs).astype(int)
        band = ece_if_calibrated(probs, calibrated, n_samples=500)
        # the band is the torchmetrics ECE of labels drawn from the scores themselves
        drawn = [expected_calibration_error(probs, (rng.random(n) < probs).astype(int)) for _ in range(200)]
        assert band["mean"] == pytest.approx(np.mean(drawn), rel=0.08)
        assert band["mean"] < band["q95"]
        assert band["p_value"] > 0.05  # calibrated labels are not flagged
        # labels from sqrt(p): the scores are too low everywhere, and the observed ECE is beyond every draw
        assert (
            ece_if_calibrated(probs, (rng.random(n) < np.sqrt(probs)).astype(int), n_samples=500)["p_value"] == 1 / 501
        )
        if n == 400:
            small = band["mean"]
    assert band["mean"] < 0.35 * small  # the upward bias shrinks ~1/sqrt(rows): 16x rows, ~1/4 the ECE


def test_best_threshold_and_accuracy_curve():
    probs = np.array([0.1, 0.2, 0.35, 0.4, 0.7, 0.9])
    labels = np.array([0, 0, 1, 1, 1, 0])
    acc = accuracy_at_thresholds(probs, labels, [0.0, 0.3, 0.5, 1.01])
    brute = [np.mean((probs >= t) == labels) for t in [0.0, 0.3, 0.5, 1.01]]
    np.testing.assert_allclose(acc, brute)
    threshold, best = best_threshold(probs, labels)
    assert 0.2 < threshold <= 0.35 and best == pytest.approx(5 / 6)
    assert best_threshold([0.9, 0.95], [0, 0])[1] == 1.0  # "all incorrect" is reachable
    by = best_thresholds_by(probs, labels, ["a", "a", "a", "b", "b", "b"])
    assert set(by) == {"a", "b"} and 0.2 < by["a"] <= 0.35 and by["b"] < 0.4


def test_plots_are_written(tmp_path):
    probs, labels = np.array([0.1, 0.6, 0.8, 0.3]), np.array([0, 1, 1, 1])
    grid = np.linspace(0, 1, 11)
    a = plot_reliability({"j": reliability(probs, labels)}, tmp_path / "rel.png")
    b = plot_threshold_curves({"j": (grid, accuracy_at_thresholds(probs, labels, grid))}, tmp_path / "thr.png")
    assert a.read_bytes()[:4] == b"\x89PNG" and b.stat().st_size > 1000


def test_fit_platt_recovers_a_known_temperature_and_bias():
    rng = np.random.default_rng(0)
    z = rng.normal(0, 3, 40_000)
    y = (rng.random(z.size) < 1 / (1 + np.exp(-(z / 2.0 - 0.7)))).astype(int)
    temperature, bias = fit_platt(z, y)
    assert temperature == pytest.approx(2.0, rel=0.05)
    assert bias == pytest.approx(-0.7, abs=0.05)


def test_a_bias_fixes_what_a_temperature_cannot():
    rng = np.random.default_rng(1)
    z = rng.normal(0, 2, 20_000)
    y = (rng.random(z.size) < 1 / (1 + np.exp(-(z - 1.0)))).astype(
        int
    )  # the judge's logits are 1 too optimistic: a shift, not a scale
    t_only = fit_temperature(z, y)
    temperature, bias = fit_platt(z, y)
    ece_t = expected_calibration_error(1 / (1 + np.exp(-z / t_only)), y)
    ece_platt = expected_calibration_error(1 / (1 + np.exp(-(z / temperature + bias))), y)
    assert ece_platt < 0.02 < ece_t


def test_cross_fitted_never_uses_a_rows_own_question():
    rng = np.random.default_rng(2)
    z = rng.normal(0, 2, 600)
    y = (rng.random(z.size) < 1 / (1 + np.exp(-(z / 1.5 - 0.5)))).astype(int)
    groups = [f"q{i // 6}" for i in range(z.size)]  # 100 questions, 6 answers each
    out = cross_fitted(z, y, groups, fit_bias=True, folds=4, seed=3)
    mine = np.array([g == "q0" for g in groups])
    flipped = np.where(mine, 1 - y, y)  # other labels for q0's rows only
    again = cross_fitted(z, flipped, groups, fit_bias=True, folds=4, seed=3)
    np.testing.assert_allclose(again[mine], out[mine])  # q0's scores do not depend on q0's labels
    assert not np.allclose(again[~mine], out[~mine])  # the other folds were fitted on them
    logit = np.log(out[mine] / (1 - out[mine]))  # one (temperature, bias) per fold: affine in z
    slope, intercept = np.polyfit(z[mine], logit, 1)
    np.testing.assert_allclose(logit, slope * z[mine] + intercept, atol=1e-6)
    assert 0.4 < slope < 0.9 and -1.0 < intercept < 0.0  # near the true 1/1.5 and -0.5


def test_the_calibrate_command_writes_a_judge_scored_with_the_fitted_temperature_and_bias(
    tiny_backbone, tmp_path, capsys
):
    import json

    from bertjudge.cli.main import main
    from bertjudge.data.sources import load_source
    from bertjudge.judges.encoder import EncoderJudge
    from bertjudge.judges.loading import Judge

    EncoderJudge(backbone=tiny_backbone, temperature=2.0).export(tmp_path / "a")
    source = "embedded:val?n=48"
    assert (
        main(
            [
                "calibrate",
                "--judge",
                str(tmp_path / "a"),
                "--data",
                source,
                "--bias",
                "--folds",
                "2",
                "--output",
                str(tmp_path / "b"),
            ]
        )
        == 0
    )
    assert "cross-fitted (2 folds by question)" in capsys.readouterr().out
    config = json.loads((tmp_path / "b" / "judge.json").read_text())
    fitted = config["provenance"]["calibration"]
    assert (fitted["rows"], fitted["data"]) == (48, [source]) and "cross_fitted_ece" in fitted
    records = list(load_source(source))
    judge = Judge.load(str(tmp_path / "b"))
    judge.set_precision("fp32")  # calibrate fits on fp32 logits, whatever auto would take on this CPU
    z, y = judge.logits_records(records), np.array([r["label"] for r in records])
    assert (judge.temperature, judge.bias) == pytest.approx(fit_platt(z, y), rel=1e-4)
    assert (config["temperature"], config["bias"]) == (judge.temperature, judge.bias)
    np.testing.assert_allclose(
        judge.score_records(records), 1 / (1 + np.exp(-(z / judge.temperature + judge.bias))), rtol=1e-5
    )
    from bertjudge.cli.main import main
    from bertjudge.core.records import write_records

    write_records(tmp_path / "rows.jsonl", records)  # evaluate scores it with the bias too
    evaluate(tmp_path / "rows.jsonl", [str(tmp_path / "b")], tmp_path / "report", "--bootstrap", "10")
    report = json.loads((tmp_path / "report" / "report.json").read_text())["judges"]["b"]
    assert report["calibration"]["ece"] == pytest.approx(
        expected_calibration_error(judge.score_records(records), y), abs=1e-6
    )
    del config["bias"]  # a judge saved before biases existed loads with none
    (tmp_path / "b" / "judge.json").write_text(json.dumps(config))
    assert Judge.load(str(tmp_path / "b")).bias == 0.0


def test_calibrate_for_a_cascade_fits_on_the_rows_the_rules_leave_to_the_judge(tiny_backbone, tmp_path, capsys):
    import json

    from bertjudge.cli.main import main
    from bertjudge.data.sources import load_source
    from bertjudge.judges.encoder import EncoderJudge
    from bertjudge.judges.loading import Judge
    from bertjudge.judges.regex import RegexJudge

    EncoderJudge(backbone=tiny_backbone, temperature=2.0).export(tmp_path / "a")
    source = "embedded:val?n=64"
    assert (
        main(
            [
                "calibrate",
                "--judge",
                str(tmp_path / "a"),
                "--data",
                source,
                "--bias",
                "--cascade",
                "--folds",
                "2",
                "--output",
                str(tmp_path / "b"),
            ]
        )
        == 0
    )
    records = list(load_source(source))
    ruled = np.array([row["match"] and not row["unparsed"] for row in RegexJudge().details(records)])
    assert 0 < ruled.sum() < len(records)  # both kinds of rows are there
    out = capsys.readouterr().out
    assert f"the cascade's rules decide {ruled.sum()} of {len(records)} rows" in out
    assert "(the whole cascade)" in out
    judge = Judge.load(str(tmp_path / "b"))
    judge.set_precision("fp32")  # calibrate fits on fp32 logits, whatever auto would take on this CPU
    z = judge.logits_records([r for r, x in zip(records, ruled) if not x])
    y = np.array([r["label"] for r, x in zip(records, ruled) if not x])
    assert (judge.temperature, judge.bias) == pytest.approx(fit_platt(z, y), rel=1e-4)  # those rows only
    fitted = json.loads((tmp_path / "b" / "judge.json").read_text())["provenance"]["calibration"]
    assert fitted["rows"] == len(y) and fitted["for"].startswith("cascade")
    # the printed figures are the whole cascade's: rule matches score 1, the judge the other rows
    labels = np.array([r["label"] for r in records])
    z_all = judge.logits_records(records)
    cascade = np.where(ruled, 1.0, 1 / (1 + np.exp(-(z_all / judge.temperature + judge.bias))))
    refitted = next(line for line in out.splitlines() if line.startswith("refitted (")).split()
    assert float(refitted[-2]) == pytest.approx(expected_calibration_error(cascade, labels), abs=1e-4)
    assert float(refitted[-1]) == pytest.approx(((cascade >= 0.5) == labels).mean(), abs=1e-4)
    printed = next(line for line in out.splitlines() if "cross-fitted" in line).split()
    groups = [
        (r.get("meta") or {}).get("problem") or (r.get("meta") or {}).get("item") or r["question"]
        for r, x in zip(records, ruled)
        if not x
    ]
    cross = np.ones(len(records))
    cross[~ruled] = cross_fitted(z_all[~ruled], labels[~ruled], groups, fit_bias=True, folds=2)
    assert float(printed[-2]) == pytest.approx(expected_calibration_error(cross, labels), abs=1e-4)
    assert fitted["cascade_cross_fitted_ece"] == pytest.approx(float(printed[-2]), abs=1e-4)


def test_the_calibrate_command_refuses_a_judge_without_a_calibration(tmp_path, capsys):
    from bertjudge.cli.main import main

    assert main(["calibrate", "--judge", "regex", "--data", "embedded:val?n=8", "--output", str(tmp_path / "r")]) == 2
    assert "not a trained judge" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_prior_shift_recovers_a_new_share_of_correct_answers():
    from bertjudge.core.stats import prior_shift

    rng = np.random.default_rng(0)

    # a calibrated judge where 50% are correct: logit = true log-likelihood ratio of a Gaussian score
    def draw(share, n=20000):
        y = rng.random(n) < share
        x = rng.normal(np.where(y, 1.0, -1.0), 1.0)
        return 1 / (1 + np.exp(-2 * x)), y  # P(correct | x) at share 0.5

    probs, y = draw(0.85)
    new, shift = prior_shift(probs, prior=0.5)
    assert abs(new - 0.85) < 0.02 and shift > 1.5
    adjusted = 1 / (1 + np.exp(-(np.log(probs / (1 - probs)) + shift)))
    assert ((adjusted >= 0.5) == y).mean() > ((probs >= 0.5) == y).mean()  # the threshold moved the right way
    same, none = prior_shift(*draw(0.5)[:1], prior=0.5)
    assert abs(same - 0.5) < 0.02 and abs(none) < 0.1


def test_few_label_calibration_fits_on_some_groups_and_scores_the_rest():
    from bertjudge.core.calibration import few_label_calibration

    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(300), 5)
    y = rng.random(len(groups)) < 0.8
    logits = rng.normal(np.where(y, 1.0, -1.0), 1.0) * 2 - 3.0  # a judge biased toward "incorrect"
    out = few_label_calibration(logits, y.astype(int), groups, sizes=(50, 200), repeats=5)
    assert set(out) == {50, 200} and all(v["draws"] == 5 for v in out.values())
    raw = ((1 / (1 + np.exp(-logits)) >= 0.5) == y).mean()
    assert out[200]["acc"] > raw + 0.05  # a bias fitted on 200 rows undoes most of the shift


def test_label_free_calibration_moves_the_bias_by_the_em_shift(tiny_backbone, tmp_path, capsys):
    import json

    from bertjudge.cli.main import main
    from bertjudge.core.stats import prior_shift
    from bertjudge.data.sources import load_source
    from bertjudge.judges.encoder import EncoderJudge
    from bertjudge.judges.loading import Judge

    EncoderJudge(backbone=tiny_backbone, temperature=0.05).export(tmp_path / "a")  # sharp scores: a real shift
    source = "embedded:val?n=40"
    assert (
        main(
            [
                "calibrate",
                "--judge",
                str(tmp_path / "a"),
                "--data",
                source,
                "--label-free",
                "--output",
                str(tmp_path / "b"),
            ]
        )
        == 2
    )
    assert "--prior" in capsys.readouterr().err  # no recorded prior, none given
    assert (
        main(
            [
                "calibrate",
                "--judge",
                str(tmp_path / "a"),
                "--data",
                source,
                "--label-free",
                "--prior",
                "0.3",
                "--output",
                str(tmp_path / "b"),
            ]
        )
        == 0
    )
    assert "estimated here" in capsys.readouterr().out
    a, b = Judge.load(str(tmp_path / "a")), Judge.load(str(tmp_path / "b"))
    records = list(load_source(source))
    new_prior, shift = prior_shift(a.score_records(records), 0.3)
    assert b.bias == pytest.approx(a.bias + shift, abs=1e-6)
    saved = json.loads((tmp_path / "b" / "judge.json").read_text())["provenance"]["calibration"]
    assert saved["label_free"] and saved["prior"] == pytest.approx(new_prior) and saved["prior_before"] == 0.3
