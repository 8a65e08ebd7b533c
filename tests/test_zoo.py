"""bertjudge.zoo.registry: registry schema, pulls with hash checks, offline errors, publish, the generated README."""

import dataclasses
import json
import shutil
import socket
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from huggingface_hub import constants

from bertjudge.cli.main import main
from bertjudge.core.formats import JudgeFormat
from bertjudge.core.hashing import hash_folder
from bertjudge.core.records import normalize
from bertjudge.evaluation import bench, bench_results
from bertjudge.evaluation.publish import publish, render_readme
from bertjudge.judges.encoder import EncoderJudge
from bertjudge.judges.loading import Judge
from bertjudge.zoo import hub
from bertjudge.zoo import registry as zoo
from bertjudge.zoo.uri import ModelURI

REPO = Path(__file__).resolve().parents[1]

ROWS = [normalize({"question": "What is 2+3?", "candidate": c, "reference": "5"}) for c in ("5", "It is 6.")]
AUTHORS_FORMAT = {"order": "QCR", "markers": "markers", "truncation": "left", "max_length": 512}


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("BERTJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def exported(tiny_backbone, tmp_path_factory):
    return EncoderJudge(backbone=tiny_backbone).export(tmp_path_factory.mktemp("judges") / "tiny")


def entry(source, **fields):
    return {
        "class_path": "bertjudge.judges.encoder.EncoderJudge",
        "source": source,
        "format": {"order": "QCR"},
        "license": "Apache-2.0",
        "provenance": {"training_data": "toy"},
        **fields,
    }


def closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_registry(path, entries):
    path.write_text(yaml.safe_dump(entries, sort_keys=False))
    return path


def test_the_shipped_registry_is_valid_and_holds_the_authors_checkpoints():
    entries = zoo.load_registry()
    authors = {name: e for name, e in entries.items() if e.provenance.get("base_model") == "EuroBERT/EuroBERT-210m"}
    assert {e.source.split("@")[0] for e in authors.values()} == {
        "hf://artefactory/BERTJudge",
        "hf://artefactory/BERTJudge-Formatted-QCR",
        "hf://artefactory/BERTJudge-Formatted-QCR-200k",
        "hf://artefactory/BERTJudge-Formatted-CR",
        "hf://hgissbkh/BERTJudge-Free-QCR",
    }
    for name, e in authors.items():
        assert e.num_labels == 2 and e.revision_pinned is False and e.uri.scheme == "hf"
        assert e.format == JudgeFormat.from_dict({**AUTHORS_FORMAT, "order": e.format.order})
        assert e.format.order == ("CR" if name.endswith("-cr") else "QCR")


@pytest.mark.parametrize(
    "bad,message",
    [
        ({"license": None}, "missing field"),
        ({"accuracy": 0.9}, "benchmarks/results"),
        ({"source": "hf://org/name"}, "hf://org/name@revision"),
        ({"source": "ftp://x"}, "use hf://"),
        ({"source": "hf://org/name@main", "revision_pinned": True}, "40-hex commit"),
        ({"files": {"pytorch_model.bin": None}}, "pickle"),
        ({"files": {"model.safetensors": "abc"}}, "64 lower-case hex"),
        ({"format": {"order": "QX"}}, "format"),
        ({"num_labels": 3}, "num_labels"),
        ({"bias": "-0.5"}, "bias must be a number"),
        ({"source": "hf://org/name@main", "build": "make quickstart"}, "goes with a file:// source"),
    ],
)
def test_bad_entries_are_refused_with_a_clear_message(bad, message):
    with pytest.raises(zoo.ZooError, match=message) as err:
        zoo.ZooEntry.parse("minilm-l6.toy", {**entry("file:///x"), **bad}, "reg.yaml")
    assert "reg.yaml: entry 'minilm-l6.toy'" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(zoo.ZooError, match="arch.tag"):
        zoo.ZooEntry.parse("NoDot", entry("file:///x"))


def test_an_entry_is_typed_parsed_once_and_written_back_the_same(tmp_path, capsys):
    commit = "a" * 40
    e = zoo.ZooEntry.parse(
        "minilm-l6.toy",
        entry(f"hf://org/judge@{commit}", revision_pinned=True, files={"model.safetensors": None}),
        "reg.yaml",
    )
    assert (e.name, e.class_path, e.license) == ("minilm-l6.toy", "bertjudge.judges.encoder.EncoderJudge", "Apache-2.0")
    assert e.uri == ModelURI("hf", "org/judge", commit) and e.revision_pinned and e.files == {"model.safetensors": None}
    assert e.format == JudgeFormat(order="QCR") and isinstance(e.format, JudgeFormat)
    assert (e.num_labels, e.threshold, e.temperature, e.bias, e.architecture, e.build) == (1, 0.5, 1.0, 0.0, None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.source = "file:///elsewhere"
    registry = tmp_path / "reg.yaml"
    zoo.append_entry(registry, e)
    assert zoo.load_registry(registry) == {"minilm-l6.toy": e}
    assert main(["zoo", "--registry", str(registry), "show", "minilm-l6.toy"]) == 0
    shown = yaml.safe_load(capsys.readouterr().out)  # `zoo show` prints the entry as registry.yaml holds it
    assert zoo.ZooEntry.parse("minilm-l6.toy", shown["minilm-l6.toy"]) == e
    with pytest.raises(zoo.ZooError, match="already registered"):
        zoo.append_entry(registry, e)


def test_a_bad_entry_in_a_registry_file_is_one_line_naming_the_file_and_the_entry(tmp_path, capsys):
    registry = write_registry(
        tmp_path / "reg.yaml", {"minilm-l6.ok": entry("file:///x"), "minilm-l6.bad": entry("hf://org/judge")}
    )
    line = (
        f"{registry}: entry 'minilm-l6.bad': source 'hf://org/judge': write hf://org/name@revision (a commit id, "
        "or a branch such as main)"
    )
    with pytest.raises(zoo.ZooError) as err:
        zoo.load_registry(registry)
    assert str(err.value) == line
    assert main(["zoo", "--registry", str(registry), "list"]) == 2
    assert capsys.readouterr().err.strip() == f"bertjudge zoo: {line}"
    write_registry(registry, {"minilm-l6.bad": [1, 2]})
    with pytest.raises(zoo.ZooError, match=r"reg.yaml: entry 'minilm-l6.bad': expected a mapping of fields, got list"):
        zoo.load_registry(registry)


def test_file_entry_pulls_verifies_and_loads_by_name(exported, tmp_path, monkeypatch):
    registry = write_registry(
        tmp_path / "reg.yaml",
        {
            "minilm-l6.toy": entry(
                f"file://{exported}",
                files=hash_folder(exported),
                format=json.loads((exported / "judge.json").read_text())["format"],
            )
        },
    )
    monkeypatch.setenv("BERTJUDGE_REGISTRY", str(registry))
    judge = Judge.load("minilm-l6.toy")
    folder = zoo.cache_dir(zoo.get_entry("minilm-l6.toy"))
    assert folder.is_dir() and zoo.verify("minilm-l6.toy") == []
    np.testing.assert_allclose(judge.score_records(ROWS), Judge.load(str(exported)).score_records(ROWS), rtol=1e-6)
    (folder / "config.json").write_text("{}")
    assert any("config.json: sha256" in p for p in zoo.verify("minilm-l6.toy"))
    assert main(["zoo", "--registry", str(registry), "verify", "minilm-l6.toy"]) == 1


def test_the_projects_own_judges_are_listed_and_say_how_to_build_them(exported, tmp_path):
    own = {name: e for name, e in zoo.load_registry().items() if e.build}
    assert "minilm-l6.quickstart" in own
    for name, e in own.items():  # built by a recipe in this repository, exported to runs/
        assert e.source.startswith("file://runs/")
        if e.class_path.endswith(".PromptedJudge"):  # prompted off the shelf, no recipe: test_bench_prompted
            continue
        assert e.provenance["recipe"].startswith("configs/")
        recipe = yaml.safe_load((REPO / e.provenance["recipe"].split()[0]).read_text())
        trained = JudgeFormat.from_dict(recipe["model"]["init_args"]["format"])
        assert e.format == trained, f"{name}: the registry's format is not its recipe's"
    relative = entry("file://built/judge", build="make quickstart")
    registry = write_registry(tmp_path / "reg.yaml", {"minilm-l6.toy": relative})
    with pytest.raises(
        zoo.ZooError,
        match=r"not downloaded: .*built/judge does not exist yet; build it with "
        r"`make quickstart`",
    ):
        zoo.pull("minilm-l6.toy", registry)
    shutil.copytree(exported, tmp_path / "built" / "judge")  # relative to the registry's folder
    assert (zoo.pull("minilm-l6.toy", registry) / "model.safetensors").is_file()


def test_a_tampered_source_is_refused(exported, tmp_path):
    source = tmp_path / "src"
    shutil.copytree(exported, source)
    registry = write_registry(
        tmp_path / "reg.yaml", {"minilm-l6.toy": entry(f"file://{source}", files=hash_folder(source))}
    )
    (source / "model.safetensors").write_bytes(b"not the published weights")
    with pytest.raises(zoo.ZooError, match="sha256 mismatch for 'model.safetensors'"):
        zoo.pull("minilm-l6.toy", registry)
    assert not zoo.cache_dir(zoo.get_entry("minilm-l6.toy", registry)).exists()


def test_pickles_are_refused(exported, tmp_path):
    source = tmp_path / "src"
    shutil.copytree(exported, source)
    (source / "pytorch_model.bin").write_bytes(b"pickle")
    registry = write_registry(tmp_path / "reg.yaml", {"minilm-l6.toy": entry(f"file://{source}")})
    with pytest.raises(zoo.ZooError, match=r"refusing pickle files \['pytorch_model.bin'\]"):
        zoo.pull("minilm-l6.toy", registry)


def test_hf_entry_offline_fails_fast_and_says_how_to_use_a_local_copy(tmp_path, monkeypatch):
    registry = write_registry(tmp_path / "reg.yaml", {"eurobert-210m.x": entry("hf://someorg/judge@main")})
    start = time.perf_counter()
    with pytest.raises(zoo.ZooError) as err:
        zoo.pull("eurobert-210m.x", registry)
    assert time.perf_counter() - start < 5
    assert "HF_HUB_OFFLINE is set" in str(err.value) and "--input" in str(err.value)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # online, but the Hub does not answer
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    assert not hub.hub_reachable()
    with pytest.raises(zoo.ZooError, match=r"Hub \(http://127.0.0.1:\d+\) is unreachable from this machine"):
        zoo.pull("eurobert-210m.x", registry)


def test_a_local_copy_of_an_authors_checkpoint_gets_a_judge_json_and_no_code(tiny_backbone, tmp_path):
    # like the authors' checkpoints: two logits, marker tokens in the tokenizer, no judge.json
    copy = EncoderJudge(backbone=tiny_backbone, num_labels=2, format=JudgeFormat(**AUTHORS_FORMAT)).export(
        tmp_path / "BERTJudge"
    )
    (copy / "judge.json").unlink()
    (copy / "pytorch_model.bin").write_bytes(b"pickle")  # a hub snapshot may carry both formats
    (copy / "modeling_eurobert.py").write_text("raise SystemExit('remote code ran')\n")
    (copy / "train.log").write_text("epoch 1\n")  # a repository's other files: not the judge's, left out
    (copy / "images").mkdir()
    (copy / "images" / "calibration.png").write_bytes(b"\x89PNG")
    registry = write_registry(
        tmp_path / "reg.yaml",
        {"eurobert-210m.authors": entry("hf://org/BERTJudge@main", format=AUTHORS_FORMAT, num_labels=2)},
    )
    folder = zoo.pull("eurobert-210m.authors", registry, local_copy=copy)
    assert not (folder / "pytorch_model.bin").exists() and not (folder / "modeling_eurobert.py").exists()
    assert not (folder / "train.log").exists() and not (folder / "images").exists()
    config = json.loads((folder / "judge.json").read_text())
    assert config["num_labels"] == 2 and config["format"]["markers"] == "markers"
    judge = Judge.load(str(folder))
    assert judge.model.config.num_labels == 2 and judge.format.truncation == "left"
    assert "<|question|>" in judge.tokenizer.get_vocab()


def test_pull_input_takes_a_local_copy_and_the_old_from_flag_says_so(exported, tmp_path, capsys):
    registry = write_registry(tmp_path / "reg.yaml", {"minilm-l6.toy": entry("hf://org/judge@main")})
    pull = ["zoo", "--registry", str(registry), "pull", "minilm-l6.toy"]
    assert main([*pull, "--from", str(exported)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"bertjudge zoo: --from is now --input: use --input {exported}"
    assert not zoo.cache_dir(zoo.get_entry("minilm-l6.toy", registry)).exists()
    assert main([*pull, "--input", str(exported)]) == 0  # offline (HF_HUB_OFFLINE=1): the copy is the source
    folder = Path(capsys.readouterr().out.strip())
    assert zoo.verify("minilm-l6.toy", registry) == []
    assert Judge.load(str(folder)).score_records(ROWS).shape == (2,)


def test_publish_measures_copies_and_registers(exported, tmp_path, monkeypatch):
    registry = write_registry(tmp_path / "reg.yaml", {})
    small = tmp_path / "real-test-v1.jsonl"  # stands in for the real set: accuracy is measured on every row
    small.write_text(
        "".join(
            json.dumps({**row, "id": f"r{i}", "category": category, "label": label}) + "\n"
            for i, (row, category, label) in enumerate(
                zip(ROWS * 2, ["open_qa", "open_qa", "open_math", "multiple_choice"], [1, 0, 1, 0])
            )
        )
    )
    monkeypatch.setattr(bench, "EVAL_FILES", (small,))
    results = tmp_path / "results"
    new = publish(
        exported, "minilm-l6.tiny-v1", "Apache-2.0", str(tmp_path / "store"), registry, n=20, results_dir=results
    )
    assert zoo.load_registry(registry)["minilm-l6.tiny-v1"] == new
    dest = tmp_path / "store" / "minilm-l6.tiny-v1"
    assert new.source == f"file://{dest.resolve()}" and hash_folder(dest) == new.files and not new.revision_pinned
    assert "## Measured by `bertjudge zoo publish`" in (dest / "README.md").read_text()
    [cost] = bench_results.read_csv(next(results.glob("cost-*.csv")))
    assert cost["name"] == "minilm-l6.tiny-v1" and float(cost["flops"]) > 0 and float(cost["latency_p50_ms"]) > 0
    [accuracy] = bench_results.read_csv(next(results.glob("accuracy-*.csv")))
    assert accuracy["n"] == "4" and 0 <= float(accuracy["accuracy"]) <= 1 and accuracy["eval_set"] == "real-test-v1"
    assert accuracy["acc_context_extraction"] == "" and accuracy["acc_open_math"] in ("0", "1")
    monkeypatch.setenv("BERTJUDGE_REGISTRY", str(registry))
    assert Judge.load("minilm-l6.tiny-v1").score_records(ROWS).shape == (2,)
    with pytest.raises(zoo.ZooError, match="already registered"):
        publish(
            exported,
            "minilm-l6.tiny-v1",
            "Apache-2.0",
            str(tmp_path / "store"),
            registry,
            n=20,
            results_dir=results,
            timing=False,
        )


def test_readme_is_generated_from_the_csvs(tmp_path):
    env = {"device": "cpu", "dtype": "fp32", "torch": "9.9"}
    bench_results.write_results(
        [
            {
                "name": "regex.v1",
                "judge_kind": "regex",
                "flops": 0,
                "latency_p50_ms": 0.2,
                "latency_p95_ms": 9.0,
                **env,
            },
            {"name": "qwen3-14b.direct", "judge_kind": "direct", "flops": 4.8e12, **env},
            {"name": "minilm-l6.old-run", "judge_kind": "encoder", "flops": 1.7e9, **env},
        ],
        "cost",
        tmp_path,
    )
    bench_results.write_results(
        [
            {
                "name": "regex.v1",
                "accuracy": 0.71,
                "acc_open_qa": 0.75,
                "acc_multiple_choice": 0.5,
                "acc_context_extraction": 0.625,
                "acc_open_math": 0.875,
                "n": 496,
                "eval_set": "real-test-v3",
                "eval_sha256": "f52bf775ace6",
                **env,
            },
            {
                "name": "minilm-l6.old-run",
                "accuracy": 0.9545,
                "n": 2000,
                "eval_set": "embedded:test?n=2000&seed=0",
                **env,
            },
        ],
        "accuracy",
        tmp_path,
    )
    text = render_readme(results_dir=tmp_path)
    assert "`eurobert-210m.bertjudge`" in text  # the registry's entries
    assert "### cost-cpu-fp32-torch9.9" in text
    regex_line = next(line for line in text.splitlines() if line.startswith("| `regex.v1`"))
    assert "| 0.710 | 0.75 | 0.5 | 0.625 | 0.875 |  | * |" in regex_line
    assert "| accuracy (real-test-v3) | open QA | MC | extraction | math | accuracy (real-test-v2) | front |" in text
    quickstart_line = next(line for line in text.splitlines() if line.startswith("| `minilm-l6.old-run`"))
    assert "not measured on real-test-v3 yet" in quickstart_line and "0.95" not in quickstart_line
    assert not quickstart_line.rstrip().endswith("| * |")  # a synthetic-set accuracy makes no front
    qwen_line = next(line for line in text.splitlines() if line.startswith("| `qwen3-14b.direct`"))
    assert "| 4800 |" in qwen_line and "not timed" in qwen_line and "n/a" in qwen_line
    out = tmp_path / "README.md"
    assert main(["zoo", "readme", "--results", str(tmp_path), "--output", str(out)]) == 0
    assert out.read_text() == text
