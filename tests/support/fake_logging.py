"""A small Cloud Logging `entries:list` server on 127.0.0.1 for tests.

It speaks the real REST wire format (the google-cloud-logging client's HTTP
transport talks to it unchanged) and enforces the rules our loader must obey:
resourceNames required, pageSize 1..1000, orderBy "timestamp asc|desc", a
parseable filter over the fields the loader uses (logName, severity,
jsonPayload.*, timestamp, insertId with = != < <= > >=, AND, OR, parentheses;
OR binds tighter than AND as in the Logging query language). Failures can be
injected in Google's error format: the next N requests answer 429 or 503
(`failures`), or every request after the first N does (`fail_after`); a
failure "cut" sends a reply that stops mid-body, "not-json" a 200 whose body
is a proxy's HTML page.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

_TOKEN_RE = re.compile(
    r'\s*(?:(?P<lp>\()|(?P<rp>\))|(?P<op><=|>=|!=|=|<|>|:)|(?P<str>"(?:[^"\\]|\\.)*")|(?P<word>[A-Za-z_][\w.\-]*|[-+\d.:TZ]+))'
)
_SEVERITY = {"DEFAULT": 0, "DEBUG": 100, "INFO": 200, "NOTICE": 300, "WARNING": 400, "ERROR": 500,
             "CRITICAL": 600, "ALERT": 700, "EMERGENCY": 800}


class FilterError(ValueError):
    pass


def _tokens(text: str) -> list[tuple[str, str]]:
    pos, out = 0, []
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN_RE.match(text, pos)
        if not m or m.end() == pos:
            raise FilterError(f"unparseable filter at {pos}: {text[pos:pos + 20]!r}")
        kind = m.lastgroup
        value = m.group(kind)
        if kind == "str":
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        elif kind == "word" and value in ("AND", "OR", "NOT"):
            kind = value
        out.append((kind, value))
        pos = m.end()
    return out


@functools.lru_cache(maxsize=1 << 20)
def _parse_time(value: str) -> dt.datetime:
    text = value.replace("Z", "+00:00")
    m = re.match(r"^(.*\.\d{6})\d*(\+00:00)$", text)
    if m:
        text = m.group(1) + m.group(2)
    return dt.datetime.fromisoformat(text)


def _field(entry: dict[str, Any], path: str) -> Any:
    value: Any = entry
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _compare(entry: dict[str, Any], field: str, op: str, literal: str) -> bool:
    value = _field(entry, field)
    if value is None:
        return op == "!="
    if field == "timestamp":
        left, right = _parse_time(value), _parse_time(literal)
    elif field == "severity":
        left, right = _SEVERITY.get(value, 0), _SEVERITY[literal.upper()]
    elif isinstance(value, (int, float)):
        left, right = value, float(literal)
    else:
        left, right = str(value), literal
    return {
        "=": left == right, ":": left == right, "!=": left != right, "<": left < right,
        "<=": left <= right, ">": left > right, ">=": left >= right,
    }[op]


def compile_filter(text: str) -> Callable[[dict[str, Any]], bool]:
    tokens = _tokens(text)
    pos = 0

    def peek() -> str | None:
        return tokens[pos][0] if pos < len(tokens) else None

    def take(kind: str) -> str:
        nonlocal pos
        if peek() != kind:
            raise FilterError(f"expected {kind} at token {pos} in {text!r}")
        pos += 1
        return tokens[pos - 1][1]

    def conjunction() -> Callable:
        parts = [disjunction()]
        while peek() == "AND":
            take("AND")
            parts.append(disjunction())
        return lambda e: all(p(e) for p in parts)

    def disjunction() -> Callable:
        parts = [unary()]
        while peek() == "OR":
            take("OR")
            parts.append(unary())
        return lambda e: any(p(e) for p in parts)

    def unary() -> Callable:
        if peek() == "NOT":
            take("NOT")
            inner = unary()
            return lambda e: not inner(e)
        if peek() == "lp":
            take("lp")
            inner = conjunction()
            take("rp")
            return inner
        field = take("word")
        op = take("op")
        literal = take("str") if peek() == "str" else take("word")
        if field == "timestamp":
            _parse_time(literal)
        return lambda e: _compare(e, field, op, literal)

    predicate = conjunction()
    if pos != len(tokens):
        raise FilterError(f"trailing tokens in filter {text!r}")
    return predicate


# A reply whose body stops before its Content-Length (a dropped connection).
CUT = b"cut"


class FakeLoggingServer:
    """Serves `entries` (LogEntry dicts) on http://127.0.0.1:PORT."""

    def __init__(self, entries: list[dict[str, Any]] | None = None):
        self.entries: list[dict[str, Any]] = list(entries or [])
        self.requests: list[dict[str, Any]] = []
        self.failures: list[int] = []
        self.fail_after: int | None = None
        self.lock = threading.Lock()
        # the last query's sorted matches: paging through a large log re-filters nothing
        self._matches: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        self.busy_seconds = 0.0  # time spent answering, so a benchmark can take it out
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any] | bytes) -> None:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                declared = len(data)
                if body is CUT:  # a reply cut mid-body: more bytes announced than sent
                    data, declared = json.dumps({"entries": [{"logName": "x"}] * 50}).encode()[:100], 5000
                    self.close_connection = True
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(declared))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                started = time.perf_counter()
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                status, answer = server.handle(self.path, body)
                self._send(status, answer)
                server.busy_seconds += time.perf_counter() - started

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> "FakeLoggingServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @staticmethod
    def _error(code: int, status: str, message: str) -> tuple[int, dict[str, Any]]:
        return code, {"error": {"code": code, "message": message, "status": status}}

    def handle(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any] | bytes]:
        with self.lock:
            self.requests.append(body)
            if self.fail_after is not None and len(self.requests) > self.fail_after:
                return self._error(503, "UNAVAILABLE", "injected outage")
            if self.failures:
                code = self.failures.pop(0)
                if code == "cut":
                    return 200, CUT
                if code == "not-json":
                    return 200, b"<html><body>502 Bad Gateway (from a proxy)</body></html>"
                status = {429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE", 500: "INTERNAL"}[code]
                return self._error(code, status, "injected failure")
            entries = list(self.entries)
        if not path.startswith("/v2/entries:list"):
            return self._error(404, "NOT_FOUND", f"no such method {path}")
        if not body.get("resourceNames"):
            return self._error(400, "INVALID_ARGUMENT", "resourceNames is required")
        page_size = int(body.get("pageSize", 50))
        if page_size < 1 or page_size > 1000:
            return self._error(400, "INVALID_ARGUMENT", "pageSize must be between 1 and 1000")
        order = body.get("orderBy", "timestamp asc")
        if order not in ("timestamp asc", "timestamp desc"):
            return self._error(400, "INVALID_ARGUMENT", f"unsupported orderBy {order!r}")
        try:
            predicate = compile_filter(body.get("filter", ""))
        except (FilterError, ValueError) as exc:
            return self._error(400, "INVALID_ARGUMENT", f"invalid filter: {exc}")
        projects = {name.split("/", 1)[1] for name in body["resourceNames"]}
        key = (body.get("filter", ""), order, tuple(sorted(projects)), len(entries), id(self.entries))
        matching = self._matches.get(key)
        if matching is None:
            matching = [
                e for e in entries
                if e["logName"].split("/")[1] in projects and predicate(e)
            ]
            matching.sort(key=lambda e: (_parse_time(e["timestamp"]), e["insertId"]),
                          reverse=order.endswith("desc"))
            self._matches = {key: matching}
        offset = int(base64.b64decode(body["pageToken"]).decode()) if body.get("pageToken") else 0
        page = matching[offset:offset + page_size]
        answer: dict[str, Any] = {"entries": page} if page else {}
        if offset + page_size < len(matching):
            answer["nextPageToken"] = base64.b64encode(str(offset + page_size).encode()).decode()
        return 200, answer
