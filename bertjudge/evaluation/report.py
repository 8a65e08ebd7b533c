"""Compare judges against labels (``python -m bertjudge evaluate``).

``load_labelled`` reads the labelled rows; ``run_judges`` scores them with every judge (one pass
each: scores, per-row details, uncalibrated scores of trained judges, routing counts);
``build_report(records, scores)`` is a pure function from labelled records and each judge's
P(correct) to a JSON-ready dict; ``write_report`` turns it into ``report.json``, ``report.md`` and
PNG plots.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau, rankdata

from bertjudge.core import stats
from bertjudge.core.calibration import calibrated
from bertjudge.core.error_types import ERROR_TYPES
from bertjudge.core.records import RecordError, row_hash
from bertjudge.core.resumable import PartialFile, changed_keys, shown_keys
from bertjudge.data.error_types import row_error_type
from bertjudge.data.sources import load_source
from bertjudge.evaluation import plots as plots_module
from bertjudge.evaluation.scoring import judge_fingerprint
from bertjudge.judges.interface import BaseJudge

GROUPINGS = ("data", "task", "category", "candidate_model", "length")  # data: the --data file a record came from
LENGTH_BUCKETS = ((256, "< 256"), (1024, "256–1k"), (4096, "1k–4k"))  # the candidate's length, in tokens
_TOKEN = re.compile(r"\w+|[^\w\s]")


def _group_order(key: str) -> tuple[int, str]:
    """Length buckets shortest first, any other group by name."""
    names = [name for _, name in LENGTH_BUCKETS] + ["≥ 4k"]
    return (names.index(key), "") if key in names else (len(names), key)


def length_bucket(candidate: str) -> str:
    """The candidate's length bucket (``< 256``, ``256–1k``, ``1k–4k``, ``≥ 4k`` tokens), counted without a tokenizer
    as words and punctuation marks (close to a WordPiece count for English; the same for every judge)."""
    tokens = len(_TOKEN.findall(candidate))
    return next((name for limit, name in LENGTH_BUCKETS if tokens < limit), "≥ 4k")


# ---------------------------------------------------------------- metrics
def accuracy_interval(
    correct, n_boot: int = 1000, seed: int = 0, level: float = 0.95, clusters=None
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of 0/1 values (seeded).

    Without ``clusters``, rows are resampled with replacement; the number of ones is then
    Binomial(n, mean), so that is sampled directly. With ``clusters`` (one key per row, compared as
    strings, e.g. its question), whole clusters are resampled (a cluster bootstrap of the pooled
    accuracy): rows that share a question are not independent (a judge that misreads a problem
    misreads its many answers), and the row bootstrap then gives too narrow an interval. Fewer than
    two clusters give no interval (NaN); a handful give a rough one."""
    correct = np.asarray(correct, dtype=float)
    if len(correct) == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    index = None if clusters is None else np.unique(np.asarray(clusters, dtype=str), return_inverse=True)[1]
    if index is None or index.max() + 1 == len(correct):  # one row per cluster: resampling rows
        means = rng.binomial(len(correct), correct.mean(), n_boot) / len(correct)
    elif index.max() == 0:
        return math.nan, math.nan
    else:
        ones, sizes = np.bincount(index, weights=correct), np.bincount(index).astype(float)
        k, means = len(sizes), []
        for start in range(0, n_boot, 100):  # 100 resamples at a time: memory stays bounded
            drawn = rng.integers(0, k, (min(100, n_boot - start), k))  # k clusters drawn with replacement
            means.append(ones[drawn].sum(axis=1) / sizes[drawn].sum(axis=1))
        means = np.concatenate(means)
    low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def cohen_kappa(a, b) -> float:
    """Cohen's κ between two binary raters (NaN when chance agreement is 1)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    observed = np.mean(a == b)
    chance = a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean())
    return float((observed - chance) / (1 - chance)) if chance < 1 else math.nan


def human_accuracy(accuracy: float, rho: float) -> float:
    """Estimated accuracy against humans of a judge with accuracy A against labels that agree with
    humans at rate ρ (binary labels, independent errors): (2ρ − 1)·A + 1 − ρ."""
    return (2 * rho - 1) * accuracy + 1 - rho


def borda(accuracy_by_task: dict[str, dict[str, float]]) -> dict[str, float]:
    """Borda count: in each task a model gets one point per model it beats there (half per tie)."""
    points: dict[str, float] = defaultdict(float)
    for accuracies in accuracy_by_task.values():
        for model, acc in accuracies.items():
            points[model] += sum(
                float(acc > other) + 0.5 * (acc == other) for name, other in accuracies.items() if name != model
            )
    return dict(points)


def _ranks(values: dict[str, float]) -> dict[str, float]:
    """1 = best; ties share the best rank."""
    names = list(values)
    ranks = rankdata([-values[n] for n in names], method="min")
    return {n: float(r) for n, r in zip(names, ranks)}


def _tau(x: list[float], y: list[float]) -> float:
    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return math.nan
    return float(kendalltau(x, y).statistic)


# ---------------------------------------------------------------- error types
def error_type_report(records: list[dict], rows: list[dict] | None) -> dict | None:
    """How a judge's error-type head (the ``error_type`` of its details rows) agrees with the rows' known
    types (``data.error_types.row_error_type``; rows of unknown type are left out): per type the rows
    labelled and predicted, precision and recall; the confusion matrix (labelled type x predicted type);
    the accuracy over every typed row and over those whose verdict agrees with the label (the head's
    own share, apart from the verdict's errors: a wrong verdict forces a type of the other side). None
    when the details carry no error type or no row's type is known."""
    if not rows or "error_type" not in rows[0]:
        return None
    pairs, verdict_right = [], []
    for rec, row in zip(records, rows):
        truth = row_error_type(rec)
        if truth is None or row.get("error_type") is None:
            continue
        pairs.append((truth, row["error_type"]))
        verdict_right.append(row.get("verdict") is not None and bool(row["verdict"]) == (rec["label"] == 1))
    if not pairs:
        return None
    names = list(ERROR_TYPES) + sorted({p for _, p in pairs} - set(ERROR_TYPES))  # a saved head's other names
    index = {name: i for i, name in enumerate(names)}
    confusion = np.zeros((len(names), len(names)), dtype=int)
    np.add.at(confusion, ([index[t] for t, _ in pairs], [index[p] for _, p in pairs]), 1)
    hits, labelled, predicted = np.diag(confusion), confusion.sum(axis=1), confusion.sum(axis=0)
    agree = np.array([t == p for t, p in pairs])
    verdict_right = np.array(verdict_right)
    return {
        "n": len(pairs),
        "n_unknown": len(records) - len(pairs),
        "accuracy": float(agree.mean()),
        "accuracy_where_verdict_right": float(agree[verdict_right].mean()) if verdict_right.any() else math.nan,
        "types": names,
        "per_type": {
            name: {
                "labelled": int(labelled[i]),
                "predicted": int(predicted[i]),
                "precision": float(hits[i] / predicted[i]) if predicted[i] else math.nan,
                "recall": float(hits[i] / labelled[i]) if labelled[i] else math.nan,
            }
            for i, name in enumerate(names)
        },
        "confusion": confusion.tolist(),
    }


def _shown_types(section: dict) -> list[int]:
    """The indices of the types a table or plot shows: those labelled or predicted at least once."""
    confusion = np.asarray(section["confusion"])
    return [i for i in range(len(section["types"])) if confusion[i].sum() or confusion[:, i].sum()]


def error_type_markdown(judges: dict) -> list[str]:
    """The report's "Error types" section: per judge with an error-type head, precision and recall per type
    and the confusion matrix, over the rows whose type is known. Empty when no judge has one."""
    lines = []
    for name, res in judges.items():
        section = res.get("error_types")
        if not section:
            continue
        if not lines:
            lines += [
                "## Error types",
                "",
                "The kind of error each judge's error-type head names, against the type of the rows that have one "
                "(the corpus's candidate kinds, or a row's `meta.error_type`); rows of unknown type are left out. "
                "The head's type agrees with the verdict, so a wrong verdict also makes a wrong type.",
                "",
            ]
        shown = _shown_types(section)
        types = [section["types"][i] for i in shown]
        confusion = np.asarray(section["confusion"])
        rows = [
            [t, s["labelled"], s["predicted"], _f(s["precision"]), _f(s["recall"])]
            for t in types
            for s in [section["per_type"][t]]
        ]
        lines += [
            f"### {name}",
            "",
            f"{section['n']} rows of a known type ({section['n_unknown']} unknown); type accuracy "
            f"{_f(section['accuracy'])}, {_f(section['accuracy_where_verdict_right'])} where the verdict is right.",
            "",
            *_table(["type", "labelled", "predicted", "precision", "recall"], rows),
            "Confusion (rows: labelled type, columns: predicted type):",
            "",
            *_table(
                ["labelled \\ predicted", *types],
                [[t, *(int(confusion[i, j]) for j in shown)] for t, i in zip(types, shown)],
            ),
        ]
    return lines


def error_type_plots(report: dict, out: Path) -> dict[str, Path]:
    """A confusion-matrix plot per judge with an error-type section, ``error-types-<judge>.png`` in ``out``."""
    plots = {}
    for name, res in report["judges"].items():
        section = res.get("error_types")
        if not section:
            continue
        shown = _shown_types(section)
        confusion = np.asarray(section["confusion"])[np.ix_(shown, shown)]
        file = out / ("error-types-" + (re.sub(r"[^\w.-]+", "_", name).strip("_") or "judge") + ".png")
        plots[f"error types ({name})"] = plots_module.plot_confusion(
            confusion, [section["types"][i] for i in shown], file, title=f"Error types: {name}"
        )
    return plots


# ---------------------------------------------------------------- the report
def _stats(
    correct: np.ndarray, labels: np.ndarray, verdicts: np.ndarray, n_boot: int, seed: int, questions: np.ndarray
) -> dict:
    low, high = accuracy_interval(correct, n_boot, seed, clusters=questions)
    return {
        "n": int(len(correct)),
        "accuracy": float(correct.mean()),
        "ci95": [low, high],
        "kappa": cohen_kappa(labels, verdicts),
    }


def _leaderboard(records, labels, verdicts, unparsed) -> dict:
    models = np.array([r.get("candidate_model") or "unknown" for r in records])
    tasks = np.array([r["task"] for r in records])
    rows = {}
    for model in map(str, sorted(set(models))):
        mask = models == model
        row = {
            "n": int(mask.sum()),
            "label_accuracy": float(labels[mask].mean()),
            "judge_accuracy": float(verdicts[mask].mean()),
        }
        row["delta"] = row["judge_accuracy"] - row["label_accuracy"]
        if unparsed is not None:  # Δ = (Σ_unparsed (verdict − label) + Σ_parsed (verdict − label)) / n
            diff = verdicts[mask] - labels[mask]
            row["delta_parse_failures"] = float(diff[unparsed[mask]].sum() / mask.sum())
            row["delta_post_parse"] = float(diff[~unparsed[mask]].sum() / mask.sum())
        rows[model] = row
    label_ranks = _ranks({m: r["label_accuracy"] for m, r in rows.items()})
    judge_ranks = _ranks({m: r["judge_accuracy"] for m, r in rows.items()})
    for model, row in rows.items():
        row.update(
            label_rank=label_ranks[model],
            judge_rank=judge_ranks[model],
            delta_rank=judge_ranks[model] - label_ranks[model],
        )

    def per_task(values):
        return {
            str(task): {
                str(m): float(values[(tasks == task) & (models == m)].mean())
                for m in sorted(set(models[tasks == task]))
            }
            for task in sorted(set(tasks))
        }

    label_borda, judge_borda = borda(per_task(labels)), borda(per_task(verdicts))
    names = list(rows)
    return {
        "models": rows,
        "kendall_tau": _tau([rows[m]["label_accuracy"] for m in names], [rows[m]["judge_accuracy"] for m in names]),
        "borda": {m: {"label_points": label_borda[m], "judge_points": judge_borda[m]} for m in names},
        "borda_kendall_tau": _tau([label_borda[m] for m in names], [judge_borda[m] for m in names]),
    }


def build_report(
    records: list[dict],
    scores: dict[str, np.ndarray],
    details: dict[str, list[dict]] | None = None,
    thresholds: dict[str, float] | None = None,
    rho: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    n_bins: int = 15,
    uncalibrated: dict[str, np.ndarray] | None = None,
    routing: dict[str, dict] | None = None,
    against: str | None = None,
) -> dict:
    """The evaluation of each judge's ``scores`` (P(correct) per record) against the records' labels.

    ``details[judge]`` (optional, e.g. from ``RegexJudge.details``) gives per-row ``unparsed`` flags;
    ``thresholds[judge]`` the verdict threshold (default 0.5); ``rho`` the label–human agreement rate;
    ``uncalibrated[judge]`` the judge's scores before its temperature (T=1), to compare calibration;
    ``routing[judge]`` a routing judge's summary (``bertjudge.judges.routing``), reported with the
    accuracy on the rows each stage decided (from the ``stage`` of its ``details`` rows). Where the records are in
    more than one language (``meta.language``, default "en"), each judge's result has ``by_language`` too.
    ``against`` names one of the judges (the rules, usually) against which every other judge's rows are compared:
    its result gets ``against`` (rescue, damage and McNemar's test overall, by category and by data file).
    """
    if against is not None and against not in scores:
        raise ValueError(f"against={against!r} is not one of the judges: {', '.join(scores)}")
    if any(r.get("label") is None for r in records):
        raise ValueError("build_report needs a label on every record")
    labels = np.array([r["label"] for r in records], dtype=float)
    groups = {g: np.array([r.get(g) or "unknown" for r in records]) for g in GROUPINGS if g != "length"}
    groups["length"] = np.array([length_bucket(r["candidate"]) for r in records])
    # meta.language as its ISO 639-1 code ("fr-CA" → "fr"), "en" when a row names none (as extract.language_of reads it)
    languages = np.array(
        [str((r.get("meta") or {}).get("language") or "en").lower().replace("_", "-").split("-")[0] for r in records]
    )
    if len(set(languages)) > 1:  # by_language only where rows are in several languages: one-language reports unchanged
        groups["language"] = languages
    # the bootstrap's clusters: the answers to one question (a row without a question is its own)
    questions = np.array(
        [" ".join(r["question"].split()) if r.get("question") else f"\0row {i}" for i, r in enumerate(records)]
    )
    attacks = np.array([str((r.get("meta") or {}).get("attack") or "") for r in records])
    report = {
        "n": len(records),
        "label_positive_rate": float(labels.mean()),
        "rho": rho,
        "n_bootstrap": n_boot,
        "seed": seed,
        "judges": {},
    }
    right: dict[str, np.ndarray] = {}  # per judge, whether each row is judged right
    for name, score in scores.items():
        score = np.asarray(score, dtype=float)
        if score.shape != labels.shape:
            raise ValueError(f"judge {name!r}: {score.shape[0]} scores for {len(records)} records")
        threshold = (thresholds or {}).get(name, 0.5)
        verdicts = (score >= threshold).astype(float)
        correct = (verdicts == labels).astype(float)
        right[name] = correct.astype(bool)  # for the rescue and damage against another judge
        rows = (details or {}).get(name)
        unparsed = np.array([bool(row["unparsed"]) for row in rows]) if rows else None
        result = {"threshold": threshold, "overall": _stats(correct, labels, verdicts, n_boot, seed, questions)}
        if unparsed is not None:
            result["overall"]["unparsed_rate"] = float(unparsed.mean())
        if rho is not None:
            result["overall"]["human_accuracy_estimate"] = human_accuracy(result["overall"]["accuracy"], rho)
        for grouping, values in groups.items():
            result[f"by_{grouping}"] = {
                str(g): _stats(
                    correct[values == g],
                    labels[values == g],
                    verdicts[values == g],
                    n_boot,
                    seed,
                    questions[values == g],
                )
                for g in sorted(set(values))
            }
        result["leaderboard"] = _leaderboard(records, labels, verdicts, unparsed)
        error_types = error_type_report(records, rows)
        if error_types is not None:
            result["error_types"] = error_types
        if not np.isin(score, (0.0, 1.0)).all():  # probabilistic judge
            grid = np.linspace(0, 1, 101)
            best, best_acc = stats.best_threshold(score, labels)
            result["calibration"] = {
                "ece": stats.expected_calibration_error(score, labels, n_bins),
                "reliability": stats.reliability(score, labels, n_bins),
                "threshold_curve": {
                    "threshold": grid.tolist(),
                    "accuracy": stats.accuracy_at_thresholds(score, labels, grid).tolist(),
                },
                "oracle_threshold": best,
                "oracle_accuracy": best_acc,
                "oracle_threshold_by_category": stats.best_thresholds_by(score, labels, groups["category"]),
                "ece_if_calibrated": stats.ece_if_calibrated(score, labels, n_bins, seed=seed),
                "ece_by_data": {
                    str(g): stats.expected_calibration_error(
                        score[groups["data"] == g], labels[groups["data"] == g], n_bins
                    )
                    for g in sorted(set(groups["data"]))
                },
                "ece_if_calibrated_by_data": {
                    str(g): stats.ece_if_calibrated(
                        score[groups["data"] == g], labels[groups["data"] == g], n_bins, seed=seed
                    )
                    for g in sorted(set(groups["data"]))
                },
            }
            if name in (uncalibrated or {}):
                result["calibration"]["ece_uncalibrated"] = stats.expected_calibration_error(
                    uncalibrated[name], labels, n_bins
                )
        if name in (routing or {}):
            result["routing"] = dict(routing[name])
            if rows and "stage" in rows[0]:
                stage = np.array([row["stage"] for row in rows])
                result["routing"]["by_stage"] = {
                    str(s): _stats(
                        correct[stage == s],
                        labels[stage == s],
                        verdicts[stage == s],
                        n_boot,
                        seed,
                        questions[stage == s],
                    )
                    for s in sorted(set(stage))
                }
        if attacks.any():
            result["attacks"] = {
                str(kind): {"n": int((attacks == kind).sum()), "pass_rate": float(correct[attacks == kind].mean())}
                for kind in sorted(set(attacks) - {""})
            }
        report["judges"][name] = result
    if against is not None:
        report["against"] = against
        for name in scores:
            if name != against:
                report["judges"][name]["against"] = _rescue_damage(right[against], right[name], groups)
    return report


def _rescue_damage(reference: np.ndarray, judge: np.ndarray, groups: dict[str, np.ndarray]) -> dict:
    """Rescue and damage of a judge against the reference judge, overall, by category and by data file."""
    out = {"overall": stats.rescue_damage(reference, judge)}
    for grouping in ("category", "data", "length"):
        values = groups[grouping]
        out[f"by_{grouping}"] = {
            str(g): stats.rescue_damage(reference[values == g], judge[values == g]) for g in sorted(set(values))
        }
    return out


# ---------------------------------------------------------------- writing
def _json_ready(obj):
    if isinstance(obj, dict):
        return {str(k): _json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_ready(v) for v in obj]
    if isinstance(obj, (float, np.floating)):
        return None if math.isnan(obj) else float(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def _f(value, digits: int = 3) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


ECE_NOTE = (
    "ECE (calibrated: mean / 95th percentile, p) compares the ECE with that of the same scores when "
    "calibrated (labels drawn from the judge's own P(correct)): binned ECE is biased upward on small sets, "
    "and a p-value above 0.05 means the rows cannot tell this judge from a calibrated one."
)


def _ece(ece: float | None, if_calibrated: dict | None) -> str:
    if not if_calibrated or ece is None:
        return _f(ece)
    return (
        f"{_f(ece)} (calibrated: {_f(if_calibrated['mean'])} / {_f(if_calibrated['q95'])}, "
        f"p {_f(if_calibrated['p_value'], 2)})"
    )


def _acc(stats: dict | None) -> str:
    if not stats:
        return "–"
    return f"{_f(stats['accuracy'])} [{_f(stats['ci95'][0])}, {_f(stats['ci95'][1])}]"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(map(str, row)) + " |" for row in rows),
        "",
    ]


def _rescue_cell(row: dict) -> str:
    """ "rescue / damage" of one group, with the counts: "0.52 (26/50) / 0.01 (3/300)"."""

    def share(value, count, total):
        return "–" if value is None else f"{value:.2f} ({count}/{total})"

    return (
        f"{share(row['rescue'], row['rescued'], row['reference_wrong'])} / "
        f"{share(row['damage'], row['damaged'], row['reference_right'])}"
    )


def against_markdown(report: dict) -> list[str]:
    """The rescue-and-damage section: every judge row by row against the reference judge (``--against``)."""
    reference = report.get("against")
    if reference is None:
        return []
    judges = {name: res["against"] for name, res in report["judges"].items() if "against" in res}
    categories = sorted({c for res in judges.values() for c in res["by_category"]})
    header = ["judge", "rescue / damage (all)", "McNemar p", *(f"rescue / damage: {c}" for c in categories)]
    rows = [
        [
            name,
            _rescue_cell(res["overall"]),
            f"{res['overall']['mcnemar_p']:.2g}",
            *(_rescue_cell(res["by_category"][c]) if c in res["by_category"] else "–" for c in categories),
        ]
        for name, res in judges.items()
    ]
    return [
        f"## Row by row against {reference}: rescue and damage",
        "",
        f"Rescue: the share of the rows {reference} gets wrong that the judge gets right; damage: the share of the "
        f"rows {reference} gets right that the judge gets wrong (counts in parentheses). McNemar's exact test: "
        "whether the two accuracies differ, from the rows where the two disagree.",
        "",
        *_table(header, rows),
    ]


def render_markdown(report: dict, plots: dict[str, str] | None = None) -> str:
    """The report as Markdown tables (accuracies with bootstrap 95% intervals)."""
    judges = report["judges"]
    names = list(judges)
    lines = [
        "# Judge evaluation",
        "",
        f"{report['n']} labelled records ({_f(report['label_positive_rate'])} labelled correct); "
        f"accuracy = agreement of the judge's verdict with the label, with seeded bootstrap 95% intervals "
        f"({report['n_bootstrap']} resamples of questions: a question's answers are drawn together); "
        "κ = Cohen's kappa against the labels.",
        "",
    ]
    header = ["judge", "threshold", "accuracy [95% CI]", "κ", "unparsed", "ECE"]
    if report["rho"] is not None:
        header.append(f"est. accuracy vs humans (ρ={report['rho']})")
    rows = []
    for name, res in judges.items():
        overall = res["overall"]
        row = [
            name,
            _f(res["threshold"]),
            _acc(overall),
            _f(overall["kappa"]),
            _f(overall.get("unparsed_rate")),
            _f(res.get("calibration", {}).get("ece")),
        ]
        if report["rho"] is not None:
            row.append(_f(overall["human_accuracy_estimate"]))
        rows.append(row)
    lines += ["## Overall", "", *_table(header, rows), *against_markdown(report)]
    files = sorted({k for res in judges.values() for k in res.get("calibration", {}).get("ece_by_data", {})})
    if len(files) > 1:
        rows = [
            [
                n,
                *(
                    _ece(
                        judges[n]["calibration"]["ece_by_data"][f],
                        judges[n]["calibration"].get("ece_if_calibrated_by_data", {}).get(f),
                    )
                    for f in files
                ),
            ]
            for n in names
            if "calibration" in judges[n]
        ]
        lines += ["## ECE by data file", "", ECE_NOTE, "", *_table(["judge", *files], rows)]
    by_language = ["language"] if any("by_language" in res for res in judges.values()) else []
    for grouping in (*GROUPINGS, *by_language):  # by language: only where the rows are in several languages
        keys = sorted({k for res in judges.values() for k in res[f"by_{grouping}"]}, key=_group_order)
        rows = [
            [k, str(judges[names[0]][f"by_{grouping}"][k]["n"])]
            + [_acc(judges[n][f"by_{grouping}"].get(k)) for n in names]
            for k in keys
        ]
        lines += [f"## Accuracy by {grouping.replace('_', ' ')}", "", *_table([grouping, "n", *names], rows)]
    lines += [
        "## Leaderboards",
        "",
        "Accuracy of each candidate model as the labels measure it and as the judge measures it "
        "(fraction of its answers judged correct); rank 1 = best. For judges that report parse failures, "
        "Δ splits into rows the judge could not parse and rows it parsed but misjudged.",
        "",
    ]
    for name, res in judges.items():
        board = res["leaderboard"]
        split = any("delta_parse_failures" in row for row in board["models"].values())
        header = [
            "model",
            "n",
            "label acc",
            "judge acc",
            "Δacc",
            *(["Δ parse fail", "Δ post-parse"] if split else []),
            "label rank",
            "judge rank",
            "Δrank",
            "Borda (labels)",
            "Borda (judge)",
        ]
        rows = [
            [
                m,
                row["n"],
                _f(row["label_accuracy"]),
                _f(row["judge_accuracy"]),
                _f(row["delta"]),
                *([_f(row["delta_parse_failures"]), _f(row["delta_post_parse"])] if split else []),
                int(row["label_rank"]),
                int(row["judge_rank"]),
                f"{row['delta_rank']:+.0f}",
                _f(board["borda"][m]["label_points"], 1),
                _f(board["borda"][m]["judge_points"], 1),
            ]
            for m, row in sorted(board["models"].items(), key=lambda item: item[1]["label_rank"])
        ]
        lines += [
            f"### {name}",
            "",
            f"Kendall τ (model accuracies): {_f(board['kendall_tau'])}; "
            f"Kendall τ (Borda over tasks): {_f(board['borda_kendall_tau'])}",
            "",
            *_table(header, rows),
        ]
    probabilistic = [n for n in names if "calibration" in judges[n]]
    if probabilistic:
        rows = [
            [
                n,
                _ece(judges[n]["calibration"]["ece"], judges[n]["calibration"].get("ece_if_calibrated")),
                _f(judges[n]["calibration"].get("ece_uncalibrated")),
                _f(judges[n]["threshold"]),
                _acc(judges[n]["overall"]),
                _f(judges[n]["calibration"]["oracle_threshold"]),
                _f(judges[n]["calibration"]["oracle_accuracy"]),
                ", ".join(f"{c} {_f(t)}" for c, t in judges[n]["calibration"]["oracle_threshold_by_category"].items()),
            ]
            for n in probabilistic
        ]
        lines += [
            "## Calibration",
            "",
            "The oracle threshold is chosen on this data itself (an optimistic bound). " + ECE_NOTE,
            "",
            *_table(
                [
                    "judge",
                    "ECE (15 bins)",
                    "ECE before temperature",
                    "threshold",
                    "accuracy",
                    "oracle threshold",
                    "oracle accuracy",
                    "oracle threshold by category",
                ],
                rows,
            ),
        ]
    routed = [n for n in names if "routing" in judges[n]]
    if routed:
        rows = [
            [
                n,
                stage,
                _f(s["fraction"]),
                s["seen"],
                _acc(judges[n]["routing"].get("by_stage", {}).get(stage)),
                _f(s["seconds"], 1),
            ]
            for n in routed
            for stage, s in judges[n]["routing"]["stages"].items()
        ]
        saved = [
            [
                n,
                _f(r["seconds"], 1),
                r["reference_stage"],
                _f(r["reference_seconds_estimate"], 1),
                _f(r["compute_saved_estimate"]),
            ]
            for n in routed
            for r in [judges[n]["routing"]]
        ]
        lines += [
            "## Routing",
            "",
            (
                "Rows decided by each stage of the routing judges (fraction of all rows), "
                "rows it scored, accuracy on the rows it decided, and its wall time."
            ),
            "",
            *_table(["judge", "stage", "fraction decided", "rows scored", "accuracy [95% CI]", "seconds"], rows),
            (
                "Compute saved is an estimate from measured per-row times: the judge's wall time against "
                "the last stage's seconds per row × all rows."
            ),
            "",
            *_table(
                [
                    "judge",
                    "seconds",
                    "last stage",
                    "est. seconds of the last stage on all rows",
                    "compute saved (est.)",
                ],
                saved,
            ),
        ]
    attack_kinds = sorted({k for res in judges.values() for k in res.get("attacks", {})})
    if attack_kinds:
        rows = [
            [k, judges[names[0]]["attacks"][k]["n"]] + [_f(judges[n]["attacks"][k]["pass_rate"]) for n in names]
            for k in attack_kinds
        ]
        lines += [
            "## Adversarial suites",
            "",
            "Pass rate = fraction of attacked rows judged as labelled.",
            "",
            *_table(["attack", "n", *names], rows),
        ]
    lines += error_type_markdown(judges)
    if plots:
        lines += ["## Plots", "", *(f"![{title}]({file})" for title, file in plots.items()), ""]
    return "\n".join(lines)


def _plot_leaderboards(report: dict, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.5, 4), dpi=120)
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1)
    for name, res in report["judges"].items():
        models = res["leaderboard"]["models"].values()
        ax.scatter([m["label_accuracy"] for m in models], [m["judge_accuracy"] for m in models], s=14, label=name)
    ax.set(
        xlabel="model accuracy (labels)",
        ylabel="model accuracy (judge)",
        xlim=(0, 1),
        ylim=(0, 1),
        title="Candidate-model leaderboards",
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def write_report(report: dict, out: str | Path) -> dict[str, Path]:
    """Write ``report.json``, ``report.md`` and the PNG plots into ``out``; return the paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plots = {"leaderboards": _plot_leaderboards(report, out / "leaderboards.png")}
    plots.update(error_type_plots(report, out))
    probabilistic = {n: res["calibration"] for n, res in report["judges"].items() if "calibration" in res}
    if probabilistic:
        plots["reliability"] = plots_module.plot_reliability(
            {n: c["reliability"] for n, c in probabilistic.items()}, out / "reliability.png"
        )
        plots["accuracy vs threshold"] = plots_module.plot_threshold_curves(
            {
                n: (c["threshold_curve"]["threshold"], c["threshold_curve"]["accuracy"])
                for n, c in probabilistic.items()
            },
            out / "threshold.png",
        )
    (out / "report.json").write_text(json.dumps(_json_ready(report), indent=2, ensure_ascii=False) + "\n")
    (out / "report.md").write_text(render_markdown(report, {k: p.name for k, p in plots.items()}), encoding="utf-8")
    return {"report.json": out / "report.json", "report.md": out / "report.md", **plots}


def load_labelled(specs: list[str]) -> list[dict]:
    """Read data files (or source specs, ``FILE?split=val``); refuse, naming the file, any with unlabelled
    records. Each record gets ``data``: the name of the file it came from (a grouping of the report)."""
    records = []
    for spec in specs:
        recs = [{**r, "data": Path(spec).name} for r in load_source(spec)]
        missing = [r for r in recs if r["label"] is None]
        if missing:
            raise RecordError(
                f"{spec}: {len(missing)} of {len(recs)} records have no label (first id "
                f"{missing[0]['id']!r}); evaluate compares judges against labels — "
                "score unlabelled data with `python -m bertjudge judge` instead"
            )
        records += recs
    return records


def run_judges(
    judges: dict[str, BaseJudge],
    records: list[dict],
    batch_size: int = 32,
    progress: bool = False,
    scores_dir: str | Path | None = None,
    restart: bool = False,
    chunk_size: int = 1024,
) -> dict:
    """Score ``records`` with each judge, one pass each. Returns the keyword arguments of
    ``build_report`` besides the records: ``scores``, ``details``, ``thresholds``, ``uncalibrated``
    (the scores of trained judges before temperature and bias) and ``routing`` (routing judges).

    With ``scores_dir``, each judge's per-row details are written to ``scores_dir/<judge>.jsonl``,
    resumably (``core.resumable.PartialFile``, ``chunk_size`` rows at a time; the partial files become the
    scores files once every judge is done): a rerun after an interruption scores only the rows not done, and refuses rows scored by a judge that changed since
    or from a labelled row that changed (``restart`` starts over). A routing judge's routing counts then
    cover the rows scored in this run (the report says how many were resumed)."""
    out = {"scores": {}, "details": {}, "thresholds": {}, "uncalibrated": {}, "routing": {}}
    for key, judge in judges.items():
        if scores_dir is None:
            rows, resumed = judge.details(records, progress=progress, batch_size=batch_size), 0
        else:
            rows, resumed = _resumable_details(
                key, judge, records, batch_size, progress, scores_dir, restart, chunk_size
            )
        out["details"][key] = rows
        out["scores"][key] = np.array([np.nan if row["score"] is None else row["score"] for row in rows], dtype=float)
        if rows and all("logit" in row for row in rows):  # a trained judge (not one routed in part to rules)
            out["uncalibrated"][key] = calibrated(np.array([row["logit"] for row in rows]))
        described = judge.describe()
        if "routing" in described:
            out["routing"][key] = {**described["routing"], "resumed_rows_not_counted": resumed}
        out["thresholds"][key] = float(judge.threshold)
    if scores_dir is not None:  # every judge done: each partial file becomes its scores file
        for key, judge in judges.items():
            with PartialFile(scores_file(scores_dir, key), "evaluate", _settings(judge)) as partial:
                partial.commit()
    return out


def _settings(judge) -> dict:
    return {"judge": judge.name, "fingerprint": judge_fingerprint(judge)}


def scores_file(scores_dir: str | Path, key: str) -> Path:
    """Where ``evaluate`` writes a judge's per-row details: ``<dir>/<judge key, file-safe>.jsonl``."""
    return Path(scores_dir) / (re.sub(r"[^\w.-]+", "_", key).strip("_") + ".jsonl")


def _resumable_details(
    key: str, judge, records: list[dict], batch_size: int, progress: bool, scores_dir, restart: bool, chunk_size: int
) -> tuple[list[dict], int]:
    """A judge's details of ``records`` through its partial file; and how many rows were resumed."""
    settings = _settings(judge)
    hint = "rerun with --restart to score every row again"
    rows: list[dict] = []
    with PartialFile(scores_file(scores_dir, key), "evaluate", settings, restart, hint) as partial:
        if partial.stored_settings not in (None, settings):
            changed = changed_keys(partial.stored_settings.get("fingerprint") or {}, settings["fingerprint"])
            raise partial.refuse(
                str(partial.path),
                f"the judge {key!r} changed since these rows were scored ({shown_keys(changed)} differ)",
            )
        for where, entry in partial.entries():
            rec = records[len(rows)] if len(rows) < len(records) else None
            if rec is None or entry["row"]["id"] != rec["id"] or entry["row_hash"] != row_hash(rec):
                raise partial.refuse(where, f"row {entry['row']['id']!r} is not the labelled row at its place any more")
            rows.append({k: v for k, v in entry["row"].items() if k != "id"})
        resumed = len(rows)
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(records), initial=resumed, desc=f"scoring with {key}", unit="row")
        try:
            for start in range(resumed, len(records), chunk_size):
                chunk = records[start : start + chunk_size]
                done = judge.details(chunk, batch_size=batch_size)
                partial.append((row_hash(rec), {"id": rec["id"], **row}) for rec, row in zip(chunk, done))
                rows += done
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.close()
    return rows, resumed  # committed once every judge is done: a rerun after any failure reads it back
