import json

import pytest

from bertjudge.core.records import (
    RecordError,
    input_hash,
    make_id,
    normalize,
    read_records,
    read_with_raw,
    write_records,
)


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_single_reference_becomes_list_and_defaults_are_filled():
    rec = normalize({"question": "Capital of France?", "candidate": "Paris.", "reference": "Paris"})
    assert rec["references"] == ["Paris"] and "reference" not in rec
    assert rec["label"] is None and rec["category"] == "other" and rec["task"] == "unknown"
    assert rec["meta"] == {} and rec["id"].startswith("unknown-")


def test_ids_are_stable_and_distinguish_candidates():
    base = {"task": "gsm8k", "question": "2+2?", "candidate": "4", "references": ["4"], "candidate_model": "m"}
    assert normalize(base)["id"] == normalize(dict(base))["id"]
    assert normalize(base)["id"] != normalize({**base, "candidate": "5"})["id"]
    assert normalize(base)["id"] != normalize({**base, "meta": {"variant": "soft"}})["id"]
    assert normalize({**base, "id": "mine"})["id"] == "mine"
    assert make_id("t", "q", "m", None, "c") == make_id("t", "q", "m", None, "c")


def test_input_hash_depends_only_on_what_the_judge_reads():
    a = normalize({"question": "q", "candidate": "c", "reference": "r", "task": "x"})
    b = normalize({"question": "q", "candidate": "c", "reference": "r", "task": "y", "label": 1})
    c = normalize({"question": "q", "candidate": "c2", "reference": "r"})
    assert input_hash(a) == input_hash(b) != input_hash(c)


@pytest.mark.parametrize("row, message", [
    ({"candidate": "x"}, "missing field 'references'"),
    ({"reference": "x"}, "missing field 'candidate'"),
    ({"candidate": 3, "reference": "x"}, "'candidate' must be a string"),
    ({"candidate": "x", "references": []}, "non-empty list"),
    ({"candidate": "x", "references": ["a", 2]}, "non-empty list"),
    ({"candidate": "x", "reference": "a", "references": ["a"]}, "not both"),
    ({"candidate": "x", "reference": "a", "label": 2}, "'label' must be 0, 1 or null"),
    ({"candidate": "x", "reference": "a", "label": "yes"}, "'label' must be 0, 1 or null"),
    ({"candidate": "x", "reference": "a", "category": "maths"}, "'category' must be one of"),
    ({"candidate": "x", "reference": "a", "meta": [1]}, "'meta' must be an object"),
    ({"candidate": "x", "reference": "a", "question": 5}, "'question' must be a string or null"),
])
def test_bad_records_are_refused_with_the_reason(row, message):
    with pytest.raises(RecordError, match=message):
        normalize(row, "f.jsonl:3")


def test_errors_name_file_and_line(tmp_path):
    good = json.dumps({"candidate": "a", "reference": "a"})
    path = write_lines(tmp_path / "in.jsonl", [good, "", '{"candidate": "b"}'])
    with pytest.raises(RecordError, match=r"in\.jsonl:3: missing field"):
        read_records(path)
    path = write_lines(tmp_path / "broken.jsonl", [good, '{"candidate": "b", '])
    with pytest.raises(RecordError, match=r"broken\.jsonl:2: invalid JSON"):
        read_records(path)
    path = write_lines(tmp_path / "dup.jsonl", [good, good])
    with pytest.raises(RecordError, match=r"dup\.jsonl:2: duplicate id"):
        read_records(path)


def test_empty_and_missing_files_are_refused(tmp_path):
    with pytest.raises(RecordError, match="empty file"):
        read_records(write_lines(tmp_path / "e.jsonl", ["", "  "]))
    with pytest.raises(RecordError, match="no such file"):
        read_records(tmp_path / "nope.jsonl")
    (tmp_path / "bad.parquet").write_bytes(b"not parquet")
    with pytest.raises(RecordError, match="not a readable Parquet"):
        read_records(tmp_path / "bad.parquet")


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".parquet"])
def test_round_trip(tmp_path, suffix):
    rows = [normalize({"task": "t", "category": "open_math", "question": None, "candidate": f"c{i}",
                       "references": ["1", "one"], "label": i % 2, "meta": {"style": "bare", "i": i}})
            for i in range(5)]
    path = write_records(tmp_path / f"out{suffix}", rows)
    assert read_records(path) == rows
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left behind


def test_raw_rows_keep_extra_fields(tmp_path):
    path = write_lines(tmp_path / "in.jsonl", [json.dumps({"candidate": "a", "reference": "a", "extra": 7})])
    [(raw, rec)] = read_with_raw(path)
    assert raw == {"candidate": "a", "reference": "a", "extra": 7}
    assert rec["extra"] == 7 and rec["references"] == ["a"]


def test_gzip_jsonl_is_compressed_reproducible_and_checked(tmp_path):
    import gzip

    rows = [normalize({"candidate": f"answer {i} " * 50, "reference": "1"}) for i in range(20)]
    first = write_records(tmp_path / "a.jsonl.gz", rows)
    second = write_records(tmp_path / "b.jsonl.gz", rows)
    assert first.read_bytes() == second.read_bytes()  # no file name or time in the gzip header
    assert first.stat().st_size < write_records(tmp_path / "a.jsonl", rows).stat().st_size / 5
    assert gzip.decompress(first.read_bytes()).decode().count("\n") == 20
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(gzip.compress(b'{"candidate": "a", "reference": "a"}\n{oops}\n'))
    with pytest.raises(RecordError, match=r"bad.jsonl.gz:2: invalid JSON"):
        read_records(bad)
    (tmp_path / "cut.jsonl.gz").write_bytes(first.read_bytes()[:200])
    with pytest.raises(RecordError, match="not a readable gzip file"):
        read_records(tmp_path / "cut.jsonl.gz")
    (tmp_path / "plain.jsonl.gz").write_text('{"candidate": "a", "reference": "a"}\n')
    with pytest.raises(RecordError, match="not a readable gzip file"):
        read_records(tmp_path / "plain.jsonl.gz")
