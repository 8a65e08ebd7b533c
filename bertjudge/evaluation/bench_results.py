"""The results files of ``bench`` (``bertjudge.evaluation.bench``) and what is made from them.

Results go to ``benchmarks/results/<kind>-<device>-<dtype>-torch<version>.csv`` (kind ``cost`` or ``accuracy``),
written atomically (``write_results``): a cost row per judge keyed by its zoo name, an accuracy row per judge and
evaluation set. ``result_tables`` joins each cost file's rows (those timed on a busy machine left out) with their
accuracy on the headline set ``HEADLINE_SET`` (and overall on the others of ``SHOWN_SETS``), their normalized cost,
and, where a judge has no accuracy there, why (``not_measured_reason``), and marks the Pareto front;
``markdown_table`` and ``plot_pareto`` render them for ``zoo/README.md`` and ``benchmarks/pareto.png``."""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path

from bertjudge.evaluation.bench_timing import MAX_TIMED_PARAMS
from bertjudge.zoo import registry as zoo

ROOT = Path(".")  # the project checkout bench runs in: its CSVs, plot and real test set
RESULTS_DIR = ROOT / "benchmarks" / "results"
QUOTED_FILE = ROOT / "benchmarks" / "quoted.csv"
PARETO_PNG = ROOT / "benchmarks" / "pareto.png"
COST_FIELDS = [
    "name",
    "judge_kind",
    "architecture",
    "config_source",
    "weights",
    "params",
    "tokens",
    "length_source",
    "flops",
    "latency_p50_ms",
    "latency_p95_ms",
    "throughput_per_s",
    "best_batch_size",
    "peak_mem_mb",
    "timing_runs",
    "calls_per_run",
    "latency_spread",
    "rounds",
    "machine_gflops",
    "device",
    "dtype",
    "hardware",
    "torch",
    "transformers",
    "measured_at",
    "loadavg_before",
    "loadavg_after",
    "other_load",
    "busy",
    "notes",
]
# accuracy shown: the headline set (overall and per category; the Pareto front and the plot), the others of SHOWN_SETS
# overall only. real-test-v3 is the newest frozen test set; real-test-v1 and v2 have been read while judges were
# chosen since (data/real/README.md, docs/real-outputs.md): their rows stay in the CSVs, v1's are not shown
HEADLINE_SET = "real-test-v3"
SHOWN_SETS = (HEADLINE_SET, "real-test-v2")
# how a cost row's notes begin the reason its judge was costed but not scored (bench.too_slow_to_score)
NOT_SCORED = "not scored here"
NORM_COST = "norm. cost (ms × GFLOP/s / 1000)"  # latency p50 × the machine's GEMM speed: GFLOP-equivalents
CATEGORIES = ("open_qa", "multiple_choice", "context_extraction", "open_math")
ACCURACY_FIELDS = [
    "name",
    "accuracy",
    *(f"acc_{c}" for c in CATEGORIES),
    "n",
    "eval_set",
    "eval_sha256",
    "source",
    "device",
    "dtype",
    "torch",
    "measured_at",
]
QUOTED_FIELDS = ["name", "accuracy", "eval_set", "source"]


# --- results files ----------------------------------------------------------------------------------
def results_file(kind: str, row: dict, results_dir=None) -> Path:
    return Path(results_dir or RESULTS_DIR) / f"{kind}-{row['device']}-{row['dtype']}-torch{row['torch']}.csv"


def read_csv(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    with open(path, newline="") as handle:
        return [row for row in csv.DictReader(line for line in handle if not line.startswith("#"))]


def row_key(kind: str, row: dict) -> tuple[str, ...]:
    """What a results row is keyed by: a cost row by its judge's name, an accuracy row by the name and its set."""
    return (row["name"],) if kind == "cost" else (row["name"], row.get("eval_set") or "")


def write_results(rows: list[dict], kind: str, results_dir=None) -> list[Path]:
    """Insert or replace rows (by ``row_key``) in their results files, atomically; returns the files. A run that
    measures some judges on some sets keeps every other row: the other judges', and the other sets' accuracy."""
    fields = COST_FIELDS if kind == "cost" else ACCURACY_FIELDS
    by_file: dict[Path, list[dict]] = {}
    for row in rows:
        by_file.setdefault(results_file(kind, row, results_dir), []).append(row)
    for path, new in by_file.items():
        keys = {row_key(kind, row) for row in new}
        merged = [row for row in read_csv(path) if row_key(kind, row) not in keys] + new
        merged.sort(key=lambda row: row_key(kind, row))
        write_table(path, [{key: _fmt_cell(row.get(key)) for key in fields} for row in merged], fields)
    return list(by_file)


def write_table(path, rows: list[dict], fields: list[str] | None = None) -> Path:
    """``rows`` as a CSV file at ``path`` (columns ``fields``, default the first row's keys), written atomically:
    a temporary sibling renamed over it. The benchmark scripts' results files are written with it too."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields or list(rows[0]), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)
    return path


def _fmt_cell(value):
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e6 else f"{value:.6e}"
    return "" if value is None else value


# --- the Pareto table and plot ------------------------------------------------------------------------
def _float(value) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


def pareto_front(points: list[tuple[str, float, float]]) -> set[str]:
    """Names of the points (name, flops, accuracy) that no other point beats on both axes."""
    front, best = set(), -math.inf
    for name, _, accuracy in sorted(points, key=lambda p: (p[1], -p[2])):
        if accuracy > best:
            front.add(name)
            best = accuracy
    return front


def row_is_busy(row: dict) -> bool:
    """A results row written with ``--allow-busy`` while other processes loaded the machine."""
    return str(row.get("busy") or "").strip().lower() in ("yes", "true", "1")


def busy_rows(results_dir=None) -> dict[str, list[str]]:
    """Per cost file (by its stem), the names of the rows left out of the table for being busy."""
    return {
        path.stem: names
        for path in sorted(Path(results_dir or RESULTS_DIR).glob("cost-*.csv"))
        if (names := [row["name"] for row in read_csv(path) if row_is_busy(row)])
    }


def _accuracy_by_set(paths) -> dict[str, dict[str, dict]]:
    """``{eval set: {judge name: accuracy row}}`` of accuracy files, the first file's row where several have one."""
    found: dict[str, dict[str, dict]] = {}
    for path in paths:
        for row in read_csv(path):
            found.setdefault(row.get("eval_set") or "unknown set", {}).setdefault(row["name"], row)
    return found


def normalized_cost(row: dict) -> float | str:
    """Latency p50 (ms) × the machine's GEMM speed measured around it (GFLOP/s) / 1000: the GFLOPs the machine's
    matmuls would have done in that time ("GFLOP-equivalents"), so that rows timed at different machine speeds
    compare; empty when either is missing."""
    p50, speed = _float(row.get("latency_p50_ms")), _float(row.get("machine_gflops"))
    return round(p50 * speed / 1000, 4) if p50 and speed else ""


def not_measured_reason(row: dict, entry, measured_on: list[str], registry=None) -> str:
    """Why a cost row has no accuracy on ``HEADLINE_SET``, from data: the zoo ``entry`` (None: not in the registry)
    and its source's scheme and folder, the row's weights and parameters, its note when it was too slow to score
    here (``NOT_SCORED``), the sets it was measured on instead."""
    reasons = []
    params = _float(row.get("params"))
    if entry is not None and entry.uri.scheme in ("hf", "https"):
        reasons.append(
            f"cannot run here: its weights ({entry.source}) are not available offline; cost of its architecture "
            "with random weights"
        )
    elif entry is not None and not (zoo.file_source(entry, registry) / "judge.json").is_file():
        reasons.append(f"not built yet: `{entry.build}`" if entry.build else f"{entry.source} is not on this machine")
    elif entry is None and str(row.get("weights") or "").startswith("random"):
        if row.get("judge_kind") in ("direct", "reasoning", "score10"):
            hub_id = str(row.get("config_source") or "").split(" (")[0] or "the model"
            reasons.append(
                f"cannot run here: {hub_id}'s weights are not available offline; cost of its architecture with "
                "random weights"
            )
        else:
            reasons.append("an architecture, no trained judge: cost only, with random weights")
    if params and params >= MAX_TIMED_PARAMS and row.get("latency_p50_ms") in (None, ""):
        reasons.append(
            f"too large for this CPU ({params / 1e9:.1f}B parameters; timed below {MAX_TIMED_PARAMS / 1e9:g}B): "
            "FLOPs only, needs a GPU"
        )
    # a judge too slow to score the sets here: the note bench run wrote (its latency per row and the time it would take)
    reasons += [note for note in str(row.get("notes") or "").split("; ") if note.startswith(NOT_SCORED)]
    if not reasons and measured_on:
        reasons.append(f"not measured on {HEADLINE_SET} yet; only on {', '.join(measured_on)}")
    return "; ".join(reasons)


def _registry_entries(registry) -> dict:
    try:
        return zoo.load_registry(registry)
    except zoo.ZooError:
        return {}


def _join_accuracy(row: dict, found: dict[str, dict], quoted: dict[str, dict], entries: dict, registry) -> None:
    """Add to a cost row its accuracy on the shown sets (``found``: {set: accuracy row}), where it comes from or why
    there is none, and its normalized cost."""
    acc = found.get(HEADLINE_SET) or {}
    row.update(
        accuracy=acc.get("accuracy", ""),
        **{f"acc_{c}": acc.get(f"acc_{c}", "") for c in CATEGORIES},
        **{f"accuracy_{s}": (found.get(s) or {}).get("accuracy", "") for s in SHOWN_SETS[1:]},
        quoted_accuracy="",
        accuracy_source="",
        norm_cost=normalized_cost(row),
    )
    if acc:
        row["accuracy_source"] = f"measured, {HEADLINE_SET} (sha256 {acc.get('eval_sha256') or '?'}, n={acc['n']})"
    elif row["name"] in quoted:
        q = quoted[row["name"]]
        row.update(
            quoted_accuracy=q["accuracy"],
            accuracy_source=f"quoted on another test set, not {HEADLINE_SET}: {q['source']} ({q['eval_set']})",
        )
    else:
        row["accuracy_source"] = not_measured_reason(row, entries.get(row["name"]), sorted(found), registry)


def result_tables(results_dir=None, quoted_file=None, registry=None) -> dict[str, list[dict]]:
    """Per cost file: its rows (but those timed on a busy machine: ``busy_rows``) joined with their accuracy on
    ``HEADLINE_SET``, overall (``accuracy``) and per category (``acc_<category>``), and overall on the other
    ``SHOWN_SETS`` (``accuracy_<set>``), measured on the same device and dtype, else on any; their normalized cost
    (``norm_cost``); the Pareto front flag (``HEADLINE_SET`` accuracies only). A row without a headline accuracy
    says why in ``accuracy_source`` (``not_measured_reason``, with the zoo ``registry``'s entries); accuracy rows
    of other sets are not shown; a quoted accuracy (the authors' figure on their own test set) is kept apart in
    ``quoted_accuracy``, out of the front and the plot."""
    results_dir = Path(results_dir or RESULTS_DIR)
    anywhere = _accuracy_by_set(sorted(results_dir.glob("accuracy-*.csv")))
    quoted = {row["name"]: row for row in read_csv(Path(quoted_file or QUOTED_FILE))}
    entries = _registry_entries(registry)
    tables = {}
    for path in sorted(results_dir.glob("cost-*.csv")):
        here = _accuracy_by_set([path.with_name(path.name.replace("cost-", "accuracy-", 1))])
        rows = [row for row in read_csv(path) if not row_is_busy(row)]  # busy: its timings say nothing of the judge
        for row in rows:
            name = row["name"]  # per set, its accuracy on this file's device and dtype, else on any
            found = {
                s: here.get(s, {}).get(name) or by_name[name] for s, by_name in anywhere.items() if name in by_name
            }
            _join_accuracy(row, found, quoted, entries, registry)
        points = [(r["name"], _float(r["flops"]), _float(r["accuracy"])) for r in rows]
        front = pareto_front([p for p in points if p[1] is not None and p[2] is not None])
        for row in rows:
            row["front"] = row["name"] in front
        rows.sort(key=lambda r: (_float(r["flops"]) if _float(r["flops"]) is not None else math.inf, r["name"]))
        tables[path.stem] = rows
    return tables


def _num(value, scale: float = 1.0, digits: int = 3) -> str:
    x = _float(value)
    return "" if x is None else f"{x / scale:.{digits}g}"


CATEGORY_HEADERS = {
    "open_qa": "open QA",
    "multiple_choice": "MC",
    "context_extraction": "extraction",
    "open_math": "math",
}


def _acc(value) -> str:
    return "" if _float(value) is None else f"{float(value):.3f}"


def markdown_table(rows: list[dict]) -> str:
    """The Pareto table of one cost file, as Markdown: the normalized cost; accuracy on ``HEADLINE_SET``, overall
    and per category, then overall on the other ``SHOWN_SETS``; why a judge has no accuracy."""
    categories = " | ".join(CATEGORY_HEADERS[c] for c in CATEGORIES)
    others = "".join(f" accuracy ({s}) |" for s in SHOWN_SETS[1:])
    lines = [
        "| judge | kind | params (M) | tokens | GFLOPs / judgment | latency p50 / p95 (ms) | "
        f"{NORM_COST} | throughput (/s, batch) | peak mem (MB) | accuracy ({HEADLINE_SET}) | {categories} |"
        f"{others} front |",
        "|" + "---|" * (11 + len(CATEGORIES) + len(SHOWN_SETS) - 1),
    ]
    for r in rows:
        latency = f"{_num(r['latency_p50_ms'])} / {_num(r['latency_p95_ms'])}" if r["latency_p50_ms"] else "not timed"
        batch = f"b={r['best_batch_size']}" if r["best_batch_size"] else "whole set"
        throughput = f"{_num(r['throughput_per_s'])} ({batch})" if r["throughput_per_s"] else ""
        if r["accuracy"]:
            accuracy = _acc(r["accuracy"])
        elif r["quoted_accuracy"]:
            accuracy = f"({float(r['quoted_accuracy']):.3f}: {r['accuracy_source']})"
        else:
            accuracy = f"n/a ({r['accuracy_source']})" if r["accuracy_source"] else "n/a"
        per_category = " | ".join(_num(r[f"acc_{c}"]) for c in CATEGORIES)
        other = "".join(f" {_acc(r[f'accuracy_{s}'])} |" for s in SHOWN_SETS[1:])
        lines.append(
            f"| `{r['name']}` | {r['judge_kind']} | {_num(r['params'], 1e6)} | {r['tokens']} | "
            f"{_num(r['flops'], 1e9, 4)} | {latency} | {_num(r['norm_cost'])} | {throughput} | "
            f"{_num(r['peak_mem_mb'], 1, 4)} | {accuracy} | {per_category} |{other} {'*' if r['front'] else ''} |"
        )
    return "\n".join(lines)


def plot_pareto(rows: list[dict], path=None) -> Path:
    """Accuracy on ``HEADLINE_SET`` against FLOPs per judgment (log scale), the front highlighted; judges
    without an accuracy there (quoted ones included) are marked along the bottom. FLOPs of 0 (rules) are
    drawn at the left edge."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path or PARETO_PNG)
    positive = [_float(r["flops"]) for r in rows if (_float(r["flops"]) or 0) > 0]
    floor = min(positive) / 30 if positive else 1.0
    fig, ax = plt.subplots(figsize=(10, 6))
    scored = [r for r in rows if r["accuracy"] and _float(r["flops"]) is not None]
    unscored = [r for r in rows if not r["accuracy"] and _float(r["flops"]) is not None]

    def x(r):
        return max(_float(r["flops"]), floor)

    for r in scored:
        ax.scatter(x(r), float(r["accuracy"]), s=60, color="tab:red" if r["front"] else "tab:blue", zorder=3)
        label = r["name"] + (" (0 FLOPs)" if _float(r["flops"]) == 0 else "")
        ax.annotate(label, (x(r), float(r["accuracy"])), textcoords="offset points", xytext=(5, 5), fontsize=8)
    front = sorted((r for r in scored if r["front"]), key=x)
    if front:
        ax.step(
            [x(r) for r in front],
            [float(r["accuracy"]) for r in front],
            where="post",
            color="tab:red",
            label="Pareto front",
        )
    ax.set_xscale("log")
    ax.set_xlabel("FLOPs per judgment (log scale)")
    ax.set_ylabel(f"accuracy on {HEADLINE_SET}")
    ymin = min([float(r["accuracy"]) for r in scored] + [0.5]) - 0.08
    ax.set_ylim(ymin, 1.0)
    same_cost: dict[float, list[str]] = {}
    for r in unscored:
        same_cost.setdefault(x(r), []).append(r["name"])
    for i, (flops, names) in enumerate(sorted(same_cost.items())):
        label = names[0] + (f" (+{len(names) - 1} of the same cost)" if len(names) > 1 else "")
        ax.scatter(flops, ymin + 0.01, marker="|", s=200, color="gray")
        ax.annotate(
            label,
            (flops, ymin + 0.01),
            rotation=60,
            fontsize=7,
            color="gray",
            textcoords="offset points",
            xytext=(2, 6 + 4 * (i % 2)),
        )
    ax.set_title(f"bertjudge: accuracy on {HEADLINE_SET} vs compute (gray ticks: no {HEADLINE_SET} accuracy yet)")
    ax.grid(True, which="both", alpha=0.3)
    if front:
        ax.legend(loc="upper right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)
    os.replace(tmp, path)
    return path


def flops_ratio(
    rows: list[dict], big: str = "qwen3-14b.direct", small: str = "eurobert-210m.bertjudge"
) -> float | None:
    flops = {r["name"]: _float(r["flops"]) for r in rows}
    return flops[big] / flops[small] if flops.get(big) and flops.get(small) else None
