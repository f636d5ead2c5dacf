#!/usr/bin/env python3
"""Writes the seed corpora fuzz/corpus/<target>/seed-* from the repository's fixtures.

Deterministic and idempotent: it removes the old seed-* files of each target first and never
touches the corpus the fuzzer grew beside them (gitignored). Run from anywhere:

    python3 fuzz/seed.py

Each target's input format is described at the top of its fuzz_targets/<target>.rs; the seeds
below follow it.
"""

import glob
import hashlib
import json
import os
import re
import struct

FUZZ = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(FUZZ)
CORPUS = os.path.join(FUZZ, "corpus")
# Seeds larger than this are cut (libFuzzer's default -max_len is 4096 for new inputs anyway).
MAX_SEED = 16 * 1024


def rel(*parts):
    return os.path.join(ROOT, *parts)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def sse_body(path):
    """A provider/mock fixture's SSE body: everything after the header block."""
    data = read(path)
    at = data.find(b"\n\n")
    return data[at + 2:] if at >= 0 else data


def sse_events(body):
    """(event, data) pairs of an SSE body (the same rules as tandem_ai::sse)."""
    events, name, data, has = [], None, [], False
    for line in re.split(rb"\r\n|\n|\r", body) + [b""]:
        if not line:
            if has:
                events.append((name, b"\n".join(data)))
            name, data, has = None, [], False
            continue
        if line.startswith(b":"):
            continue
        field, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            data.append(value)
            has = True
        elif field == b"event":
            name = value
    return events


class Seeds:
    def __init__(self, target):
        self.dir = os.path.join(CORPUS, target)
        os.makedirs(self.dir, exist_ok=True)
        for old in glob.glob(os.path.join(self.dir, "seed-*")):
            os.remove(old)
        self.count = 0

    def add(self, data):
        if isinstance(data, str):
            data = data.encode()
        data = data[:MAX_SEED]
        name = "seed-" + hashlib.sha1(data).hexdigest()[:16]
        with open(os.path.join(self.dir, name), "wb") as f:
            f.write(data)
        self.count += 1


def chunk_header(i):
    """A chunking prefix for tandem_fuzz::chunked / str_pieces: varies with the seed index."""
    shapes = [b"\x00", b"\x01\x01", b"\x02\x07\x03", b"\x03\x00\x05\x11", b"\x01\x3f"]
    return shapes[i % len(shapes)]


def seed_sse():
    s = Seeds("sse")
    files = sorted(glob.glob(rel("fixtures/providers/*/*.sse")))
    files += sorted(glob.glob(rel("fixtures/mock/*.sse")) + glob.glob(rel("fixtures/mock/invalid/*")))
    files += sorted(glob.glob(rel("fixtures/acp/*.sse")))
    for i, path in enumerate(files):
        s.add(chunk_header(i) + sse_body(path))
    # CR / CRLF / comments / ids / BOM, split inside a CRLF.
    s.add(b"\x01\x05data: a\r\ndata: b\r\rid: 7\revent: x\ndata:c\n\n:comment\ndata")
    s.add(b"\x02\x01\x02\xef\xbb\xbfdata: \xe2\x9c\x93\r\n\r\nid: a\x00b\ndata\n\n")
    return s.count


def tool_arguments():
    """Every tool call's JSON arguments in the providers' expected event files."""
    out = []

    def walk(v):
        if isinstance(v, dict):
            if v.get("type") == "toolCall" and "arguments" in v:
                out.append(json.dumps(v["arguments"], ensure_ascii=False))
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for path in sorted(glob.glob(rel("fixtures/providers/*/*.expected.json"))):
        walk(json.loads(read(path)))
    walk(json.loads(read(rel("fixtures/demo-script.json"))))
    return sorted(set(out))


def seed_partial_json():
    s = Seeds("partial_json")
    args = tool_arguments()
    for i, text in enumerate(args):
        s.add(chunk_header(i) + text.encode())
    extras = [
        '{"path":"a\\u00e9\\ud83e\\udd80\\n","n":-1.5e3,"ok":true,"none":null,"list":[1,[2,{}],"x"]}',
        '[{"a":{"b":{"c":[[]]}}}]',
        '"just a string \\" with \\\\ escapes"',
        "  12345  ",
        '{"dup":1,"dup":{"x":2}}',
        '{"edits":[{"oldText":"a\\r\\nb","newText":"c\\td"}],"path":"x.rs"}',
    ]
    for i, text in enumerate(extras):
        s.add(chunk_header(i + 1) + text.encode())
    return s.count


DECODERS = {
    "decode_openai_completions": "openai-completions",
    "decode_openai_responses": "openai-responses",
    "decode_anthropic": "anthropic-messages",
    "decode_google": "google-generative-ai",
}


def seed_decoders():
    counts = {}
    for target, api in DECODERS.items():
        s = Seeds(target)
        for i, path in enumerate(sorted(glob.glob(rel("fixtures/providers", api, "*.sse")))):
            lines = []
            for name, data in sse_events(sse_body(path)):
                # One event per line: a data payload with a newline cannot be one line; keep
                # its first line (the payloads in the fixtures are single-line JSON).
                data = data.split(b"\n")[0]
                lines.append((name + b"\t" if name else b"") + data)
            if lines:
                s.add(bytes([i % 4]) + b"\n".join(lines) + b"\n")
        counts[target] = s.count
    return counts


def seed_session():
    s = Seeds("session_load")
    files = [
        rel("fixtures/reference/pi-0.73.1-session.jsonl"),
        rel("server/coding/src/session/tests/fixtures/pi-v1-session.jsonl"),
        rel("server/coding/src/session/tests/fixtures/pi-v2-session.jsonl"),
    ]
    for path in files:
        data = read(path)
        s.add(data)
        # A torn last line, and CRLF endings.
        s.add(data[: len(data) - len(data.rstrip(b"\n").split(b"\n")[-1]) // 2 - 1])
        s.add(data.replace(b"\n", b"\r\n"))
    return s.count


def seed_edit_match():
    """Input: content NUL old NUL new [NUL old NUL new ...]."""
    s = Seeds("edit_match")
    sources = sorted(glob.glob(rel("fixtures/demo-workspace/**/*"), recursive=True))
    sources = [p for p in sources if os.path.isfile(p)]
    for path in sources:
        text = read(path)[:4096]
        lines = text.split(b"\n")
        old = b"\n".join(lines[1:3]) if len(lines) > 3 else text[: len(text) // 2]
        s.add(text + b"\0" + old + b"\0" + old.upper())
        # A fuzzy match: trailing spaces, smart quotes and CRLF in the file.
        fuzzy = text.replace(b"\n", b"  \r\n").replace(b'"', "\u201c".encode())
        s.add(fuzzy + b"\0" + old + b"\0" + b"replaced")
    s.add("\ufeffa\u2013b  \r\nc\u00a0d\nfi\uFB01\n".encode() + b"\0a-b\nc d\0X\0fi\0Y")
    s.add(b"one\ntwo\nthree\n\0two\0TWO\0three\0THREE")
    return s.count


def lsp_ops(ops):
    """Encodes document changes for lsp_documents: kind, 4 u16 coordinates, text length, text."""
    out = b""
    for kind, sl, sc, el, ec, text in ops:
        text = text.encode()
        out += bytes([kind]) + struct.pack("<HHHH", sl, sc, el, ec) + bytes([len(text)]) + text
    return out


def seed_lsp_documents():
    """Input: encoding byte, u16 initial-text length, text, then changes (see lsp_ops)."""
    s = Seeds("lsp_documents")
    texts = [read(p)[:2000] for p in sorted(glob.glob(rel("fixtures/demo-workspace/src/*")))]
    texts.append("a\r\nb\rc\n\u00e9\U0001F980x\r\n".encode())
    texts.append("".encode())
    ops = [
        (0, 0, 0, 0, 0, "// head\n"),
        (0, 1, 2, 1, 5, "\u00e9\U0001F980"),
        (0, 3, 0, 2, 4, "swapped"),
        (0, 0, 99, 500, 3, "past the end"),
        (0, 1, 1, 1, 1, "\r"),
        (0, 1, 2, 1, 2, "\n"),
        (1, 0, 0, 0, 0, "full\r\nreplace"),
    ]
    for i, text in enumerate(texts):
        for enc in range(3):
            s.add(bytes([enc]) + struct.pack("<H", len(text)) + text + lsp_ops(ops[i % 3 :]))
    return s.count


def readme_messages():
    """The JSON-RPC messages in protocol-ext/README.md's examples."""
    text = read(rel("protocol-ext/README.md")).decode()
    decoder = json.JSONDecoder()
    out = []
    for m in re.finditer(r'\{"jsonrpc"', text):
        try:
            value, _ = decoder.raw_decode(text[m.start():])
        except ValueError:
            continue
        out.append(value)
    return out


LSP_METHODS = [
    "tandem/prompt", "tandem/abort", "tandem/sessions/new", "tandem/sessions/list",
    "tandem/sessions/open", "tandem/sessions/fork", "tandem/state", "tandem/models/list",
    "tandem/models/set", "tandem/thinking/set", "tandem/compact",
]
# Selector bytes of lsp_params past the requests (see fuzz_targets/lsp_params.rs).
LSP_EXTRA = {"tandem/event": 11, "initialize": 12, "workspace/didChangeConfiguration": 13,
             "workspace/executeCommand": 14}


def seed_lsp_params():
    """Input: selector byte, then the params as JSON text."""
    s = Seeds("lsp_params")
    for msg in readme_messages():
        method, params = msg.get("method"), msg.get("params")
        if method in LSP_METHODS:
            s.add(bytes([LSP_METHODS.index(method)]) + json.dumps(params).encode())
        elif method == "initialize":
            s.add(bytes([LSP_EXTRA[method]]) + json.dumps(params.get("initializationOptions", {})).encode())
        elif method in LSP_EXTRA:
            s.add(bytes([LSP_EXTRA[method]]) + json.dumps(params).encode())
    for path in sorted(glob.glob(rel("fixtures/editor-events/*.jsonl")))[:2]:
        for line in read(path).splitlines()[:20]:
            s.add(bytes([11]) + line)
    s.add(bytes([13]) + b'{"settings":{"tandem":{"model":"anthropic/claude","thinkingLevel":"high","editMode":"ask","bashPermission":"deny","editTimeoutMs":5}}}')
    return s.count


ACP = [
    ("initialize", {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}}),
    ("authenticate", {"methodId": "pi-config"}),
    ("session/new", {"cwd": "/home/user/project", "mcpServers": [{"name": "fs", "command": "/usr/bin/mcp", "args": ["--root", "."], "env": [{"name": "A", "value": "b"}]}]}),
    ("session/load", {"sessionId": "0197e3a1", "cwd": "/home/user/project", "mcpServers": []}),
    ("session/list", {"cwd": "/home/user/project", "cursor": "100"}),
    ("session/set_mode", {"sessionId": "0197e3a1", "modeId": "read-only"}),
    ("session/set_config_option", {"sessionId": "0197e3a1", "configId": "thinking", "value": "high"}),
    ("session/cancel", {"sessionId": "0197e3a1"}),
]


def seed_acp():
    """Input: the method, a newline, the params as JSON text."""
    s = Seeds("acp_messages")
    for method, params in ACP:
        s.add(method.encode() + b"\n" + json.dumps(params).encode())
    blocks = [
        {"type": "text", "text": "change world to there in hello.txt"},
        {"type": "resource_link", "uri": "file:///home/user/project/src/main.rs", "name": "main.rs"},
        {"type": "resource", "resource": {"uri": "file:///home/user/project/a.py", "text": "print(1)\n", "mimeType": "text/x-python"}},
        {"type": "resource", "resource": {"uri": "file:///tmp/x.png", "blob": "iVBORw0KGgo=", "mimeType": "image/png"}},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
        {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
    ]
    for i in range(len(blocks)):
        params = {"sessionId": "0197e3a1", "prompt": blocks[i:] + blocks[:i]}
        s.add(b"session/prompt\n" + json.dumps(params).encode())
    return s.count


def main():
    counts = {
        "sse": seed_sse(),
        "partial_json": seed_partial_json(),
        **seed_decoders(),
        "session_load": seed_session(),
        "edit_match": seed_edit_match(),
        "lsp_documents": seed_lsp_documents(),
        "lsp_params": seed_lsp_params(),
        "acp_messages": seed_acp(),
    }
    for target, n in counts.items():
        print(f"{target}: {n} seeds")


if __name__ == "__main__":
    main()
