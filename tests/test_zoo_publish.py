"""``zoo publish --to hf://org/name``: the real ``huggingface_hub.HfApi`` calls (``create_repo``, ``upload_folder``)
against a local stand-in of the Hub's HTTP API (the four endpoints they use: repository creation, model-card check,
pre-upload, commit), which keeps what it is sent. The repository is private unless ``--public``; the registry entry
is pinned to the commit made, with the sha256 of every file uploaded; offline, publish refuses before measuring."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from huggingface_hub import constants

from bertjudge.cli.main import main
from bertjudge.core.records import normalize
from bertjudge.evaluation import bench
from bertjudge.evaluation.publish import publish
from bertjudge.judges.encoder import EncoderJudge
from bertjudge.zoo import registry as zoo

ROWS = [
    normalize({"question": "What is 2+3?", "candidate": c, "reference": "5", "category": "open_math", "label": y})
    for c, y in (("5", 1), ("It is 6.", 0))
]


class HubStandIn:
    """A local HTTP server answering as the Hub does to ``create_repo`` and ``upload_folder`` (every file uploaded
    "regular", inline in the commit): what it was asked (``repos``: the creation payloads by repository; ``files``:
    the bytes committed, by repository and path; ``tokens``: the bearer tokens seen)."""

    def __init__(self):
        self.repos, self.files, self.tokens, self.commits = {}, {}, set(), []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self.answer(404, {"error": "not served by the stand-in"})

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                stand_in.tokens.add(self.headers.get("Authorization"))
                parts = self.path.split("?")[0].strip("/").split("/")  # api/models/<org>/<name>/<action>/<rev>
                if self.path == "/api/repos/create":
                    payload = json.loads(body)
                    repo = f"{payload['organization']}/{payload['name']}"
                    stand_in.repos[repo] = payload
                    return self.answer(200, {"url": f"{stand_in.url}/{repo}"})
                if self.path == "/api/validate-yaml":
                    return self.answer(200, {"errors": [], "warnings": []})
                repo = "/".join(parts[2:4])
                if parts[4:5] == ["preupload"]:
                    files = json.loads(body)["files"]
                    modes = [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]
                    return self.answer(200, {"files": modes})
                if parts[4:5] == ["commit"] and repo in stand_in.repos:
                    for line in body.decode().splitlines():
                        item = json.loads(line)
                        if item["key"] == "file":
                            content = base64.b64decode(item["value"]["content"])
                            stand_in.files.setdefault(repo, {})[item["value"]["path"]] = content
                    oid = hashlib.sha1(body).hexdigest()
                    stand_in.commits.append(oid)
                    return self.answer(200, {"commitUrl": f"{stand_in.url}/{repo}/commit/{oid}", "commitOid": oid})
                self.answer(404, {"error": f"no such endpoint or repository: {self.path}"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def hub(monkeypatch):
    """The stand-in, as the Hub endpoint (``HF_ENDPOINT``), online."""
    stand_in = HubStandIn()
    monkeypatch.setattr(constants, "ENDPOINT", stand_in.url)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    yield stand_in
    stand_in.server.shutdown()
    stand_in.server.server_close()


@pytest.fixture(scope="module")
def exported(tiny_backbone, tmp_path_factory):
    return EncoderJudge(backbone=tiny_backbone).export(tmp_path_factory.mktemp("judges") / "tiny")


@pytest.fixture(autouse=True)
def small_eval_set(tmp_path, monkeypatch):
    """Two labelled rows stand in for the real test set publish measures accuracy on."""
    path = tmp_path / "real-test-v1.jsonl"
    path.write_text("".join(json.dumps({**row, "id": f"r{i}"}) + "\n" for i, row in enumerate(ROWS)))
    monkeypatch.setattr(bench, "EVAL_FILES", (path,))
    monkeypatch.setenv("BERTJUDGE_CACHE", str(tmp_path / "cache"))


def test_publish_to_the_hub_makes_a_private_repository_and_pins_the_commit(hub, exported, tmp_path):
    registry = tmp_path / "reg.yaml"
    entry = publish(
        exported,
        "minilm-l6.hub-v1",
        "Apache-2.0",
        "hf://acme/tiny-judge",
        registry,
        token="hf_test",
        n=4,
        results_dir=tmp_path / "results",
        timing=False,
    )
    assert hub.repos["acme/tiny-judge"]["visibility"] == "private"  # the default: nothing public by accident
    assert hub.tokens == {"Bearer hf_test"}
    [commit] = hub.commits
    assert entry.source == f"hf://acme/tiny-judge@{commit}" and entry.revision_pinned
    uploaded = hub.files["acme/tiny-judge"]
    assert {rel: hashlib.sha256(data).hexdigest() for rel, data in uploaded.items()} == entry.files
    assert set(uploaded) == {*(p.name for p in exported.iterdir()), "README.md"}
    assert b"## Measured by `bertjudge zoo publish`" in uploaded["README.md"]
    assert zoo.load_registry(registry) == {"minilm-l6.hub-v1": entry}


def test_zoo_publish_public_makes_a_public_repository(hub, exported, tmp_path, capsys):
    registry = tmp_path / "reg.yaml"
    publish_args = ["zoo", "--registry", str(registry), "publish", str(exported), "--license", "MIT", "--no-timing"]
    publish_args += ["--n", "4", "--results", str(tmp_path / "results"), "--token", "hf_test"]
    assert main([*publish_args, "--name", "minilm-l6.hub-v2", "--to", "hf://acme/open-judge", "--public"]) == 0
    assert hub.repos["acme/open-judge"]["visibility"] == "public"
    out = capsys.readouterr().out
    assert f"registered minilm-l6.hub-v2 in {registry}: hf://acme/open-judge@{hub.commits[-1]}" in out
    assert main([*publish_args, "--name", "minilm-l6.hub-v3", "--to", "hf://acme/closed-judge"]) == 0
    assert hub.repos["acme/closed-judge"]["visibility"] == "private"
    assert main([*publish_args, "--name", "minilm-l6.hub-v4", "--to", "hf://acme/x@main"]) == 2
    assert "--to hf://acme/x@main: publish to hf://org/name; the commit made is recorded" in capsys.readouterr().err
    assert "acme/x" not in hub.repos and set(zoo.load_registry(registry)) == {"minilm-l6.hub-v2", "minilm-l6.hub-v3"}


def test_publish_offline_refuses_before_measuring(exported, tmp_path):
    assert constants.is_offline_mode()  # tests/conftest.py: HF_HUB_OFFLINE=1
    with pytest.raises(zoo.ZooError) as err:
        publish(
            exported,
            "minilm-l6.hub-v1",
            "MIT",
            "hf://acme/tiny-judge",
            tmp_path / "reg.yaml",
            n=4,
            results_dir=tmp_path / "results",
            timing=False,
        )
    assert str(err.value) == "hf://acme/tiny-judge: cannot publish to the Hub: HF_HUB_OFFLINE is set"
    assert not (tmp_path / "results").exists() and not (tmp_path / "reg.yaml").exists()
