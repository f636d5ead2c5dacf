// The host's own versions of what extensions import, checked against pi 1.6's real packages where
// they are installed (~/.cache/tandem/pi-1.6.0), so schemas and truncation match byte for byte.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createFindToolDefinition, createGrepToolDefinition, createLsToolDefinition, createReadToolDefinition, formatReadLineRange, withFileMutationQueue } from "../src/pi-coding-agent.mjs";
import { StringEnum, uuidv7 } from "../src/pi-ai.mjs";
import { Box, Container, Key, matchesKey, parseKey, Spacer, Text, truncateToWidth, visibleWidth, wrapTextWithAnsi } from "../src/pi-tui.mjs";
import { formatSize, truncateHead, truncateLine, truncateTail } from "../src/truncate.mjs";
import * as Ours from "../src/typebox.mjs";
import { Value } from "../src/typebox-value.mjs";
import { parseFrontmatter } from "../src/yaml-lite.mjs";

const PI = join(homedir(), ".cache/tandem/pi-1.6.0/node_modules");
const real = (path) => import(pathToFileURL(join(PI, path)).href);
const havePi = existsSync(join(PI, "typebox")) && existsSync(join(PI, "@earendil-works/pi-coding-agent/dist/core/tools/truncate.js"));

function schemas(T) {
	return [
		T.Object({ a: T.String({ description: "x" }), b: T.Optional(T.Number()), c: T.Boolean({ default: false }) }),
		T.Object({}),
		T.Object({ n: T.Integer({ minimum: 1, maximum: 10 }) }, { additionalProperties: false, description: "d" }),
		T.Array(T.String(), { minItems: 1 }),
		T.Union([T.Literal("a"), T.Literal(2), T.Literal(true)]),
		T.Tuple([T.String(), T.Null()]),
		T.Record(T.String(), T.Any()),
		T.Record(T.Number(), T.String()),
		T.Record(T.Union([T.Literal("x"), T.Literal("y")]), T.Boolean()),
		T.Enum(["p", "q"]),
		T.Partial(T.Object({ a: T.String(), b: T.Number() })),
		T.Required(T.Object({ a: T.Optional(T.String()) })),
		T.Pick(T.Object({ a: T.String(), b: T.Number() }), ["a"]),
		T.Omit(T.Object({ a: T.String(), b: T.Number() }), ["a"]),
		T.KeyOf(T.Object({ a: T.String(), b: T.Number() })),
		T.Intersect([T.Object({ a: T.String() }), T.Object({ b: T.String() })]),
		T.Unknown(),
		T.Null(),
		T.Unsafe({ type: "string", format: "uri" }),
		T.Object({ nested: T.Array(T.Object({ oldText: T.String(), newText: T.String() }), { description: "edits" }) }),
	];
}

describe("library", () => {
	test("Type builds the JSON Schema TypeBox builds", { skip: !havePi && "pi 1.6 is not installed" }, async () => {
		const { Type: TheirType } = await real("typebox/build/index.mjs");
		const theirs = schemas(TheirType);
		const ours = schemas(Ours.Type);
		for (let i = 0; i < ours.length; i++) assert.equal(JSON.stringify(ours[i]), JSON.stringify(theirs[i]), `schema ${i}`);
		assert.equal(Ours.IsOptional(Ours.Type.Optional(Ours.Type.String())), true);
	});

	test("truncation matches pi's", { skip: !havePi && "pi 1.6 is not installed" }, async () => {
		const pi = await real("@earendil-works/pi-coding-agent/dist/core/tools/truncate.js");
		const inputs = [
			"",
			"one line",
			"a\nb\nc\n",
			Array.from({ length: 2500 }, (_, i) => `line ${i}`).join("\n"),
			"x".repeat(60 * 1024),
			`${"y".repeat(30 * 1024)}\n${"z".repeat(30 * 1024)}\n`,
			"é".repeat(40000),
		];
		for (const text of inputs) {
			assert.deepEqual(truncateHead(text), pi.truncateHead(text));
			assert.deepEqual(truncateTail(text), pi.truncateTail(text));
			assert.deepEqual(truncateHead(text, { maxLines: 3, maxBytes: 100 }), pi.truncateHead(text, { maxLines: 3, maxBytes: 100 }));
			assert.deepEqual(truncateTail(text, { maxLines: 3, maxBytes: 100 }), pi.truncateTail(text, { maxLines: 3, maxBytes: 100 }));
		}
		for (const size of [0, 1023, 1024, 51200, 1048576, 5000000]) assert.equal(formatSize(size), pi.formatSize(size));
		assert.deepEqual(truncateLine("q".repeat(600)), pi.truncateLine("q".repeat(600)));
	});

	test("small helpers", async () => {
		assert.deepEqual(StringEnum(["a", "b"], { description: "d" }), { type: "string", enum: ["a", "b"], description: "d" });
		const id = uuidv7();
		assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
		assert.ok(uuidv7() > id || uuidv7().slice(0, 8) >= id.slice(0, 8));
		assert.equal(formatReadLineRange(undefined, undefined), "");
		assert.equal(formatReadLineRange(5, undefined), ":5");
		assert.equal(formatReadLineRange(5, 10), ":5-14");
		assert.equal(formatReadLineRange("3", "2"), ":3-4");
		const order = [];
		await Promise.all([
			withFileMutationQueue("/tmp/tandem-queue-test", async () => {
				await new Promise((r) => setTimeout(r, 30));
				order.push(1);
			}),
			withFileMutationQueue("/tmp/../tmp/tandem-queue-test", async () => order.push(2)),
		]);
		assert.deepEqual(order, [1, 2]);
		const schema = Ours.Type.Object({ n: Ours.Type.Number(), tags: Ours.Type.Optional(Ours.Type.Array(Ours.Type.String())) });
		assert.equal(Value.Check(schema, { n: 1 }), true);
		assert.equal(Value.Check(schema, { n: "1" }), false);
		assert.deepEqual(Value.Convert(schema, { n: "1", tags: "a" }), { n: 1, tags: ["a"] });
		assert.deepEqual(
			Value.Errors(schema, {}).map((e) => [e.path, e.message]),
			[["/n", "missing"]],
		);
		assert.deepEqual(parseFrontmatter("---\nname: scout\ndescription: \"Finds things\"\ntools: read, grep\nmodel:\n  id: x\nlist:\n  - a\n  - b\n---\nBody text\n"), {
			frontmatter: { name: "scout", description: "Finds things", tools: "read, grep", model: { id: "x" }, list: ["a", "b"] },
			body: "Body text",
		});
	});

	test("built-in ls, find, grep and read", async () => {
		const dir = mkdtempSync(join(tmpdir(), "tandem-tools-"));
		mkdirSync(join(dir, "src", "deep"), { recursive: true });
		writeFileSync(join(dir, "src", "a.ts"), "const needle = 1;\nconst other = 2;\n");
		writeFileSync(join(dir, "src", "deep", "b.ts"), "// Needle here\n");
		writeFileSync(join(dir, "notes.md"), "nothing\n");
		writeFileSync(join(dir, "big.txt"), Array.from({ length: 2100 }, (_, i) => `row ${i + 1}`).join("\n"));
		writeFileSync(join(dir, "pixel.png"), Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"));
		const call = (def, params) => def.execute("id", params, undefined, undefined, { cwd: dir });
		const text = (result) => result.content[0].text;
		assert.equal(text(await call(createLsToolDefinition(dir), {})), "big.txt\nnotes.md\npixel.png\nsrc/");
		assert.equal(text(await call(createFindToolDefinition(dir), { pattern: "*.ts" })), "src/a.ts\nsrc/deep/b.ts");
		assert.equal(text(await call(createFindToolDefinition(dir), { pattern: "src/*.ts" })), "src/a.ts");
		assert.equal(text(await call(createGrepToolDefinition(dir), { pattern: "needle", ignoreCase: true })), "src/a.ts:1:const needle = 1;\nsrc/deep/b.ts:1:// Needle here");
		assert.equal(text(await call(createGrepToolDefinition(dir), { pattern: "needle", glob: "*.md" })), "No matches found");
		const read = createReadToolDefinition(dir);
		const big = await call(read, { path: "big.txt" });
		assert.match(text(big), /\[Showing lines 1-2000 of 2100\. Use offset=2001 to continue\.\]$/);
		assert.equal(text(await call(read, { path: "@big.txt", offset: 2100 })), "row 2100");
		const image = await call(read, { path: "pixel.png" });
		assert.deepEqual(image.content.map((c) => c.type), ["text", "image"]);
		await assert.rejects(call(read, { path: "big.txt", offset: 5000 }), /beyond end of file/);
	});

	test("pi-tui components render lines", () => {
		assert.equal(visibleWidth("\x1b[31mred\x1b[0m"), 3);
		assert.equal(visibleWidth("日本語"), 6);
		assert.equal(visibleWidth("👍"), 2);
		assert.equal(truncateToWidth("hello world", 8), "hello...");
		assert.equal(truncateToWidth("hi", 5, "...", true), "hi   ");
		assert.deepEqual(wrapTextWithAnsi("the quick brown fox", 10), ["the quick", "brown fox"]);
		assert.deepEqual(new Text("hello", 1, 1).render(9), ["         ", " hello   ", "         "]);
		const box = new Box(1, 0);
		box.addChild(new Text("ab", 0, 0));
		const container = new Container();
		container.addChild(box);
		container.addChild(new Spacer(1));
		assert.deepEqual(container.render(6), [" ab   ", ""]);
		assert.equal(matchesKey("\x1b", Key.escape), true);
		assert.equal(matchesKey("\r", "enter"), true);
		assert.equal(matchesKey("\x03", Key.ctrl("c")), true);
		assert.equal(matchesKey("\x1b[A", "up"), true);
		assert.equal(matchesKey("\x1b[1;5C", "ctrl+right"), true);
		assert.equal(parseKey("\x1b[99;5u"), "ctrl+c");
		assert.equal(matchesKey("a", "b"), false);
	});
});
