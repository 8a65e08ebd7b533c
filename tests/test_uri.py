"""One way to name a model (``bertjudge.zoo.uri``): every spelling ``Judge.load``, ``--judge``, a zoo source and
``zoo publish --to`` take, the canonical form each is written back in, and a one-line error naming the right spelling
for every other."""

from __future__ import annotations

import pytest

from bertjudge.cli.main import main
from bertjudge.judges.loading import Judge
from bertjudge.zoo.uri import ModelURI, URIError, parse_target, parse_uri


@pytest.mark.parametrize(
    "text, scheme, location, revision, canonical",
    [
        ("hf://org/name", "hf", "org/name", None, "hf://org/name"),
        ("hf://org/name@v1", "hf", "org/name", "v1", "hf://org/name@v1"),
        ("hf://org/name@" + "a" * 40, "hf", "org/name", "a" * 40, "hf://org/name@" + "a" * 40),
        ("hf://org/name@refs/pr/3", "hf", "org/name", "refs/pr/3", "hf://org/name@refs/pr/3"),
        ("HF://Org/Name.v2", "hf", "Org/Name.v2", None, "hf://Org/Name.v2"),
        ("http://127.0.0.1:8000/", "http", "http://127.0.0.1:8000", None, "http://127.0.0.1:8000"),
        ("https://judge.example/api", "https", "https://judge.example/api", None, "https://judge.example/api"),
        ("file:///srv/judges/tiny", "file", "/srv/judges/tiny", None, "file:///srv/judges/tiny"),
        ("file://runs/quickstart/judge", "file", "runs/quickstart/judge", None, "file://runs/quickstart/judge"),
        ("minilm-l6.quickstart", "zoo", "minilm-l6.quickstart", None, "minilm-l6.quickstart"),
        ("runs/no-such/judge", "path", "runs/no-such/judge", None, "runs/no-such/judge"),  # a path, even if missing
        ("  hf://org/name  ", "hf", "org/name", None, "hf://org/name"),
    ],
)
def test_every_spelling(text, scheme, location, revision, canonical):
    uri = parse_uri(text)
    assert uri == ModelURI(scheme, location, revision) and str(uri) == canonical
    assert parse_uri(canonical) == uri  # the canonical form reads back the same


def test_an_existing_path_is_a_folder_before_anything_else(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("minilm-l6.quickstart", "org/name"):  # a zoo name's and a Hub id's spelling, but folders here
        (tmp_path / name).mkdir(parents=True)
        assert parse_uri(name) == ModelURI("path", name) and parse_uri(name).is_folder


@pytest.mark.parametrize(
    "text, message",
    [
        ("hf:org/name", "hf:org/name: write a Hub id as hf://org/name"),
        ("hf:/org/name@v1", "hf:/org/name@v1: write a Hub id as hf://org/name@v1"),
        ("org/name", "org/name: no such folder; a Hub id is written hf://org/name"),
        ("org/name@v1", "org/name@v1: no such folder; a Hub id is written hf://org/name@v1"),
        ("hf://org", "hf://org: Invalid HF URI"),
        ("hf://org/name@", "Empty revision"),
        ("hf://org/na me", "hf://org/na me: Invalid HF URI"),
        ("hf://datasets/org/name", "a judge is a model repository"),
        ("hf://org/name/model.safetensors", "a judge is a model repository"),
        ("ftp://host/judge", "ftp://host/judge: unknown scheme ftp://"),
        ("s3://bucket/judge", "unknown scheme s3://"),
        ("", "an empty name"),
    ],
)
def test_other_spellings_are_one_line_errors_naming_the_right_one(text, message):
    with pytest.raises(URIError) as err:
        parse_uri(text)
    assert message in str(err.value) and "\n" not in str(err.value)
    assert isinstance(err.value, ValueError)
    if "Invalid HF URI" in message or "Empty revision" in message:
        assert "A Hub id is hf://org/name[@revision]" in str(err.value)


def test_the_revision_keyword_is_the_same_name():
    assert parse_uri("hf://org/name").at("v1") == parse_uri("hf://org/name@v1")
    assert parse_uri("hf://org/name@v1").at("v1") == parse_uri("hf://org/name@v1")
    assert parse_uri("hf://org/name").at(None) == parse_uri("hf://org/name")
    with pytest.raises(URIError, match="the name says revision 'v1' but revision='v2' was given"):
        parse_uri("hf://org/name@v1").at("v2")
    with pytest.raises(URIError, match=r"revision= applies to a Hub id \(hf://org/name\), not to a zoo name"):
        parse_uri("minilm-l6.quickstart").at("v1")


def test_publish_targets(tmp_path):
    assert parse_target("hf://org/name") == ModelURI("hf", "org/name")
    assert parse_target(str(tmp_path / "new" / "store")) == ModelURI("path", str(tmp_path / "new" / "store"))
    assert parse_target("store/judges") == ModelURI("path", "store/judges")  # a folder to make, never a Hub id
    assert parse_target("file:///srv/zoo") == ModelURI("file", "/srv/zoo")
    with pytest.raises(URIError, match="publish to hf://org/name; the commit made is recorded"):
        parse_target("hf://org/name@main")
    with pytest.raises(URIError, match="publish to a folder or to hf://org/name"):
        parse_target("https://example.org/zoo")


@pytest.mark.parametrize(
    "spec, message",
    [
        ("hf:acme/judge", "write a Hub id as hf://acme/judge"),
        ("acme/judge@v1", "no such folder; a Hub id is written hf://acme/judge@v1"),
        ("hf://acme/judge/README.md", "a judge is a model repository"),
        ("ftp://acme/judge", "unknown scheme ftp://"),
    ],
)
def test_judge_load_and_the_command_line_refuse_other_spellings(spec, message, tmp_path, capsys):
    with pytest.raises(URIError, match=message):
        Judge.load(spec)
    with pytest.raises(URIError, match=message):
        Judge.load(f"cascade:{spec}")  # inside a routing spec too
    src = tmp_path / "in.jsonl"
    src.write_text('{"question": "2+3?", "candidate": "5", "reference": "5"}\n')
    assert main(["judge", "--judge", spec, "--input", str(src), "--output", str(tmp_path / "out.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("bertjudge judge: ") and message in err and "\n" not in err


def test_judge_load_names_the_spellings_for_a_name_that_is_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("BERTJUDGE_CACHE", str(tmp_path / "cache"))
    with pytest.raises(FileNotFoundError, match=r"no-such\.judge \(no such folder, nor a name in .*registry.yaml\)"):
        Judge.load("no-such.judge")
    with pytest.raises(FileNotFoundError, match=r"not a judge folder .*hf://org/name\[@revision\]") as err:
        Judge.load(str(tmp_path / "missing"))
    assert "\n" not in str(err.value)
