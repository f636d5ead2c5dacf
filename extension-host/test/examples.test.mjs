// pi 1.6's own example extensions, unmodified, driven through the protocol.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { HostProcess, PI_EXAMPLES } from "./driver.mjs";

const example = (name) => join(PI_EXAMPLES, name);

describe("pi examples", () => {
	test("hello.ts: the tool runs", async () => {
		const host = new HostProcess();
		try {
			const init = await host.initialize([example("hello.ts")]);
			assert.equal(init.protocolVersion, 1);
			assert.deepEqual(init.extensions, [{ path: example("hello.ts"), name: "hello", error: null }]);
			assert.equal(init.tools.length, 1);
			assert.deepEqual(init.tools[0], {
				name: "hello",
				label: "Hello",
				description: "A simple greeting tool",
				parameters: { type: "object", required: ["name"], properties: { name: { type: "string", description: "Name to greet" } } },
				extension: "hello",
			});
			const result = await host.request("tool/execute", { toolCallId: "call_1", name: "hello", input: { name: "world" } });
			assert.deepEqual(result, { content: [{ type: "text", text: "Hello, world!" }], details: { greeted: "world" }, isError: false });
		} finally {
			await host.close();
		}
	});

	test("permission-gate.ts: rm -rf is blocked without a UI, and asked with one", async () => {
		const host = new HostProcess();
		try {
			const init = await host.initialize([example("permission-gate.ts")]);
			assert.deepEqual(init.events, ["tool_call"]);
			const blocked = await host.event("tool_call", { toolCallId: "c1", toolName: "bash", input: { command: "rm -rf /tmp/x" } });
			assert.deepEqual(blocked, { result: { block: true, reason: "Dangerous command blocked (no UI for confirmation)" }, errors: [] });
			const harmless = await host.event("tool_call", { toolCallId: "c2", toolName: "bash", input: { command: "ls -la" } });
			assert.deepEqual(harmless, { result: null, errors: [] });
			// With a UI the extension asks; the answer decides.
			host.notify("state", { hasUI: true, mode: "rpc" });
			const asked = [];
			host.onRequest = (method, params) => {
				asked.push({ method, params });
				return asked.length === 1 ? "Yes" : "No";
			};
			const allowed = await host.event("tool_call", { toolCallId: "c3", toolName: "bash", input: { command: "sudo rm -rf /x" } });
			assert.deepEqual(allowed.result, null);
			const refused = await host.event("tool_call", { toolCallId: "c4", toolName: "bash", input: { command: "sudo ls" } });
			assert.deepEqual(refused.result, { block: true, reason: "Blocked by user" });
			assert.equal(asked[0].method, "ui/select");
			assert.deepEqual(asked[0].params.options, ["Yes", "No"]);
			assert.match(asked[0].params.title, /sudo rm -rf \/x/);
		} finally {
			await host.close();
		}
	});

	test("protected-paths.ts: writes to .env are blocked", async () => {
		const host = new HostProcess();
		try {
			await host.initialize([example("protected-paths.ts")]);
			const blocked = await host.event("tool_call", { toolCallId: "c1", toolName: "write", input: { path: "config/.env", content: "X=1" } });
			assert.deepEqual(blocked.result, { block: true, reason: 'Path "config/.env" is protected' });
			const edit = await host.event("tool_call", { toolCallId: "c2", toolName: "edit", input: { path: "src/main.ts", edits: [] } });
			assert.equal(edit.result, null);
			const read = await host.event("tool_call", { toolCallId: "c3", toolName: "read", input: { path: ".env" } });
			assert.equal(read.result, null);
		} finally {
			await host.close();
		}
	});

	test("pirate.ts: the command turns on a system prompt change in before_agent_start", async () => {
		const host = new HostProcess();
		try {
			const init = await host.initialize([example("pirate.ts")], { hasUI: true, mode: "rpc" });
			assert.deepEqual(init.commands, [{ name: "pirate", description: "Toggle pirate mode (agent speaks like a pirate)", extension: "pirate" }]);
			const event = { messageType: "user", prompt: "hi", systemPrompt: "You are helpful.", systemPromptOptions: { cwd: "/tmp" } };
			const before = await host.event("before_agent_start", event);
			assert.deepEqual(before, { result: null, errors: [] });
			assert.equal(await host.request("command/run", { name: "pirate", args: "" }), null);
			const notice = await host.waitForNotification((n) => n.method === "ui/notify");
			assert.deepEqual(notice.params, { message: "Arrr! Pirate mode enabled!", level: "info" });
			const after = await host.event("before_agent_start", event);
			assert.ok(after.result.systemPrompt.startsWith("You are helpful.\n\nIMPORTANT: You are now in PIRATE MODE."));
			assert.deepEqual(Object.keys(after.result), ["systemPrompt"]);
		} finally {
			await host.close();
		}
	});

	test("input-transform.ts: transform and handled", async () => {
		const host = new HostProcess();
		try {
			await host.initialize([example("input-transform.ts")], { hasUI: true, mode: "tui" });
			const quick = await host.event("input", { text: "?quick What is TypeScript?", source: "interactive" });
			assert.deepEqual(quick.result, { action: "transform", text: "Respond briefly in 1-2 sentences: What is TypeScript?" });
			const ping = await host.event("input", { text: "ping", source: "interactive" });
			assert.deepEqual(ping.result, { action: "handled" });
			const pong = await host.waitForNotification((n) => n.method === "ui/notify");
			assert.deepEqual(pong.params, { message: "pong", level: "info" });
			const plain = await host.event("input", { text: "hello", source: "interactive" });
			assert.equal(plain.result, null);
			const fromExtension = await host.event("input", { text: "?quick x", source: "extension" });
			assert.equal(fromExtension.result, null);
		} finally {
			await host.close();
		}
	});

	test("tool-override.ts: registers read, which reads and blocks secrets", async () => {
		const dir = mkdtempSync(join(tmpdir(), "tandem-override-"));
		writeFileSync(join(dir, "notes.txt"), "one\ntwo\nthree\n");
		writeFileSync(join(dir, ".env"), "SECRET=1\n");
		const host = new HostProcess();
		try {
			const init = await host.initialize([example("tool-override.ts")], { cwd: dir });
			const read = init.tools.find((t) => t.name === "read");
			assert.equal(read.extension, "tool-override");
			assert.deepEqual(read.parameters.required, ["path"]);
			assert.deepEqual(init.commands.map((c) => c.name), ["read-log"]);
			const ok = await host.request("tool/execute", { toolCallId: "r1", name: "read", input: { path: "notes.txt", offset: 2, limit: 1 } });
			assert.deepEqual(ok.content, [{ type: "text", text: "two" }]);
			const denied = await host.request("tool/execute", { toolCallId: "r2", name: "read", input: { path: ".env" } });
			assert.match(denied.content[0].text, /^Access denied/);
			assert.deepEqual(denied.details, { blocked: true });
		} finally {
			await host.close();
		}
	});

	test("provider-payload.ts: both handlers run and the payload is left alone", async () => {
		const dir = mkdtempSync(join(tmpdir(), "tandem-payload-"));
		mkdirSync(join(dir, ".pi"));
		const host = new HostProcess();
		try {
			const init = await host.initialize([example("provider-payload.ts")], { cwd: dir });
			assert.deepEqual(init.events, ["before_provider_request", "after_provider_response"]);
			const request = await host.event("before_provider_request", { payload: { model: "m", messages: [] } });
			assert.deepEqual(request, { result: null, errors: [] });
			const response = await host.event("after_provider_response", { status: 429, headers: { "retry-after": "3" } });
			assert.deepEqual(response, { result: null, errors: [] });
			const log = readFileSync(join(dir, ".pi", "provider-payload.log"), "utf8");
			assert.match(log, /"model": "m"/);
			assert.match(log, /\[429\] \{"retry-after":"3"\}/);
		} finally {
			await host.close();
		}
	});

	test("dynamic-tools.ts: a tool registered in session_start is announced with `registered`", async () => {
		const host = new HostProcess();
		try {
			const init = await host.initialize([example("dynamic-tools.ts")]);
			const before = init.tools.map((t) => t.name);
			await host.event("session_start", { reason: "startup" });
			const registered = await host.waitForNotification((n) => n.method === "registered" && Array.isArray(n.params.tools));
			assert.ok(registered.params.tools.length > before.length, JSON.stringify(registered.params.tools.map((t) => t.name)));
		} finally {
			await host.close();
		}
	});

	test("ssh.ts without --ssh: its read/write/edit/bash run on the host's local built-in tools", async () => {
		const dir = mkdtempSync(join(tmpdir(), "tandem-ssh-"));
		writeFileSync(join(dir, "a.txt"), "alpha\nbeta\r\ngamma\n");
		const host = new HostProcess();
		try {
			const init = await host.initialize([example("ssh.ts")], { cwd: dir });
			assert.deepEqual(init.tools.map((t) => t.name), ["read", "write", "edit", "bash"]);
			assert.deepEqual(init.flags.map((f) => f.name), ["ssh"]);
			assert.deepEqual(init.events.sort(), ["before_agent_start", "session_start", "user_bash"]);
			const run = (name, input) => host.request("tool/execute", { toolCallId: name, name, input });
			assert.equal((await run("read", { path: "a.txt" })).content[0].text, "alpha\nbeta\r\ngamma\n");
			const written = await run("write", { path: "sub/new.txt", content: "one two\n" });
			assert.equal(written.content[0].text, "Successfully wrote 8 bytes to sub/new.txt");
			const edited = await run("edit", { path: "a.txt", edits: [{ oldText: "beta", newText: "BETA" }, { oldText: "gamma", newText: "GAMMA" }] });
			assert.equal(edited.content[0].text, "Successfully replaced 2 block(s) in a.txt.");
			assert.equal(readFileSync(join(dir, "a.txt"), "utf8"), "alpha\nBETA\r\nGAMMA\n");
			await assert.rejects(run("edit", { path: "a.txt", edits: [{ oldText: "missing", newText: "x" }] }), /Could not find the exact text/);
			const bash = await run("bash", { command: "cat sub/new.txt; echo err >&2" });
			assert.deepEqual(bash.content, [{ type: "text", text: "one two\nerr\n" }]);
			const failed = await run("bash", { command: "exit 3" });
			assert.equal(failed.isError, true);
			assert.match(failed.content[0].text, /Command exited with code 3$/);
			await assert.rejects(run("bash", { command: "sleep 5", timeout: 0.2 }), /Command timed out after 0.2 seconds/);
			const updates = host.notifications.filter((n) => n.method === "tool/update" && n.params.toolCallId === "bash");
			assert.ok(updates.length >= 1);
			// No --ssh: user_bash falls through to Tandem's own execution.
			assert.deepEqual(await host.event("user_bash", { command: "ls", excludeFromContext: false, cwd: dir }), { result: null, errors: [] });
		} finally {
			await host.close();
		}
	});

	test("snake.ts: the TUI-only game is noted, and its command returns without drawing", async () => {
		const host = new HostProcess();
		try {
			const init = await host.initialize([example("snake.ts")], { hasUI: true, mode: "tui" });
			assert.deepEqual(init.notes, ["snake.ts: ctx.ui.custom() draws a pi-tui component, which Tandem does not draw here"]);
			assert.equal(await host.request("command/run", { name: "snake", args: "" }), null);
		} finally {
			await host.close();
		}
	});
});
