"""``BertJudgeReward``: a judge as a reward function for TRL's GRPOTrainer. Fast tests call it as TRL does
(plain and conversational); a slow test runs two GRPO steps of a tiny random policy with it, offline, on CPU."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from test_generative import make_tiny_causal_lm, smollm2_tokenizer

from bertjudge.core.records import normalize
from bertjudge.evaluation.rewards import BertJudgeReward
from bertjudge.judges.encoder import EncoderJudge
from bertjudge.judges.loading import Judge

PROMPTS = ["What is 2+3?", "What is the capital of France?", "Who wrote Hamlet?"]
COMPLETIONS = ["2+3 = 5. Final answer: 5", "I think it is Lyon.", "Shakespeare wrote it."]
REFERENCES = ["5", "Paris", ["William Shakespeare", "Shakespeare"]]


@pytest.fixture(scope="module")
def judge_folder(tiny_backbone, tmp_path_factory):
    judge = EncoderJudge(backbone=tiny_backbone, temperature=0.5, threshold=0.5)
    torch.manual_seed(2)
    with torch.no_grad():  # random weights large enough that rows score apart
        for weight in judge.model.parameters():
            if weight.ndim == 2:
                weight.normal_(std=0.3)
    return judge.export(tmp_path_factory.mktemp("reward") / "judge")


@pytest.fixture(scope="module")
def judge(judge_folder):
    return Judge.load(str(judge_folder))


def test_plain_prompts_and_completions(judge, judge_folder):
    reward = BertJudgeReward(str(judge_folder))  # a spec, loaded
    assert reward.__name__ == "bertjudge"
    got = reward(
        prompts=PROMPTS,
        completions=COMPLETIONS,
        completion_ids=[[1]] * 3,
        reference=REFERENCES,
        trainer_state=None,
        other_column=[1, 2, 3],
    )  # what GRPOTrainer passes besides
    assert all(isinstance(r, float) for r in got) and len(got) == 3
    expected = judge.score(PROMPTS, COMPLETIONS, REFERENCES)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    assert np.std(got) > 1e-3  # distinct scores: the comparison tells the rows apart


def test_conversational_prompts_and_completions(judge):
    reward = BertJudgeReward(judge, reference_column="answer", name="judge_reward")
    assert reward.__name__ == "judge_reward"
    prompts = [[{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": q}] for q in PROMPTS]
    prompts[2][1]["content"] = [{"type": "text", "text": PROMPTS[2]}]  # content as parts
    completions = [[{"role": "assistant", "content": c}] for c in COMPLETIONS]
    got = reward(prompts, completions, answer=REFERENCES)
    np.testing.assert_allclose(got, judge.score(PROMPTS, COMPLETIONS, REFERENCES), rtol=0, atol=1e-6)
    plain = BertJudgeReward(judge, reference_column="answer")(PROMPTS, COMPLETIONS, answer=REFERENCES)
    assert got == plain


def test_hard_verdicts_question_and_category_columns(judge, judge_folder):
    scores = judge.score(PROMPTS, COMPLETIONS, REFERENCES)
    strict = Judge.load(str(judge_folder))
    strict.threshold = float(np.median(scores))  # verdicts of both kinds
    hard = BertJudgeReward(strict, hard=True, question_column="question")
    assert hard.__name__ == "bertjudge_hard"
    verdicts = hard(["ignored"] * 3, COMPLETIONS, reference=REFERENCES, question=PROMPTS)
    assert verdicts == [float(s >= strict.threshold) for s in scores] and set(verdicts) == {0.0, 1.0}
    categories = ["open_math", "other", "open_qa"]
    records = [
        normalize({"question": q, "candidate": c, "references": r, "category": k})
        for q, c, r, k in zip(PROMPTS, COMPLETIONS, REFERENCES, categories)
    ]
    by_category = BertJudgeReward(judge, category_column="category")(
        PROMPTS, COMPLETIONS, reference=REFERENCES, category=categories
    )
    np.testing.assert_allclose(by_category, judge.score_records(records), rtol=0, atol=1e-6)


def test_missing_or_bad_columns_are_named(judge):
    reward = BertJudgeReward(judge)
    with pytest.raises(KeyError, match=r"no 'reference' column .*\['answer'\]"):
        reward(PROMPTS, COMPLETIONS, answer=REFERENCES)
    with pytest.raises(ValueError, match="column 'reference' has 2 values for 3 completions"):
        reward(PROMPTS, COMPLETIONS, reference=REFERENCES[:2])
    with pytest.raises(ValueError, match="completion 1 .*references"):
        reward(PROMPTS, COMPLETIONS, reference=["5", None, "x"])
    assert reward([], [], reference=[]) == []


def test_unparsed_rows_give_none(judge):
    class Unsure:  # a judge that cannot give a verdict on some rows (a reasoning judge's unparsed output)
        name, threshold = "unsure", 0.5

        def score_records(self, records, batch_size=32, progress=False):
            return np.array([math.nan if "Lyon" in r["candidate"] else 0.75 for r in records])

    reward = BertJudgeReward(judge)
    reward.judge = Unsure()
    assert reward(PROMPTS, COMPLETIONS, reference=REFERENCES) == [0.75, None, 0.75]


@pytest.mark.slow
def test_two_grpo_steps_with_the_judge_reward(judge, judge_folder, tmp_path):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    tokenizer = smollm2_tokenizer()
    policy = make_tiny_causal_lm(tmp_path / "policy", tokenizer)
    calls = []

    class Recording(BertJudgeReward):
        def __call__(self, prompts, completions, **kwargs):
            rewards = super().__call__(prompts, completions, **kwargs)
            calls.append((prompts, completions, kwargs["reference"], rewards))
            return rewards

    reward = Recording(str(judge_folder))
    dataset = Dataset.from_dict(
        {"prompt": [[{"role": "user", "content": q}] for q in PROMPTS[:2]], "reference": REFERENCES[:2]}
    )
    args = GRPOConfig(
        output_dir=str(tmp_path / "grpo"),
        max_completion_length=8,
        num_generations=2,
        per_device_train_batch_size=2,
        max_steps=2,
        report_to="none",
        use_cpu=True,
        bf16=False,
        logging_steps=1,
        save_strategy="no",
        seed=0,
        learning_rate=1e-4,
    )
    trainer = GRPOTrainer(
        model=policy, reward_funcs=[reward], args=args, train_dataset=dataset, processing_class=tokenizer
    )
    trainer.train()
    assert len(calls) == 2  # one generation batch (one prompt, two completions) per step
    logged = [row for row in trainer.state.log_history if "rewards/bertjudge/mean" in row]
    assert len(logged) == 2
    for (prompts, completions, references, rewards), row in zip(calls, logged):
        assert len(completions) == 2 and all(isinstance(c, list) and c[0]["role"] == "assistant" for c in completions)
        questions = [p[-1]["content"] for p in prompts]
        expected = judge.score(questions, [c[0]["content"] for c in completions], references)
        np.testing.assert_allclose(rewards, expected, rtol=0, atol=1e-6)  # the judge's scores of those completions
        assert row["rewards/bertjudge/mean"] == pytest.approx(float(np.mean(rewards)), abs=1e-5)
