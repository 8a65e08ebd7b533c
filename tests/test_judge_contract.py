"""Every judge kind through the whole contract of ``BaseJudge`` (``bertjudge/judges/interface.py``): scoring in one
argument order (``score_records``, ``score``, ``details``, ``ascore_records``), ``config``, ``fingerprint``,
``threshold`` and ``fit_threshold``, ``describe``, ``parts`` and ``routing``, ``error_types``, ``place``, and the
optional parts each kind declares in ``features`` (export and load back, calibration, precision); a part a kind does
not declare raises ``UnsupportedFeature``. And no module of bertjudge asks a judge's type: only the registry
(``judges/kinds.py``) and the interface's own defaults may."""

from __future__ import annotations

import ast
import asyncio
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from test_bleurt import make_tiny_bleurt
from test_generative import make_tiny_causal_lm, smollm2_tokenizer

from bertjudge.core.errors import BertJudgeError
from bertjudge.core.records import normalize
from bertjudge.evaluation.scoring import judge_fingerprint
from bertjudge.judges import kinds
from bertjudge.judges.backends import PromptedJudge, TransformersBackend
from bertjudge.judges.bleurt import BleurtJudge
from bertjudge.judges.encoder import EncoderJudge
from bertjudge.judges.generative import GenerativeJudge
from bertjudge.judges.interface import FEATURES, BaseJudge, UnsupportedFeature, class_path
from bertjudge.judges.loading import Judge

KINDS = [
    "regex",
    "contains",
    "encoder",
    "encoder-error-head",
    "generative",
    "bleurt",
    "prompted",
    "hybrid",
    "cascade",
    "by-category",
]
ROUTED = {"hybrid", "cascade", "by-category"}
METRICS = {"val/acc": 0.5, "val/n": 8}
MC = "Which colour?\nA. red\nB. blue\nC. green"


def contract_records() -> list[dict]:
    """Labelled rows of every category: some the rules decide (a match, a mismatch), some they cannot parse."""
    raw = [
        ("multiple_choice", MC, "Final answer: B", ["B"], 1),
        ("multiple_choice", MC, "Final answer: A", ["B"], 0),
        ("multiple_choice", MC, "I would rather not guess", ["B"], 0),
        ("open_math", "What is 2+3?", "2+3 = 5. Final answer: 5", ["5"], 1),
        ("open_math", "What is 2+3?", "Final answer: 6", ["5"], 0),
        ("open_qa", "Who wrote Hamlet?", "Final answer: William Shakespeare", ["William Shakespeare"], 1),
        ("context_extraction", "Where is the cat?", "Final answer: on the mat", ["on the mat"], 1),
        ("context_extraction", "Where is the cat?", "Final answer: in the garden shed", ["on the mat"], 0),
    ]
    return [
        normalize(
            {"question": q, "candidate": c, "references": r, "category": k, "label": y, "task": "contract"},
            f"row {i}",
        )
        for i, (k, q, c, r, y) in enumerate(raw)
    ]


@pytest.fixture(scope="module")
def specs(tiny_backbone, tmp_path_factory) -> dict[str, str]:
    """kind -> the ``Judge.load`` spec of a judge of that kind (trained kinds: tiny random ones, exported)."""
    import torch

    root = tmp_path_factory.mktemp("contract")
    lm = make_tiny_causal_lm(root / "lm", smollm2_tokenizer(), "llama")
    with torch.random.fork_rng():  # seeded heads, and the global random state left as other tests expect it
        torch.manual_seed(0)
        EncoderJudge(backbone=tiny_backbone, temperature=0.05).export(root / "encoder")
        EncoderJudge(backbone=tiny_backbone, error_head=True).export(root / "encoder-error-head")
        GenerativeJudge(backbone=lm, lora_r=0).export(root / "generative")
        BleurtJudge(checkpoint=make_tiny_bleurt(root / "bleurt-checkpoint")).export(root / "bleurt")
    PromptedJudge(TransformersBackend(lm, device="cpu", batch_size=2), mode="direct").export(root / "prompted")
    encoder = root / "encoder"
    return {
        "regex": "regex",
        "contains": "contains",
        **{kind: str(root / kind) for kind in ("encoder", "encoder-error-head", "generative", "bleurt", "prompted")},
        "hybrid": f"hybrid:{encoder}",
        "cascade": f"cascade:{encoder},{root / 'generative'}?band=0.2,0.8",
        "by-category": f"by-category:{encoder}?multiple_choice=regex&open_math=contains",
    }


def test_every_registered_kind_is_in_the_contract_test(specs):
    built = {class_path(part) for spec in specs.values() for part in Judge.load(spec).parts()}
    missing = sorted(kinds.BUILTIN_JUDGE_CLASSES - built)  # bertjudge's own kinds (a test may register its own)
    assert not missing, f"add a spec of {missing} to KINDS"


def check_rows(judge: BaseJudge, rows: list[dict], scores: np.ndarray) -> None:
    """``details`` rows agree with ``score_records`` and read the scores against the judge's threshold."""
    assert len(rows) == len(scores)
    for row, score in zip(rows, scores):
        assert {"score", "verdict", "unparsed"} <= set(row)
        if row["score"] is None or math.isnan(row["score"]):
            assert math.isnan(score) and row["unparsed"] and row["verdict"] is None
        else:
            assert row["score"] == pytest.approx(score, abs=1e-5)
            assert row["verdict"] == (row["score"] >= judge.threshold)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_answers_the_whole_contract(kind, specs, tmp_path):
    records = contract_records()
    n = len(records)
    judge = Judge.load(specs[kind])
    assert isinstance(judge, BaseJudge) and kinds.is_judge(judge) and not kinds.is_judge(specs[kind])
    assert set(judge.features) <= set(FEATURES)

    # scoring, one argument order: records, batch_size, progress (positionally too)
    scores = judge.score_records(records, 3, False)
    assert scores.shape == (n,) and all(math.isnan(s) or 0.0 <= s <= 1.0 for s in scores)
    np.testing.assert_allclose(judge.score_records(records, batch_size=5, progress=False), scores, atol=1e-5)
    columns = ([r["question"] for r in records], [r["candidate"] for r in records], [r["references"] for r in records])
    in_lists = judge.score(*columns, 3, categories=[r["category"] for r in records])
    np.testing.assert_allclose(in_lists, scores, atol=1e-5)
    np.testing.assert_allclose(asyncio.run(judge.ascore_records(records, 3)), scores, atol=1e-5)
    check_rows(judge, judge.details(records, 3, False), scores)
    check_rows(judge, judge.details(records, batch_size=5, progress=False), scores)

    # what it is
    assert isinstance(judge.name, str) and judge.name
    assert isinstance(judge.threshold, float) and 0.0 <= judge.threshold <= 1.0
    assert judge.temperature is None or judge.temperature > 0
    described = judge.describe()
    assert (described["name"], described["kind"], described["threshold"]) == (
        judge.name,
        type(judge).__name__,
        judge.threshold,
    )
    config = judge.config()
    assert isinstance(config, dict) and json.loads(json.dumps(config)) == config
    fingerprint = judge.fingerprint()
    assert fingerprint and all(isinstance(k, str) and isinstance(v, str) for k, v in fingerprint.items())
    assert judge_fingerprint(judge) == fingerprint == judge.fingerprint()  # what score files record, and stable
    assert fingerprint["class"] == class_path(judge)

    # routing: a routing judge's parts are the judges it routes to, any other judge is its only part
    parts = judge.parts()
    assert parts and all(kinds.is_judge(part) for part in parts)
    if kind in ROUTED:
        assert "routing" in judge.features and judge not in parts and len(parts) >= 2
        assert judge.routing is None or judge.routing["n"] >= n
        stages = judge.stages()  # the judges it routes to, by the names its details rows give them
        assert [part for stage in stages.values() for part in stage.parts()] == parts
        for row in judge.details(records, 3, False):
            assert set([row["route"]] if "route" in row else row["scores"]) <= set(stages)
    else:
        assert "routing" not in judge.features and parts == [judge] and judge.routing is None
        assert judge.stages() == {}
    assert judge.place() is judge and judge.place("cpu") is judge

    # error types: None (no error-type head), or one row per record agreeing with the verdicts
    verdicts = [bool(s >= judge.threshold) for s in scores]
    types = judge.error_types(records, 3, verdicts)
    assert (types is not None) == (kind == "encoder-error-head")
    if types is not None:
        assert len(types) == n and all({"error_type", "error_type_prob"} <= set(t) for t in types)

    # optional parts: declared, else refused
    if "calibration" in judge.features:
        assert judge.logits_records(records, 3, False).shape == (n,)
    else:
        with pytest.raises(UnsupportedFeature):
            judge.logits_records(records)
    if "precision" in judge.features:
        assert judge.set_precision("fp32") == []
    else:
        with pytest.raises(UnsupportedFeature):
            judge.set_precision("fp32")
    folder = tmp_path / "exported"
    if "export" in judge.features:
        assert Path(judge.export(folder, metrics=METRICS)) == folder
        assert json.loads((folder / "judge.json").read_text())["metrics"] == METRICS
        loaded = Judge.load(str(folder))
        assert type(loaded) is type(judge)
        assert loaded.config() == judge.config()
        assert loaded.fingerprint()["config"] == fingerprint["config"]
        np.testing.assert_allclose(loaded.score_records(records), scores, atol=1e-5)
    else:
        with pytest.raises(UnsupportedFeature) as refused:
            judge.export(folder)
        assert isinstance(refused.value, (NotImplementedError, BertJudgeError)) and not folder.exists()

    # threshold: fitted on labelled rows, (threshold, accuracy); the verdicts then read the scores against it
    fitted, accuracy = judge.fit_threshold(records, 3)
    assert isinstance(fitted, float) and 0.0 <= accuracy <= 1.0
    check_rows(judge, judge.details(records, 3), judge.score_records(records, 3))


SKIP = {Path("bertjudge/judges/kinds.py"), Path("bertjudge/judges/interface.py")}
PROBES = ("isinstance", "issubclass", "hasattr", "getattr", "callable", "type")
# what names a judge: judge, self.judge, first_judge, judge_cls…, and a routing judge's part
JUDGE_NAME = re.compile(r"(\w+_)?(judges?|parts?)(_\w+)?", re.IGNORECASE)


def names_in(node: ast.AST) -> list[str]:
    """The variable and attribute names in an expression (``self.judge.model`` -> self, judge, model)."""
    return [
        n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute))
    ]


def test_no_module_asks_a_judge_its_type():
    """Outside the registry and the interface's defaults, no ``isinstance``/``hasattr``/``getattr``/``type``… of a
    judge: callers use the contract (a variable that holds a judge is named for it, as everywhere in bertjudge)."""
    root = Path(__file__).resolve().parent.parent
    found = []
    for path in sorted((root / "bertjudge").rglob("*.py")):
        if path.relative_to(root) in SKIP:
            continue
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in PROBES:
                if node.args and any(JUDGE_NAME.fullmatch(name) for name in names_in(node.args[0])):
                    found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.get_source_segment(source, node)}")
    assert not found, "\n".join(found)
