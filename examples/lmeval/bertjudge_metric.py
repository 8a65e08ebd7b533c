"""lm-eval resolves ``!function bertjudge_metric.bertjudge_acc`` in a task YAML to this file's name."""

from bertjudge.pipeline.lmeval_metric import bertjudge_acc

__all__ = ["bertjudge_acc"]
