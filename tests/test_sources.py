"""Sources: files, folders and a hub dataset in the authors' layout (a local copy of the same format)."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bertjudge.core.records import RecordError, normalize, write_records
from bertjudge.data.sources import load_source, load_sources


def authors_layout(root):
    """A dataset folder laid out as hgissbkh/BERTJudge-Dataset: one config per task, one split per
    candidate model, columns question, reference, candidate, label; configs declared in the card."""
    layout = {"gsm8k": ["qwen3_8b", "llama3_8b"], "squad_v2": ["qwen3_8b"]}
    card = ["---", "configs:"]
    for task, models in layout.items():
        card += [f"- config_name: {task}", "  data_files:"]
        for model in models:
            (root / task).mkdir(parents=True, exist_ok=True)
            rows = [
                {
                    "question": f"{task} q{i}",
                    "reference": str(i),
                    "candidate": f"{model} says {i + i % 2}",
                    "label": int(i % 2 == 0),
                }
                for i in range(4)
            ]
            pq.write_table(pa.Table.from_pylist(rows), root / task / f"{model}.parquet")
            card += [f"  - split: {model}", f"    path: {task}/{model}.parquet"]
    (root / "README.md").write_text("\n".join(card + ["---", "", "test copy"]) + "\n")
    return root


def test_hub_layout_maps_configs_to_tasks_and_splits_to_models(tmp_path):
    root = authors_layout(tmp_path / "BERTJudge-Dataset")
    records = load_source(f"hf:{root}")
    assert len(records) == 12
    gsm = [r for r in records if r["task"] == "gsm8k"]
    assert {r["candidate_model"] for r in gsm} == {"qwen3_8b", "llama3_8b"}
    assert {r["category"] for r in gsm} == {"open_math"}
    assert {r["category"] for r in records if r["task"] == "squad_v2"} == {"context_extraction"}
    first = next(r for r in gsm if r["candidate_model"] == "qwen3_8b" and r["question"] == "gsm8k q1")
    assert first["references"] == ["1"] and first["label"] == 0 and first["candidate"] == "qwen3_8b says 2"
    only = load_source(f"hf:{root}?configs=gsm8k&splits=llama3_8b")
    assert len(only) == 4 and {r["candidate_model"] for r in only} == {"llama3_8b"}


def test_folder_of_files_and_duplicate_ids_across_sources(tmp_path):
    rows = [normalize({"candidate": f"c{i}", "reference": "r", "label": 1}) for i in range(3)]
    write_records(tmp_path / "d" / "a.jsonl", rows[:2])
    write_records(tmp_path / "d" / "b.parquet", rows[2:])
    assert [r["id"] for r in load_source(str(tmp_path / "d"))] == [r["id"] for r in rows]
    with pytest.raises(RecordError, match="more than one of the sources"):
        load_sources([str(tmp_path / "d"), str(tmp_path / "d" / "a.jsonl")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(RecordError, match="no .jsonl or .parquet"):
        load_source(str(tmp_path / "empty"))


def test_gzip_files_and_split_selection(tmp_path):
    rows = [
        normalize({"candidate": f"c{i}", "reference": "r", "label": i % 2, "split": ("train", "val", "test")[i % 3]})
        for i in range(9)
    ]
    path = write_records(tmp_path / "d" / "real.jsonl.gz", rows)
    assert load_source(str(tmp_path / "d")) == rows  # a folder lists .jsonl.gz files too
    assert load_source(str(path)) == rows
    assert [r["split"] for r in load_source(f"{path}?split=train")] == ["train"] * 3
    assert {r["split"] for r in load_source(f"{path}?split=val,test")} == {"val", "test"}
    with pytest.raises(RecordError, match="no rows with split"):
        load_source(f"{path}?split=ood")
    with pytest.raises(ValueError, match="unknown options"):
        load_source(f"{path}?rows=3")


def test_embedded_attacks_option():
    rows = load_source("embedded:train?n=40&seed=2&attacks=hedge,refusal")
    assert len(rows) == 40 and {r["meta"]["attack"] for r in rows} == {"hedge", "refusal"}
    with pytest.raises(ValueError, match="embedded:train\\?attacks=hedges: unknown attacks"):
        load_source("embedded:train?attacks=hedges")


def test_unknown_embedded_split_and_options_are_refused():
    with pytest.raises(ValueError, match="unknown embedded split"):
        load_source("embedded:training")
    with pytest.raises(ValueError, match="unknown options"):
        load_source("embedded:train?size=3")


def test_a_file_source_takes_a_seeded_sample(tmp_path):
    from bertjudge.core.records import write_records

    rows = [
        {"id": f"r{i}", "candidate": "c", "reference": "r", "split": "train" if i % 2 else "val"} for i in range(40)
    ]
    write_records(tmp_path / "rows.jsonl", rows)
    sample = load_source(f"{tmp_path / 'rows.jsonl'}?split=train&n=5&seed=3")
    again = load_source(f"{tmp_path / 'rows.jsonl'}?split=train&n=5&seed=3")
    other = load_source(f"{tmp_path / 'rows.jsonl'}?split=train&n=5&seed=4")
    assert [r["id"] for r in sample] == [r["id"] for r in again] != [r["id"] for r in other]
    assert len(sample) == 5 and all(r["split"] == "train" for r in sample)
    assert [r["id"] for r in sample] == sorted((r["id"] for r in sample), key=lambda i: int(i[1:]))  # file order
    with pytest.raises(ValueError, match="n=21 must be"):
        load_source(f"{tmp_path / 'rows.jsonl'}?split=train&n=21")


def test_models_and_exclude_models_keep_or_leave_out_generators(tmp_path):
    models = ["FiD (DPR+FiD)", "GPT-4", "Bing Chat"]
    rows = [
        normalize({"candidate": f"c{i}", "reference": "r", "label": 1, "candidate_model": models[i % 3]})
        for i in range(9)
    ]
    path = write_records(tmp_path / "real.jsonl.gz", rows)
    assert {r["candidate_model"] for r in load_source(f"{path}?models=GPT-4")} == {"GPT-4"}
    left = load_source(f"{path}?exclude_models=FiD+(DPR%2BFiD),Bing+Chat&n=2&seed=1")
    assert len(left) == 2 and {r["candidate_model"] for r in left} == {"GPT-4"}
    assert len(load_source(f"{path}?exclude_models=GPT-4")) == 6
    with pytest.raises(RecordError, match=r"no row has candidate_model 'GPT-5' \(there are 'Bing Chat', 'FiD"):
        load_source(f"{path}?exclude_models=GPT-5")
    with pytest.raises(RecordError, match="no rows left"):
        load_source(f"{path}?models=GPT-4&exclude_models=GPT-4")
