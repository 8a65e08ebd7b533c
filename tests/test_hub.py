"""``Judge.load("hf://org/name@revision")``: a judge from the Hugging Face Hub, through the real
``snapshot_download`` in offline mode, from a local folder laid out as the Hub's cache
(``models--org--name/refs``, ``snapshots/<commit>``, ``blobs``, ``trees/<commit>.json``), built here from
exported tiny judges; the commit is recorded, a wrong revision or a changed file is refused, and only the files of a
judge folder are taken (``allow_patterns``): a repository's other files are ignored, by ``Judge.load`` and by
``zoo pull``."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from huggingface_hub import constants
from test_bleurt import make_tiny_bleurt
from test_generative import make_tiny_causal_lm, smollm2_tokenizer

from bertjudge.core.hashing import folder_files
from bertjudge.core.judge_file import JudgeFileError, judge_folder_files
from bertjudge.judges.bleurt import BleurtJudge
from bertjudge.judges.encoder import EncoderJudge
from bertjudge.judges.generative import GenerativeJudge
from bertjudge.judges.loading import Judge
from bertjudge.zoo import registry as zoo

REPO = "acme/tiny-judge"
HF = f"hf://{REPO}"
MAIN, TAGGED = "a" * 39 + "1", "b" * 39 + "2"  # two commits: main, and the tag v1
LFS = ("model.safetensors", "pytorch_model.bin", "images/calibration.png")  # files the Hub keeps in LFS (by sha256)
# what a repository may hold beside the judge: none of it is a judge file, none of it may stop a load
EXTRA = {
    ".gitattributes": b"*.safetensors filter=lfs diff=lfs merge=lfs -text\n",
    "images/calibration.png": b"\x89PNG not really",
    "train.log": b"epoch 1: loss 0.3\n",
    "pytorch_model.bin": b"a pickle",
    "notes/README.md": b"# how we trained it\n",
}
QUESTIONS, CANDIDATES, REFERENCES = ["What is 2+3?", "Capital of France?"], ["5", "Lyon, I think."], [["5"], ["Paris"]]


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def add_commit(
    cache: Path,
    repo: str,
    folder: Path,
    commit: str,
    refs=("main",),
    links: bool = True,
    tree: bool = True,
    listed_only: dict[str, bytes] | None = None,
) -> Path:
    """Put ``folder`` in the cache as ``repo`` at ``commit``, as ``snapshot_download`` leaves it: each file a
    link to its blob (named by sha256 for LFS files, by git blob id for the others), the refs, the tree
    listing; ``links=False``: plain copies and no listing (a cache without the Hub's hashes).
    ``listed_only``: files of the repository that are in the tree listing but were not downloaded (as a
    download with ``allow_patterns`` leaves them)."""
    storage = cache / f"models--{repo.replace('/', '--')}"
    snapshot = storage / "snapshots" / commit
    listing = {}
    files = [(p.relative_to(folder).as_posix(), p.read_bytes(), True) for p in folder.rglob("*") if p.is_file()]
    files += [(rel, data, False) for rel, data in (listed_only or {}).items()]
    for rel, data, downloaded in sorted(files):
        target = snapshot / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel in LFS:
            sha = hashlib.sha256(data).hexdigest()
            pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha}\nsize {len(data)}\n".encode()
            etag = sha
            listing[rel] = {
                "size": len(data),
                "blob_id": git_blob_id(pointer),
                "lfs_sha256": sha,
                "lfs_size": len(data),
            }
        else:
            etag = git_blob_id(data)
            listing[rel] = {"size": len(data), "blob_id": etag}
        if not downloaded:
            continue
        if links:
            blob = storage / "blobs" / etag
            blob.parent.mkdir(parents=True, exist_ok=True)
            blob.write_bytes(data)
            target.symlink_to(os.path.relpath(blob, target.parent))
        else:
            target.write_bytes(data)
    for ref in refs:
        (storage / "refs" / ref).parent.mkdir(parents=True, exist_ok=True)
        (storage / "refs" / ref).write_text(commit)
    if links and tree:
        (storage / "trees").mkdir(exist_ok=True)
        (storage / "trees" / f"{commit}.json").write_text(json.dumps({"format_version": 1, "files": listing}))
    return snapshot


def manifest_path(commit: str) -> Path:
    """Where bertjudge records the sha256 of a snapshot's files the Hub gave no hash for: in its own cache."""
    return Path(os.environ["BERTJUDGE_CACHE"]) / "hub" / REPO.replace("/", "--") / f"{commit}.manifest.json"


@pytest.fixture(scope="module")
def judges(tiny_backbone, tmp_path_factory):
    """Two exported tiny judges that score differently (two commits of one repo)."""
    root = tmp_path_factory.mktemp("hub-judges")
    return (
        EncoderJudge(backbone=tiny_backbone, temperature=0.02).export(root / "main"),
        EncoderJudge(backbone=tiny_backbone, temperature=0.05, bias=1.0).export(root / "v1"),
    )


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """An empty Hugging Face cache (HF_HUB_CACHE), offline, and an empty bertjudge cache (BERTJUDGE_CACHE)."""
    cache = tmp_path / "hub"
    cache.mkdir()
    monkeypatch.setenv("BERTJUDGE_CACHE", str(tmp_path / "bertjudge-cache"))
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))  # read by huggingface_hub at import
    assert constants.is_offline_mode()  # tests/conftest.py: HF_HUB_OFFLINE=1
    return cache


def test_load_by_hub_id_and_revision_records_the_commit(judges, hub_cache):
    main, v1 = judges
    add_commit(hub_cache, REPO, main, MAIN)
    add_commit(hub_cache, REPO, v1, TAGGED, refs=("v1",))
    judge = Judge.load(HF)
    assert judge.provenance["hub"] == {"repo": REPO, "revision": "main", "commit": MAIN}
    scores = judge.score(QUESTIONS, CANDIDATES, REFERENCES)
    np.testing.assert_allclose(scores, Judge.load(str(main)).score(QUESTIONS, CANDIDATES, REFERENCES), atol=1e-6)
    tagged = Judge.load(f"{HF}@v1")
    assert tagged.provenance["hub"] == {"repo": REPO, "revision": "v1", "commit": TAGGED}
    assert tagged.temperature == 0.05 and tagged.bias == 1.0
    assert not np.allclose(tagged.score(QUESTIONS, CANDIDATES, REFERENCES), scores)
    by_keyword = Judge.load(HF, revision="v1")  # revision=: the keyword form of @revision
    assert by_keyword.provenance["hub"] == tagged.provenance["hub"]
    by_commit = Judge.load(f"{HF}@{MAIN}")
    assert by_commit.provenance["hub"]["commit"] == MAIN and by_commit.temperature == 0.02
    assert not manifest_path(MAIN).exists()  # every file had a Hub hash: nothing recorded


def test_wrong_revision_is_refused(judges, hub_cache):
    add_commit(hub_cache, REPO, judges[0], MAIN)
    for revision in ("v9", "c" * 40):
        with pytest.raises(FileNotFoundError, match=rf"{REPO}@{revision}: .*no revision '{revision}'") as err:
            Judge.load(f"{HF}@{revision}")
        assert "\n" not in str(err.value) and "HF_HUB_OFFLINE" in str(err.value)
    with pytest.raises(FileNotFoundError, match="hf://acme/other@main"):
        Judge.load("hf://acme/other")
    with pytest.raises(ValueError, match="revision= applies to a Hub id"):
        Judge.load(str(judges[0]), revision="main")
    with pytest.raises(ValueError, match="the name says revision 'v1' but revision='v2' was given"):
        Judge.load(f"{HF}@v1", revision="v2")


@pytest.mark.parametrize("changed", ["model.safetensors", "judge.json"])
def test_a_file_changed_in_the_cache_is_refused(judges, hub_cache, changed):
    snapshot = add_commit(hub_cache, REPO, judges[0], MAIN)
    Judge.load(HF)
    blob = (snapshot / changed).resolve()  # the blob the snapshot links to
    data = bytearray(blob.read_bytes())
    data[len(data) // 2] ^= 1
    blob.write_bytes(bytes(data))
    with pytest.raises(JudgeFileError, match=rf"{changed}: (sha256|git-sha1) \w+ differs from the Hub's") as err:
        Judge.load(HF)
    assert "\n" not in str(err.value)


def test_a_link_switched_to_another_blob_is_refused(judges, hub_cache):
    snapshot = add_commit(hub_cache, REPO, judges[0], MAIN)
    other = add_commit(hub_cache, REPO, judges[1], TAGGED, refs=("v1",))
    (snapshot / "judge.json").unlink()
    (snapshot / "judge.json").symlink_to(os.readlink(other / "judge.json"))  # a valid blob, of another commit
    with pytest.raises(JudgeFileError, match="judge.json: links to blob .* but the Hub lists"):
        Judge.load(HF)


def test_without_hub_hashes_the_first_load_is_recorded_and_later_changes_refused(judges, hub_cache):
    snapshot = add_commit(hub_cache, REPO, judges[0], MAIN, links=False)  # plain files, no tree listing
    judge = Judge.load(HF)
    manifest = json.loads(manifest_path(MAIN).read_text())
    recorded = manifest["files"]
    assert manifest["source"] == f"{HF}@{MAIN}"
    assert recorded["judge.json"] == hashlib.sha256((snapshot / "judge.json").read_bytes()).hexdigest()
    assert "model.safetensors" in recorded and judge.provenance["hub"]["commit"] == MAIN
    Judge.load(HF)  # unchanged: loads
    config = json.loads((snapshot / "judge.json").read_text())
    (snapshot / "judge.json").write_text(json.dumps({**config, "temperature": 9.0}))
    first = r"the files differ from those of the first download of hf://acme/tiny-judge@a+1"
    with pytest.raises(JudgeFileError, match=rf"{first} \(judge.json: sha256 \w+ != expected \w+;") as err:
        Judge.load(HF)
    assert "\n" not in str(err.value)
    shutil.copy(judges[0] / "judge.json", snapshot / "judge.json")
    (snapshot / "extra.txt").write_text("new")  # not a judge file: neither recorded nor checked
    Judge.load(HF)
    (snapshot / "special_tokens_map.json").write_text("{}")  # a tokenizer file: part of the judge
    with pytest.raises(JudgeFileError, match=rf"{first} \(special_tokens_map.json: not in the manifest;"):
        Judge.load(HF)


def test_device_and_dtype(judges):
    folder = str(judges[0])
    fp32 = Judge.load(folder).score(QUESTIONS, CANDIDATES, REFERENCES)
    judge = Judge.load(folder, device="cpu", dtype="bfloat16")
    assert {p.dtype for p in judge.parameters()} == {torch.bfloat16} and judge.device.type == "cpu"
    np.testing.assert_allclose(judge.score(QUESTIONS, CANDIDATES, REFERENCES), fp32, atol=0.1)
    assert Judge.load(folder, dtype=torch.float16).model.dtype == torch.float16
    with pytest.raises(ValueError, match="dtype 'int8': give a floating dtype"):
        Judge.load(folder, dtype="int8")
    assert Judge.load("regex", device="cpu").name  # a rule judge: nothing to move


def test_every_file_an_export_writes_is_a_judge_file(tiny_backbone, tiny_llama, tmp_path):
    """JUDGE_FOLDER_PATTERNS (what a Hub download takes) covers every file each trained kind exports."""
    torch.manual_seed(0)
    folders = [
        EncoderJudge(backbone=tiny_backbone).export(tmp_path / "encoder"),
        EncoderJudge(backbone=tiny_backbone, num_labels=2, error_head=True).export(tmp_path / "error-head"),
        GenerativeJudge(backbone=tiny_llama, lora_r=0).export(tmp_path / "generative"),
        GenerativeJudge(backbone=make_tiny_causal_lm(tmp_path / "lm", smollm2_tokenizer(), "llama"), lora_r=0).export(
            tmp_path / "generative-bpe"
        ),
        BleurtJudge(checkpoint=make_tiny_bleurt(tmp_path / "bleurt-checkpoint")).export(tmp_path / "bleurt"),
    ]
    for folder in folders:
        files = folder_files(folder)
        assert judge_folder_files(files) == files, f"{folder.name}: {set(files) - set(judge_folder_files(files))}"
    assert judge_folder_files(sorted(EXTRA)) == []


@pytest.mark.parametrize(
    "downloaded, links",
    [(False, True), (True, True), (True, False)],
    ids=["listed-not-downloaded", "in-the-snapshot", "in-the-snapshot-without-hub-hashes"],
)
def test_extra_files_in_the_repository_are_ignored(judges, hub_cache, tmp_path, monkeypatch, downloaded, links):
    """A repository with more than the judge (.gitattributes, an image, a training log, pickled weights…):
    the judge's files are downloaded and checked, the others are ignored instead of refusing the repository."""
    monkeypatch.setenv("BERTJUDGE_CACHE", str(tmp_path / "zoo-cache"))
    folder = tmp_path / "repo"
    shutil.copytree(judges[0], folder)
    extra = dict(EXTRA)
    if downloaded:  # fetched into the same snapshot by another tool (all but the pickle, which Judge.load refuses)
        del extra["pytorch_model.bin"]
        for rel, data in extra.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(data)
    snapshot = add_commit(hub_cache, REPO, folder, MAIN, links=links, listed_only=None if downloaded else extra)
    judge = Judge.load(HF)  # without allow_patterns, listed files not downloaded: "the cached snapshot is incomplete"
    assert judge.provenance["hub"]["commit"] == MAIN
    np.testing.assert_allclose(
        judge.score(QUESTIONS, CANDIDATES, REFERENCES),
        Judge.load(str(judges[0])).score(QUESTIONS, CANDIDATES, REFERENCES),
        atol=1e-6,
    )
    manifest = manifest_path(MAIN)
    assert manifest.is_file() == (not links)  # without the Hub's hashes: the judge's files recorded, no others
    if manifest.is_file():
        assert set(json.loads(manifest.read_text())["files"]) == set(folder_files(judges[0]))
    if downloaded:
        (snapshot / "train.log").resolve().write_bytes(b"changed after download")  # not checked: not the judge's
        (snapshot / "images" / "calibration.png").unlink()
        Judge.load(HF)
    # zoo pull of the same repository: the cached judge holds the judge's files only
    registry = tmp_path / "reg.yaml"
    registry.write_text(
        yaml.safe_dump(
            {
                "minilm-l6.hub": {
                    "class_path": "bertjudge.judges.encoder.EncoderJudge",
                    "source": f"hf://{REPO}@main",
                    "format": {"order": "QCR"},
                    "license": "Apache-2.0",
                    "provenance": {"training_data": "toy"},
                }
            }
        )
    )
    pulled = zoo.pull("minilm-l6.hub", registry)
    assert folder_files(pulled) == folder_files(judges[0]) and zoo.verify("minilm-l6.hub", registry) == []
    assert Judge.load(str(pulled)).temperature == 0.02
