"""Publishing judges to the zoo, and the zoo's README: what needs measurements (``bertjudge.evaluation.bench``)
on top of the registry (``bertjudge.zoo.registry``).

- ``publish(FOLDER, NAME, ...)`` measures an exported judge, adds the measured section to its model
  card, copies it to a zoo location (a folder, or ``hf://org/name`` on the Hugging Face Hub: a private
  repository unless ``private=False``) and appends its entry, with the sha256 of every file, to the registry.
- ``render_readme()`` is ``zoo/README.md``, generated from the registry and ``benchmarks/results/*.csv``;
  ``regenerate()`` writes it and ``benchmarks/pareto.png`` from those files alone (``bench run`` calls it
  after measuring, ``bench publish`` on its own), so that nothing published is merged by hand.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from huggingface_hub import HfApi

from bertjudge.core.hashing import hash_folder
from bertjudge.core.judge_file import JUDGE_FILE
from bertjudge.evaluation import bench, bench_results, bench_timing
from bertjudge.zoo import hub
from bertjudge.zoo import registry as zoo
from bertjudge.zoo.cache import read_json
from bertjudge.zoo.uri import URIError, parse_target


# --- publish --------------------------------------------------------------------------------------
def card_section(name: str, cost: dict, accuracies: list[dict]) -> str:
    """The measured section of a published judge's model card."""
    lines = [
        "",
        "## Measured by `bertjudge zoo publish`",
        "",
        f"Zoo name: `{name}`.",
        "",
        "| measure | value |",
        "|---|---|",
    ]
    for key in (
        "params",
        "tokens",
        "flops",
        "latency_p50_ms",
        "latency_p95_ms",
        "throughput_per_s",
        "best_batch_size",
        "peak_mem_mb",
        "timing_runs",
        "latency_spread",
        "hardware",
        "dtype",
        "torch",
        "other_load",
    ):
        if cost.get(key) not in (None, ""):
            lines.append(f"| {key} | {cost[key]} |")
    if cost.get("busy"):
        lines.append("| busy | yes: timed while other processes loaded the machine; left out of the zoo table |")
    for accuracy in accuracies:
        lines.append(f"| accuracy ({accuracy['eval_set']}, n={accuracy['n']}) | {float(accuracy['accuracy']):.4f} |")
    if not accuracies:
        lines.append("| accuracy | not measured (the real-output test sets are not on this machine) |")
    return "\n".join(lines) + "\n"


def publish(
    path: str | os.PathLike,
    name: str,
    license: str,
    to: str,
    registry: str | os.PathLike | None = None,
    token: str | None = None,
    n: int = 2000,
    seed: int = 0,
    architecture: str | None = None,
    results_dir: str | os.PathLike | None = None,
    timing: bool = True,
    min_run_time: float = bench_timing.MIN_RUN_TIME,
    max_load: float = bench_timing.MAX_LOAD,
    private: bool = True,
) -> zoo.ZooEntry:
    """Measure, card, copy and register an exported judge folder; returns the registry entry. ``to`` is a folder or
    ``hf://org/name`` (created ``private`` unless ``private=False``; a repository that exists keeps its visibility).
    A cost row timed on a busy machine is written marked ``busy`` (the card says so; the zoo table leaves it out
    until ``bench run`` measures it again on an idle machine)."""
    src = Path(path)
    config = read_json(src / JUDGE_FILE)
    if not config:
        raise zoo.ZooError(f"{src}: not an exported judge folder (no {JUDGE_FILE})")
    zoo.refuse_pickles(src, str(src))
    registry = zoo.registry_path(registry)
    if registry.is_file() and name in zoo.load_registry(registry):
        raise zoo.ZooError(f"{registry}: {name!r} is already registered; choose another tag")
    try:
        target = parse_target(to)
    except URIError as err:
        raise zoo.ZooError(str(err)) from None
    offline = hub.offline_reason() if target.scheme == "hf" else None
    if offline:  # before anything is measured
        raise zoo.ZooError(f"{target}: cannot publish to the Hub: {offline}")
    zoo.ZooEntry.parse(
        name,
        {
            "class_path": config["class"],
            "source": "file://x",
            "format": config.get("format", {}),
            "license": license,
            "provenance": {},
        },
        "publish",
    )
    cost, accuracies = bench.measure_judge_folder(
        src,
        name,
        n=n,
        seed=seed,
        architecture=architecture,
        timing=timing,
        min_run_time=min_run_time,
        max_load=max_load,
    )
    bench_results.write_results([cost], "cost", results_dir)
    bench_results.write_results(accuracies, "accuracy", results_dir)

    with tempfile.TemporaryDirectory() as staging:
        stage = Path(staging) / name
        zoo.copy_tree(src, stage, str(src))
        card = stage / "README.md"
        card.write_text((card.read_text() if card.is_file() else f"# {name}\n") + card_section(name, cost, accuracies))
        files = hash_folder(stage)
        if target.scheme == "hf":
            source, pinned = _upload(stage, target.location, token, name, private), True
        else:
            dest = Path(target.location) / name
            if dest.exists():
                raise zoo.ZooError(f"{dest} exists; refusing to overwrite a published judge")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(stage, dest)
            source, pinned = f"file://{dest.resolve()}", False
    fields = {
        "class_path": config["class"],
        "source": source,
        "revision_pinned": pinned,
        "files": files,
        "format": config["format"],
        "num_labels": config.get("num_labels", 1),
        "threshold": config.get("threshold", 0.5),
        "temperature": config.get("temperature", 1.0),
        **({"bias": config["bias"]} if config.get("bias") else {}),
        "architecture": cost.get("architecture") or None,
        "license": license,
        "description": f"Published from {src.resolve()} by bertjudge zoo publish.",
        "provenance": config.get("provenance") or {"note": "the judge.json had no provenance"},
    }
    entry = zoo.ZooEntry.parse(name, fields, str(registry))
    zoo.append_entry(registry, entry)
    return entry


def _upload(folder: Path, repo: str, token: str | None, name: str, private: bool) -> str:
    """Upload ``folder`` to the Hub repository ``repo`` (created ``private`` when it does not exist); its
    ``hf://org/name@commit``."""
    api = HfApi(token=token)
    api.create_repo(repo, exist_ok=True, private=private)
    commit = api.upload_folder(repo_id=repo, folder_path=folder, commit_message=f"bertjudge zoo publish {name}")
    return f"hf://{repo}@{commit.oid}"


# --- the README -----------------------------------------------------------------------------------
def render_readme(registry: str | os.PathLike | None = None, results_dir: str | os.PathLike | None = None) -> str:
    """zoo/README.md: the registry and the measured tables, generated from the CSVs."""
    entries = zoo.load_registry(registry)
    headline, others = bench_results.HEADLINE_SET, " and ".join(bench_results.SHOWN_SETS[1:])
    lines = [
        "# The bertjudge zoo",
        "",
        (
            "<!-- generated by `python -m bertjudge bench run` (or `bench publish`, `zoo readme`) from "
            "bertjudge/zoo/registry.yaml and benchmarks/results/*.csv; do not edit by hand -->"
        ),
        "",
        (
            'Load any entry with `Judge.load("<name>")` (pulled and verified on first use) or '
            "`python -m bertjudge zoo pull <name>`."
        ),
        "",
        "## Entries",
        "",
        "| name | source | pinned | license | description |",
        "|---|---|---|---|---|",
    ]
    for name, e in entries.items():
        lines.append(
            f"| `{name}` | `{e.source}` | {'yes' if e.revision_pinned else 'no'} | {e.license} | {e.description} |"
        )
    lines += [
        "",
        "## Cost and accuracy",
        "",
        (
            "Measured with `python -m bertjudge bench run` (protocol: benchmarks/README.md). Rows without a "
            "trained judge (tag `arch`, `direct`, `reasoning`, `score10`) cost the architecture with random weights; "
            "token lengths (so FLOPs) are the median of the synthetic embedded test split (n=2000). "
            f"Accuracy, for the judges that run here, is shown on {headline} (`data/real/{headline}.jsonl.gz`, every "
            "row: 496 real outputs, 220 math, 116 multiple choice, 80 extraction, 80 open QA), overall and per "
            f"category, and overall on {others} (660 rows: 360 multiple choice, 180 extraction, 120 math) for "
            f"comparison. Why {headline}: it is the newest frozen test set, on which nothing was chosen; "
            "real-test-v1 and real-test-v2 are development sets now, their figures read while later choices were "
            "made (data/real/README.md, docs/real-outputs.md): v1's rows stay in the CSVs and are not shown. "
            "`contains.v1` and the routing judges over the quickstart judge (`hybrid.`, `cascade.`, "
            "`by-category.quickstart`) are measured whole (`score_records` on the rows of "
            f"{headline}); their FLOPs per judgment are the learned part's × the share of those rows routed to it "
            "(the CSV's notes say the share). `smollm2-135m.prompted-*` are SmolLM2-135M-Instruct prompted as a "
            "judge, no training, with its real weights (installed offline). A judge without an accuracy says why "
            "(weights not available offline, too large for this CPU, too slow to score here, not built yet, not "
            "measured yet). An accuracy the authors quoted on their own "
            "test set is shown in parentheses with its source; it is not comparable and is left out of the front "
            f"and the plot. `*` marks the Pareto front (FLOPs vs {headline} accuracy). Latency is the median of "
            f"`torch.utils.benchmark` runs at batch 1. {bench_results.NORM_COST} is that latency × the machine's "
            "fp32 GEMM speed measured around the timing: the GFLOPs the machine's matmuls would have done in that "
            "time (GFLOP-equivalents), so that rows timed on machines (or in spells) of different speed compare. A "
            "row timed while other processes took more of the CPUs than `bench run --max-load` allows is marked "
            "busy and left out (named under its table)."
        ),
        "",
    ]
    tables, busy = bench_results.result_tables(results_dir, registry=registry), bench_results.busy_rows(results_dir)
    if not tables:
        lines.append("No results yet: run `python -m bertjudge bench run`.")
    for title, rows in tables.items():
        lines += [f"### {title}", "", bench_results.markdown_table(rows), ""]
        if busy.get(title):
            names = ", ".join(f"`{name}`" for name in busy[title])
            lines += [f"Left out, timed on a busy machine (measure again when idle): {names}.", ""]
    lines += ["![Pareto front](../benchmarks/pareto.png)", ""]
    return "\n".join(lines)


def write_readme(
    path: str | os.PathLike = zoo.DEFAULT_README,
    registry: str | os.PathLike | None = None,
    results_dir: str | os.PathLike | None = None,
) -> Path:
    """Write ``render_readme()`` to ``path`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(render_readme(registry, results_dir))
    os.replace(tmp, path)
    return path


def regenerate(
    readme: str | os.PathLike | None = zoo.DEFAULT_README,
    plot: str | os.PathLike | None = bench_results.PARETO_PNG,
    registry: str | os.PathLike | None = None,
    results_dir: str | os.PathLike | None = None,
    table: str = "cost-cpu-fp32",
) -> list[Path]:
    """Everything published from the results files, from them alone: the zoo README and the Pareto plot
    of the first cost file whose name starts with ``table`` (None skips either). Returns the files
    written; the same files give the same bytes."""
    written = []
    if readme is not None:
        written.append(write_readme(readme, registry, results_dir))
    if plot is not None:
        tables = bench_results.result_tables(results_dir, registry=registry)
        title = next((t for t in tables if t.startswith(table)), None)
        if title is None:
            raise bench.BenchError(
                f"no results file starting with {table!r} in {results_dir or bench_results.RESULTS_DIR}"
            )
        written.append(bench_results.plot_pareto(tables[title], plot))
    return written
