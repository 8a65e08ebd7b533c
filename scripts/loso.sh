#!/usr/bin/env bash
# Leave one source out: the quickstart recipe (configs/quickstart.yaml) trained without one real source, then
# tested on that source's held-out rows with scripts/transfer.py (accuracy against what the ranking allows,
# label-free adaptation, 50/100/200-label calibration). One training at a time (~12-15 min each on 2 cores).
#   scripts/loso.sh evouna|champ|smollm2 [...]
# Held-out rows: EVOUNA-TQ -> its test questions (real-test-v1's open-QA part); CHAMP -> manual-v3's CHAMP rows
# (a development set, but nothing of a judge trained without CHAMP was chosen on them); SmolLM2 -> real-test-v1's
# SmolLM2 rows. Results: runs/loso-<source>/transfer.json; the docs quote them (docs/real-outputs.md).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
export HF_HUB_OFFLINE=1 WANDB_MODE=offline TOKENIZERS_PARALLELISM=false
E="embedded:train?n=10000"; EV="embedded:val?n=400"
Q="data/real/evouna-tq-v1.jsonl.gz"; C="data/real/champ-rule-v2.jsonl.gz"; CN="&n=1200"; S="data/real/smollm2-read-v2.jsonl.gz"
for source in "$@"; do
  case $source in
    evouna) train="[\"$E\", \"$C?split=train$CN\", \"$S?split=train\"]"; val="[\"$EV\", \"$C?split=val\", \"$S?split=val\"]"
            held=("data/real/real-test-v1.jsonl.gz" --where task=evouna-tq --name "EVOUNA-TQ test questions");;
    champ)  train="[\"$E\", \"$Q?split=train\", \"$S?split=train\"]"; val="[\"$EV\", \"$Q?split=val\", \"$S?split=val\"]"
            held=("data/real/manual-v3.jsonl.gz" --where task=champ --name "CHAMP solutions (manual-v3)");;
    smollm2) train="[\"$E\", \"$Q?split=train\", \"$C?split=train$CN\"]"; val="[\"$EV\", \"$Q?split=val\", \"$C?split=val\"]"
            held=("data/real/real-test-v1.jsonl.gz" --where candidate_model=SmolLM2-135M-Instruct --name "SmolLM2 answers (real-test-v1)");;
    *) echo "loso.sh: unknown source $source (evouna, champ, smollm2)" >&2; exit 2;;
  esac
  run=runs/loso-$source
  sed "s|runs/quickstart|$run|g; s|name: quickstart|name: loso-$source|" configs/quickstart.yaml > "/tmp/loso-$source.yaml"
  "$PY" -m bertjudge fit --config "/tmp/loso-$source.yaml" --data.train "$train" --data.val "$val" \
      --data.real_test '[]' --data.adversarial '[]' --test_after_fit false --trainer.val_check_interval 1.0 \
      > "$run.log" 2>&1   # one validation, at the end: the judge of the last step
  "$PY" scripts/transfer.py --judge "$run/judge" --data "${held[@]}" --out "$run/transfer.json" 2>/dev/null
done
