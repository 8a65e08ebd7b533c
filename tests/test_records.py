import json

import pytest

from bertjudge.core.records import (
    RecordError,
    input_hash,
    make_id,
    normalize,
    read_appended,
    read_located,
    read_records,
    read_with_raw,
    row_hash,
    write_records,
)


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_single_reference_becomes_list_and_defaults_are_filled():
    rec = normalize({"question": "Capital of France?", "candidate": "Paris.", "reference": "Paris"})
    assert rec["references"] == ["Paris"] and "reference" not in rec
    assert rec["label"] is None and rec["category"] == "open_qa" and rec["task"] == "unknown"
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


@pytest.mark.parametrize(
    "row, message",
    [
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
    ],
)
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
    rows = [
        normalize(
            {
                "task": "t",
                "category": "open_math",
                "question": None,
                "candidate": f"c{i}",
                "references": ["1", "one"],
                "label": i % 2,
                "meta": {"style": "bare", "i": i},
            }
        )
        for i in range(5)
    ]
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


@pytest.mark.parametrize(
    "change",
    [
        {"category": "open_math"},
        {"label": 1},
        {"meta": {"variant": "x"}},
        {"task": "other-task"},
        {"note": 8},
        {"candidate_model": "m2"},
    ],
)
def test_row_hash_covers_every_field_where_input_hash_covers_what_the_judge_reads(change):
    base = {
        "id": "r1",
        "question": "q",
        "candidate": "c",
        "reference": "r",
        "category": "open_qa",
        "label": 0,
        "meta": {"variant": "plain"},
        "note": 7,
    }
    a, b = normalize(base), normalize({**base, **change})
    assert input_hash(a) == input_hash(b)
    assert row_hash(a) != row_hash(b) and row_hash(a) == row_hash(normalize(dict(base)))


def test_read_located_names_each_row_by_file_and_line(tmp_path):
    path = write_lines(
        tmp_path / "in.jsonl",
        [json.dumps({"candidate": "a", "reference": "a"}), "", json.dumps({"candidate": "b", "reference": "b"})],
    )
    assert [where for where, _, _ in read_located(path)] == [f"{path}:1", f"{path}:3"]
    assert read_with_raw(path) == [(raw, rec) for _, raw, rec in read_located(path)]


def test_a_line_that_is_not_utf8_is_named_by_file_and_line(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"candidate": "a", "reference": "a"}\n{"candidate": "caf\xe9", "reference": "a"}\n')
    before = path.read_bytes()
    with pytest.raises(RecordError, match=r"latin1\.jsonl:2: not UTF-8 text \(byte 19\)"):
        read_records(path)
    assert path.read_bytes() == before


def test_read_appended_drops_a_cut_last_line_and_names_garbage_before_it(tmp_path):
    path = tmp_path / "run.partial.jsonl"
    assert read_appended(path) == ([], 0)  # no file yet: nothing done
    whole = '{"a": 1}\n\n{"a": 2}\n'
    path.write_text(whole + '{"a": 3, "b": "cut by kill -')
    rows, size = read_appended(path)
    assert [obj for _, obj in rows] == [{"a": 1}, {"a": 2}] and size == len(whole.encode())
    assert [where for where, _ in rows] == [f"{path}:1", f"{path}:3"]
    path.write_text('{"a": 1}\n{"a": 3}\n')  # a complete last line is kept
    assert len(read_appended(path)[0]) == 2
    path.write_text('{"a": 1}\ngarbage\n{"a": 2}\n')
    with pytest.raises(RecordError, match=r"run\.partial\.jsonl:2: invalid JSON .*corrupted"):
        read_appended(path)
    path.write_bytes(b'{"a": 1}\n\xff\xfe\n')
    with pytest.raises(RecordError, match=r"run\.partial\.jsonl:2: not UTF-8"):
        read_appended(path)


def test_parquet_keeps_every_column_of_every_row_and_reads_back(tmp_path):
    rows = [
        {"id": "a", "candidate": "x", "references": ["x"], "note": 1, "meta": {"k": 1}},
        {"id": "b", "candidate": "y", "reference": "y", "extra": {"deep": [1, {"z": None}]}, "note": "two"},
        {
            "id": "c",
            "candidate": "z",
            "references": ["z"],
            "score": None,
            "error": "ValueError: bad",
            "flags": [True, False],
        },
    ]
    path = write_records(tmp_path / "mixed.parquet", rows)
    raw = [r for r, _ in read_with_raw(path)]
    for original, back in zip(rows, raw):
        present = {k: v for k, v in back.items() if v is not None}
        assert present == {"meta": {}, **{k: v for k, v in original.items() if v is not None}}
        assert set(back) == {k for row in rows for k in row} | {"meta"}  # every column, null where missing
    assert [r["note"] for r in raw] == [1, "two", None]  # an int and a str: kept as they were
    assert raw[1]["extra"] == {"deep": [1, {"z": None}]} and raw[0]["extra"] is None
    assert [r["references"] for r in read_records(path)] == [["x"], ["y"], ["z"]]
    assert read_records(write_records(tmp_path / "again.parquet", raw)) == read_records(path)


def test_a_null_reference_column_next_to_references_is_no_value():
    assert normalize({"candidate": "a", "reference": None, "references": ["a"]})["references"] == ["a"]
    assert normalize({"candidate": "a", "reference": "a", "references": None})["references"] == ["a"]
    with pytest.raises(RecordError, match="not both"):
        normalize({"candidate": "a", "reference": "a", "references": ["a"]})
