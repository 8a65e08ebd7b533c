"""Where records come from: one string names a source.

- ``embedded:<split>[?n=N&seed=S&attacks=A,B&lang=L,M]`` — the embedded procedural corpus (``bertjudge.data.corpus``;
  ``attacks``: only pairs of these attack kinds, as in the adversarial suite; ``lang``: its rows in these
  languages, n shared evenly between them in the order given: ``en`` (the default) and ``fr``, ``de``, ``es``,
  ``ko`` (``corpus.multilingual``: train, val and test, no attacks), e.g. ``embedded:test?n=500&lang=fr``;
- ``hf:<repo>[?configs=a,b&splits=x,y&revision=R]`` — a Hugging Face dataset in the authors'
  ``hgissbkh/BERTJudge-Dataset`` layout: one config per task, one split per candidate model,
  columns question, reference, candidate, label (needs the network, or a local ``datasets`` cache);
- a path: a JSONL (``.jsonl`` or gzip-compressed ``.jsonl.gz``) or Parquet file, or a folder of them;
  ``<path>?split=train`` keeps the rows whose ``split`` field is ``train`` (``split=val,test``: several),
  e.g. ``data/real/champ-rule-v2.jsonl.gz?split=train``; ``models=A,B`` / ``exclude_models=A,B`` keep the rows
  whose ``candidate_model`` is / is not one of these (URL-quoted: ``exclude_models=GPT-4,FiD+(DPR%2BFiD)``; a name
  no row has is refused, with the names there are), e.g. to leave one generator out; ``&n=N&seed=S`` keeps a
  seeded sample of N of those rows, in file order.

Any source also takes answer-format options (``bertjudge.data.answer_formats``, ``docs/formats.md``), applied
after its own selection and seeded by its ``seed``: ``formats=SHARE`` (0 to 1) adds a rendered copy of that
share of its rows, each in a random final-answer format; ``format_families=a,b`` / ``format_exclude=a,b`` keep
those copies to / away from these families; ``format_only=1`` keeps only the rendered copies (of every row
unless ``formats`` says otherwise), e.g. ``FILE?split=val&format_families=markup&format_only=1``; and
``qa_augment=SHARE`` adds, for that share of its label-1 open-QA rows, a wrong-entity hard negative and a
paraphrased positive (``bertjudge.data.open_qa_augment``), after every other option.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from urllib.parse import parse_qs, unquote_plus, urlsplit

from bertjudge.core.records import RecordError, is_record_file, normalize, read_records
from bertjudge.data import answer_formats, corpus, open_qa_augment

EMBEDDED_DEFAULT_SIZES = {"train": 20000, "val": 1000, "test": 2000, "adversarial": 1000}

# the paper's tasks and their categories, for sources that name tasks but not categories
TASK_CATEGORIES = {
    **dict.fromkeys(
        [
            "mmlu",
            "mmlu_pro",
            "mmlu-pro",
            "truthfulqa",
            "arc_easy",
            "arc-easy",
            "arc_challenge",
            "arc-challenge",
            "gpqa",
        ],
        "multiple_choice",
    ),
    **dict.fromkeys(["squad_v2", "squad-v2", "hotpotqa", "drop", "coqa"], "context_extraction"),
    **dict.fromkeys(["gsm8k", "math", "asdiv", "aime24", "aime25", "aime_2024", "aime_2025"], "open_math"),
    **dict.fromkeys(
        ["nq_open", "nq-open", "triviaqa", "trivia_qa", "webqs", "web_questions", "evouna-tq", "evouna-nq"], "open_qa"
    ),
}


def category_of(task: str) -> str:
    return TASK_CATEGORIES.get(task.lower(), "other")


def _query(spec: str) -> tuple[str, dict[str, str]]:
    parts = urlsplit(spec)
    args = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
    return parts.path, args


def _whole(spec: str, key: str, value: str | None, minimum: int) -> int | None:
    """The whole number of option ``key`` (None when not given); a RecordError naming the spec otherwise."""
    if value is None:
        return None
    if not re.fullmatch(r"[+-]?\d{1,18}", value.strip()) or int(value) < minimum:
        raise RecordError(f"{spec}: {key}={value!r} must be a whole number of at least {minimum}")
    return int(value)


def load_embedded(spec: str) -> list[dict]:
    split, args = _query(spec.split(":", 1)[1])
    if split not in corpus.SPLITS:
        raise RecordError(f"{spec}: unknown embedded split {split!r}; choose from {', '.join(corpus.SPLITS)}")
    n = _whole(spec, "n", args.pop("n", None), 1) or EMBEDDED_DEFAULT_SIZES[split]
    seed = _whole(spec, "seed", args.pop("seed", None), 0) or 0
    attacks = args.pop("attacks").split(",") if "attacks" in args else None
    languages = _languages(spec, args.pop("lang", "en"))
    if args:
        raise RecordError(
            f"{spec}: unknown options {sorted(args)} (use n, seed, attacks, lang, {', '.join(FORMAT_OPTIONS)}, {QA_AUGMENT_OPTION})"
        )
    if languages != ["en"] and (attacks or split not in corpus.multilingual.SPLITS):
        raise RecordError(f"{spec}: attacks and the adversarial split exist in English only (lang=en)")
    sizes = [n // len(languages) + (i < n % len(languages)) for i in range(len(languages))]
    try:
        return [
            row
            for lang, size in zip(languages, sizes)
            if size
            for row in (
                corpus.generate(split, size, seed, attacks)
                if lang == "en"
                else corpus.multilingual.generate(split, size, seed, [lang])
            )
        ]
    except ValueError as e:
        raise RecordError(f"{spec}: {e}") from None


def _languages(spec: str, value: str) -> list[str]:
    """The languages of ``lang=fr,de``: known, each once; a RecordError naming the spec otherwise."""
    languages = [lang.strip().lower() for lang in value.split(",")]
    known = ("en", *corpus.multilingual.LANGUAGES)
    if not all(languages) or set(languages) - set(known) or len(set(languages)) < len(languages):
        raise RecordError(f"{spec}: lang={value!r} must list some of {', '.join(known)}, each once")
    return languages


def load_hub(spec: str) -> list[dict]:
    import datasets

    repo, args = _query(spec.split(":", 1)[1])
    revision = args.get("revision")
    configs = args["configs"].split(",") if "configs" in args else datasets.get_dataset_config_names(repo)
    records = []
    for config in configs:
        ds = datasets.load_dataset(repo, config, revision=revision)
        for split in args["splits"].split(",") if "splits" in args else list(ds):
            for row, item in enumerate(ds[split]):
                rec = {
                    "task": config,
                    "category": category_of(config),
                    "candidate_model": split,
                    "question": item["question"],
                    "candidate": item["candidate"],
                    "references": item["reference"],
                    "label": item.get("label"),
                    "label_source": f"hf:{repo}",
                    "meta": {"row": row},
                }
                records.append(normalize(rec, f"{repo}/{config}/{split}:row {row}"))
    return records


def _file_spec(spec: str) -> tuple[Path, dict[str, str]]:
    """The path and options of a file or folder source (``FILE?split=…&n=…&seed=…``)."""
    if "?" in spec and not Path(spec).exists():
        path, args = _query(spec)
        return Path(path), args
    return Path(spec), {}


def source_paths(spec: str) -> list[Path]:
    """The path a source reads, a file or a folder (none for ``embedded:`` and ``hf:``): what an output must
    not overwrite."""
    return [] if spec.startswith(("embedded:", "hf:")) else [_file_spec(spec)[0]]


FORMAT_OPTIONS = ("formats", "format_families", "format_exclude", "format_only")


def _split_options(spec: str, names) -> tuple[str, dict[str, str]]:
    """The spec without the options ``names`` (those applied to any source's records), and those options."""
    if "?" not in spec or Path(spec).exists():
        return spec, {}
    base, query = spec.split("?", 1)
    kept, options = [], {}
    for part in query.split("&"):
        key, _, value = part.partition("=")
        if unquote_plus(key) in names:
            options[unquote_plus(key)] = unquote_plus(value)
        else:
            kept.append(part)
    return (f"{base}?{'&'.join(kept)}" if kept else base), options


def _families(spec: str, key: str, value: str | None) -> list[str] | None:
    """The answer-format families of option ``key`` (None when not given); a RecordError naming the spec otherwise."""
    if value is None:
        return None
    try:
        return answer_formats.check_families(value.split(","))
    except ValueError as e:
        raise RecordError(f"{spec}: {key}={value!r}: {e}") from None


def _with_formats(spec: str, records: list[dict], options: dict[str, str], seed: int) -> list[dict]:
    """``records`` with the rendered copies the answer-format ``options`` ask for (the module docstring)."""
    only = options.get("format_only", "0")
    if only not in ("0", "1"):
        raise RecordError(f"{spec}: format_only={only!r} must be 0 or 1")
    share = options.get("formats", "1" if only == "1" else None)
    if share is None:
        raise RecordError(f"{spec}: format_families and format_exclude need formats=SHARE or format_only=1")
    if not re.fullmatch(r"\s*(?:0|1|0?\.\d+|1\.0*)\s*", share):
        raise RecordError(f"{spec}: formats={share!r} must be a share between 0 and 1")
    families = _families(spec, "format_families", options.get("format_families"))
    exclude = _families(spec, "format_exclude", options.get("format_exclude"))
    copies = answer_formats.rendered_copies(records, float(share), seed, families, exclude)
    if only == "1" and not copies:
        raise RecordError(f"{spec}: no row renders in the answer formats asked for")
    return copies if only == "1" else [*records, *copies]


def load_source(spec: str) -> list[dict]:
    """All records of one source (see the module docstring), with the rendered copies its answer-format options
    ask for. A bad spec, a missing or unreadable file and a bad row are a RecordError naming the spec, or the
    file and line."""
    rest, qa = _split_options(spec, (QA_AUGMENT_OPTION,))  # qa_augment=SHARE: the open-QA augmentation, below
    if qa:
        return _with_qa_augment(spec, rest, qa[QA_AUGMENT_OPTION])
    base, format_options = _split_options(spec, FORMAT_OPTIONS)
    try:
        records = _load_base(base)
    except RecordError as e:  # name the spec as given, with its answer-format options
        if base == spec or not str(e).startswith(f"{base}:"):
            raise
        raise RecordError(f"{spec}{str(e)[len(base) :]}") from None
    if not format_options:
        return records
    seed = _whole(spec, "seed", _query(base)[1].get("seed"), 0) or 0
    return _with_formats(spec, records, format_options, seed)


def _load_base(spec: str) -> list[dict]:
    """The records of one source, without answer-format options."""
    if spec.startswith("embedded:"):
        return load_embedded(spec)
    if spec.startswith("hf:"):
        return load_hub(spec)
    path, args = _file_spec(spec)
    splits = args.pop("split", None)
    models = {key: args.pop(key).split(",") for key in ("models", "exclude_models") if key in args}
    n = args.pop("n", None)
    seed = _whole(spec, "seed", args.pop("seed", None), 0) or 0
    if args:
        raise RecordError(
            f"{spec}: unknown options {sorted(args)} (a file source takes split, models, exclude_models, n and seed, and {', '.join(FORMAT_OPTIONS)}, {QA_AUGMENT_OPTION})"
        )
    if n is not None:
        _whole(spec, "n", n, 1)
    if not path.exists():
        raise RecordError(f"{path}: no such file or folder")
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if is_record_file(p))
        if not files:
            raise RecordError(f"{path}: no .jsonl or .parquet files (nor .jsonl.gz) in this folder")
        records = [rec for f in files for rec in read_records(f)]
    else:
        records = read_records(path)
    if splits is not None:
        wanted = set(splits.split(","))
        records = [rec for rec in records if rec["split"] in wanted]
        if not records:
            raise RecordError(f"{path}: no rows with split in {sorted(wanted)}")
    records = _by_model(spec, records, models)
    if n is not None:  # a seeded sample, in file order
        if int(n) > len(records):
            raise RecordError(f"{spec}: n={n} must be a whole number of at most the {len(records)} rows it holds")
        records = [records[i] for i in sorted(random.Random(seed).sample(range(len(records)), int(n)))]
    return records


def _by_model(spec: str, records: list[dict], models: dict[str, list[str]]) -> list[dict]:
    """``records`` kept to (``models``) or without (``exclude_models``) these candidate models; a name that no row
    has is a RecordError listing those there are (a typo would otherwise keep or drop nothing silently)."""
    there = {rec.get("candidate_model") for rec in records}
    for key, names in models.items():
        unknown = [name for name in names if name not in there]
        if unknown:
            listed = ", ".join(sorted(repr(m) for m in there if m is not None)) or "none"
            raise RecordError(f"{spec}: {key}: no row has candidate_model {unknown[0]!r} (there are {listed})")
    keep, drop = set(models.get("models", there)), set(models.get("exclude_models", ()))
    kept = [rec for rec in records if rec.get("candidate_model") in keep and rec.get("candidate_model") not in drop]
    if not kept:
        raise RecordError(f"{spec}: no rows left after models/exclude_models")
    return kept


def load_sources(specs: list[str]) -> list[dict]:
    records = [rec for spec in specs for rec in load_source(spec)]
    seen = set()
    for rec in records:
        if rec["id"] in seen:
            raise RecordError(f"id {rec['id']!r} appears in more than one of the sources {specs}")
        seen.add(rec["id"])
    return records


# ---- open-QA augmentation: qa_augment=SHARE (bertjudge.data.open_qa_augment) ----------------------------------
# Any source takes ``qa_augment=SHARE`` (0 to 1): after all its other options (split, n, seed, the answer formats),
# ``open_qa_augment.augment_open_qa`` adds, for that share of its eligible label-1 open_qa rows, a wrong-entity
# hard negative and a paraphrased positive, seeded by the source's ``seed``,
# e.g. ``data/real/evouna-tq-v1.jsonl.gz?split=train&qa_augment=0.5``.
QA_AUGMENT_OPTION = "qa_augment"


def _with_qa_augment(spec: str, rest: str, value: str) -> list[dict]:
    """The records of ``rest`` (the spec without ``qa_augment``) with the open-QA augmentation ``value`` asks for;
    a bad share, and any error of ``rest``, is a RecordError naming ``spec``."""
    if not re.fullmatch(r"\s*(?:0|1|0?\.\d+|1\.0*)\s*", value):
        raise RecordError(f"{spec}: {QA_AUGMENT_OPTION}={value!r} must be a share between 0 and 1")
    try:
        records = load_source(rest)
        seed = _whole(rest, "seed", _query(rest)[1].get("seed"), 0) or 0
    except RecordError as e:
        if rest == spec or not str(e).startswith(f"{rest}:"):
            raise
        raise RecordError(f"{spec}{str(e)[len(rest) :]}") from None
    return open_qa_augment.augment_open_qa(records, float(value), seed)
