// Every example extension of pi 1.6 (single files and directories), loaded unmodified in one host.

import assert from "node:assert/strict";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { HostProcess, PI_EXAMPLES } from "./driver.mjs";

/** Examples that cannot load here, and why; each must fail with that reason. */
const EXPECTED_FAILURES = {
	// Its npm dependency (@earendil-works/gondolin, a micro-VM) is not installed next to it.
	gondolin: /Cannot find package '@earendil-works\/gondolin'.*run npm install in .*gondolin/,
};

test("every pi example extension loads", async (t) => {
	if (!existsSync(PI_EXAMPLES)) {
		t.skip(`pi 1.6's examples are not at ${PI_EXAMPLES}`);
		return;
	}
	const paths = readdirSync(PI_EXAMPLES)
		.sort()
		.map((name) => join(PI_EXAMPLES, name))
		.filter((path) => (statSync(path).isDirectory() ? ["index.ts", "index.js", "package.json"].some((f) => existsSync(join(path, f))) : path.endsWith(".ts")));
	const host = new HostProcess();
	try {
		const started = Date.now();
		const init = await host.initialize(paths, { timeoutMs: 30000 });
		const rows = init.extensions.map((row) => `${row.error ? "FAIL" : "ok  "} ${row.name}${row.error ? `: ${row.error}` : ""}`);
		t.diagnostic(`${paths.length} examples in ${Date.now() - started} ms\n${rows.join("\n")}`);
		assert.equal(init.extensions.length, paths.length);
		for (const row of init.extensions) {
			const expected = EXPECTED_FAILURES[row.name];
			if (expected) assert.match(row.error ?? "", expected, row.name);
			else assert.equal(row.error, null, `${row.name}: ${row.error}`);
		}
		// The host still answers after loading everything.
		const start = await host.event("session_start", { reason: "startup" });
		t.diagnostic(`session_start errors: ${JSON.stringify(start.errors)}`);
	} finally {
		await host.close();
	}
});
