"""``score(questions, candidates, references)`` for every judge: parallel lists in, P(correct) out."""

from __future__ import annotations

import numpy as np

from bertjudge.records import normalize


class ScoresLists:
    """Gives a judge with ``score_records(records, batch_size)`` the list form of the Judge API."""

    def score(self, questions, candidates, references, batch_size: int = 32) -> np.ndarray:
        """P(correct) for parallel lists; a reference may be a string or a list of acceptable answers."""
        if not len(questions) == len(candidates) == len(references):
            raise ValueError("questions, candidates and references must have the same length")
        records = [normalize({"question": q, "candidate": c, "references": r}, f"<item {i}>")
                   for i, (q, c, r) in enumerate(zip(questions, candidates, references))]
        return self.score_records(records, batch_size)
