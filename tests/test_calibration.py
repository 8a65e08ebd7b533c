import numpy as np
import pytest

from bertjudge.calibration import (
    accuracy_at_thresholds,
    best_threshold,
    best_thresholds_by,
    ece_if_calibrated,
    expected_calibration_error,
    fit_temperature,
    plot_reliability,
    plot_threshold_curves,
    reliability,
)


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
        assert ece_if_calibrated(probs, (rng.random(n) < np.sqrt(probs)).astype(int), n_samples=500)["p_value"] == 1 / 501
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
