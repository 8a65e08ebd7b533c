"""The model card (``README.md``) of an exported judge: a ``huggingface_hub.ModelCard`` rendered from the Jinja2
template ``model_card_template.md`` beside this module (package data), with the card's metadata built here."""

from __future__ import annotations

from pathlib import Path

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from bertjudge.core.version import __version__

TEMPLATE = Path(__file__).with_name("model_card_template.md")
MODEL_ID_PLACEHOLDER = "path/to/this/folder"
SUITE_NAMES = {
    "test": "held-out test",
    "real_test": "real-output test",
    "adversarial": "adversarial test",
    "val": "validation",
}


def _hub_like(value) -> bool:
    text = str(value or "")
    return text.count("/") == 1 and not text.startswith((".", "/")) and " " not in text and not Path(text).exists()


def _metric_rows(metrics: dict) -> list[tuple[str, str, str, str]]:
    """(test set, group, metric, value) of judge.json's ``metrics`` (``suite/metric[/group]`` keys)."""
    rows = []
    for key, value in sorted(metrics.items()):
        parts = key.split("/", 2)
        if len(parts) < 2 or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        suite, metric, group = parts[0], parts[1], parts[2] if len(parts) == 3 else "all"
        shown = f"{int(value)}" if metric == "n" else f"{float(value):.4f}"
        rows.append((SUITE_NAMES.get(suite, suite), group, metric, shown))
    return rows


def _eval_results(metrics: dict) -> list[EvalResult]:
    """The accuracies of judge.json's ``metrics`` as Hub model-index results (overall, and per category)."""
    results = []
    for key, value in sorted(metrics.items()):
        parts = key.split("/", 2)
        if len(parts) < 2 or parts[1] != "acc" or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        group = parts[2] if len(parts) == 3 else None
        if group is not None and not group.startswith("category="):
            continue
        category = group.split("=", 1)[1] if group else None
        results.append(
            EvalResult(
                task_type="text-classification",
                task_name="LLM answer judging",
                dataset_type=parts[0],
                dataset_name=SUITE_NAMES.get(parts[0], parts[0]) + (f" ({category})" if category else ""),
                dataset_config=category,
                metric_type="accuracy",
                metric_value=round(float(value), 4),
                metric_name="accuracy" + (f" ({category})" if category else ""),
            )
        )
    return results


def _labels(model_config: dict | None) -> dict:
    """``id2label`` and ``label2id`` of the exported model's config.json where the model has a classification
    head (a ``…ForSequenceClassification`` with its labels), else nothing."""
    model_config = model_config or {}
    head = any(str(a).endswith("ForSequenceClassification") for a in model_config.get("architectures") or ())
    id2label = model_config.get("id2label")
    if not head or not isinstance(id2label, dict) or not id2label:
        return {}
    id2label = {int(i): str(label) for i, label in sorted(id2label.items(), key=lambda item: int(item[0]))}
    return {"id2label": id2label, "label2id": {label: i for i, label in id2label.items()}}


def model_card(config: dict, model_config: dict | None = None) -> str:
    """The README.md of an exported judge (``config``: its judge.json; ``model_config``: its config.json, if any):
    metadata (base model, license, datasets, tags, the accuracies in ``config["metrics"]`` as eval results,
    ``inference: false`` so that the Hub's widget shows no raw, uncalibrated logits, and the classification
    head's ``id2label``/``label2id``), how to load it with bertjudge and, for an encoder judge, with
    ``transformers`` plus ``bertjudge.core.formats.judge_inputs`` (the same scores as ``Judge.score``), the
    input format (and whether it needs bertjudge's answer extractor), the metrics and the provenance: the
    text is the template's (``TEMPLATE``)."""
    fmt = config["format"]
    prov = config.get("provenance") or {}
    kind = str(config.get("class", "")).rpartition(".")[2] or "judge"
    name = str(prov.get("name") or "bertjudge judge")
    hub = prov.get("hub") if isinstance(prov.get("hub"), dict) else {}
    metrics = config.get("metrics") or {}
    sequence_classifier = kind == "EncoderJudge"
    card_data = ModelCardData(
        model_name=name,
        base_model=next((str(prov[k]) for k in ("backbone", "checkpoint") if _hub_like(prov.get(k))), None),
        license=config.get("license") or prov.get("license"),
        datasets=config.get("datasets") or prov.get("datasets"),
        library_name="transformers" if kind in ("EncoderJudge", "GenerativeJudge") else None,
        pipeline_tag="text-classification" if sequence_classifier else None,
        tags=["bertjudge", "llm-evaluation", "judge", f"bertjudge-{kind.lower()}"],
        eval_results=_eval_results(metrics) or None,
        inference=False,
        **_labels(model_config),
    )
    card = ModelCard.from_template(
        card_data,
        template_path=str(TEMPLATE),
        title=name,
        kind=kind,
        version=__version__,
        model_id=hub.get("repo") or MODEL_ID_PLACEHOLDER,
        judge_name=f"hf://{hub['repo']}" if hub.get("repo") else MODEL_ID_PLACEHOLDER,
        sequence_classifier=sequence_classifier,
        fmt=fmt,
        threshold=config.get("threshold"),
        temperature=config.get("temperature"),
        bias=config.get("bias", 0.0),
        metric_rows=_metric_rows(metrics),
        real_categories=sorted({k.split("=", 1)[1] for k in metrics if k.startswith("real_test/acc/category=")}),
        provenance=prov,
    )
    return str(card).rstrip("\n") + "\n"
