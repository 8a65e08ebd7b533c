#!/usr/bin/env bash
# The GPU path, ready to go: on a machine with a CUDA GPU, in under 10 minutes,
#   prepare    the EuroBERT-210m backbone: the hub weights when they are cached, else (offline) random weights of
#              the exact EuroBERT-210m architecture (bertjudge/zoo/architectures.yaml) with the offline MiniLM tokenizer
#   fit-1gpu   the paper's recipe (configs/trainer/ddp.yaml + configs/paper/eurobert-210m.yaml) on 1 GPU in
#              bf16-mixed for --steps optimizer steps (default 300, effective batch 32) on the embedded corpus
#   fit-ddp2   the same on 2 GPUs with DDP (skipped where fewer than 2 are visible)
#   predict    LightningCLI `predict` of the best checkpoint in bf16-mixed, writing a score file (on 2 GPUs with DDP
#              where 2 are visible: each process writes its shard, the first merges them in input order)
#   inference  the exported judge through InferenceEngine (bertjudge/judges/inference.py) in fp32 and bf16 on
#              the GPU: rows/s, verdict agreement with fp32, largest score difference
#   bench      `bench run` on the GPU in bf16: FLOPs, latency p50/p95, throughput, peak memory of the trained
#              judge and of the EuroBERT-210m architecture, and their model-FLOP utilization (MFU)
#   vllm       the vLLM backend's verdicts against the transformers backend's (tests/test_vllm_backend.py, marked
#              gpu; skipped where vLLM is not installed)
# then prints one summary table (also in OUT/summary.md). Exit 1 when a step failed.
#
#   scripts/gpu_check.sh [--dry-run] [--steps N] [--out DIR]      (default OUT: runs/gpu-check)
#
# --dry-run (CPU, no GPU needed): prints every command it would run, checks the Python helpers compile and
# validates each LightningCLI call with --print_config (the configs combine and type-check); nothing is trained.
# GPU peak for MFU: GPU_PEAK_TFLOPS (dense bf16), else a table of known GPUs.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
export HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-1} WANDB_MODE=${WANDB_MODE:-offline} TOKENIZERS_PARALLELISM=false

DRY=0 STEPS=300 OUT=runs/gpu-check
while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) DRY=1;;
    --steps) STEPS=${2:?--steps needs a number}; shift;;
    --steps=*) STEPS=${1#*=};;
    --out) OUT=${2:?--out needs a folder}; shift;;
    --out=*) OUT=${1#*=};;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0;;
    *) echo "gpu_check.sh: unknown argument $1 (--dry-run, --steps N, --out DIR)" >&2; exit 2;;
  esac
  shift
done
case $STEPS in ''|*[!0-9]*|0) echo "gpu_check.sh: --steps must be a positive whole number, got $STEPS" >&2; exit 2;; esac
mkdir -p "$OUT/helpers"
OUT=$(cd "$OUT" && pwd)
H=$OUT/helpers
: > "$OUT/steps.tsv"
TRAIN="embedded:train?n=$((STEPS * 32))"   # one epoch = STEPS optimizer steps at the recipe's effective batch 32
VAL="embedded:val?n=1000" TEST="embedded:test?n=2000"
BACKBONE=$OUT/eurobert-210m

# --- the Python helpers ------------------------------------------------------------------------------------
cat > "$H/prepare.py" <<'EOF'
"""The EuroBERT-210m backbone: the hub copy when it is cached (offline), else random weights of the exact
architecture with the offline MiniLM tokenizer (vocabulary resized to it), saved as a Hugging Face folder."""
import json
import sys
from pathlib import Path

from bertjudge.evaluation.bench import PROXY_TOKENIZER
from bertjudge.evaluation.bench_flops import ARCHITECTURES
from bertjudge.judges import backbones

folder = Path(sys.argv[1])
arch = ARCHITECTURES["eurobert-210m"]
try:
    from transformers import AutoModel, AutoTokenizer

    model, tokenizer = AutoModel.from_pretrained(arch.hub_id), AutoTokenizer.from_pretrained(arch.hub_id)
    source = f"{arch.hub_id} (hub weights, from the local cache)"
except OSError:
    import torch
    from transformers import AutoConfig

    tokenizer = AutoTokenizer.from_pretrained(backbones.resolve(PROXY_TOKENIZER))
    config = AutoConfig.for_model(arch.model_type, **{**arch.config, "vocab_size": len(tokenizer),
                                                      "pad_token_id": tokenizer.pad_token_id,
                                                      "bos_token_id": tokenizer.cls_token_id,
                                                      "eos_token_id": tokenizer.sep_token_id,
                                                      "mask_token_id": tokenizer.mask_token_id})
    torch.manual_seed(0)
    model = AutoModel.from_config(config)
    source = (f"random weights of the {arch.hub_id} architecture with the {PROXY_TOKENIZER} tokenizer "
              f"(vocabulary {len(tokenizer)} instead of {arch.config['vocab_size']}: the same compute per token, "
              "fewer embedding parameters; the hub is not reachable here)")
model.save_pretrained(folder)
tokenizer.save_pretrained(folder)
params = sum(p.numel() for p in model.parameters())
(folder / "gpu_check_source.json").write_text(json.dumps({"source": source, "params": params}))
print(f"backbone: {source}; {params / 1e6:.1f}M parameters -> {folder}")
EOF

cat > "$H/inference.py" <<'EOF'
"""The exported judge through InferenceEngine on the GPU, fp32 then bf16; its agreement with the predict file.
Arguments: judge folder, records spec, predict score file, output JSON[, device (default cuda)]."""
import json
import sys
from pathlib import Path

import numpy as np

from bertjudge.core.records import read_records
from bertjudge.data.sources import load_source
from bertjudge.judges.inference import compare
from bertjudge.judges.loading import Judge

folder, spec, predicted, out = sys.argv[1:5]
device = sys.argv[5] if len(sys.argv) > 5 else "cuda"  # cpu: only to test this helper
judge = Judge.load(folder, device=device)
assert next(judge.parameters()).device.type == device, f"the judge is not on {device}"
records = load_source(spec)
fp32, reference = compare(judge, records, "fp32")
bf16, _ = compare(judge, records, "bf16", reference)
result = {c.precision: {"seconds": c.seconds, "rows_per_s": len(records) / c.seconds, "agreement": c.agreement,
                        "max_score_diff": c.max_score_diff, "ok": c.ok} for c in (fp32, bf16)}
result["rows"] = len(records)
if Path(predicted).is_file():  # the predict step's scores (Lightning, bf16-mixed) against the engine's fp32
    by_id = {r["id"]: r["score"] for r in read_records(predicted)}
    scores = np.array([by_id[r["id"]] for r in records])
    result["predict_agreement"] = float(np.mean((scores >= judge.threshold) == (reference >= judge.threshold)))
    result["predict_max_score_diff"] = float(np.max(np.abs(scores - reference)))
Path(out).write_text(json.dumps(result, indent=2))
for c in (fp32, bf16):
    print(f"{c.precision}: {len(records) / c.seconds:,.0f} rows/s, agreement with fp32 {c.agreement:.4f}, "
          f"max |dP| {c.max_score_diff:.4f}, {'ok' if c.ok else 'NOT within tolerance'}")
sys.exit(0 if bf16.ok else 1)
EOF

cat > "$H/validate.py" <<'EOF'
"""--dry-run: each LightningCLI call (arguments separated by '----') parsed with --print_config, without running."""
import contextlib
import io
import json
import os
import sys

import yaml

from bertjudge.cli.train import _check_data, run_lightning_cli

calls, current = [], []
for arg in sys.argv[1:]:
    if arg == "----":
        calls.append(current)
        current = []
    else:
        current.append(arg)
calls.append(current)
sys.argv = sys.argv[:1]  # LightningCLI gets each call's arguments, not the script's
failed, checked = 0, {}
for name, *args in calls:
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            run_lightning_cli([*args, "--print_config"])
        code = "no exit"
    except SystemExit as exit_:
        code = exit_.code or 0
    except Exception as err:  # noqa: BLE001 - one line per call
        code = f"{type(err).__name__}: {err}"
    config = yaml.safe_load(buffer.getvalue()) if code == 0 else None
    trainer = (config or {}).get("trainer", {})
    problems = [] if code == 0 else [f"--print_config ended with {code}"]
    if config is not None:  # the data sources the call reads, read as the command checks them before it runs
        key = json.dumps([args[0], config["data"]], sort_keys=True, default=str)
        if key not in checked:
            try:
                checked[key] = sum(map(len, _check_data(config, args[0]).values()))
            except Exception as err:  # noqa: BLE001 - one line per call
                checked[key] = f"{type(err).__name__}: {err}"
        if isinstance(checked[key], str):
            problems.append(f"data: {checked[key]}")
    if config is not None:
        if trainer.get("precision") != "bf16-mixed":
            problems.append(f"trainer.precision is {trainer.get('precision')!r}, not bf16-mixed")
        if trainer.get("accelerator") != "gpu":
            problems.append(f"trainer.accelerator is {trainer.get('accelerator')!r}, not gpu")
        loggers = trainer.get("logger") or []
        for logger in loggers if isinstance(loggers, list) else [loggers]:
            if isinstance(logger, dict) and "Wandb" in logger.get("class_path", "") and \
                    os.environ.get("WANDB_MODE") != "offline":
                problems.append(f"a WandbLogger would log with WANDB_MODE={os.environ.get('WANDB_MODE')!r}, not offline")
    if problems:
        failed += 1
        print(f"config FAILED: {name}: {'; '.join(problems)}")
    else:
        print(f"config ok: {name} ({config['model']['class_path']}, devices {trainer.get('devices')}, "
              f"strategy {trainer.get('strategy')}, precision {trainer.get('precision')}, "
              f"{checked[key]} data rows checked)")
sys.exit(1 if failed else 0)
EOF

cat > "$H/summary.py" <<'EOF'
"""One table: each step's status, seconds and result, from OUT/steps.tsv and the files the steps wrote."""
import csv
import json
import sys
from pathlib import Path

out, steps_count = Path(sys.argv[1]), int(sys.argv[2])
PEAK_TFLOPS = {"H200": 989.4, "H100": 989.4, "A100": 312.0, "L40S": 362.1, "L4": 121.0, "A10": 125.0,
               "RTX 4090": 165.2, "MI300X": 1307.4, "MI250": 362.1}


def read_json(path):
    return json.loads(path.read_text()) if path.is_file() else {}


def fit_result(name):
    judge = read_json(out / name / "run" / "judge" / "judge.json")
    if not judge:
        return ""
    recipe = judge.get("provenance", {}).get("recipe", {})
    metrics = judge.get("metrics", {})
    acc = metrics.get("test/acc")
    return (f"{recipe.get('steps', '?')} steps, {recipe.get('precision', '?')}, {recipe.get('devices', '?')} GPU(s); "
            f"test acc {acc:.3f}" if isinstance(acc, float) else "test acc n/a")


def bench_result():
    rows = [row for path in sorted((out / "bench").glob("cost-cuda-*.csv")) for row in csv.DictReader(
        line for line in path.open() if not line.startswith("#"))]
    if not rows:
        return ""
    import os
    hardware = rows[0].get("hardware", "")
    peak = float(os.environ.get("GPU_PEAK_TFLOPS") or next(
        (v for k, v in PEAK_TFLOPS.items() if k.lower() in hardware.lower()), 0)) * 1e12
    parts = [hardware]
    for row in rows:
        flops, throughput = float(row["flops"] or 0), float(row["throughput_per_s"] or 0)
        mfu = f", MFU {100 * flops * throughput / peak:.1f}%" if peak and throughput else ""
        parts.append(f"{row['name']}: {flops / 1e9:.1f} GFLOPs at {row['tokens']} tokens, latency p50/p95 "
                     f"{float(row['latency_p50_ms'] or 'nan'):.2f}/{float(row['latency_p95_ms'] or 'nan'):.2f} ms, "
                     f"{throughput:,.0f}/s (batch {row['best_batch_size']}){mfu}")
    return "; ".join(parts)


def inference_result():
    result = read_json(out / "inference.json")
    if not result:
        return ""
    text = "; ".join(f"{p} {result[p]['rows_per_s']:,.0f} rows/s (agreement {result[p]['agreement']:.4f}, "
                     f"max |dP| {result[p]['max_score_diff']:.4f})" for p in ("fp32", "bf16"))
    if "predict_agreement" in result:
        text += f"; predict file vs fp32: agreement {result['predict_agreement']:.4f}"
    return text


results = {
    "prepare": lambda: read_json(out / "eurobert-210m" / "gpu_check_source.json").get("source", ""),
    "fit-1gpu": lambda: fit_result("fit-1gpu"),
    "fit-ddp2": lambda: fit_result("fit-ddp2"),
    "predict": lambda: (f"{sum(1 for _ in (out / 'predict.jsonl').open())} rows scored"
                        if (out / "predict.jsonl").is_file() else ""),
    "inference": inference_result,
    "bench": bench_result,
    "vllm": lambda: ((out / "vllm.log").read_text().strip().splitlines() or [""])[-1]
    if (out / "vllm.log").is_file() else "",  # pytest's last line: passed / skipped
}
lines = ["| step | status | seconds | result |", "|---|---|---|---|"]
for name, status, seconds, note in csv.reader((out / "steps.tsv").open(), delimiter="\t"):
    result = note if status in ("skipped", "dry-run") else results.get(name, lambda: "")()
    if status not in ("ok", "skipped", "dry-run"):
        result = f"{result} (log: {out / (name + '.log')})".strip()
    lines.append(f"| {name} | {status} | {seconds} | {result} |")
table = "\n".join(lines)
(out / "summary.md").write_text(f"# GPU check ({steps_count} steps)\n\n{table}\n")
print(table)
EOF

# --- the steps ---------------------------------------------------------------------------------------------
FAILED=0
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" >> "$OUT/steps.tsv"; }
step() {  # step NAME LIMIT_SECONDS COMMAND...: run it (its output in OUT/NAME.log), or print it (dry run)
  local name=$1 limit=$2
  shift 2
  printf '== step %s (limit %ss):' "$name" "$limit"
  printf ' %q' "$@"
  printf '\n'
  if [ $DRY = 1 ]; then record "$name" dry-run "" "not run (dry run)"; return 0; fi
  local start rc
  start=$(date +%s.%N)
  timeout --kill-after=20 "$limit" "$@" > "$OUT/$name.log" 2>&1
  rc=$?
  local seconds
  seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
  if [ $rc = 0 ]; then
    record "$name" ok "$seconds"
  else
    FAILED=1
    record "$name" "$([ $rc = 124 ] && echo timeout || echo "failed (exit $rc)")" "$seconds"
    echo "   step $name failed (exit $rc); the end of $OUT/$name.log:"
    tail -n 15 "$OUT/$name.log" | sed 's/^/   | /'
  fi
}

fit_call() {  # fit_call NAME DEVICES STRATEGY: the LightningCLI arguments of a fit step
  local name=$1 devices=$2 strategy=$3 root=$OUT/$1
  printf '%s\n' fit --config configs/trainer/ddp.yaml --config configs/paper/eurobert-210m.yaml \
    "--trainer.devices=$devices" "--trainer.strategy=$strategy" --trainer.precision=bf16-mixed \
    --trainer.max_epochs=1 --trainer.val_check_interval=1.0 --trainer.log_every_n_steps=20 \
    --trainer.enable_progress_bar=false "--trainer.default_root_dir=$root/run" \
    "--trainer.logger.init_args.save_dir=$root" "--trainer.logger.init_args.name=gpu-check-$name" \
    "--trainer.logger.init_args.project=bertjudge-gpu-check" \
    "--trainer.callbacks=[{class_path: lightning.pytorch.callbacks.ModelCheckpoint, init_args: {dirpath: $root/checkpoints, filename: best, monitor: val/acc, mode: max, save_top_k: 1, enable_version_counter: false}}]" \
    "--model.init_args.backbone=$BACKBONE" "--data.train=[$TRAIN]" "--data.val=[$VAL]" "--data.test=[$TEST]" \
    "--export_dir=$root/run/judge"
}
mapfile -t FIT1 < <(fit_call fit-1gpu 1 auto)
mapfile -t FIT2 < <(fit_call fit-ddp2 2 ddp)
PREDICT=(predict --config configs/paper/eurobert-210m.yaml --trainer.accelerator=gpu --trainer.devices=1
         --trainer.precision=bf16-mixed --trainer.logger=false --trainer.enable_progress_bar=false
         "--trainer.default_root_dir=$OUT/predict" "--model.init_args.backbone=$BACKBONE"
         "--ckpt_path=$OUT/fit-1gpu/checkpoints/best.ckpt" "--data.predict=[$TEST]"
         --trainer.callbacks+=bertjudge.evaluation.predict_writer.ScoreFileWriter "--trainer.callbacks.output=$OUT/predict.jsonl")
JUDGE=$OUT/fit-1gpu/run/judge

if [ $DRY = 1 ]; then
  NGPU=2  # the dry run validates the calls of a 2-GPU machine
else
  NGPU=$("$PY" -c 'import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)')
fi
[ "$NGPU" -ge 2 ] && PREDICT+=(--trainer.devices=2 --trainer.strategy=ddp)  # a shard per GPU, merged in input order
if [ $DRY = 1 ]; then
  echo "gpu_check.sh --dry-run: $STEPS steps; nothing is trained. Validating the helpers and the LightningCLI calls:"
  "$PY" -m py_compile "$H"/*.py || { echo "a helper does not compile" >&2; exit 1; }
  "$PY" "$H/validate.py" fit-1gpu "${FIT1[@]}" ---- fit-ddp2 "${FIT2[@]}" ---- predict "${PREDICT[@]}" || exit 1
else
  if [ "$NGPU" = 0 ]; then
    echo "gpu_check.sh: no CUDA GPU is visible; on a CPU machine run scripts/gpu_check.sh --dry-run" >&2
    exit 2
  fi
  echo "gpu_check.sh: $NGPU GPU(s), $STEPS steps, output in $OUT"
fi

step prepare 80 "$PY" "$H/prepare.py" "$BACKBONE"
step fit-1gpu 140 "$PY" -m bertjudge "${FIT1[@]}"
if [ "$NGPU" -ge 2 ]; then
  step fit-ddp2 100 "$PY" -m bertjudge "${FIT2[@]}"
else
  echo "== step fit-ddp2: skipped ($NGPU GPU visible; DDP needs 2)"
  record fit-ddp2 skipped "" "$NGPU GPU visible; DDP needs 2"
fi
step predict 50 "$PY" -m bertjudge "${PREDICT[@]}"
step inference 50 "$PY" "$H/inference.py" "$JUDGE" "$TEST" "$OUT/predict.jsonl" "$OUT/inference.json"
step bench 90 "$PY" -m bertjudge bench run --device cuda --dtype bf16 --judge "$JUDGE" --results "$OUT/bench" \
  --n 500 --only '*.run' eurobert-210m.bertjudge
# the vLLM backend's verdicts against the transformers backend's (skipped where vLLM is not installed)
step vllm 90 "$PY" -m pytest -q -m gpu tests/test_vllm_backend.py
echo
"$PY" "$H/summary.py" "$OUT" "$STEPS"
exit $FAILED
