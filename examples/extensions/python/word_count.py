#!/usr/bin/env python3
"""A Tandem extension host in Python (standard library only).

It speaks Tandem's extension protocol (protocol-ext/EXTENSIONS.md): JSON-RPC 2.0, one message
per line, requests on stdin, answers on stdout (or on the file descriptor named by
TANDEM_EXTENSION_OUTPUT_FD when Tandem sets it). It registers:

- the tool `word_count` (parameter `path`): lines, words and characters of a file;
- a `tool_call` handler that blocks `bash` commands containing `curl `;
- the command `/wc-stats`: shows what `word_count` counted so far (`/wc-stats reset` asks, then
  clears the counts).
"""

import json
import os
import sys

PROTOCOL_VERSION = 1

TOOL = {
    "name": "word_count",
    "label": "Word count",
    "description": "Count the lines, words and characters of a text file.",
    "parameters": {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to count, relative to the working directory or absolute",
            }
        },
        "required": ["path"],
    },
    "promptSnippet": "Count lines, words and characters of a file",
    "promptGuidelines": ["Use word_count to measure the length of a text file."],
    "executionMode": "parallel",
    "extension": "word_count",
}

COMMAND = {
    "name": "wc-stats",
    "description": "Show word_count's totals (`/wc-stats reset` clears them)",
    "extension": "word_count",
    "completions": True,
}


class Host:
    def __init__(self):
        fd = os.environ.get("TANDEM_EXTENSION_OUTPUT_FD")
        self.out = os.fdopen(int(fd), "w", encoding="utf-8") if fd else sys.stdout
        self.state = {"cwd": os.getcwd(), "hasUI": False}
        self.next_id = 1
        self.queued = []  # messages read while waiting for an answer
        self.stats = {"files": 0, "lines": 0, "words": 0, "characters": 0}

    # --- transport -------------------------------------------------------------------------

    def send(self, message):
        message["jsonrpc"] = "2.0"
        self.out.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n")
        self.out.flush()

    def notify(self, method, params):
        self.send({"method": method, "params": params})

    def read(self):
        if self.queued:
            return self.queued.pop(0)
        while True:
            line = sys.stdin.readline()
            if not line:
                return None
            if line.strip():
                return json.loads(line)

    def call(self, method, params):
        """Sends a request to Tandem and waits for its answer, keeping other messages for later."""
        request_id = self.next_id
        self.next_id += 1
        self.send({"id": request_id, "method": method, "params": params})
        while True:
            line = sys.stdin.readline()
            if not line:
                raise EOFError("Tandem closed the connection")
            if not line.strip():
                continue
            message = json.loads(line)
            if "method" not in message and message.get("id") == request_id:
                if "error" in message:
                    raise RuntimeError(message["error"].get("message", "request failed"))
                return message.get("result")
            self.queued.append(message)

    # --- protocol methods ----------------------------------------------------------------------

    def initialize(self, params):
        for key in ("cwd", "hasUI", "mode"):
            if key in params:
                self.state[key] = params[key]
        entries = params.get("extensions") or [{"path": os.path.abspath(__file__)}]
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "extensions": [{"path": entries[0].get("path"), "name": "word_count", "error": None}],
            "tools": [TOOL],
            "commands": [COMMAND],
            "flags": [],
            "events": ["tool_call"],
            "notes": [],
        }

    def event(self, params):
        name = params.get("name")
        event = params.get("event") or {}
        if name == "tool_call" and event.get("toolName") == "bash":
            command = str((event.get("input") or {}).get("command", ""))
            if "curl " in command:
                reason = "word_count: downloads with curl are not allowed in this project"
                return {"result": {"block": True, "reason": reason}, "errors": []}
        return {"result": None, "errors": []}

    def execute(self, params):
        if params.get("name") != "word_count":
            raise ProtocolError(-32602, "unknown tool: %s" % params.get("name"))
        raw = str((params.get("input") or {}).get("path", ""))
        path = raw[1:] if raw.startswith("@") else raw
        path = os.path.join(self.state.get("cwd") or os.getcwd(), os.path.expanduser(path))
        try:
            with open(path, "r", encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError as error:
            raise ProtocolError(-32000, "cannot read %s: %s" % (raw, error.strerror or error))
        counts = {
            "lines": text.count("\n") + (1 if text and not text.endswith("\n") else 0),
            "words": len(text.split()),
            "characters": len(text),
        }
        self.stats["files"] += 1
        for key, value in counts.items():
            self.stats[key] += value
        summary = "%s: %d lines, %d words, %d characters" % (raw, counts["lines"], counts["words"], counts["characters"])
        return {
            "content": [{"type": "text", "text": summary}],
            "details": dict(counts, path=raw),
            "isError": False,
        }

    def run_command(self, params):
        if params.get("name") != "wc-stats":
            raise ProtocolError(-32602, "unknown command: %s" % params.get("name"))
        if (params.get("args") or "").strip() == "reset":
            # Without a UI, a dialog's answer is its default (false), as Tandem's own host does.
            confirmed = self.state.get("hasUI") and self.call(
                "ui/confirm", {"title": "Reset word counts?", "message": "word_count's totals go back to zero."}
            )
            if confirmed:
                self.stats = {"files": 0, "lines": 0, "words": 0, "characters": 0}
        s = self.stats
        message = "word_count: %d files, %d lines, %d words, %d characters" % (s["files"], s["lines"], s["words"], s["characters"])
        if self.state.get("hasUI"):
            self.notify("ui/notify", {"message": message, "level": "info"})
        else:
            self.notify("log", {"level": "info", "message": message})
        return None

    def complete_command(self, params):
        prefix = params.get("prefix") or ""
        options = [{"value": "reset", "label": "reset"}]
        matches = [option for option in options if option["value"].startswith(prefix)]
        return matches or None

    # --- main loop ---------------------------------------------------------------------------

    def handle(self, message):
        method = message.get("method")
        request_id = message.get("id")
        params = message.get("params") or {}
        if request_id is None:
            if method == "state":
                self.state.update(params)
            elif method == "exit":
                sys.exit(0)
            return
        handlers = {
            "initialize": self.initialize,
            "event": self.event,
            "tool/execute": self.execute,
            "command/run": self.run_command,
            "command/complete": self.complete_command,
            "shutdown": lambda _params: None,
        }
        handler = handlers.get(method)
        try:
            if handler is None:
                raise ProtocolError(-32601, "unknown method: %s" % method)
            self.send({"id": request_id, "result": handler(params)})
        except ProtocolError as error:
            self.send({"id": request_id, "error": {"code": error.code, "message": error.message}})
        except EOFError:
            sys.exit(0)
        except Exception as error:  # a bug here is answered, not fatal
            self.send({"id": request_id, "error": {"code": -32000, "message": str(error)}})

    def run(self):
        while True:
            message = self.read()
            if message is None:
                return
            if "method" in message:
                self.handle(message)


class ProtocolError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


if __name__ == "__main__":
    Host().run()
