"""bertjudge: judge LLM answers against references with small, fast, calibrated models."""

__version__ = "0.1.0"


def __getattr__(name):  # keep `import bertjudge` light: torch loads only when a judge is used
    if name == "Judge":
        from bertjudge.api import Judge

        return Judge
    raise AttributeError(name)
