"""Compare judges against labels (``python -m bertjudge evaluate``).

``load_labelled`` reads the labelled rows; ``run_judges`` scores them with every judge (one pass
each: scores, per-row details, uncalibrated scores of trained judges, routing counts; both in
``evaluation.labelled``, importable from here too); ``build_report(records, scores)`` is a pure function from
labelled records and each judge's P(correct) to a JSON-ready dict; ``write_report`` turns it into
``report.json``, ``report.md`` (``render_markdown``, a function per section) and PNG plots. The statistics
(bootstrap intervals, κ, McNemar's test, ECE, ...) are ``core.stats``'s.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

import numpy as np

from bertjudge.core import stats
from bertjudge.core.error_types import ERROR_TYPES
from bertjudge.core.stats import accuracy_interval, borda, cohen_kappa, human_accuracy
from bertjudge.data.error_types import row_error_type
from bertjudge.evaluation import plots as plots_module
from bertjudge.evaluation.labelled import load_labelled, run_judges  # noqa: F401  (evaluate's, imported from here too)

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
    confusion = stats.confusion_matrix([index[t] for t, _ in pairs], [index[p] for _, p in pairs], len(names))
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


def _stats_by(
    values: np.ndarray,
    correct: np.ndarray,
    labels: np.ndarray,
    verdicts: np.ndarray,
    n_boot: int,
    seed: int,
    questions: np.ndarray,
) -> dict:
    """``_stats`` of the rows of each value of ``values`` (a group, a routing stage), by value."""
    return {
        str(g): _stats(
            correct[values == g], labels[values == g], verdicts[values == g], n_boot, seed, questions[values == g]
        )
        for g in sorted(set(values))
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
    label_ranks = stats.ranks({m: r["label_accuracy"] for m, r in rows.items()})
    judge_ranks = stats.ranks({m: r["judge_accuracy"] for m, r in rows.items()})
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
        "kendall_tau": stats.kendall_tau(
            [rows[m]["label_accuracy"] for m in names], [rows[m]["judge_accuracy"] for m in names]
        ),
        "borda": {m: {"label_points": label_borda[m], "judge_points": judge_borda[m]} for m in names},
        "borda_kendall_tau": stats.kendall_tau([label_borda[m] for m in names], [judge_borda[m] for m in names]),
    }


def _row_groups(records: list[dict]) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Per row: its value of each grouping (``GROUPINGS``, and ``language`` where rows are in several), its
    bootstrap cluster (the answers to one question; a row without a question is its own) and its attack."""
    groups = {g: np.array([r.get(g) or "unknown" for r in records]) for g in GROUPINGS if g != "length"}
    groups["length"] = np.array([length_bucket(r["candidate"]) for r in records])
    # meta.language as its ISO 639-1 code ("fr-CA" → "fr"), "en" when a row names none (as extract.language_of reads it)
    languages = np.array(
        [str((r.get("meta") or {}).get("language") or "en").lower().replace("_", "-").split("-")[0] for r in records]
    )
    if len(set(languages)) > 1:  # by_language only where rows are in several languages: one-language reports unchanged
        groups["language"] = languages
    questions = np.array(
        [" ".join(r["question"].split()) if r.get("question") else f"\0row {i}" for i, r in enumerate(records)]
    )
    attacks = np.array([str((r.get("meta") or {}).get("attack") or "") for r in records])
    return groups, questions, attacks


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
    With two judges or more, ``mcnemar`` holds McNemar's exact test of every pair of judges on the rows
    (``core.stats.mcnemar``: ``judge_a``, ``judge_b``, ``n``, ``a_right_b_wrong``, ``a_wrong_b_right``, ``p``).
    """
    if against is not None and against not in scores:
        raise ValueError(f"against={against!r} is not one of the judges: {', '.join(scores)}")
    if any(r.get("label") is None for r in records):
        raise ValueError("build_report needs a label on every record")
    labels = np.array([r["label"] for r in records], dtype=float)
    groups, questions, attacks = _row_groups(records)
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
            result[f"by_{grouping}"] = _stats_by(values, correct, labels, verdicts, n_boot, seed, questions)
        result["leaderboard"] = _leaderboard(records, labels, verdicts, unparsed)
        error_types = error_type_report(records, rows)
        if error_types is not None:
            result["error_types"] = error_types
        if not np.isin(score, (0.0, 1.0)).all():  # probabilistic judge
            result["calibration"] = stats.calibration_summary(
                score, labels, groups["category"], groups["data"], n_bins, seed
            )
            if name in (uncalibrated or {}):
                result["calibration"]["ece_uncalibrated"] = stats.expected_calibration_error(
                    uncalibrated[name], labels, n_bins
                )
        if name in (routing or {}):
            result["routing"] = dict(routing[name])
            if rows and "stage" in rows[0]:
                stage = np.array([row["stage"] for row in rows])
                result["routing"]["by_stage"] = _stats_by(stage, correct, labels, verdicts, n_boot, seed, questions)
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
    if len(right) > 1:  # every judge scored the same rows: each pair's accuracies compared row by row
        report["mcnemar"] = [
            {"judge_a": a, "judge_b": b, **stats.mcnemar(right[a], right[b])}
            for a, b in itertools.combinations(right, 2)
        ]
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


def mcnemar_markdown(report: dict) -> list[str]:
    """McNemar's exact test of every pair of judges (a table of the pairs); empty with fewer than two judges."""
    pairs = report.get("mcnemar") or []
    if not pairs:
        return []
    rows = [
        [t["judge_a"], t["judge_b"], t["n"], t["a_right_b_wrong"], t["a_wrong_b_right"], f"{t['p']:.2g}"] for t in pairs
    ]
    return [
        "## Pairs of judges: McNemar's exact test",
        "",
        "Every pair of judges on the same rows: the rows judge a gets right and judge b wrong, the rows judge a "
        "gets wrong and judge b right, and McNemar's exact test of whether the two accuracies differ (a two-sided "
        "binomial test on the rows where exactly one of the two is right).",
        "",
        *_table(["judge a", "judge b", "rows", "a right, b wrong", "a wrong, b right", "McNemar p"], rows),
    ]


def _overall_markdown(report: dict) -> list[str]:
    """The report's title, what its numbers mean, and the "Overall" table."""
    header = ["judge", "threshold", "accuracy [95% CI]", "κ", "unparsed", "ECE"]
    if report["rho"] is not None:
        header.append(f"est. accuracy vs humans (ρ={report['rho']})")
    rows = []
    for name, res in report["judges"].items():
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
    return [
        "# Judge evaluation",
        "",
        f"{report['n']} labelled records ({_f(report['label_positive_rate'])} labelled correct); "
        f"accuracy = agreement of the judge's verdict with the label, with seeded bootstrap 95% intervals "
        f"({report['n_bootstrap']} resamples of questions: a question's answers are drawn together); "
        "κ = Cohen's kappa against the labels.",
        "",
        "## Overall",
        "",
        *_table(header, rows),
    ]


def _ece_by_data_markdown(judges: dict) -> list[str]:
    """The "ECE by data file" section; empty unless the probabilistic judges' rows come from several files."""
    files = sorted({k for res in judges.values() for k in res.get("calibration", {}).get("ece_by_data", {})})
    if len(files) <= 1:
        return []
    rows = [
        [
            n,
            *(
                _ece(
                    res["calibration"]["ece_by_data"][f],
                    res["calibration"].get("ece_if_calibrated_by_data", {}).get(f),
                )
                for f in files
            ),
        ]
        for n, res in judges.items()
        if "calibration" in res
    ]
    return ["## ECE by data file", "", ECE_NOTE, "", *_table(["judge", *files], rows)]


def _accuracy_by_group_markdown(judges: dict) -> list[str]:
    """An "Accuracy by …" table per grouping: the groups' rows, one column per judge."""
    names, lines = list(judges), []
    by_language = ["language"] if any("by_language" in res for res in judges.values()) else []
    for grouping in (*GROUPINGS, *by_language):  # by language: only where the rows are in several languages
        keys = sorted({k for res in judges.values() for k in res[f"by_{grouping}"]}, key=_group_order)
        rows = [
            [k, str(judges[names[0]][f"by_{grouping}"][k]["n"])]
            + [_acc(judges[n][f"by_{grouping}"].get(k)) for n in names]
            for k in keys
        ]
        lines += [f"## Accuracy by {grouping.replace('_', ' ')}", "", *_table([grouping, "n", *names], rows)]
    return lines


def _leaderboard_markdown(name: str, board: dict) -> list[str]:
    """One judge's leaderboard of the candidate models, against the labels' one."""
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
    return [
        f"### {name}",
        "",
        f"Kendall τ (model accuracies): {_f(board['kendall_tau'])}; "
        f"Kendall τ (Borda over tasks): {_f(board['borda_kendall_tau'])}",
        "",
        *_table(header, rows),
    ]


def _leaderboards_markdown(judges: dict) -> list[str]:
    """The "Leaderboards" section: every judge's leaderboard of the candidate models."""
    lines = [
        "## Leaderboards",
        "",
        "Accuracy of each candidate model as the labels measure it and as the judge measures it "
        "(fraction of its answers judged correct); rank 1 = best. For judges that report parse failures, "
        "Δ splits into rows the judge could not parse and rows it parsed but misjudged.",
        "",
    ]
    for name, res in judges.items():
        lines += _leaderboard_markdown(name, res["leaderboard"])
    return lines


def _calibration_markdown(judges: dict) -> list[str]:
    """The "Calibration" section of the probabilistic judges; empty when there is none."""
    rows = [
        [
            n,
            _ece(res["calibration"]["ece"], res["calibration"].get("ece_if_calibrated")),
            _f(res["calibration"].get("ece_uncalibrated")),
            _f(res["threshold"]),
            _acc(res["overall"]),
            _f(res["calibration"]["oracle_threshold"]),
            _f(res["calibration"]["oracle_accuracy"]),
            ", ".join(f"{c} {_f(t)}" for c, t in res["calibration"]["oracle_threshold_by_category"].items()),
        ]
        for n, res in judges.items()
        if "calibration" in res
    ]
    if not rows:
        return []
    header = [
        "judge",
        "ECE (15 bins)",
        "ECE before temperature",
        "threshold",
        "accuracy",
        "oracle threshold",
        "oracle accuracy",
        "oracle threshold by category",
    ]
    return [
        "## Calibration",
        "",
        "The oracle threshold is chosen on this data itself (an optimistic bound). " + ECE_NOTE,
        "",
        *_table(header, rows),
    ]


def _routing_markdown(judges: dict) -> list[str]:
    """The "Routing" section of the routing judges: each stage's share of the rows, and the compute saved."""
    routed = {n: res["routing"] for n, res in judges.items() if "routing" in res}
    if not routed:
        return []
    rows = [
        [n, stage, _f(s["fraction"]), s["seen"], _acc(r.get("by_stage", {}).get(stage)), _f(s["seconds"], 1)]
        for n, r in routed.items()
        for stage, s in r["stages"].items()
    ]
    saved = [
        [
            n,
            _f(r["seconds"], 1),
            r["reference_stage"],
            _f(r["reference_seconds_estimate"], 1),
            _f(r["compute_saved_estimate"]),
        ]
        for n, r in routed.items()
    ]
    return [
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
            ["judge", "seconds", "last stage", "est. seconds of the last stage on all rows", "compute saved (est.)"],
            saved,
        ),
    ]


def _attacks_markdown(judges: dict) -> list[str]:
    """The "Adversarial suites" section: each judge's pass rate per attack; empty when no row is attacked."""
    names = list(judges)
    attack_kinds = sorted({k for res in judges.values() for k in res.get("attacks", {})})
    if not attack_kinds:
        return []
    rows = [
        [k, judges[names[0]]["attacks"][k]["n"]] + [_f(judges[n]["attacks"][k]["pass_rate"]) for n in names]
        for k in attack_kinds
    ]
    return [
        "## Adversarial suites",
        "",
        "Pass rate = fraction of attacked rows judged as labelled.",
        "",
        *_table(["attack", "n", *names], rows),
    ]


def render_markdown(report: dict, plots: dict[str, str] | None = None) -> str:
    """The report as Markdown tables (accuracies with bootstrap 95% intervals), one section after another."""
    judges = report["judges"]
    lines = [
        *_overall_markdown(report),
        *against_markdown(report),
        *mcnemar_markdown(report),
        *_ece_by_data_markdown(judges),
        *_accuracy_by_group_markdown(judges),
        *_leaderboards_markdown(judges),
        *_calibration_markdown(judges),
        *_routing_markdown(judges),
        *_attacks_markdown(judges),
        *error_type_markdown(judges),
    ]
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
