"""The model card of an exported judge (``huggingface_hub.ModelCard`` rendered from the package's template), its
metadata (the Hub widget off, the head's labels), and its "transformers alone" snippet: run as written in the
card, it reproduces ``Judge.score``."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch
from huggingface_hub import ModelCard

from bertjudge.core.formats import JudgeFormat, judge_inputs
from bertjudge.core.records import normalize
from bertjudge.judges.encoder import LABELS, EncoderJudge
from bertjudge.judges.loading import Judge
from bertjudge.judges.model_card import TEMPLATE, model_card

METRICS = {
    "test/acc": 0.8125,
    "real_test/acc": 0.71,
    "real_test/acc/category=open_math": 0.75,
    "real_test/acc/category=multiple_choice": 0.625,
    "real_test/ece": 0.05,
}
FORMATS = {
    "plain": JudgeFormat(max_length=48),  # QCR, separators, joined references; short: truncation is exercised
    "extracted": JudgeFormat(
        order="QCAR",
        markers="markers",
        references="each",
        max_references=2,
        reference_options=True,
        reference_type=True,
        answer_value=True,
        max_length=64,
    ),
}
ROWS = [
    {"question": "What is 2+3?", "candidate": "2+3 = 5. Final answer: 5", "references": ["5"]},
    {
        "question": "Which is blue?\nA) grass\nB) sky\nC) sun",
        "candidate": "The sky is blue, so the answer is B.",
        "references": ["B"],
        "category": "multiple_choice",
    },
    {
        "question": "Who wrote Hamlet?",
        "candidate": "It was written by Christopher Marlowe, I believe. " * 6,
        "references": ["William Shakespeare", "Shakespeare", "the Bard"],
        "category": "open_qa",
    },
    {"question": None, "candidate": "The total is 1,875 dollars.", "references": ["1875"], "category": "open_math"},
]


@pytest.fixture(scope="module", params=sorted(FORMATS))
def exported(request, tiny_backbone, tmp_path_factory):
    fmt = FORMATS[request.param]
    judge = EncoderJudge(
        backbone=tiny_backbone,
        format=fmt,
        num_labels=2 if request.param == "extracted" else 1,
        temperature=1.5,
        bias=0.21,
        threshold=0.42,
    )
    torch.manual_seed(1)
    with torch.no_grad():  # random weights large enough that the scores of the rows differ
        for weight in judge.model.parameters():
            if weight.ndim == 2:
                weight.normal_(std=0.3)
    judge.provenance = {
        "name": f"tiny-{request.param}",
        "backbone": "sentence-transformers/all-MiniLM-L6-v2",
        "license": "apache-2.0",
        "datasets": ["bertjudge/real-outputs"],
    }
    folder = judge.export(tmp_path_factory.mktemp("card") / "judge", metrics=METRICS)
    return request.param, folder


def snippet_of(card: str) -> str:
    """The python block of the card's "Use with transformers alone" section."""
    section = card.split("## Use with transformers alone", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, section
    return blocks[0]


def test_card_is_a_model_card_with_metadata_and_results(exported):
    kind, folder = exported
    card = ModelCard.load(folder / "README.md")  # what the Hub parses
    data = card.data
    assert data.base_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert data.license == "apache-2.0" and data.datasets == ["bertjudge/real-outputs"]
    assert "bertjudge" in data.tags and data.library_name == "transformers"
    assert data.inference is False  # the Hub widget would show raw, uncalibrated logits
    labels = {"plain": {0: "correct"}, "extracted": {0: "incorrect", 1: "correct"}}[kind]  # 1 logit, 2 logits
    assert data.id2label == labels and data.label2id == {name: i for i, name in labels.items()}
    model_config = json.loads((folder / "config.json").read_text())  # what export wrote: the card says the same
    assert model_config["id2label"] == {str(i): name for i, name in labels.items()}
    assert model_config["label2id"] == data.label2id and LABELS[len(labels)] == labels
    results = {(r.dataset_type, r.dataset_config): r.metric_value for r in data.eval_results}
    assert results == {
        ("test", None): 0.8125,
        ("real_test", None): 0.71,
        ("real_test", "open_math"): 0.75,
        ("real_test", "multiple_choice"): 0.625,
    }
    text = card.text
    assert "| real-output test | category=open_math | acc | 0.7500 |" in text
    assert f"| order | `{FORMATS[kind].order}` |" in text
    assert "Judge.load(" in text
    needs = "This format needs bertjudge's answer extractor" in text
    assert needs == ("A" in FORMATS[kind].order)
    assert ("No answer extractor needed" in text) == (not needs)


def test_card_snippet_reproduces_judge_score(exported, capsys):
    kind, folder = exported
    code = snippet_of((folder / "README.md").read_text())
    assert "judge_inputs" in code and "AutoModelForSequenceClassification" in code
    code, n = re.subn(r'^model_id = ".*?"', f"model_id = {str(folder)!r}", code, flags=re.M)
    assert n == 1
    namespace: dict = {}
    exec(compile(code, "model-card-snippet", "exec"), namespace)  # the card's code, as a user would run it
    assert "P(correct) = " in capsys.readouterr().out
    judge = Judge.load(str(folder))
    judge.set_precision("fp32")  # the snippet runs transformers in fp32 (auto may take bf16 on this CPU)
    records = [normalize(dict(row)) for row in ROWS]
    details = judge.details(records)
    expected = np.array([d["score"] for d in details])
    got = np.array(
        [namespace["p_correct"](r["question"], r["candidate"], r["references"], r.get("category")) for r in ROWS]
    )
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    assert expected.std() > 1e-3 and ((expected > 0.01) & (expected < 0.99)).all()  # distinct, unsaturated
    # Judge.score (no categories) is what the snippet gives without one
    plain = judge.score([r["question"] for r in ROWS], [r["candidate"] for r in ROWS], [r["references"] for r in ROWS])
    np.testing.assert_allclose(
        [namespace["p_correct"](r["question"], r["candidate"], r["references"]) for r in ROWS], plain, rtol=0, atol=1e-6
    )
    threshold = namespace["config"]["threshold"]
    assert threshold == 0.42 and [p >= threshold for p in got] == [d["verdict"] for d in details]


def test_judge_inputs_reads_each_reference_apart(tiny_backbone):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_backbone)
    each = JudgeFormat(references="each", max_references=2).to_dict()  # a judge.json's format
    seqs = judge_inputs(tokenizer, each, "Who wrote Hamlet?", "Shakespeare did.", ["Marlowe", "Shakespeare", "Bacon"])
    assert len(seqs) == 2 and seqs[0] != seqs[1]
    decoded = tokenizer.decode(seqs[0])
    assert decoded.startswith("[CLS]") and "shakespeare" in decoded.split("[SEP]")[-2]  # the best reference first
    joined = judge_inputs(tokenizer, JudgeFormat(), "Q?", "A.", ["x", "y"])
    assert len(joined) == 1 and "x | y" in tokenizer.decode(joined[0])


def test_card_of_a_judge_without_a_classifier_says_so():
    config = {
        "class": "bertjudge.judges.generative.GenerativeJudge",
        "format": JudgeFormat().to_dict(),
        "threshold": 0.5,
        "temperature": 1.0,
        "provenance": {"name": "gen", "backbone": "/tmp/local-lm"},
    }
    card = ModelCard(model_card(config))
    assert "is not a sequence classifier" in card.text and "```python\nimport json" not in card.text
    assert card.data.inference is False and card.data.to_dict().get("id2label") is None  # no classification head
    assert card.data.base_model is None and card.data.eval_results is None  # a local path is no Hub base model
    assert "No evaluation results were recorded" in card.text


def test_card_text_comes_from_the_template_file():
    """The card's words live in the template shipped with the package (bertjudge/judges/), not in the code."""
    assert TEMPLATE.is_file() and TEMPLATE.parent.name == "judges"
    template = TEMPLATE.read_text()
    config = {"class": "x.EncoderJudge", "format": JudgeFormat().to_dict(), "threshold": 0.5, "temperature": 1.0}
    card = model_card(config, {"architectures": ["BertForSequenceClassification"], "id2label": {"0": "correct"}})
    for heading in re.findall(r"^## .+$", template, re.M):
        assert heading in card
    assert ModelCard(card).data.id2label == {0: "correct"}
    causal = model_card(config, {"architectures": ["LlamaForCausalLM"], "id2label": {"0": "LABEL_0"}})
    assert "id2label" not in ModelCard(causal).data.to_dict()  # labels only where the model has a classification head
