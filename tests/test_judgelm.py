"""The JudgeLM-style baseline: ``PromptedJudge`` in ``score10`` mode (JudgeLM's prompt shape, a 1–10 score,
P(correct) = (score − 1) / 9, a threshold fitted on labelled rows), through the transformers backend with a
tiny random Llama and the real SmolLM2 tokenizer; export -> ``Judge.load`` -> ``evaluate``; bench's JudgeLM rows."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from cli_run import evaluate
from test_generative import make_tiny_causal_lm, smollm2_tokenizer, toy_records

from bertjudge.core.records import write_records
from bertjudge.evaluation import bench, bench_flops
from bertjudge.judges.backends import PromptedJudge, TransformersBackend
from bertjudge.judges.loading import Judge
from bertjudge.judges.prompt import (
    PROMPT_VERSION,
    SCORE_PROMPT_VERSION,
    SCORE_TOKENS,
    parse_score,
    prompt_text,
    score_to_probability,
)

CHOICES = [*(str(d) for d in range(1, 10)), "?", "x"]  # what the scoring LM answers: a score, or nothing readable


@pytest.fixture(scope="module")
def tokenizer():
    return smollm2_tokenizer()


@pytest.fixture(scope="module")
def scoring_lm(tmp_path_factory, tokenizer):
    """A tiny random Llama whose first generated token is one of ``CHOICES`` and depends on the prompt: its LM
    head is rebuilt from the last hidden states of the score10 prompts of ``toy_records(16)``, so that what
    all prompts share favours no choice (the choice follows what differs between prompts) and every choice
    beats every other token."""
    folder = make_tiny_causal_lm(tmp_path_factory.mktemp("scoring-lm"), tokenizer, "llama")
    backend = TransformersBackend(folder, device="cpu", batch_size=8)
    seen = []
    hook = backend.model.lm_head.register_forward_hook(lambda _m, args, _out: seen.append(args[0][:, -1].detach()))
    PromptedJudge(backend, mode="score10", max_new_tokens=1).details(toy_records(16))
    hook.remove()
    hidden = torch.cat(seen)
    mean = hidden.mean(0)
    rows = torch.randn(len(CHOICES), hidden.shape[1], generator=torch.Generator().manual_seed(0))
    rows -= (rows @ mean)[:, None] * mean / mean.dot(mean)  # nothing for what every prompt shares
    rows /= ((hidden - mean) @ rows.T).std()
    ids = [tokenizer.convert_tokens_to_ids(c) for c in CHOICES]
    with torch.no_grad():
        backend.model.lm_head.weight.zero_()
        backend.model.lm_head.weight[ids] = rows + 10 * mean / mean.dot(mean)
    backend.model.save_pretrained(folder)
    return folder


def score10_judge(folder, **kwargs) -> PromptedJudge:
    return PromptedJudge(TransformersBackend(folder, device="cpu", batch_size=8), mode="score10", **kwargs)


# --- the prompt ---------------------------------------------------------------------------------------
def test_the_prompt_has_judgelm_shape_and_its_own_version(scoring_lm):
    judge = score10_judge(scoring_lm)
    record = toy_records(1)[0]
    [message] = judge.conversation(record)
    text = message["content"]
    assert message["role"] == "user"
    blocks = [
        f"[Question]\n{record['question']}",
        f"[Reference Answer]\n{record['references'][0]}",
        f"[The Start of Assistant's Answer]\n{record['candidate']}\n[The End of Assistant's Answer]",
    ]
    positions = [text.index(block) for block in blocks]
    assert positions == sorted(positions)  # question, reference, answer, as JudgeLM orders them
    assert text.startswith("You are a helpful and precise assistant for checking the quality of the answer.")
    assert "on a scale of 1 to 10" in text and "[System]" in text
    assert text.rstrip().endswith("Please output a single line containing only the score, a whole number from 1 to 10.")
    assert text.index("[System]") > positions[-1]
    rendered = judge.backend.tokenizer.apply_chat_template([message], tokenize=False, add_generation_prompt=True)
    assert blocks[2] in rendered and rendered.endswith("<|im_start|>assistant\n")
    # the extracted final answer, when the order asks for it; the other modes keep their prompt
    with_answer = PromptedJudge(judge.backend, mode="score10", order="QRCA").conversation(record)[0]["content"]
    assert "[Final Answer of the Assistant (extracted by rules, may be missing)]" in with_answer
    texts = {"question": "q", "reference": "r", "candidate": "c"}
    assert "[Question]" not in prompt_text(texts, ["question", "reference", "candidate"], "reasoning")
    with pytest.raises(ValueError, match="mode must be one of"):
        prompt_text(texts, ["question"], "score5")
    assert judge.max_new_tokens == SCORE_TOKENS and PromptedJudge(judge.backend).max_new_tokens == 512
    assert judge.name.endswith(f"@{SCORE_PROMPT_VERSION}/score10")
    assert judge.config()["prompt_version"] == SCORE_PROMPT_VERSION != PROMPT_VERSION


# --- the parser -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "output,expected",
    [
        ("7", 7.0),
        ("10", 10.0),
        ("1", 1.0),
        ("8.5", 8.5),
        ("  **8**", 8.0),
        ("9\nThe answer matches the reference.", 9.0),
        ("7 8", 7.0),  # JudgeLM's pairwise line: the first score
        ("Score: 7/10", 7.0),
        ("score: 7 / 10", 7.0),
        ("Rating: [[8]]", 8.0),
        ("Score = 10", 10.0),
        ("score (1-10): 8", 8.0),
        ("The answer is wrong.\nScore: 2", 2.0),
        ("Score: 3. Actually, Score: 6", 6.0),
        ("I would rate it 9 out of 10.", 9.0),
        ("I give it a 7/10.", 7.0),
        ("8/10", 8.0),
        ("Score: 7.5.", 7.5),
        ("<think>first 2, then</think>\n6", 6.0),
        # no score
        (None, None),
        ("", None),
        ("none", None),
        ("rating: ten", None),
        ("The answer is correct.", None),
        ("<think>still thinking about 7", None),
        ("3 apples", None),
        ("5%", None),
        ("2024 was the year", None),
        ("It scored 1 point in 2 tries", None),
        # another scale or out of range
        ("3/5", None),
        ("Score: 3/5", None),
        ("0", None),
        ("11", None),
        ("Score: 100", None),
        ("10.5", None),
        ("1.5.2", None),
    ],
)
def test_parse_score(output, expected):
    assert parse_score(output) == expected


def test_score_to_probability():
    assert score_to_probability(1) == 0.0 and score_to_probability(10) == 1.0
    assert score_to_probability(5.5) == pytest.approx(0.5)
    assert math.isnan(score_to_probability(None))
    values = [score_to_probability(s) for s in range(1, 11)]
    assert values == sorted(values) and len(set(values)) == 10


# --- judging with a tiny LM ---------------------------------------------------------------------------
def test_details_read_the_generated_score(scoring_lm):
    judge = score10_judge(scoring_lm, max_new_tokens=1)
    records = toy_records(16)
    rows = judge.details(records)
    assert len(rows) == 16
    for row in rows:
        assert row["output"] in CHOICES and row["rating"] == parse_score(row["output"])
        if row["rating"] is None:
            assert row["unparsed"] and row["verdict"] is None and math.isnan(row["score"])
        else:
            assert not row["unparsed"] and row["score"] == pytest.approx((row["rating"] - 1) / 9)
            assert row["verdict"] == (row["score"] >= judge.threshold)
    ratings = [row["rating"] for row in rows]
    assert None in ratings and len({r for r in ratings if r is not None}) >= 3, ratings  # the constructed model varies
    np.testing.assert_array_equal(judge.score_records(records), [row["score"] for row in rows])


def test_fit_threshold_maximizes_accuracy_on_the_read_rows(scoring_lm):
    judge = score10_judge(scoring_lm, max_new_tokens=1)
    records = toy_records(16, seed=3)
    scores = judge.score_records(records)
    labels = np.array([r["label"] for r in records])
    read = ~np.isnan(scores)
    threshold, accuracy = judge.fit_threshold(records)
    assert judge.threshold == threshold
    assert accuracy == pytest.approx(((scores[read] >= threshold) == labels[read]).mean())
    for cut in [*np.unique(scores[read]), *(np.unique(scores[read]) + 1e-9), 0.0, 0.5, 1.01]:
        assert accuracy >= ((scores[read] >= cut) == labels[read]).mean()
    assert [row["verdict"] for row in judge.details(records) if not row["unparsed"]] == list(scores[read] >= threshold)
    with pytest.raises(ValueError, match="needs labelled records"):
        judge.fit_threshold([{**records[0], "label": None}])


def test_export_load_and_evaluate(scoring_lm, tmp_path):
    judge = score10_judge(scoring_lm, max_new_tokens=1)
    threshold, _ = judge.fit_threshold(toy_records(16, seed=3))  # on "val" rows
    folder = judge.export(tmp_path / "judgelm")
    saved = json.loads((folder / "judge.json").read_text())
    assert saved["mode"] == "score10" and saved["prompt_version"] == SCORE_PROMPT_VERSION
    assert saved["threshold"] == threshold and saved["max_new_tokens"] == 1
    loaded = Judge.load(str(folder))
    assert isinstance(loaded, PromptedJudge) and loaded.config() == judge.config()
    test = toy_records(12, seed=5)
    details = loaded.details(test)
    assert [d["output"] for d in details] == [d["output"] for d in judge.details(test)]
    data = write_records(tmp_path / "test.jsonl", test)
    evaluate(data, [str(folder), "regex"], tmp_path / "report", "--bootstrap", "10")
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    [key] = [k for k in report["judges"] if k != "regex"]
    result = report["judges"][key]
    assert result["threshold"] == pytest.approx(threshold)
    unparsed = np.mean([d["unparsed"] for d in details])
    assert result["overall"]["unparsed_rate"] == pytest.approx(unparsed)
    verdicts = np.array([d["verdict"] is True for d in details])
    labels = np.array([r["label"] for r in test])
    assert result["overall"]["accuracy"] == pytest.approx((verdicts == labels).mean())
    assert key in (tmp_path / "report" / "report.md").read_text()
    # a folder written with another version of the JudgeLM prompt is refused
    saved["prompt_version"] = PROMPT_VERSION
    (folder / "judge.json").write_text(json.dumps(saved))
    with pytest.raises(ValueError, match="made with prompt 'bertjudge-v1'.*'judgelm-v1' in 'score10' mode"):
        Judge.load(str(folder))


# --- bench --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key,published", [("judgelm-7b", 6.74e9), ("judgelm-13b", 13.02e9)])
def test_judgelm_architectures_have_the_published_sizes(key, published):
    arch = bench_flops.ARCHITECTURES[key]
    assert arch.model_type == "llama" and arch.kind == "causal"
    model = bench_flops.build_model(arch.make_config(), arch.kind)
    assert sum(p.numel() for p in model.parameters()) == pytest.approx(published, rel=0.01)


def test_score10_flops_are_a_prefill_and_the_score_tokens():
    from transformers import LlamaConfig

    config = LlamaConfig(
        vocab_size=100,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
    )
    L = 12
    model = bench_flops.build_model(config, "causal")
    expected = bench_flops.count_flops(model, input_ids=bench_flops._ids(L), logits_to_keep=1)
    with torch.no_grad():
        cache = model(input_ids=bench_flops._ids(L), use_cache=True, logits_to_keep=1).cache
        for _ in range(SCORE_TOKENS):
            expected += bench_flops.count_flops(model, input_ids=bench_flops._ids(1), cache=cache, logits_to_keep=1)
    assert bench_flops.judgment_flops(config, "causal", L, "score10")[0] == expected
    assert bench_flops.judgment_flops(config, "causal", L, "score10", k=999)[0] == expected  # not the reasoning length
    assert expected > bench_flops.judgment_flops(config, "causal", L, "direct")[0]


def test_bench_costs_judgelm_rows(monkeypatch):
    subjects = {s.name: s for s in bench.default_subjects()}
    for key in ("judgelm-7b", "judgelm-13b"):
        assert subjects[f"{key}.score10"].kind == "score10" and subjects[f"{key}.score10"].architecture == key
    tiny = bench_flops.Arch(
        "test/tiny-llama",
        "causal",
        "llama",
        dict(vocab_size=1000, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2),
    )
    monkeypatch.setitem(bench_flops.ARCHITECTURES, "tiny", tiny)
    records, tokenizer = toy_records(5), bench.proxy_tokenizer()
    row, accuracy = bench.measure(bench.Subject("tiny.score10", "score10", "tiny"), records, tokenizer=tokenizer)
    assert accuracy == [] and row["judge_kind"] == "score10" and "JudgeLM" in row["notes"]
    assert row["flops"] == bench_flops.judgment_flops(tiny.make_config(), "causal", row["tokens"], "score10")[0]
    assert f"prefill + {SCORE_TOKENS} x measured decode step" in row["notes"]  # timed: prefill and the score line
    assert 0 < row["latency_p50_ms"] <= row["latency_p95_ms"]
    direct = bench.median_tokens(records, tokenizer, bench.Subject("tiny.direct", "direct", "tiny"))
    assert row["tokens"] != direct  # the JudgeLM prompt, not the bertjudge one


@pytest.mark.slow
def test_bench_costs_judgelm_7b_without_timing_it():
    row, accuracy = bench.measure(
        bench.Subject("judgelm-7b.score10", "score10", "judgelm-7b"), toy_records(5), tokenizer=bench.proxy_tokenizer()
    )
    assert accuracy == [] and row["params"] == pytest.approx(6.74e9, rel=0.01)
    assert "not timed" in row["notes"] and "latency_p50_ms" not in row
    config = bench_flops.ARCHITECTURES["judgelm-7b"].make_config()
    assert row["flops"] == bench_flops.judgment_flops(config, "causal", row["tokens"], "score10")[0]
