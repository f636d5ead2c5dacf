// The protocol itself, with small fixture extensions: errors, cancellation, streaming updates,
// console output, load failures, the state mirror, host -> Tandem requests, late registrations.

import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { FIXTURES, HostProcess, PI_EXAMPLES } from "./driver.mjs";

const fixture = (name) => join(FIXTURES, name);

describe("protocol", () => {
	test("a throwing tool_call handler blocks; a throwing notification handler is reported and the next runs", async () => {
		const host = new HostProcess();
		try {
			await host.initialize([fixture("throwing.ts")]);
			const gate = await host.event("tool_call", { toolCallId: "c1", toolName: "read", input: { path: "x" } });
			assert.deepEqual(gate, { result: { block: true, reason: "gate exploded" }, errors: [{ extension: "throwing", message: "gate exploded" }] });
			const start = await host.event("session_start", { reason: "startup" });
			assert.deepEqual(start, { result: null, errors: [{ extension: "throwing", message: "x is undefined" }] });
			await assert.rejects(host.request("tool/execute", { toolCallId: "t1", name: "boom", input: {} }), (error) => {
				assert.equal(error.code, -32000);
				assert.equal(error.message, "boom after 1 session_start");
				return true;
			});
		} finally {
			await host.close();
		}
	});

	test("$/cancelRequest aborts a tool's signal; a tool that ignores it is answered anyway", async () => {
		const host = new HostProcess();
		try {
			await host.initialize([fixture("tools.ts")]);
			const waiting = host.request("tool/execute", { toolCallId: "w1", name: "wait_for_abort", input: {} });
			await new Promise((r) => setTimeout(r, 50));
			host.notify("$/cancelRequest", { id: waiting.id });
			await assert.rejects(waiting, /stopped by signal/);
			const hanging = host.request("tool/execute", { toolCallId: "w2", name: "ignore_abort", input: {} });
			await new Promise((r) => setTimeout(r, 50));
			const started = Date.now();
			host.notify("$/cancelRequest", { id: hanging.id });
			await assert.rejects(hanging, (error) => {
				assert.equal(error.code, -32800);
				assert.equal(error.message, "Tool execution was aborted");
				return true;
			});
			assert.ok(Date.now() - started < 3000);
			// The host is still serving.
			const result = await host.request("tool/execute", { toolCallId: "p1", name: "progress", input: { steps: 1 } });
			assert.equal(result.content[0].text, "done");
		} finally {
			await host.close();
		}
	});

	test("onUpdate streams tool/update notifications; terminate is passed on", async () => {
		const host = new HostProcess();
		try {
			await host.initialize([fixture("tools.ts")]);
			const result = await host.request("tool/execute", { toolCallId: "p2", name: "progress", input: { steps: 3 } });
			assert.deepEqual(result, { content: [{ type: "text", text: "done" }], details: { steps: 3 }, isError: false, terminate: true });
			const updates = host.notifications.filter((n) => n.method === "tool/update");
			assert.deepEqual(
				updates.map((u) => u.params),
				[1, 2, 3].map((step) => ({ toolCallId: "p2", partialResult: { content: [{ type: "text", text: `step ${step}` }], details: { step } } })),
			);
		} finally {
			await host.close();
		}
	});

	test("console and stdout output never reaches the protocol", async () => {
		const host = new HostProcess();
		try {
			const init = await host.initialize([fixture("noisy.ts")]);
			assert.equal(init.extensions[0].error, null);
			await host.event("session_start", { reason: "startup" });
			await host.close();
			// Every protocol message parsed (the driver would have thrown) and none is forged.
			assert.ok(host.messages.every((m) => m.result !== "forged"));
			assert.match(host.stderr, /noisy: factory console\.log/);
			assert.match(host.stderr, /noisy: console\.info in factory/);
			assert.match(host.stderr, /noisy: console\.log in handler/);
			assert.match(host.stderr, /noisy: console\.warn in handler/);
			assert.match(host.stdout, /noisy: raw stdout write/);
			assert.match(host.stdout, /"forged"/);
		} finally {
			await host.close();
		}
	});

	test("without TANDEM_EXTENSION_OUTPUT_FD the protocol is on stdout and extension output goes to stderr", async () => {
		const host = new HostProcess({ outputFd: false });
		try {
			const init = await host.initialize([fixture("noisy.ts"), join(PI_EXAMPLES, "hello.ts")]);
			assert.equal(init.tools[0].name, "hello");
			await host.event("session_start", { reason: "startup" });
			await host.close();
			assert.ok(host.messages.every((m) => m.result !== "forged"));
			assert.match(host.stderr, /noisy: raw stdout write/);
		} finally {
			await host.close();
		}
	});

	test("a syntax error and a throwing factory are reported per extension; the others load", async () => {
		const host = new HostProcess();
		try {
			const init = await host.initialize([fixture("bad-syntax.ts"), fixture("throws-in-factory.js"), join(PI_EXAMPLES, "hello.ts"), fixture("missing.ts")]);
			const [bad, throws, hello, missing] = init.extensions;
			assert.equal(bad.name, "bad-syntax");
			assert.match(bad.error, /bad-syntax\.ts:4: /);
			assert.equal(throws.error, "factory refused to start");
			assert.equal(hello.error, null);
			assert.match(missing.error, /^Extension not found: .*missing\.ts$/);
			assert.deepEqual(init.tools.map((t) => t.name), ["hello"]);
			assert.deepEqual(init.commands, []);
		} finally {
			await host.close();
		}
	});

	test("the state mirror answers pi's synchronous getters", async () => {
		const host = new HostProcess();
		try {
			const init = await host.initialize([fixture("probe.ts")], { flags: { "probe-flag": "given" }, mode: "json" });
			assert.deepEqual(init.flags, [{ name: "probe-flag", type: "string", description: "A test flag", extension: "probe", default: "fallback" }]);
			const models = [
				{ provider: "test", id: "m1", name: "Model One", api: "openai-completions", reasoning: false, input: ["text"], contextWindow: 1000, maxTokens: 100, cost: {} },
				{ provider: "test", id: "m2", name: "Model Two", api: "openai-completions", reasoning: true, input: ["text"], contextWindow: 1000, maxTokens: 100, cost: {} },
			];
			host.notify("state", {
				model: models[0],
				models,
				thinkingLevel: "low",
				activeTools: ["read", "probe"],
				allTools: [{ name: "read", description: "Read", parameters: {}, sourceInfo: { path: "builtin:read", source: "builtin", scope: "temporary" } }],
				commands: [{ name: "probe-actions", description: "x", source: "extension" }],
				session: { id: "s1", file: "/tmp/s1.jsonl", name: "first", leafId: "e2", header: { type: "session" } },
				entries: [{ type: "message", id: "e1", parentId: null }],
				labels: { e1: "start" },
				isIdle: false,
				hasPendingMessages: true,
				systemPrompt: "SYSTEM",
				contextUsage: { tokens: 10, contextWindow: 1000, percent: 1 },
				settings: { theme: "dark" },
			});
			host.notify("state", { appendedEntries: [{ type: "message", id: "e2", parentId: "e1" }] });
			const { details } = await host.request("tool/execute", { toolCallId: "s", name: "probe", input: {} });
			assert.deepEqual(details, {
				activeTools: ["read", "probe"],
				allTools: ["read", "probe"],
				commands: ["probe-actions"],
				sessionName: "first",
				thinkingLevel: "low",
				settings: { theme: "dark" },
				flag: "given",
				model: "m1",
				found: "Model Two",
				available: 2,
				entries: 2,
				leafId: "e2",
				branchFromFirst: ["e1"],
				label: "start",
				sessionId: "s1",
				sessionFile: "/tmp/s1.jsonl",
				usage: { tokens: 10, contextWindow: 1000, percent: 1 },
				systemPrompt: "SYSTEM",
				idle: false,
				pending: true,
				cwd: process.cwd(),
				mode: "json",
				hasUI: false,
				trusted: true,
				agentDir: join(process.env.TMPDIR ?? "/tmp", "tandem-test-agent"),
			});
		} finally {
			await host.close();
		}
	});

	test("actions become host -> Tandem requests; dialogs have no request without a UI", async () => {
		const host = new HostProcess();
		try {
			await host.initialize([fixture("probe.ts")], { hasUI: true, mode: "rpc" });
			host.notify("state", { allTools: [{ name: "read" }, { name: "bash" }], models: [{ provider: "test", id: "m2" }] });
			const requests = [];
			host.onRequest = (method, params) => {
				requests.push([method, params]);
				switch (method) {
					case "session/appendEntry":
						return { id: "new-entry" };
					case "agent/setActiveTools":
						return ["read"];
					case "agent/setModel":
						return true;
					case "agent/setThinkingLevel":
						return "medium";
					case "ui/confirm":
						return true;
					case "ui/select":
						return "b";
					case "ui/input":
						return null;
					default:
						return null;
				}
			};
			assert.equal(await host.request("command/run", { name: "probe-actions", args: "" }), null);
			const methods = requests.map(([m]) => m);
			assert.deepEqual(methods, [
				"session/setName",
				"session/setLabel",
				"session/appendEntry",
				"session/sendMessage",
				"session/sendUserMessage",
				"agent/setActiveTools",
				"agent/setThinkingLevel",
				"agent/setModel",
				"ui/confirm",
				"ui/select",
				"ui/input",
				"agent/waitForIdle",
			]);
			const params = Object.fromEntries(requests);
			assert.deepEqual(params["session/setName"], { name: "probed" });
			assert.deepEqual(params["session/setLabel"], { entryId: "e1", label: "first" });
			assert.deepEqual(params["session/appendEntry"], { customType: "probe-state", data: { n: 1 } });
			assert.deepEqual(params["session/sendMessage"], { message: { customType: "probe", content: "hello", display: true }, options: { triggerTurn: false } });
			assert.deepEqual(params["session/sendUserMessage"], { content: "from probe", options: { deliverAs: "followUp" } });
			assert.deepEqual(params["agent/setActiveTools"], { names: ["read", "probe"] });
			assert.deepEqual(params["agent/setModel"], { provider: "test", id: "m2" });
			assert.deepEqual(params["ui/confirm"], { title: "Sure?", message: "Really?", timeout: 2000 });
			assert.deepEqual(params["ui/input"], { title: "Name", placeholder: "placeholder" });
			const notify = host.notifications.find((n) => n.method === "ui/notify");
			assert.deepEqual(notify.params, { message: "switched=true confirmed=true choice=b text=undefined name=probed", level: "info" });
			assert.deepEqual(host.notifications.find((n) => n.method === "ui/setStatus").params, { key: "probe", text: "ok" });
			assert.deepEqual(host.notifications.find((n) => n.method === "ui/setWidget").params, { key: "probe", lines: ["line 1", "line 2"], placement: "belowEditor" });

			// Without a UI: defaults at once, and no ui/* traffic at all.
			host.notify("state", { hasUI: false, mode: "print" });
			requests.length = 0;
			host.notifications.length = 0;
			await host.request("command/run", { name: "probe-actions", args: "" });
			assert.ok(!requests.some(([m]) => m.startsWith("ui/")));
			assert.ok(!host.notifications.some((n) => n.method.startsWith("ui/")));
		} finally {
			await host.close();
		}
	});

	test("late registrations, command completion, notes at run time, unknown methods", async () => {
		const host = new HostProcess();
		try {
			const init = await host.initialize([fixture("probe.ts")], { hasUI: true, mode: "tui" });
			assert.deepEqual(init.notes, ["probe.ts: ctx.ui.custom() draws a pi-tui component, which Tandem does not draw here"]);
			assert.equal(init.commands.find((c) => c.name === "probe-late").completions, true);
			assert.deepEqual(await host.request("command/complete", { name: "probe-late", prefix: "al" }), [{ value: "alpha", label: "alpha" }]);
			assert.equal(await host.request("command/complete", { name: "probe-actions", prefix: "" }), null);
			await host.request("command/run", { name: "probe-late", args: "" });
			const registered = await host.waitForNotification((n) => n.method === "registered" && n.params.tools);
			assert.deepEqual(registered.params.tools.map((t) => t.name), ["probe", "late_tool"]);
			assert.deepEqual(registered.params.events, ["agent_end"]);
			assert.deepEqual(await host.request("tool/execute", { toolCallId: "l", name: "late_tool", input: { x: 21 } }), { content: [{ type: "text", text: "42" }], isError: false });
			await host.request("command/run", { name: "probe-custom", args: "" });
			assert.equal(host.notifications.find((n) => n.method === "ui/notify").params.message, "custom returned undefined");
			await assert.rejects(host.request("nonsense/method", {}), (e) => e.code === -32601);
			await assert.rejects(host.request("tool/execute", { toolCallId: "x", name: "nope", input: {} }), (e) => e.code === -32602);
		} finally {
			await host.close();
		}
	});

	test("events are handled in order; a cancelled event that hangs does not hold up the next", async () => {
		const host = new HostProcess();
		try {
			await host.initialize([fixture("ordering.ts")]);
			const first = host.event("agent_start", {});
			const second = host.event("turn_start", { turnIndex: 0, timestamp: 1 });
			await Promise.all([first, second]);
			const log = await host.request("tool/execute", { toolCallId: "o1", name: "order_log", input: {} });
			assert.deepEqual(log.details, ["agent_start:begin", "agent_start:end", "turn_start:0"]);
			const hanging = host.event("agent_end", { messages: [] });
			const next = host.event("turn_start", { turnIndex: 1, timestamp: 2 });
			await new Promise((r) => setTimeout(r, 50));
			host.notify("$/cancelRequest", { id: hanging.id });
			await assert.rejects(hanging, (e) => e.code === -32800);
			assert.deepEqual(await next, { result: null, errors: [] });
			const after = await host.request("tool/execute", { toolCallId: "o2", name: "order_log", input: {} });
			assert.deepEqual(after.details.at(-1), "turn_start:1");
		} finally {
			await host.close();
		}
	});

	test("closing stdin ends the host", async () => {
		const host = new HostProcess();
		await host.initialize([join(PI_EXAMPLES, "hello.ts")]);
		host.child.stdin.end();
		const { code } = await host.exited;
		assert.equal(code, 0);
	});
});
