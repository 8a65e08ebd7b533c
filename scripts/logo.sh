#!/usr/bin/env bash
# Leave one generator out (issue #42 item 5): the quickstart recipe (configs/quickstart.yaml) trained without one
# EVOUNA-TQ system's answers — neither in train nor in val (the checkpoint and the temperature are chosen on val) —
# then scored on that system's answers to EVOUNA-TQ's test questions (415 rows, people's labels; questions no
# training row asks), beside "reference contained" (contains), the rules (regex) and the quickstart judge, which
# trained on every system. One training at a time (~12 min each on 2 idle cores).
#   scripts/logo.sh fid gpt35 chatgpt gpt4 bing     # one or more
# Results: runs/logo-<system>/eval/report.{md,json}; docs/real-outputs.md quotes them.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
export HF_HUB_OFFLINE=1 WANDB_MODE=offline TOKENIZERS_PARALLELISM=false
Q="data/real/evouna-tq-v1.jsonl.gz"
for system in "$@"; do
  case $system in  # the candidate_model names in the file, URL-quoted (data/sources.py: models, exclude_models)
    fid) name="FiD+(DPR%2BFiD)";; gpt35) name="GPT-3.5";; chatgpt) name="ChatGPT-3.5";;
    gpt4) name="GPT-4";; bing) name="Bing+Chat";;
    *) echo "logo.sh: unknown system $system (fid, gpt35, chatgpt, gpt4, bing)" >&2; exit 2;;
  esac
  run=runs/logo-$system
  mkdir -p "$run"
  sed "s|runs/quickstart|$run|g; s|name: quickstart|name: logo-$system|; \
       s|$Q?split=train\"|$Q?split=train\&exclude_models=$name\"|; s|$Q?split=val\"|$Q?split=val\&exclude_models=$name\"|" \
      configs/quickstart.yaml > "$run/config.yaml"
  grep -q "split=train&exclude_models=$name\"" "$run/config.yaml" && grep -q "split=val&exclude_models=$name\"" "$run/config.yaml"
  "$PY" -m bertjudge fit --config "$run/config.yaml" --data.real_test '[]' --data.adversarial '[]' \
      --test_after_fit false > "$run/fit.log" 2>&1
  "$PY" -m bertjudge evaluate --data "$Q?split=test&models=$name" --judge contains regex "$run/judge" \
      runs/quickstart/judge --against contains --precision fp32 --bootstrap 1000 --output "$run/eval" > "$run/eval.log" 2>&1
  sed -n '/^## Overall/,/^## Row/p' "$run/eval/report.md" | grep '^| [a-z]' | grep -v '| threshold |' | sed "s/^/$system: /"
done
