"""The paper's data pipeline: tasks → generate (candidates) → label (teachers) → build (mixture, OOD splits).

Each stage reads and writes record files (``bertjudge.core.records``), so each can be run, inspected and
replaced alone; ``lmeval`` imports lm-evaluation-harness outputs as records, and ``lmeval_metric`` is a
bertjudge judge inside lm-eval (a filter and a metric; the task YAMLs in ``lmeval_tasks/``).
"""
