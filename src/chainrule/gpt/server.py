"""``chainrule gpt serve``: a trained GPT behind OpenAI's completions API, for editors' completion plugins.

``POST /v1/completions`` takes ``{"prompt": ..., "max_tokens": 16, "temperature": 1, "top_p": 1,
"stop": null, "stream": false, "n": 1, "seed": null, "model": ...}`` and answers
``{"id", "object": "text_completion", "created", "model", "choices": [{"text", "index",
"logprobs", "finish_reason": "stop" | "length"}], "usage": {...}}``; with ``"stream": true`` the
text comes as server-sent events (``data: {...}`` chunks, then ``data: [DONE]``). ``GET /v1/models``
lists the one model. A bad request gets an HTTP error with OpenAI's error body
``{"error": {"message", "type", "param", "code"}}``: 400 (bad JSON, a bad field or value, or
``max_tokens`` over the context), 404 (unknown path), 405 (wrong method), 413 (body too large);
the server itself keeps running (a failure while generating is a 500). One model serves one
request at a time (a lock); a prompt longer than the context is cut to its last tokens.

Example:
    >>> import http.client, json, threading
    >>> from chainrule import nn
    >>> from chainrule.gpt import ByteTokenizer
    >>> model = nn.GPT(nn.GPTConfig(vocab_size=256, context_length=16, d_model=16, n_heads=2, n_layers=1), seed=0)
    >>> server = make_server(model, ByteTokenizer(), "tiny", port=0, quiet=True)
    >>> threading.Thread(target=server.serve_forever, daemon=True).start()
    >>> conn = http.client.HTTPConnection("127.0.0.1", server.server_port)
    >>> conn.request("POST", "/v1/completions", json.dumps({"prompt": "def ", "max_tokens": 3}))
    >>> reply = json.loads(conn.getresponse().read())
    >>> reply["object"], reply["choices"][0]["finish_reason"], reply["usage"]["completion_tokens"]
    ('text_completion', 'length', 3)
    >>> server.shutdown(); server.server_close()
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .completion import Completion

__all__ = ["make_server", "RequestError", "parse_request", "MAX_BODY"]

MAX_BODY = 1 << 20  # bytes of a request body: a prompt of a megabyte is far past any context
IGNORED_UNLESS_DEFAULT = {  # OpenAI fields chainrule does not implement: refused unless they ask for nothing
    "echo": (False, None), "logprobs": (None, 0), "suffix": (None, ""), "best_of": (1, None),
    "logit_bias": (None, {}), "presence_penalty": (0, None), "frequency_penalty": (0, None),
}


class RequestError(Exception):
    """A request the server refuses: HTTP ``status``, a message naming the field (``param``) and the fix."""

    def __init__(self, status: int, message: str, param: str | None = None, kind: str = "invalid_request_error"):
        super().__init__(message)
        self.status, self.message, self.param, self.kind = status, message, param, kind

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": None}}


def _number(body: dict[str, Any], name: str, default: float, low: float, high: float, low_open: bool = False) -> float:
    value = body.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RequestError(400, f"{name} must be a number, got {json.dumps(value)}", name)
    if value < low or value > high or (low_open and value == low):
        raise RequestError(400, f"{name} must be in {'(' if low_open else '['}{low:g}, {high:g}], got {value}", name)
    return float(value)


def _whole(body: dict[str, Any], name: str, default: int | None, low: int) -> int | None:
    value = body.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise RequestError(400, f"{name} must be an integer >= {low}, got {json.dumps(value)}", name)
    return value


def parse_request(raw: bytes, context_length: int) -> dict[str, Any]:
    """The completion request in ``raw`` (JSON), checked: ``prompt``, ``max_tokens``, ``temperature``,
    ``top_p``, ``stop`` (a list), ``stream``, ``seed``; raises :class:`RequestError` (400) naming a bad field."""
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise RequestError(400, f"the body is not JSON ({str(e).splitlines()[0]}); send a JSON object") from None
    if not isinstance(body, dict):
        raise RequestError(400, f"the body must be a JSON object, got {type(body).__name__}")
    if "model" in body and not isinstance(body["model"], str):
        raise RequestError(400, "model must be a string", "model")
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise RequestError(400, "prompt must be a string (or a list of one string)", "prompt")
    if not prompt:
        raise RequestError(400, "prompt is empty; send at least one character", "prompt")
    max_tokens = _whole(body, "max_tokens", 16, 0)
    if max_tokens > context_length:
        raise RequestError(400, f"max_tokens {max_tokens} is over the model's context of {context_length} tokens; "
                                "ask for fewer", "max_tokens")
    stop = body.get("stop")
    stop = [] if stop is None else [stop] if isinstance(stop, str) else stop
    if not isinstance(stop, list) or len(stop) > 4 or not all(isinstance(s, str) for s in stop):
        raise RequestError(400, "stop must be a string or a list of up to 4 strings", "stop")
    stream = body.get("stream", False)
    if not isinstance(stream, bool) and stream is not None:
        raise RequestError(400, "stream must be true or false", "stream")
    n = body.get("n", 1)
    if n not in (1, None) or isinstance(n, bool):
        raise RequestError(400, f"n must be 1 (this server makes one completion per request), got {json.dumps(n)}",
                           "n")
    for name, allowed in IGNORED_UNLESS_DEFAULT.items():
        if name in body and body[name] not in allowed:
            raise RequestError(400, f"{name} is not supported by this server; leave it out", name)
    return {
        "prompt": prompt, "max_tokens": max_tokens, "stop": stop, "stream": bool(stream),
        "temperature": _number(body, "temperature", 1.0, 0.0, 2.0),
        "top_p": _number(body, "top_p", 1.0, 0.0, 1.0, low_open=True),
        "seed": _whole(body, "seed", None, 0),
    }


def make_server(model: Any, tokenizer: Any, model_name: str, host: str = "127.0.0.1", port: int = 8000,
                max_body: int = MAX_BODY, quiet: bool = False) -> ThreadingHTTPServer:
    """An HTTP server (not yet serving: call ``serve_forever``) answering completions with ``model``."""
    lock = threading.Lock()
    context = int(model.config.context_length)

    class Handler(BaseHTTPRequestHandler):
        server_version = "chainrule-gpt"

        def log_message(self, format: str, *args: Any) -> None:
            if not quiet:
                super().log_message(format, *args)

        def _send_json(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _refuse(self, e: RequestError, headers: dict[str, str] | None = None) -> None:
            self._send_json(e.status, e.body(), headers)

        def _route(self, method: str) -> None:
            path = self.path.split("?", 1)[0].rstrip("/")
            allowed = {"/v1/completions": "POST", "/v1/models": "GET"}.get(path)
            if allowed is None:
                self._refuse(RequestError(404, f"unknown path {self.path!r}; use POST /v1/completions or "
                                               "GET /v1/models", kind="not_found_error"))
            elif method != allowed:
                self._refuse(RequestError(405, f"{method} is not allowed on {path}; use {allowed}",
                                          kind="method_not_allowed"), {"Allow": allowed})
            elif path == "/v1/models":
                self._send_json(200, {"object": "list", "data": [
                    {"id": model_name, "object": "model", "created": 0, "owned_by": "chainrule"}]})
            else:
                self._complete()

        def do_GET(self) -> None:  # noqa: N802 (http.server's names)
            self._route("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._route("POST")

        def do_PUT(self) -> None:  # noqa: N802
            self._route("PUT")

        def do_DELETE(self) -> None:  # noqa: N802
            self._route("DELETE")

        def _body(self) -> bytes:
            length = self.headers.get("Content-Length")
            try:
                size = int(length) if length is not None else 0
                if size < 0:
                    raise ValueError
            except ValueError:
                raise RequestError(400, f"Content-Length {length!r} is not a size in bytes") from None
            if size > max_body:
                self.close_connection = True  # the unread body is not read: the connection cannot be reused
                raise RequestError(413, f"the body of {size:,} bytes is over this server's limit of {max_body:,}",
                                   kind="request_too_large")
            return self.rfile.read(size)

        def _complete(self) -> None:
            try:
                request = parse_request(self._body(), context)
            except RequestError as e:
                self._refuse(e)
                return
            ident, created = f"cmpl-{uuid.uuid4().hex}", int(time.time())
            with lock:
                completion = Completion(model, tokenizer, request["prompt"], request["max_tokens"],
                                        request["temperature"], None, request["top_p"], request["seed"],
                                        stop=request["stop"])
                try:
                    if request["stream"]:
                        self._stream(completion, ident, created)
                    else:
                        text = str(completion)
                        self._send_json(200, {
                            "id": ident, "object": "text_completion", "created": created, "model": model_name,
                            "choices": [{"text": text, "index": 0, "logprobs": None,
                                         "finish_reason": completion.finish_reason}],
                            "usage": _usage(completion)})
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client went away
                except Exception as e:  # noqa: BLE001 (a failing generation must not take the server down)
                    if not self.wfile.closed and not getattr(self, "_streaming", False):
                        message = str(e).splitlines()[0] if str(e) else type(e).__name__
                        self._refuse(RequestError(500, f"generation failed: {message}", kind="server_error"))

        def _stream(self, completion: Completion, ident: str, created: int) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self._streaming = True
            self.close_connection = True  # no length: the end of the stream is the end of the connection

            def chunk(text: str, finish: str | None, usage: dict[str, int] | None = None) -> None:
                body: dict[str, Any] = {"id": ident, "object": "text_completion", "created": created,
                                        "model": model_name, "choices": [{"text": text, "index": 0, "logprobs": None,
                                                                           "finish_reason": finish}]}
                if usage is not None:
                    body["usage"] = usage
                self.wfile.write(b"data: " + json.dumps(body).encode("utf-8") + b"\n\n")
                self.wfile.flush()

            try:
                for piece in completion:
                    chunk(piece, None)
            except ValueError as e:  # the headers are sent: the error is an event
                error = RequestError(500, f"generation failed: {str(e).splitlines()[0]}", kind="server_error")
                self.wfile.write(b"data: " + json.dumps(error.body()).encode("utf-8") + b"\n\n")
            else:
                chunk("", completion.finish_reason, _usage(completion))
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    server = ThreadingHTTPServer((host, int(port)), Handler)
    server.daemon_threads = True
    return server


def _usage(c: Completion) -> dict[str, int]:
    return {"prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens,
            "total_tokens": c.prompt_tokens + c.completion_tokens}


def serve(server: ThreadingHTTPServer, out: Any = sys.stdout) -> None:
    """Serve until interrupted (Ctrl-C), then close."""
    host, port = server.server_address[:2]
    print(f"serving on http://{host}:{port}/v1/completions (Ctrl-C stops)", file=out, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=out)
    finally:
        server.server_close()
