"""Teachers: rules, imported human labels and an LLM judge (a scripted backend), with provenance."""

from __future__ import annotations

import json

import pytest

from bertjudge.cli.main import main
from bertjudge.core.records import RecordError, normalize, read_records, write_records
from bertjudge.judges.backends import Backend
from bertjudge.pipeline.label import LLMTeacher, label_records, make_teacher, report


def rec(task, category, candidate, references, **extra):
    return normalize(
        {
            "task": task,
            "category": category,
            "question": f"{task} question",
            "candidate": candidate,
            "references": references,
            "candidate_model": "m",
            **extra,
        }
    )


MATH = [
    rec("gsm8k", "open_math", "3 * 12 - 5 = 31.\nFinal answer: 31", ["31"]),
    rec("math", "open_math", "Halving gives $\\boxed{0.5}$.", ["\\frac{1}{2}"]),
    rec("math", "open_math", "The answer is $\\boxed{\\frac{2}{3}}$", ["\\frac{1}{2}"]),
    rec("gsm8k", "open_math", "I am not sure.", ["31"]),
]


def labels(teacher, records):
    return [r["label"] for r in label_records(teacher, records)]


def test_math_verify_and_exact_match():
    assert labels(make_teacher("rule:math-verify"), MATH) == [1, 1, 0, 0]
    assert labels(make_teacher("rule:exact-match"), MATH) == [1, 0, 0, 0]
    done = label_records(make_teacher("rule:math-verify"), MATH)
    assert {r["label_source"] for r in done} == {"rule:math-verify"}
    assert done[0]["meta"]["labelling"]["answer"] == "31" and "timestamp" in done[0]["meta"]["labelling"]
    assert [r["meta"]["labelling"]["invalid"] for r in done] == [False, False, False, True]
    summary = report(done)
    assert summary["invalid_rate"] == 0.25
    assert summary["tasks"]["gsm8k"] == {"rows": 2, "labelled": 2, "positive": 1, "invalid": 1}


def test_regex_teacher_by_category():
    records = [
        rec("arc_easy", "multiple_choice", "Final answer: (B)", ["B"]),
        rec("arc_easy", "multiple_choice", "Final answer: C", ["B"]),
        rec("squad_v2", "context_extraction", "Final answer: in 1854", ["1854", "in 1854"]),
        rec("squad_v2", "context_extraction", "Final answer: the harbour authority", ["1854"]),
    ]
    assert labels(make_teacher("rule:regex"), records) == [1, 0, 1, 0]


def test_human_labels(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text(
        json.dumps({"id": MATH[0]["id"], "label": 0}) + "\n" + json.dumps({"id": MATH[1]["id"], "label": True}) + "\n"
    )
    done = label_records(make_teacher("human", labels=str(path)), MATH)
    assert [r["label"] for r in done] == [0, 1, None, None]
    assert report(done)["invalid_rate"] == 0.5 and done[0]["label_source"] == "human"
    (tmp_path / "labels.json").write_text(json.dumps({MATH[2]["id"]: 1}))
    assert labels(make_teacher("human", labels=str(tmp_path / "labels.json")), MATH) == [None, None, 1, None]
    path.write_text(json.dumps({"id": "x", "label": 0.5}) + "\n")
    with pytest.raises(RecordError, match="labels.jsonl:1"):
        make_teacher("human", labels=str(path))
    with pytest.raises(ValueError, match="--labels"):
        make_teacher("human")
    with pytest.raises(ValueError, match="unknown"):
        make_teacher("rule:vibes")


class ScriptedBackend(Backend):
    kind = "scripted"

    def __init__(self, outputs):
        self.outputs, self.seen = outputs, []

    def config(self):
        return {"kind": self.kind, "model": "scripted"}

    def complete(self, conversations, max_tokens):
        self.seen += conversations
        return self.outputs[: len(conversations)]


def test_llm_teacher_provenance_and_invalid_outputs():
    backend = ScriptedBackend(["Same number. Verdict: True", "It rambles without a verdict", "Verdict: False"])
    teacher = LLMTeacher("nvidia/Llama-3_3-Nemotron-Super-49B-v1_5", revision="abc123", backend=backend)
    done = label_records(teacher, MATH[:3])
    assert [r["label"] for r in done] == [1, None, 0]
    assert done[0]["label_source"] == "llm:nvidia/Llama-3_3-Nemotron-Super-49B-v1_5@bertjudge-v1"
    info = done[0]["meta"]["labelling"]
    assert info["revision"] == "abc123" and info["prompt_version"] == "bertjudge-v1"
    assert info["decoding"]["mode"] == "reasoning" and info["output"].endswith("Verdict: True")
    assert "31" in backend.seen[0][0]["content"]  # the teacher saw the candidate and the reference
    assert report(done)["invalid_rate"] == pytest.approx(1 / 3)


def test_cli_labels_a_folder(tmp_path, capsys):
    write_records(tmp_path / "in" / "a.jsonl", MATH[:2])
    write_records(tmp_path / "in" / "b.parquet", MATH[2:])
    assert (
        main(
            [
                "label",
                "--teacher",
                "rule:math-verify",
                "--input",
                str(tmp_path / "in"),
                "--output",
                str(tmp_path / "out"),
            ]
        )
        == 0
    )
    assert [r["label"] for r in read_records(tmp_path / "out" / "a.jsonl")] == [1, 1]
    assert [r["label"] for r in read_records(tmp_path / "out" / "b.parquet")] == [0, 0]
    summary = json.loads((tmp_path / "out" / "label_report.json").read_text())
    assert summary["rows"] == 4 and summary["invalid_rate"] == 0.25
    assert "invalid-output rate 25.0%" in capsys.readouterr().out
    assert main(["label", "--teacher", "human", "--input", str(tmp_path / "in"), "--output", str(tmp_path / "o2")]) == 2


def test_label_file_resumes_after_an_interruption(tmp_path):
    from bertjudge.pipeline.label import label_file

    class Interrupted(ScriptedBackend):
        def complete(self, conversations, max_tokens):
            if len(self.seen) == 2:
                raise KeyboardInterrupt
            return super().complete(conversations, max_tokens)

    path = tmp_path / "out" / "math.jsonl"
    with pytest.raises(KeyboardInterrupt):
        label_file(LLMTeacher("t", backend=Interrupted(["Verdict: True"])), MATH, path, chunk_size=1)
    assert not path.exists() and len(path.with_name("math.jsonl.partial.jsonl").read_text().splitlines()) == 1 + 2
    rest = ScriptedBackend(["Verdict: False"])
    rows = label_file(LLMTeacher("t", backend=rest), MATH, path, chunk_size=1)
    assert [r["label"] for r in rows] == [1, 1, 0, 0] and len(rest.seen) == 2  # two from the partial file
    assert read_records(path) == rows and not path.with_name("math.jsonl.partial.jsonl").exists()
    assert label_file(LLMTeacher("t", backend=ScriptedBackend([])), MATH, path) == rows  # nothing left to do
    with pytest.raises(RecordError, match="another teacher"):
        label_file(make_teacher("rule:math-verify"), MATH, path)


def test_teachers_and_backends_are_resolved_through_their_registries():
    from bertjudge.judges import backends
    from bertjudge.pipeline.label import TEACHERS

    with pytest.raises(ValueError, match=r"unknown teacher kind .oracle. in .oracle:x.*Available: human, llm, rule"):
        make_teacher("oracle:x")
    with pytest.raises(ValueError, match="Available: openai, transformers, vllm"):
        backends.make_backend({"kind": "scripted"})
    assert set(TEACHERS) == {"rule", "human", "llm"}
    try:
        assert backends.register_backend(ScriptedBackend) is ScriptedBackend
        built = backends.make_backend({"kind": "scripted", "outputs": ["Verdict: True"]})
        assert isinstance(built, ScriptedBackend) and built.batch_unit is None
    finally:
        backends.BACKENDS.pop("scripted", None)
