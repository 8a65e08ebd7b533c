"""Bad input, refused early in one line: every command that reads files (but ``judge``, whose cases are in
tests/test_scoring.py), called as a user would with a missing file, a folder, an empty file, bytes that are not
UTF-8, a corrupt gzip stream, invalid JSON, rows without a field or with a wrong type, bad source specs and flag
values, an output that is a folder or the input, and ``fit``/``validate``/``test`` configs with a missing path.

Each case asserts the exit code (2: a wrong call or bad input; 1: a failure while running), exactly one line on
stderr (no traceback) that names the file and line (or key or flag), and that no file was changed or added.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bertjudge.cli.main import main
from bertjudge.core.hashing import hash_folder
from bertjudge.judges.encoder import EncoderJudge

ROWS = [
    {"question": "What is 2+2?", "candidate": "4", "reference": "4", "label": 1},
    {"question": "Capital of France?", "candidate": "Rome", "reference": "Paris", "label": 0},
    {"question": "What is 3+3?", "candidate": "The answer is 6.", "reference": "6", "label": 1},
]


def jsonl(*rows) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


@pytest.fixture(scope="module")
def judge_folder(tiny_backbone, tmp_path_factory):
    return EncoderJudge(backbone=tiny_backbone).export(tmp_path_factory.mktemp("judge") / "judge")


@pytest.fixture(scope="module")
def ws(judge_folder, tmp_path_factory):
    """The inputs of every case, written once: good, bad and odd files, configs, a registry."""
    d = tmp_path_factory.mktemp("ws")
    good = jsonl(*ROWS)
    gz = gzip.compress(good * 40, mtime=0)
    files = {
        "good.jsonl": good,
        "unlabelled.jsonl": jsonl(*({k: v for k, v in row.items() if k != "label"} for row in ROWS)),
        "empty.jsonl": b"",
        "nonutf8.jsonl": jsonl(ROWS[0]) + b'{"candidate": "\xff\xfe", "reference": "4", "label": 1}\n',
        "corrupt.jsonl.gz": gz[:20] + b"\x00\x01garbage" + gz[30:],
        "truncated.jsonl.gz": gz[: len(gz) // 2],
        "badjson.jsonl": jsonl(*ROWS[:2]) + b'{"candidate": "x", oops\n',
        "nocand.jsonl": jsonl({"reference": "a", "label": 1}),
        "noref.jsonl": jsonl({"question": "q?", "candidate": "a", "label": 1}),
        "refnum.jsonl": jsonl({"candidate": "a", "reference": 5, "label": 1}),
        "labelyes.jsonl": jsonl({"candidate": "a", "reference": "a", "label": "yes"}),
        "dup.jsonl": jsonl(
            {"id": "x", "candidate": "a", "reference": "a"}, {"id": "x", "candidate": "b", "reference": "b"}
        ),
        "folder/notes.txt": b"no records here\n",
        "foreign-judge/judge.json": b'{"class": "some_module.SomeJudge", "threshold": 0.5}\n',  # not registered
        "dir.jsonl/notes.txt": b"a folder with a record-file name\n",
        "split/train.jsonl": good,
        "lm/samples_gsm8k_2024-01-01T00-00-00.jsonl": b'{"doc_id": 0}\n{not json\n',
        "lm/samples_arc_2024-01-01T00-00-00.jsonl": b'{"doc_id": 0, "x": "\xff"}\n',
        "evouna.json": b'[{"question": "q", "golden_answer": "a"}',
        "champ.json": b'{"problems": ',
        "mix.yaml": b"train: [unclosed\n",
        "bad-registry.yaml": b"a: [b\n",
        "not-yaml.yaml": b"data: [unclosed\n",
    }
    for name, data in files.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(data)
    (d / "registry.yaml").write_text(
        yaml.safe_dump(
            {
                "minilm-l6.toy": {
                    "class_path": "bertjudge.judges.encoder.EncoderJudge",
                    "source": f"file://{judge_folder}",
                    "format": json.loads((judge_folder / "judge.json").read_text())["format"],
                    "license": "Apache-2.0",
                    "provenance": {"training_data": "toy"},
                    "files": hash_folder(judge_folder),
                }
            },
            sort_keys=False,
        )
    )
    (d / "fit.yaml").write_text(
        yaml.safe_dump(
            {
                "model": {
                    "class_path": "bertjudge.judges.encoder.EncoderJudge",
                    "init_args": {"backbone": str(judge_folder)},
                },
                "data": {"train": [str(d / "good.jsonl")], "val": [str(d / "good.jsonl")], "batch_size": 2},
                "trainer": {
                    "max_steps": 1,
                    "logger": False,
                    "enable_progress_bar": False,
                    "default_root_dir": str(d / "run"),
                },
            }
        )
    )
    (d / "unknown-key.yaml").write_text("data:\n  train: [good.jsonl]\n  nosuch: 3\n")
    return d


E, J = "evaluate", "--judge"
JD = "judge", "--judge"
FIT = ["fit", "--config", "{d}/fit.yaml"]
ZOO = ["zoo", "--registry", "{d}/registry.yaml"]
PUBLISH = [*ZOO, "publish", "{judge}", "--license", "MIT", "--to", "{d}/store"]

# (id, argv, exit code, what the message names); {d}: the inputs' folder, {judge}: an exported tiny judge
CASES = [
    # evaluate: the data
    ("evaluate-missing", [E, "--data", "{d}/missing.jsonl", J, "regex", "--output", "{d}/out"], 2, ["missing.jsonl"]),
    ("evaluate-folder", [E, "--data", "{d}/folder", J, "regex", "--output", "{d}/out"], 2, ["folder", "no .jsonl"]),
    (
        "evaluate-empty",
        [E, "--data", "{d}/empty.jsonl", J, "regex", "--output", "{d}/out"],
        2,
        ["empty.jsonl", "empty"],
    ),
    (
        "evaluate-not-utf8",
        [E, "--data", "{d}/nonutf8.jsonl", J, "regex", "--output", "{d}/out"],
        2,
        ["nonutf8.jsonl:2", "UTF-8"],
    ),
    (
        "evaluate-corrupt-gzip",
        [E, "--data", "{d}/corrupt.jsonl.gz", J, "regex", "--output", "{d}/out"],
        2,
        ["corrupt.jsonl.gz", "gzip"],
    ),
    (
        "evaluate-truncated-gzip",
        [E, "--data", "{d}/truncated.jsonl.gz", J, "regex", "--output", "{d}/out"],
        2,
        ["truncated.jsonl.gz", "gzip"],
    ),
    (
        "evaluate-invalid-json",
        [E, "--data", "{d}/badjson.jsonl", J, "regex", "--output", "{d}/out"],
        2,
        ["badjson.jsonl:3", "invalid JSON"],
    ),
    (
        "evaluate-no-candidate",
        [E, "--data", "{d}/nocand.jsonl", J, "regex", "--output", "{d}/out"],
        2,
        ["nocand.jsonl:1", "'candidate'"],
    ),
    (
        "evaluate-no-reference",
        [E, "--data", "{d}/noref.jsonl", J, "regex", "--output", "{d}/out"],
        2,
        ["noref.jsonl:1", "'references'"],
    ),
    (
        "evaluate-reference-number",
        [E, "--data", "{d}/refnum.jsonl", J, "regex", "--output", "{d}/out"],
        2,
        ["refnum.jsonl:1", "'references'"],
    ),
    (
        "evaluate-label-yes",
        [E, "--data", "{d}/labelyes.jsonl", J, "regex", "--output", "{d}/out"],
        2,
        ["labelyes.jsonl:1", "'label'", "'yes'"],
    ),
    (
        "evaluate-duplicate-id",
        [E, "--data", "{d}/dup.jsonl", J, "regex", "--output", "{d}/out"],
        2,
        ["dup.jsonl:2", "duplicate id"],
    ),
    (
        "evaluate-unlabelled",
        [E, "--data", "{d}/unlabelled.jsonl", J, "regex", "--output", "{d}/out"],
        2,
        ["unlabelled.jsonl", "no label"],
    ),
    (
        "evaluate-embedded-nope",
        [E, "--data", "embedded:nope", J, "regex", "--output", "{d}/out"],
        2,
        ["embedded:nope", "unknown embedded split"],
    ),
    (
        "evaluate-embedded-n-abc",
        [E, "--data", "embedded:test?n=abc", J, "regex", "--output", "{d}/out"],
        2,
        ["embedded:test?n=abc", "n='abc'"],
    ),
    (
        "evaluate-file-n-abc",
        [E, "--data", "{d}/good.jsonl?n=abc", J, "regex", "--output", "{d}/out"],
        2,
        ["good.jsonl?n=abc", "n='abc'"],
    ),
    (
        "evaluate-file-n-too-many",
        [E, "--data", "{d}/good.jsonl?n=4", J, "regex", "--output", "{d}/out"],
        2,
        ["good.jsonl?n=4", "at most the 3 rows"],
    ),
    (
        "evaluate-unknown-option",
        [E, "--data", "{d}/good.jsonl?rows=3", J, "regex", "--output", "{d}/out"],
        2,
        ["good.jsonl?rows=3", "unknown options ['rows']"],
    ),
    # evaluate: flags, judges, outputs
    (
        "evaluate-batch-size-0",
        [E, "--data", "{d}/good.jsonl", J, "regex", "--output", "{d}/out", "--batch-size", "0"],
        2,
        ["--batch-size"],
    ),
    (
        "evaluate-batch-size-negative",
        [E, "--data", "{d}/good.jsonl", J, "regex", "--output", "{d}/out", "--batch-size", "-1"],
        2,
        ["--batch-size"],
    ),
    (
        "evaluate-batch-size-abc",
        [E, "--data", "{d}/good.jsonl", J, "regex", "--output", "{d}/out", "--batch-size", "abc"],
        2,
        ["--batch-size"],
    ),
    ("evaluate-rho-2", [E, "--data", "{d}/good.jsonl", J, "regex", "--output", "{d}/out", "--rho", "2"], 2, ["--rho"]),
    (
        "evaluate-bootstrap-0",
        [E, "--data", "{d}/good.jsonl", J, "regex", "--output", "{d}/out", "--bootstrap", "0"],
        2,
        ["--bootstrap"],
    ),
    ("evaluate-missing-flag", [E, "--data", "{d}/good.jsonl", "--output", "{d}/out"], 2, ["--judge"]),
    (
        "evaluate-output-is-the-input",
        [E, "--data", "{d}/good.jsonl", J, "regex", "--output", "{d}/good.jsonl"],
        2,
        ["--output", "good.jsonl", "not a folder"],
    ),
    (
        "evaluate-judge-is-a-file",
        [E, "--data", "{d}/good.jsonl", J, "{d}/good.jsonl", "--output", "{d}/out"],
        2,
        ["good.jsonl", "judge.json"],
    ),
    (
        "evaluate-judge-folder-without-judge-json",
        [E, "--data", "{d}/good.jsonl", J, "{d}/folder", "--output", "{d}/out"],
        2,
        ["folder", "judge.json"],
    ),
    # calibrate
    (
        "calibrate-missing-data",
        ["calibrate", J, "{judge}", "--data", "{d}/missing.jsonl", "--output", "{d}/out"],
        2,
        ["missing.jsonl"],
    ),
    (
        "calibrate-invalid-json",
        ["calibrate", J, "{judge}", "--data", "{d}/badjson.jsonl", "--output", "{d}/out"],
        2,
        ["badjson.jsonl:3"],
    ),
    (
        "calibrate-not-trained",
        ["calibrate", J, "regex", "--data", "{d}/good.jsonl", "--output", "{d}/out"],
        2,
        ["regex", "not a trained judge"],
    ),
    (
        "calibrate-batch-size-0",
        ["calibrate", J, "{judge}", "--data", "{d}/good.jsonl", "--output", "{d}/out", "--batch-size", "0"],
        2,
        ["--batch-size"],
    ),
    (
        "calibrate-output-is-the-judge",
        ["calibrate", J, "{judge}", "--data", "{d}/good.jsonl", "--output", "{judge}"],
        2,
        ["--output", "judge folder"],
    ),
    (
        "calibrate-output-is-a-file",
        ["calibrate", J, "{judge}", "--data", "{d}/good.jsonl", "--output", "{d}/good.jsonl"],
        2,
        ["--output", "good.jsonl"],
    ),
    (
        "calibrate-prior-2",
        ["calibrate", J, "{judge}", "--data", "{d}/good.jsonl", "--output", "{d}/out", "--label-free", "--prior", "2"],
        2,
        ["--prior"],
    ),
    # soup
    ("soup-one-judge", ["soup", "--judge", "{judge}", "--output", "{d}/out"], 2, ["two judges", "--judge"]),
    ("soup-no-judge", ["soup", "--output", "{d}/out"], 2, ["two judges", "--judge"]),
    (
        "soup-judge-is-a-file",
        ["soup", "--judge", "{judge}", "{d}/good.jsonl", "--output", "{d}/out"],
        2,
        ["good.jsonl", "judge.json"],
    ),
    (
        "soup-output-is-an-ingredient",
        ["soup", "--judge", "{judge}", "{judge}", "--output", "{judge}"],
        2,
        ["--output", "judges"],
    ),
    (
        "soup-output-is-a-file",
        ["soup", "--judge", "{judge}", "{judge}", "--output", "{d}/good.jsonl"],
        2,
        ["good.jsonl"],
    ),
    (
        "soup-data-missing",
        ["soup", "--judge", "{judge}", "{judge}", "--output", "{d}/out", "--data", "{d}/missing.jsonl"],
        2,
        ["missing.jsonl"],
    ),
    (
        "soup-calibrate-is-now-data",
        ["soup", "--judge", "{judge}", "{judge}", "--output", "{d}/out", "--calibrate", "{d}/good.jsonl"],
        2,
        ["--calibrate", "use --data"],
    ),
    ("soup-positional-judges", ["soup", "{judge}", "{judge}", "--output", "{d}/out"], 2, ["use --judge"]),
    # bench
    ("bench-judge-not-a-folder", ["bench", "run", "--judge", "{d}/folder", "--no-timing"], 2, ["folder", "judge.json"]),
    ("bench-eval-missing", ["bench", "run", "--data", "{d}/missing.jsonl", "--no-timing"], 2, ["missing.jsonl"]),
    ("bench-eval-folder", ["bench", "run", "--data", "{d}/folder", "--no-timing"], 2, ["folder", "is a folder"]),
    ("bench-eval-invalid-json", ["bench", "run", "--data", "{d}/badjson.jsonl", "--no-timing"], 2, ["badjson.jsonl:3"]),
    ("bench-n-0", ["bench", "run", "--n", "0"], 2, ["--n"]),
    ("bench-pareto-results-missing", ["bench", "pareto", "--results", "{d}/missing"], 2, ["--results", "missing"]),
    (
        "bench-pareto-output-folder",
        ["bench", "pareto", "--results", "{d}", "--output", "{d}/folder"],
        2,
        ["--output", "folder"],
    ),
    # zoo
    ("zoo-pull-input-missing", [*ZOO, "pull", "minilm-l6.toy", "--input", "{d}/missing"], 2, ["--input", "missing"]),
    (
        "zoo-pull-input-a-file",
        [*ZOO, "pull", "minilm-l6.toy", "--input", "{d}/good.jsonl"],
        2,
        ["--input", "good.jsonl", "not a folder"],
    ),
    ("zoo-pull-from-is-now-input", [*ZOO, "pull", "minilm-l6.toy", "--from", "{d}/folder"], 2, ["--from", "--input"]),
    ("zoo-pull-unknown-name", [*ZOO, "pull", "nope.v1"], 2, ["nope.v1", "registry.yaml"]),
    ("zoo-verify-not-pulled", [*ZOO, "verify", "minilm-l6.toy"], 2, ["minilm-l6.toy", "not pulled"]),
    ("zoo-verify-unknown-name", [*ZOO, "verify", "nope.v1"], 2, ["nope.v1"]),
    ("zoo-registry-missing", ["zoo", "--registry", "{d}/missing.yaml", "list"], 2, ["missing.yaml"]),
    ("zoo-registry-not-yaml", ["zoo", "--registry", "{d}/bad-registry.yaml", "list"], 2, ["bad-registry.yaml"]),
    (
        "zoo-publish-not-a-judge",
        [*ZOO, "publish", "{d}/good.jsonl", "--name", "minilm-l6.x", "--license", "MIT", "--to", "{d}/store"],
        2,
        ["good.jsonl", "judge.json"],
    ),
    ("zoo-publish-bad-name", [*PUBLISH, "--name", "NoDot"], 2, ["--name", "NoDot"]),
    ("zoo-publish-n-0", [*PUBLISH, "--name", "minilm-l6.x", "--n", "0"], 2, ["--n"]),
    (
        "zoo-publish-to-a-file",
        [*ZOO, "publish", "{judge}", "--license", "MIT", "--name", "minilm-l6.x", "--to", "{d}/good.jsonl"],
        2,
        ["--to", "good.jsonl"],
    ),
    ("zoo-publish-already-registered", [*PUBLISH, "--name", "minilm-l6.toy"], 2, ["minilm-l6.toy", "already"]),
    ("zoo-readme-output-folder", ["zoo", "readme", "--output", "{d}/folder"], 2, ["--output", "folder"]),
    # corpus, synth
    (
        "corpus-output-is-a-file",
        ["corpus", "--output", "{d}/good.jsonl", "--size", "10"],
        2,
        ["--output", "good.jsonl"],
    ),
    ("corpus-size-0", ["corpus", "--output", "{d}/out", "--size", "0"], 2, ["--size"]),
    ("synth-missing", ["synth", "--input", "{d}/missing.jsonl", "--output", "{d}/out"], 2, ["missing.jsonl"]),
    ("synth-folder", ["synth", "--input", "{d}/folder", "--output", "{d}/out"], 2, ["folder", "is a folder"]),
    ("synth-empty", ["synth", "--input", "{d}/empty.jsonl", "--output", "{d}/out"], 2, ["empty.jsonl"]),
    ("synth-not-utf8", ["synth", "--input", "{d}/nonutf8.jsonl", "--output", "{d}/out"], 2, ["nonutf8.jsonl:2"]),
    (
        "synth-corrupt-gzip",
        ["synth", "--input", "{d}/corrupt.jsonl.gz", "--output", "{d}/out"],
        2,
        ["corrupt.jsonl.gz"],
    ),
    ("synth-no-reference", ["synth", "--input", "{d}/noref.jsonl", "--output", "{d}/out"], 2, ["noref.jsonl:1"]),
    (
        "synth-per-question-0",
        ["synth", "--input", "{d}/good.jsonl", "--output", "{d}/out", "--per-question", "0"],
        2,
        ["--per-question"],
    ),
    (
        "synth-output-overwrites-input",
        ["synth", "--input", "{d}/split/train.jsonl", "--output", "{d}/split"],
        2,
        ["train.jsonl", "overwrite an input"],
    ),
    # generate
    (
        "generate-task-missing",
        ["generate", "--model", "m", "--tasks", "{d}/missing.jsonl", "--output", "{d}/out"],
        2,
        ["missing.jsonl"],
    ),
    (
        "generate-task-not-utf8",
        ["generate", "--model", "m", "--tasks", "{d}/nonutf8.jsonl", "--output", "{d}/out"],
        2,
        ["nonutf8.jsonl:2"],
    ),
    (
        "generate-task-invalid-json",
        ["generate", "--model", "m", "--tasks", "{d}/badjson.jsonl", "--output", "{d}/out"],
        2,
        ["badjson.jsonl:3"],
    ),
    (
        "generate-batch-size-0",
        ["generate", "--model", "m", "--tasks", "{d}/good.jsonl", "--output", "{d}/out", "--batch-size", "0"],
        2,
        ["--batch-size"],
    ),
    (
        "generate-temperature-negative",
        ["generate", "--model", "m", "--tasks", "{d}/good.jsonl", "--output", "{d}/out", "--temperature", "-1"],
        2,
        ["--temperature"],
    ),
    (
        "generate-output-is-a-file",
        ["generate", "--model", "m", "--tasks", "{d}/good.jsonl", "--output", "{d}/good.jsonl"],
        2,
        ["--output", "good.jsonl"],
    ),
    # label
    (
        "label-missing",
        ["label", "--teacher", "rule:regex", "--input", "{d}/missing.jsonl", "--output", "{d}/out"],
        2,
        ["missing.jsonl"],
    ),
    (
        "label-not-utf8",
        ["label", "--teacher", "rule:regex", "--input", "{d}/nonutf8.jsonl", "--output", "{d}/out"],
        2,
        ["nonutf8.jsonl:2"],
    ),
    (
        "label-folder-without-records",
        ["label", "--teacher", "rule:regex", "--input", "{d}/folder", "--output", "{d}/out"],
        2,
        ["folder"],
    ),
    (
        "label-unknown-teacher",
        ["label", "--teacher", "nope", "--input", "{d}/good.jsonl", "--output", "{d}/out"],
        2,
        ["'nope'"],
    ),
    (
        "label-output-overwrites-input",
        ["label", "--teacher", "rule:regex", "--input", "{d}/good.jsonl", "--output", "{d}"],
        2,
        ["good.jsonl", "overwrite an input"],
    ),
    (
        "label-batch-size-0",
        ["label", "--teacher", "rule:regex", "--input", "{d}/good.jsonl", "--output", "{d}/out", "--batch-size", "0"],
        2,
        ["--batch-size"],
    ),
    (
        "label-human-labels-missing",
        [
            "label",
            "--teacher",
            "human",
            "--labels",
            "{d}/missing.json",
            "--input",
            "{d}/good.jsonl",
            "--output",
            "{d}/out",
        ],
        2,
        ["missing.json"],
    ),
    # build
    ("build-missing", ["build", "--input", "{d}/missing.jsonl", "--output", "{d}/out"], 2, ["missing.jsonl"]),
    ("build-invalid-json", ["build", "--input", "{d}/badjson.jsonl", "--output", "{d}/out"], 2, ["badjson.jsonl:3"]),
    (
        "build-mix-missing",
        ["build", "--input", "{d}/good.jsonl", "--mix", "{d}/missing.yaml", "--output", "{d}/out"],
        2,
        ["missing.yaml"],
    ),
    (
        "build-mix-not-yaml",
        ["build", "--input", "{d}/good.jsonl", "--mix", "{d}/mix.yaml", "--output", "{d}/out"],
        2,
        ["mix.yaml"],
    ),
    (
        "build-output-is-a-file",
        ["build", "--input", "{d}/good.jsonl", "--output", "{d}/good.jsonl"],
        2,
        ["--output", "good.jsonl"],
    ),
    (
        "build-output-overwrites-input",
        ["build", "--input", "{d}/split", "--output", "{d}/split"],
        2,
        ["train.jsonl", "overwrite an input"],
    ),
    # import-lmeval, import-evouna, champ
    (
        "import-lmeval-missing",
        ["import-lmeval", "--input", "{d}/missing.jsonl", "--output", "{d}/out"],
        2,
        ["missing.jsonl"],
    ),
    (
        "import-lmeval-not-samples",
        ["import-lmeval", "--input", "{d}/good.jsonl", "--output", "{d}/out"],
        2,
        ["good.jsonl", "samples"],
    ),
    (
        "import-lmeval-invalid-json",
        ["import-lmeval", "--input", "{d}/lm/samples_gsm8k_2024-01-01T00-00-00.jsonl", "--output", "{d}/out"],
        2,
        ["samples_gsm8k_2024-01-01T00-00-00.jsonl:2"],
    ),
    (
        "import-lmeval-not-utf8",
        ["import-lmeval", "--input", "{d}/lm/samples_arc_2024-01-01T00-00-00.jsonl", "--output", "{d}/out"],
        2,
        ["samples_arc_2024-01-01T00-00-00.jsonl:1", "UTF-8"],
    ),
    (
        "import-evouna-missing",
        ["import-evouna", "--input", "{d}/missing.json", "--output", "{d}/o.jsonl"],
        2,
        ["missing.json"],
    ),
    (
        "import-evouna-invalid-json",
        ["import-evouna", "--input", "{d}/evouna.json", "--output", "{d}/o.jsonl"],
        2,
        ["evouna.json"],
    ),
    ("import-evouna-folder", ["import-evouna", "--input", "{d}/folder", "--output", "{d}/o.jsonl"], 2, ["folder"]),
    (
        "import-evouna-output-is-the-input",
        ["import-evouna", "--input", "{d}/good.jsonl", "--output", "{d}/good.jsonl"],
        2,
        ["good.jsonl", "overwrite an input"],
    ),
    (
        "import-evouna-output-is-a-folder",
        ["import-evouna", "--input", "{d}/evouna.json", "--output", "{d}/dir.jsonl"],
        2,
        ["--output", "dir.jsonl", "is a folder"],
    ),
    ("champ-missing", ["champ", "--input", "{d}/missing.json", "--output", "{d}/o.jsonl"], 2, ["missing.json"]),
    ("champ-invalid-json", ["champ", "--input", "{d}/champ.json", "--output", "{d}/o.jsonl"], 2, ["champ.json"]),
    ("champ-folder", ["champ", "--input", "{d}/folder", "--output", "{d}/o.jsonl"], 2, ["folder", "is a folder"]),
    (
        "champ-output-is-the-input",
        ["champ", "--input", "{d}/good.jsonl", "--output", "{d}/good.jsonl"],
        2,
        ["good.jsonl", "overwrite an input"],
    ),
    (
        "champ-max-rows-1",
        ["champ", "--input", "{d}/champ.json", "--output", "{d}/o.jsonl", "--balance", "--max-rows", "1"],
        2,
        ["--max-rows"],
    ),
    # fit, validate, test (LightningCLI): every data source is read before a seed is set or a model built
    ("fit-config-missing", ["fit", "--config", "{d}/missing.yaml"], 2, ["--config", "missing.yaml"]),
    ("fit-config-is-a-folder", ["fit", "--config", "{d}/folder"], 2, ["--config", "folder"]),
    ("fit-config-not-yaml", ["fit", "--config", "{d}/not-yaml.yaml"], 2, ["not-yaml.yaml", "line 1"]),
    ("fit-config-unknown-key", ["fit", "--config", "{d}/unknown-key.yaml"], 2, ["data.nosuch"]),
    ("fit-train-missing", [*FIT, "--data.train=[{d}/missing.jsonl]"], 2, ["data.train", "missing.jsonl"]),
    ("fit-val-missing", [*FIT, "--data.val=[{d}/missing.jsonl]"], 2, ["data.val", "missing.jsonl"]),
    ("fit-test-missing", [*FIT, "--data.test=[{d}/missing.jsonl]"], 2, ["data.test", "missing.jsonl"]),
    (
        "fit-adversarial-missing",
        [*FIT, "--data.test=[embedded:test?n=8]", "--data.adversarial=[{d}/missing.jsonl]"],
        2,
        ["data.adversarial", "missing.jsonl"],
    ),
    (
        "fit-real-test-missing",
        [*FIT, "--data.test=[embedded:test?n=8]", "--data.real_test=[{d}/missing.jsonl]"],
        2,
        ["data.real_test", "missing.jsonl"],
    ),
    ("fit-test-invalid-json", [*FIT, "--data.test=[{d}/badjson.jsonl]"], 2, ["data.test", "badjson.jsonl:3"]),
    ("fit-train-not-utf8", [*FIT, "--data.train=[{d}/nonutf8.jsonl]"], 2, ["data.train", "nonutf8.jsonl:2"]),
    ("fit-train-unlabelled", [*FIT, "--data.train=[{d}/unlabelled.jsonl]"], 2, ["data.train", "no label"]),
    ("fit-test-embedded-nope", [*FIT, "--data.test=[embedded:nope]"], 2, ["data.test", "embedded:nope"]),
    ("fit-val-n-abc", [*FIT, "--data.val=[{d}/good.jsonl?n=abc]"], 2, ["data.val", "n='abc'"]),
    ("fit-batch-size-0", [*FIT, "--data.batch_size=0"], 2, ["data.batch_size"]),
    ("fit-max-steps-abc", [*FIT, "--trainer.max_steps=abc"], 2, ["trainer.max_steps"]),
    ("fit-export-dir-is-a-file", [*FIT, "--export_dir={d}/good.jsonl"], 2, ["--export_dir", "good.jsonl"]),
    ("validate-no-val", ["validate", "--config", "{d}/fit.yaml", "--data.val=null"], 2, ["data.val"]),
    (
        "test-adversarial-missing",
        ["test", "--config", "{d}/fit.yaml", "--data.test=[{d}/good.jsonl]", "--data.adversarial=[{d}/missing.jsonl]"],
        2,
        ["data.adversarial", "missing.jsonl"],
    ),
    # judge: the input, the output, the judge folder (the judge's row-level failures: tests/test_untrusted.py)
    ("judge-missing-input", [*JD, "regex", "--input", "{d}/missing.jsonl", "--output", "{d}/o.jsonl"], 2, ["missing"]),
    ("judge-input-folder", [*JD, "regex", "--input", "{d}/folder", "--output", "{d}/o.jsonl"], 2, ["folder"]),
    ("judge-empty", [*JD, "regex", "--input", "{d}/empty.jsonl", "--output", "{d}/o.jsonl"], 2, ["empty.jsonl"]),
    (
        "judge-invalid-json",
        [*JD, "regex", "--input", "{d}/badjson.jsonl", "--output", "{d}/o.jsonl"],
        2,
        ["badjson.jsonl:3"],
    ),
    (
        "judge-no-reference",
        [*JD, "regex", "--input", "{d}/noref.jsonl", "--output", "{d}/o.jsonl"],
        2,
        ["noref.jsonl:1"],
    ),
    (
        "judge-not-utf8",
        [*JD, "regex", "--input", "{d}/nonutf8.jsonl", "--output", "{d}/o.jsonl"],
        2,
        ["nonutf8.jsonl:2"],
    ),
    ("judge-output-txt", [*JD, "regex", "--input", "{d}/good.jsonl", "--output", "{d}/o.txt"], 2, ["o.txt", ".csv"]),
    ("judge-output-is-input", [*JD, "regex", "--input", "{d}/good.jsonl", "--output", "{d}/good.jsonl"], 2, ["input"]),
    ("judge-output-folder", [*JD, "regex", "--input", "{d}/good.jsonl", "--output", "{d}/folder"], 2, ["folder"]),
    (
        "judge-unknown-judge",
        [*JD, "{d}/missing-judge", "--input", "{d}/good.jsonl", "--output", "{d}/o.jsonl"],
        2,
        ["missing-judge"],
    ),
    (
        "judge-unregistered-class",
        [*JD, "{d}/foreign-judge", "--input", "{d}/good.jsonl", "--output", "{d}/o.jsonl"],
        2,
        ["judge.json", "not a registered judge class", "--trust-remote-code"],
    ),
    (
        "judge-batch-size",
        [*JD, "regex", "--input", "{d}/good.jsonl", "--output", "{d}/o.jsonl", "--batch-size", "0"],
        2,
        ["--batch-size"],
    ),
    # serve: settings refused before the judge is loaded or a port is opened
    ("serve-port", ["serve", "--judge", "regex", "--port", "80"], 2, ["--port"]),
    ("serve-workers", ["serve", "--judge", "regex", "--workers", "0"], 2, ["--workers"]),
    ("serve-batch-timeout", ["serve", "--judge", "regex", "--batch-timeout", "-1"], 2, ["--batch-timeout"]),
    ("serve-empty-token", ["serve", "--judge", "regex", "--token", " "], 2, ["--token"]),
]


def snapshot(*folders: Path) -> dict[str, str]:
    """Every file and folder under ``folders``: its sha256 (folders: 'dir')."""
    found = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            found[str(path)] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def error_lines(stderr: str) -> list[str]:
    """The lines of stderr but a progress bar's (drawn with carriage returns)."""
    return [line for line in stderr.split("\n") if line.strip() and "\r" not in line]


@pytest.mark.parametrize("argv,code,names", [pytest.param(a, c, n, id=i) for i, a, c, n in CASES])
def test_bad_input_is_refused_early_in_one_line(argv, code, names, ws, judge_folder, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BERTJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("BERTJUDGE_REGISTRY", str(ws / "registry.yaml"))
    monkeypatch.chdir(tmp_path)  # anything written to the working directory shows up below
    argv = [arg.format(d=ws, judge=judge_folder) for arg in argv]
    before = snapshot(ws, judge_folder, tmp_path)
    capsys.readouterr()
    assert main(argv) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = error_lines(err)
    assert len(lines) == 1, err
    assert lines[0].startswith(f"bertjudge {argv[0]}: "), lines[0]
    for name in names:
        assert name in lines[0], f"{name!r} not in {lines[0]!r}"
    assert snapshot(ws, judge_folder, tmp_path) == before  # no input changed, nothing written


def test_enough_cases_across_the_commands():
    commands = {argv[0] for _, argv, _, _ in CASES}
    assert len(CASES) >= 60
    assert commands >= {
        "judge",
        "serve",
        "evaluate",
        "calibrate",
        "soup",
        "bench",
        "zoo",
        "corpus",
        "synth",
        "generate",
        "label",
        "build",
        "import-lmeval",
        "import-evouna",
        "champ",
        "fit",
        "validate",
        "test",
    }


@pytest.mark.parametrize(
    "argv,names",
    [
        (["evaluate", "--data", "{d}/nonutf8.jsonl", "--judge", "regex", "--output", "{d}/out"], ["nonutf8.jsonl:2"]),
        pytest.param(
            [
                "fit",
                "--config",
                "{d}/fit.yaml",
                "--data.test=[embedded:test?n=8]",
                "--data.adversarial=[{d}/missing.jsonl]",
            ],
            ["data.adversarial", "missing.jsonl"],
            marks=pytest.mark.slow,
        ),  # ~8 s: Lightning's import
    ],
    ids=["evaluate-not-utf8", "fit-adversarial-missing"],
)
def test_the_whole_path_through_python_m_bertjudge(argv, names, ws, judge_folder, tmp_path):
    """The real process: the one line and exit 2, no traceback, no warning or log line before it, nothing written."""
    argv = [arg.format(d=ws, judge=judge_folder) for arg in argv]
    before = snapshot(ws, judge_folder)
    env = {**os.environ, "BERTJUDGE_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "bertjudge", *argv], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = error_lines(done.stderr)
    assert len(lines) == 1 and lines[0].startswith(f"bertjudge {argv[0]}: "), done.stderr
    assert all(name in lines[0] for name in names), lines[0]
    assert snapshot(ws, judge_folder) == before and not any(tmp_path.iterdir())
