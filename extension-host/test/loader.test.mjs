// Module loading: TypeScript as pi's jiti loads it (inside node_modules too), TypeScript-style
// relative imports, pi's package names mapped to the host's modules, and the Node version check.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { HOST_MAIN, HostProcess } from "./driver.mjs";

function write(root, files) {
	for (const [path, text] of Object.entries(files)) {
		const full = join(root, path);
		mkdirSync(join(full, ".."), { recursive: true });
		writeFileSync(full, text);
	}
}

for (const hooks of ["registerHooks", "register"]) {
test(`TypeScript extensions load as jiti loads them (module.${hooks})`, async () => {
	const root = mkdtempSync(join(tmpdir(), "tandem-ts-"));
	write(root, {
		"ext/package.json": JSON.stringify({ name: "ts-features", type: "module", pi: { extensions: ["./src/index.ts"] } }),
		"ext/src/index.ts": `
import { ExtensionAPI, ExtensionContext, isToolCallEventType } from "@mariozechner/pi-coding-agent";
import { Type, Static } from "@sinclair/typebox";
import { Value } from "typebox/value";
import { Compile } from "typebox/compile";
import { StringEnum } from "@earendil-works/pi-ai/compat";
import { Text, visibleWidth } from "@earendil-works/pi-tui";
import { Color, shout } from "./util.js";
import { twice } from "./lib";
import data from "./data.json";
import { greet } from "ts-dep";
import legacy from "./legacy.cts";
import * as path from "node:path";

const schema = Type.Object({ color: StringEnum(["red", "green"] as const), times: Type.Optional(Type.Integer({ minimum: 1 })) });
type Params = Static<typeof schema>;

export default function (pi: ExtensionAPI) {
	pi.registerTool({
		name: "features",
		label: "Features",
		description: "Exercises the loader",
		parameters: schema,
		async execute(_id: string, params: Params, _signal: AbortSignal | undefined, _onUpdate: unknown, ctx: ExtensionContext) {
			const results = {
				enumValue: Color.Green,
				shout: shout("hi"),
				twice: twice(21),
				json: data.answer,
				dep: greet("dep"),
				cts: legacy.kind,
				requireWorks: typeof require("node:os").platform,
				dirname: path.basename(__dirname),
				valid: Value.Check(schema, params),
				compiled: Compile(schema).Check({ color: "blue" }),
				width: visibleWidth("日本"),
				text: new Text("hello world", 0, 0).render(5),
				guard: isToolCallEventType("bash", { toolName: "bash" }),
				cwd: ctx.cwd === process.cwd(),
			};
			return { content: [{ type: "text", text: "ok" }], details: results };
		},
	});
}
`,
		"ext/src/util.ts": `
export enum Color { Red = "red", Green = "green" }
export function shout(text: string): string { return text.toUpperCase() + "!"; }
export interface Unused { x: number }
`,
		"ext/src/lib/index.ts": "export const twice = (n: number): number => n * 2;\n",
		"ext/src/data.json": '{ "answer": 42 }\n',
		"ext/src/legacy.cts": "const value: { kind: string } = { kind: 'commonjs' };\nmodule.exports = value;\n",
		"ext/node_modules/ts-dep/package.json": JSON.stringify({ name: "ts-dep", type: "module", main: "index.ts" }),
		"ext/node_modules/ts-dep/index.ts": "export function greet(name: string): string { return `hello ${name}`; }\n",
	});
	const host = new HostProcess({ env: { TANDEM_EXTENSION_HOST_HOOKS: hooks } });
	try {
		const init = await host.initialize([join(root, "ext")], { cwd: root });
		assert.deepEqual(init.extensions, [{ path: join(root, "ext"), name: "ext", error: null }]);
		assert.deepEqual(init.tools[0].parameters, {
			type: "object",
			required: ["color"],
			properties: { color: { type: "string", enum: ["red", "green"] }, times: { type: "integer", minimum: 1 } },
		});
		const result = await host.request("tool/execute", { toolCallId: "f", name: "features", input: { color: "red" } });
		assert.deepEqual(result.details, {
			enumValue: "green",
			shout: "HI!",
			twice: 42,
			json: 42,
			dep: "hello dep",
			cts: "commonjs",
			requireWorks: "function",
			dirname: "src",
			valid: true,
			compiled: false,
			width: 4,
			text: ["hello", "world"],
			guard: true,
			cwd: true,
		});
	} finally {
		await host.close();
	}
});
}

test("CommonJS extensions require pi's packages", async () => {
	const root = mkdtempSync(join(tmpdir(), "tandem-cjs-"));
	write(root, {
		"ext.cjs": `const { defineTool, CONFIG_DIR_NAME } = require("@earendil-works/pi-coding-agent");
const { Type } = require("@sinclair/typebox");
module.exports = function (pi) {
	pi.registerTool(defineTool({ name: "cjs_tool", label: "CJS", description: CONFIG_DIR_NAME, parameters: Type.Object({}), execute: async () => ({ content: [{ type: "text", text: "cjs ok" }] }) }));
};
`,
	});
	for (const hooks of ["registerHooks", "register"]) {
		const host = new HostProcess({ env: { TANDEM_EXTENSION_HOST_HOOKS: hooks } });
		try {
			const init = await host.initialize([join(root, "ext.cjs")]);
			assert.equal(init.extensions[0].error, null, hooks);
			assert.equal(init.tools[0].description, ".pi");
			const result = await host.request("tool/execute", { toolCallId: "c", name: "cjs_tool", input: {} });
			assert.equal(result.content[0].text, "cjs ok");
		} finally {
			await host.close();
		}
	}
});

test("a Node.js without type stripping fails initialize with the version it needs", async (t) => {
	const candidates = ["/usr/bin/node", "/usr/local/bin/node"].filter((p) => existsSync(p));
	const old = candidates.find((p) => {
		const [major, minor] = execFileSync(p, ["-p", "process.versions.node"], { encoding: "utf8" }).trim().split(".").map(Number);
		return major < 22 || (major === 22 && minor < 13);
	});
	if (!old) {
		t.skip("no Node.js older than 22.13 on this machine");
		return;
	}
	const host = new HostProcess({ command: [old, HOST_MAIN] });
	try {
		await assert.rejects(host.initialize([]), (error) => {
			assert.equal(error.code, -32603);
			assert.match(error.message, /needs Node\.js 22\.13 or newer/);
			assert.match(error.message, /this is Node\.js \d+\./);
			return true;
		});
	} finally {
		await host.close();
	}
});
