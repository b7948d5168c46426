"""``chainrule gpt serve``: OpenAI's /v1/completions over real HTTP on loopback (http.client), streamed
and not, and every refusal in OpenAI's error shape; the server keeps serving after each."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from chainrule import cli, nn
from chainrule.gpt import ByteTokenizer
from chainrule.gpt.server import make_server

CONTEXT = 32


class Scripted:
    """Most likely next byte: the next one of ``script`` (then spaces), one per call (so: one request
    per server); NaN logits with ``broken``."""

    def __init__(self, script: str, broken: bool = False) -> None:
        self.script, self.broken = list(script.encode("utf-8")), broken
        self.config = type("Config", (), {"context_length": CONTEXT})()
        self.training = False
        self.calls = 0

    def eval(self):
        return self

    def __call__(self, idx):
        token = self.script[self.calls] if self.calls < len(self.script) else ord(" ")
        self.calls += 1
        logits = np.full((1, np.shape(idx)[1], 256), np.nan if self.broken else 0.0)
        logits[0, -1, token] = 100.0  # certain even when sampled (a served request samples at temperature 1)
        return logits


@pytest.fixture
def serving():
    servers = []

    def start(model=None, **options):
        if model is None:
            model = nn.GPT(nn.GPTConfig.from_recipe("modern", vocab_size=256, context_length=CONTEXT, d_model=16,
                                                    n_heads=2, n_layers=1), seed=0)
        server = make_server(model, ByteTokenizer(), "tiny", port=0, quiet=True, **options)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server.server_port

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def request(port, method, path, body=None, raw=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    conn.request(method, path, data, headers or {"Content-Type": "application/json"})
    response = conn.getresponse()
    payload = response.read()
    conn.close()
    return response, payload


def post(port, body=None, raw=None, headers=None):
    response, payload = request(port, "POST", "/v1/completions", body, raw, headers)
    return response.status, json.loads(payload), response


def events(payload: bytes) -> list:
    blocks = payload.decode().split("\n\n")
    assert blocks[-1] == "" and blocks[-2] == "data: [DONE]"
    assert all(b.startswith("data: ") for b in blocks[:-1])
    return [json.loads(b[len("data: "):]) for b in blocks[:-2]]


def test_models_lists_the_one_model(serving):
    port = serving()
    response, payload = request(port, "GET", "/v1/models")
    assert response.status == 200 and response.getheader("Content-Type") == "application/json"
    assert json.loads(payload)["data"][0]["id"] == "tiny"


def test_a_completion_in_openais_shape(serving):
    port = serving()
    status, reply, _ = post(port, {"model": "anything", "prompt": "def f(x):\n", "max_tokens": 5, "temperature": 0})
    assert status == 200
    assert reply["object"] == "text_completion" and reply["id"].startswith("cmpl-") and reply["model"] == "tiny"
    assert isinstance(reply["created"], int)
    (choice,) = reply["choices"]
    assert choice["index"] == 0 and choice["finish_reason"] == "length" and isinstance(choice["text"], str)
    assert reply["usage"] == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    assert post(port, {"prompt": ["def f(x):\n"], "max_tokens": 5, "temperature": 0})[1]["choices"] == [choice]


def test_the_same_seed_gives_the_same_sample_and_a_long_prompt_is_cut_to_the_context(serving):
    port = serving()
    body = {"prompt": "x = 1\n" * 40, "max_tokens": 20, "temperature": 1.0, "top_p": 0.9, "seed": 3}
    first, second = post(port, body)[1], post(port, body)[1]
    assert first["choices"][0]["text"] == second["choices"][0]["text"]
    assert first["usage"]["prompt_tokens"] == 240


def test_stop_strings_end_the_completion(serving):
    port = serving(Scripted("    return x\n\nprint(f(1))\n"))
    status, reply, _ = post(port, {"prompt": "def f(x):\n", "max_tokens": 30, "stop": ["\n\n", "zz"]})
    assert status == 200
    assert reply["choices"][0] == {"text": "    return x", "index": 0, "logprobs": None, "finish_reason": "stop"}
    assert reply["usage"]["completion_tokens"] == len("    return x\n\n")


def test_streamed_chunks_add_up_to_the_completion_and_end_with_done(serving):
    port = serving(Scripted("    return x\n\nprint(f(1))\n"))
    response, payload = request(port, "POST", "/v1/completions",
                                {"prompt": "def f(x):\n", "max_tokens": 30, "stop": "\n\n", "stream": True})
    assert response.status == 200 and response.getheader("Content-Type") == "text/event-stream"
    chunks = events(payload)
    assert len(chunks) > 2
    assert "".join(c["choices"][0]["text"] for c in chunks) == "    return x"
    assert [c["choices"][0]["finish_reason"] for c in chunks] == [None] * (len(chunks) - 1) + ["stop"]
    assert all(c["object"] == "text_completion" and c["id"] == chunks[0]["id"] for c in chunks)
    port2 = serving()  # a real model: streamed text equals the text sent whole
    body = {"prompt": "def ", "max_tokens": 12, "temperature": 0}
    whole = post(port2, body)[1]["choices"][0]
    chunks = events(request(port2, "POST", "/v1/completions", {**body, "stream": True})[1])
    assert "".join(c["choices"][0]["text"] for c in chunks) == whole["text"]
    assert chunks[-1]["choices"][0]["finish_reason"] == "length" and chunks[-1]["usage"]["completion_tokens"] == 12


REFUSALS = [
    (dict(raw=b"{not json"), 400, None, "not JSON"),
    (dict(raw=b"\xff\xfe"), 400, None, "not JSON"),
    (dict(body=[1, 2]), 400, None, "must be a JSON object"),
    (dict(body={"max_tokens": 3}), 400, "prompt", "prompt must be a string"),
    (dict(body={"prompt": ["a", "b"]}), 400, "prompt", "prompt must be a string"),
    (dict(body={"prompt": [1, 2]}), 400, "prompt", "prompt must be a string"),
    (dict(body={"prompt": ""}), 400, "prompt", "prompt is empty"),
    (dict(body={"prompt": "x", "model": 3}), 400, "model", "model must be a string"),
    (dict(body={"prompt": "x", "max_tokens": -1}), 400, "max_tokens", "max_tokens must be an integer >= 0"),
    (dict(body={"prompt": "x", "max_tokens": True}), 400, "max_tokens", "max_tokens must be an integer"),
    (dict(body={"prompt": "x", "max_tokens": "5"}), 400, "max_tokens", "max_tokens must be an integer"),
    (dict(body={"prompt": "x", "max_tokens": CONTEXT + 1}), 400, "max_tokens", "over the model's context of 32"),
    (dict(body={"prompt": "x", "temperature": 3}), 400, "temperature", "temperature must be in [0, 2]"),
    (dict(body={"prompt": "x", "temperature": "hot"}), 400, "temperature", "temperature must be a number"),
    (dict(raw=b'{"prompt": "x", "temperature": NaN}'), 400, "temperature", "temperature must be a number"),
    (dict(body={"prompt": "x", "top_p": 0}), 400, "top_p", "top_p must be in (0, 1]"),
    (dict(body={"prompt": "x", "stop": ["a"] * 5}), 400, "stop", "up to 4 strings"),
    (dict(body={"prompt": "x", "stop": 7}), 400, "stop", "up to 4 strings"),
    (dict(body={"prompt": "x", "stream": "yes"}), 400, "stream", "stream must be true or false"),
    (dict(body={"prompt": "x", "n": 2}), 400, "n", "n must be 1"),
    (dict(body={"prompt": "x", "seed": -1}), 400, "seed", "seed must be an integer >= 0"),
    (dict(body={"prompt": "x", "echo": True}), 400, "echo", "echo is not supported"),
    (dict(body={"prompt": "x", "logprobs": 5}), 400, "logprobs", "logprobs is not supported"),
    (dict(raw=b"x", headers={"Content-Length": "abc"}), 400, None, "Content-Length 'abc'"),
    (dict(raw=b"x" * 2000), 413, None, "over this server's limit of 1,000"),
]


@pytest.mark.parametrize("case, status, param, words", REFUSALS, ids=[r[3] + f" {i}" for i, r in enumerate(REFUSALS)])
def test_bad_requests_are_refused_in_openais_error_shape(serving, case, status, param, words):
    port = serving(max_body=1000)
    got, reply, _ = post(port, **case)
    assert got == status
    assert set(reply["error"]) == {"message", "type", "param", "code"}
    assert reply["error"]["param"] == param and words in reply["error"]["message"], reply
    assert post(port, {"prompt": "x", "max_tokens": 2})[0] == 200  # still serving


def test_unknown_paths_and_wrong_methods(serving):
    port = serving()
    for method, path in (("GET", "/v2/other"), ("POST", "/v1/chat/completions"), ("DELETE", "/")):
        response, payload = request(port, method, path, {"prompt": "x"} if method == "POST" else None)
        assert response.status == 404 and "unknown path" in json.loads(payload)["error"]["message"]
    for method, path, allowed in (("GET", "/v1/completions", "POST"), ("PUT", "/v1/completions", "POST"),
                                  ("POST", "/v1/models", "GET")):
        response, payload = request(port, method, path, {"prompt": "x"} if method != "GET" else None)
        assert response.status == 405 and response.getheader("Allow") == allowed
        assert json.loads(payload)["error"]["type"] == "method_not_allowed"


def test_a_failing_generation_is_a_500_and_the_server_goes_on(serving):
    port = serving(Scripted("abc", broken=True))
    status, reply, _ = post(port, {"prompt": "x", "max_tokens": 3})
    assert status == 500 and "generation failed" in reply["error"]["message"]
    response, payload = request(port, "POST", "/v1/completions", {"prompt": "x", "max_tokens": 3, "stream": True})
    assert response.status == 200
    blocks = payload.decode().split("\n\n")
    assert "generation failed" in blocks[0] and blocks[-2] == "data: [DONE]"
    assert request(port, "GET", "/v1/models")[0].status == 200


def test_serve_command_end_to_end_in_its_own_process(capsys, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.py").write_text("def add(x):\n    return x + 1\n" * 20)
    run_dir = tmp_path / "run"
    code = cli.main(["gpt", "train", "--corpus", str(corpus), "--out", str(run_dir), "--steps", "2", "--layers", "1",
                     "--d-model", "16", "--heads", "2", "--context", "16", "--batch-size", "2", "--quiet"])
    assert code == 0
    capsys.readouterr()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-Werror", "-m", "chainrule", "gpt", "serve", "--checkpoint", str(run_dir),
                             "--port", "0", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        line = proc.stdout.readline()
        assert line.startswith("serving on http://127.0.0.1:"), line + proc.stderr.read()
        port = int(line.split(":")[2].split("/")[0])
        status, reply, _ = post(port, {"prompt": "def ", "max_tokens": 4, "temperature": 0})
        assert status == 200 and reply["model"] == "run" and reply["usage"]["completion_tokens"] == 4
        code, out, err = cli_run(capsys, "gpt", "serve", "--checkpoint", str(run_dir), "--port", str(port))
        assert code == 1 and "cannot listen on 127.0.0.1:" in err and len(err.strip().splitlines()) == 1
    finally:
        proc.terminate()
        proc.communicate(timeout=30)  # (waits, and closes its pipes)
    code, _, err = cli_run(capsys, "gpt", "serve", "--port", "70000")
    assert code == 2 and "port number in [0, 65535]" in err


def cli_run(capsys, *argv):
    try:
        code = cli.main(list(argv))
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err
