import pytest
from transformers import AutoTokenizer

from bertjudge.core.formats import Encoder, FormatError, JudgeFormat, with_option_texts
from bertjudge.core.records import normalize
from bertjudge.judges import backbones

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(backbones.resolve(MINILM))


def record(question="What is the capital of France?", candidate="Paris.", reference="Paris", category="other"):
    return normalize({"question": question, "candidate": candidate, "reference": reference, "category": category})


def decode(tokenizer, ids):
    return tokenizer.decode(ids)


def test_offline_backbone_resolves_to_the_installed_package():
    path = backbones.resolve(MINILM)
    assert path != MINILM and path.endswith("model")
    assert backbones.resolve("some/unknown-model") == "some/unknown-model"


def test_qcr_with_separators(tokenizer):
    enc = Encoder(tokenizer, JudgeFormat(order="QCR"))
    text = decode(tokenizer, enc.encode(record()))
    assert text == "[CLS] what is the capital of france? [SEP] paris. [SEP] paris [SEP]"


def test_cr_drops_the_question(tokenizer):
    text = decode(tokenizer, Encoder(tokenizer, JudgeFormat(order="CR")).encode(record()))
    assert text == "[CLS] paris. [SEP] paris [SEP]"


def test_marker_tokens_need_them_in_the_vocabulary(tokenizer):
    fmt = JudgeFormat(order="QCR", markers="markers")
    with pytest.raises(FormatError, match="lacks the format's marker tokens"):
        Encoder(tokenizer, fmt)
    tok = AutoTokenizer.from_pretrained(backbones.resolve(MINILM))
    tok.add_special_tokens({"additional_special_tokens": fmt.new_tokens})
    ids = Encoder(tok, fmt).encode(record())
    assert (
        decode(tok, ids) == "[CLS] <|question|> what is the capital of france? <|candidate|> paris. "
        "<|reference|> paris [SEP]"
    )


def test_answer_segment_carries_the_extracted_answer(tokenizer):
    enc = Encoder(tokenizer, JudgeFormat(order="QCAR"))
    text = decode(tokenizer, enc.encode(record(candidate="Let me think... so 3. Final answer: Lyon")))
    assert text.endswith("[SEP] lyon [SEP] paris [SEP]")
    text = decode(tokenizer, enc.encode(record(candidate="I am not sure.")))
    assert "[SEP] none found [SEP] paris [SEP]" in text


def test_answer_segment_without_the_last_number_fallback(tokenizer):
    expression = record(candidate="So it factors as (x+y+z)(x^2+y^2+z^2-xy-yz-xz)", reference="(x+y+z)(...)")
    with_fallback = Encoder(tokenizer, JudgeFormat(order="AR"))
    assert decode(tokenizer, with_fallback.encode(expression)) == "[CLS] 2 [SEP] ( x + y + z ) (... ) [SEP]"
    without = Encoder(tokenizer, JudgeFormat(order="AR", answer_last_number=False))
    assert decode(tokenizer, without.encode(expression)).startswith("[CLS] none found [SEP]")
    stated = record(candidate="We compute 3 + 4. Final answer: 7", reference="7")
    assert decode(tokenizer, without.encode(stated)) == "[CLS] 7 [SEP] 7 [SEP]"  # found by a pattern: kept
    assert JudgeFormat.from_dict(JudgeFormat(answer_last_number=False).to_dict()).answer_last_number is False


def test_answer_segment_with_the_concluding_statement(tokenizer):
    pairs = record(
        candidate="In conclusion, the solutions are $x=1$, $y=1$ and $x=3$, $y=2$.", reference="x=1, y=1 and x=3, y=2"
    )
    stated = Encoder(tokenizer, JudgeFormat(order="AR", answer_statement=True))
    assert decode(tokenizer, Encoder(tokenizer, JudgeFormat(order="AR")).encode(pairs)).startswith("[CLS] 2 [SEP]")
    assert decode(tokenizer, stated.encode(pairs)).startswith("[CLS] x = 1, y = 1 and x = 3, y = 2 [SEP]")
    marked = record(candidate="We compute 3 + 4 = 7, so a = 3, b = 4. Final answer: 7", reference="7")
    assert decode(tokenizer, stated.encode(marked)) == "[CLS] 7 [SEP] 7 [SEP]"  # a pattern found it: kept
    saved = JudgeFormat(answer_statement=True).to_dict()
    assert JudgeFormat.from_dict(saved).answer_statement is True
    del saved["answer_statement"]  # a judge.json written before the option existed
    assert JudgeFormat.from_dict(saved).answer_statement is False


def test_segment_truncation_keeps_reference_question_end_and_candidate_tail(tokenizer):
    fmt = JudgeFormat(order="QCR", max_length=64, question_max_tokens=8, candidate_head_tokens=4)
    enc = Encoder(tokenizer, fmt)
    question = " ".join(f"w{i}" for i in range(200)) + " which city is it?"
    candidate = "start " + "blah " * 300 + "so the final answer is Paris"
    ids = enc.encode(record(question=question, candidate=candidate, reference="Paris, France"))
    assert len(ids) == 64
    text = decode(tokenizer, ids)
    q, c, r = text.removeprefix("[CLS] ").removesuffix(" [SEP]").split(" [SEP] ")
    assert q.endswith("which city is it?") and "w0 " not in q  # the question keeps its end
    assert c.startswith("start") and c.endswith("final answer is paris")  # head and tail of the candidate
    assert r == "paris, france"  # the reference whole


def test_left_truncation_keeps_the_end_of_the_sequence(tokenizer):
    enc = Encoder(tokenizer, JudgeFormat(order="QCR", max_length=32, truncation="left"))
    ids = enc.encode(record(candidate="blah " * 100 + "end"))
    assert len(ids) == 32
    assert decode(tokenizer, ids).endswith("blah end [SEP] paris [SEP]")


def test_encode_many_matches_encode(tokenizer):
    enc = Encoder(tokenizer, JudgeFormat(order="QCAR", max_length=48))
    rows = [record(candidate="x " * n + "Final answer: 4") for n in (1, 30, 100)]
    assert enc.encode_many(rows) == [enc.encode(r) for r in rows]


def test_format_round_trip_and_mismatch():
    fmt = JudgeFormat(order="QCAR", markers="markers", max_length=128)
    assert JudgeFormat.from_dict(fmt.to_dict()) == fmt
    fmt.check_matches(JudgeFormat.from_dict(fmt.to_dict()), "judge")
    with pytest.raises(FormatError, match="format mismatch.*order"):
        JudgeFormat(order="CR", markers="markers", max_length=128).check_matches(fmt, "judge")
    with pytest.raises(FormatError, match="unknown format fields"):
        JudgeFormat.from_dict({"order": "QCR", "colour": "red"})


@pytest.mark.parametrize(
    "kwargs",
    [
        {"order": "QC"},
        {"order": "QR"},
        {"order": "QCRR"},
        {"order": "XCR"},
        {"markers": "tags"},
        {"truncation": "right"},
        {"max_length": 4},
    ],
)
def test_invalid_formats_are_refused(kwargs):
    with pytest.raises(FormatError):
        JudgeFormat(**kwargs)


@pytest.mark.parametrize("order", ["QCAR", "CRQ"])
def test_reference_token_type_marks_the_reference_segment(tokenizer, order):
    import torch

    enc = Encoder(tokenizer, JudgeFormat(order=order, reference_type=True))
    ids = enc.encode(record(question="Which city?", candidate="It is Lyon. Final answer: Lyon", reference="Paris"))
    types = enc.token_types(torch.tensor([ids]))[0].tolist()
    typed = tokenizer.decode([i for i, t in zip(ids, types) if t == 1])
    assert typed == "paris [SEP]"  # the reference and its closing separator are segment B


def test_reference_token_type_with_marker_tokens():
    import torch

    fmt = JudgeFormat(order="QCR", markers="markers", reference_type=True)
    tok = AutoTokenizer.from_pretrained(backbones.resolve(MINILM))
    tok.add_special_tokens({"additional_special_tokens": fmt.new_tokens})
    enc = Encoder(tok, fmt)
    ids = enc.encode(record())
    types = enc.token_types(torch.tensor([ids]))[0].tolist()
    assert tok.decode([i for i, t in zip(ids, types) if t == 1]) == "<|reference|> paris [SEP]"


def test_answer_only_format(tokenizer):
    enc = Encoder(tokenizer, JudgeFormat(order="AR", max_length=32))
    assert (
        tokenizer.decode(enc.encode(record(candidate="blah " * 50 + "Final answer: Paris")))
        == "[CLS] paris [SEP] paris [SEP]"
    )


def test_answer_value_gives_a_number_in_another_form_its_canonical_value(tokenizer):
    fmt = JudgeFormat(order="AR", answer_value=True)
    enc = Encoder(tokenizer, fmt)
    assert (
        decode(tokenizer, enc.encode(record(candidate="Final answer: 1,875", reference="1875")))
        == "[CLS] 1, 875 = 1875 [SEP] 1875 [SEP]"
    )
    assert decode(
        tokenizer, enc.encode(record(candidate="So it is \\boxed{\\frac{57}{2}}", reference="28.5"))
    ).startswith("[CLS] \\ frac { 57 } { 2 } = 28. 5 [SEP]")
    for canonical_or_not_a_number in ("Final answer: 1875", "Final answer: 12 cm", "Final answer: Paris"):
        rec = record(candidate=canonical_or_not_a_number, reference="x")
        assert "=" not in decode(tokenizer, enc.encode(rec))
    assert "=" not in decode(
        tokenizer,
        Encoder(tokenizer, JudgeFormat(order="AR")).encode(record(candidate="Final answer: 1,875", reference="1875")),
    )
    assert JudgeFormat.from_dict(fmt.to_dict()) == fmt != JudgeFormat(order="AR")


@pytest.mark.parametrize(
    "question, references, expected",
    [
        ("Capital of Portugal?\n1) Havana\n2) Lisbon\n\nAnswer with the label.", ["2"], ["2) Lisbon"]),
        ("Capital of Portugal?\n- **A**: Havana\n- **B**: Lisbon", ["B", "lisbon"], ["B) Lisbon"]),  # alias dropped
        ("Which is largest? (A) 3 (B) 9 (C) 5", ["(b)"], ["B) 9"]),
        ("Which is largest?\nA. 3\nB. 9", ["D"], ["D"]),  # not an option: kept as it is
        ("What is 2 + 3?", ["5"], ["5"]),  # no options
    ],
)
def test_with_option_texts(question, references, expected):
    assert with_option_texts(references, question) == expected


def test_reference_options_expand_multiple_choice_references_only(tokenizer):
    fmt = JudgeFormat(order="AR", reference_options=True)
    enc = Encoder(tokenizer, fmt)
    mc = record(question="Capital of France?\nA. Lyon\nB. Paris", candidate="Final answer: A) Paris", reference="B")
    assert decode(tokenizer, enc.encode(mc)) == "[CLS] a ) paris [SEP] b ) paris [SEP]"
    math = {
        **record(question="Pick one:\n1) add\n2) subtract\nWhat is 1 + 1?", candidate="2", reference="2"),
        "category": "open_math",
    }
    assert decode(tokenizer, enc.encode(math)) == "[CLS] 2 [SEP] 2 [SEP]"
    assert JudgeFormat.from_dict(fmt.to_dict()) == fmt != JudgeFormat(order="AR")


def test_ranked_references_and_expansion():
    from bertjudge.core.formats import expand_references, ranked_references

    refs = ["Malignant neoplasm", "Cancer (disease)", "cancer", "Tumour virus", "Cancers"]
    assert ranked_references("She died of cancer in 1953.", refs, 2) == ["Cancer (disease)", "cancer"]
    assert ranked_references("A malignant tumour.", refs, 2) == ["Malignant neoplasm", "Tumour virus"]
    assert ranked_references("x", ["Paris", "paris", "PARIS."], 4) == ["Paris"]  # one per normal form
    recs = [
        {"candidate": "Paris.", "references": ["Lutetia", "Paris", "City of Light"]},
        {"candidate": "Rome", "references": ["Rome"]},
    ]
    flat, owner = expand_references(recs, JudgeFormat(references="each", max_references=2))
    assert [r["references"] for r in flat] == [["Paris"], ["Lutetia"], ["Rome"]] and owner == [0, 0, 1]
    assert expand_references(recs, JudgeFormat()) == (recs, [0, 1])


def test_each_reference_scores_the_best_match(tiny_backbone):
    import numpy as np
    import torch

    from bertjudge.core.records import normalize
    from bertjudge.judges.encoder import EncoderJudge

    judge = EncoderJudge(backbone=tiny_backbone, format=JudgeFormat(references="each", max_references=3))
    rec = normalize(
        {"question": "Capital of France?", "candidate": "It is Paris.", "references": ["Lutetia", "Paris"], "label": 1}
    )
    singles = [normalize({**rec, "id": None, "references": [r]}) for r in rec["references"]]
    both = judge.logits_records([rec])[0]
    assert np.isclose(both, judge.logits_records(singles).max(), atol=1e-5)
    # training reaches the sequence of the best reference only, through the max
    from bertjudge.core.collate import Collator

    batch = Collator(judge.encoder)([rec, singles[0]])
    assert batch["input_ids"].shape[0] == 3 and batch["owner"].tolist() == [0, 0, 1]
    logits = judge.record_logits(batch)
    assert logits.shape == (2,)
    logits.sum().backward()
    grads = [p.grad for p in judge.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)


def test_open_qa_answer_segment_is_the_marked_answer_or_the_first_sentence(tokenizer):
    enc = Encoder(tokenizer, JudgeFormat(order="ARQC"))
    para = {
        "question": "Who created the Chipmunks?",
        "references": ["David Seville"],
        "category": "open_qa",
        "candidate": "Ross Bagdasarian Sr. (1919-1972) created them. He used the name David Seville.",
    }
    assert enc.texts(para)["answer"] == "Ross Bagdasarian Sr. (1919-1972) created them."  # not the year 1972
    assert enc.texts({**para, "candidate": "Thinking...\nFinal answer: David Seville"})["answer"] == "David Seville"
    assert enc.texts({**para, "category": "other"})["answer"] == "1972"  # other categories: as before


def test_training_batches_read_the_best_matching_reference_only(tiny_backbone):
    from bertjudge.core.collate import Collator
    from bertjudge.core.records import normalize
    from bertjudge.judges.encoder import EncoderJudge

    judge = EncoderJudge(backbone=tiny_backbone, format=JudgeFormat(references="each", max_references=3))
    rec = normalize(
        {
            "question": "Capital of France?",
            "candidate": "It is Paris.",
            "references": ["Lutetia", "Paris", "City of Light"],
            "label": 1,
        }
    )
    batch = Collator(judge.encoder, references=1)([rec])
    assert "owner" not in batch and batch["input_ids"].shape[0] == 1
    text = judge.tokenizer.decode(batch["input_ids"][0])
    assert "paris" in text.split("[SEP]")[-2] and "lutetia" not in text  # the reference segment holds Paris


def test_answer_noise_replaces_the_answer_segment_on_a_share_of_training_rows(tokenizer):
    from bertjudge.core.collate import ANSWER_NOISE_KINDS, Collator
    from bertjudge.core.formats import NO_ANSWER

    class Encoded:  # the collator's view of a judge: its Encoder
        def __init__(self, fmt):
            self.encoder = Encoder(tokenizer, fmt)
            self.format, self.pad_id = fmt, self.encoder.pad_id

        def __getattr__(self, name):
            return getattr(self.encoder, name)

    rows = [
        normalize(
            {"question": f"What is {i} + {i}?", "candidate": f"We add.\nFinal answer: {2 * i}", "reference": str(2 * i)}
        )
        for i in range(400)
    ]
    encoder = Encoded(JudgeFormat(order="ARQC"))
    noisy = Collator(encoder, answer_noise=0.5, seed=3)
    answers = noisy.noisy_answers(rows)
    changed = [(row, a) for row, a in zip(rows, answers) if a is not None]
    assert 0.4 < len(changed) / len(rows) < 0.6  # about the share asked
    kinds = {
        "absent": sum(a == NO_ANSWER for _, a in changed),
        "last-line": sum(a == row["candidate"].splitlines()[-1] for row, a in changed),
    }
    kinds["other-row"] = len(changed) - sum(kinds.values())
    assert set(kinds) == set(ANSWER_NOISE_KINDS) and min(kinds.values()) > 30  # each kind, about a third
    other = [(row, a) for row, a in changed if a not in (NO_ANSWER, row["candidate"].splitlines()[-1])]
    assert all(a != row["references"][0] for row, a in other)  # another row's answer, not this row's
    assert noisy.noisy_answers(rows) == answers  # the same rows, the same way, every epoch
    assert Collator(encoder, answer_noise=0.5, seed=4).noisy_answers(rows) != answers  # the seed decides
    absent = next(row for row, a in changed if a == NO_ANSWER)  # a choice that does not depend on the batch
    assert tokenizer.decode(noisy([absent])["input_ids"][0]).startswith("[CLS] none found [SEP]")  # A first in ARQC
    clean = Collator(encoder)(rows[:3])["input_ids"]
    assert tokenizer.decode(clean[1]).startswith("[CLS] 2 [SEP]")  # no noise: the extractor's answer
    assert Collator(Encoded(JudgeFormat(order="QCR")), answer_noise=1.0).answer_noise == 0  # no A segment: no noise
    with pytest.raises(ValueError, match="answer_noise"):
        Collator(encoder, answer_noise=1.5)
