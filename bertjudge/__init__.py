"""bertjudge: judge LLM answers against references with small, fast, calibrated models."""

from bertjudge.core.version import __version__

__all__ = ["Judge", "__version__"]


def __getattr__(name):  # keep `import bertjudge` light: torch loads only when a judge is used
    if name == "Judge":
        from bertjudge.judges.loading import Judge

        return Judge
    raise AttributeError(name)
