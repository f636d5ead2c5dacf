#!/usr/bin/env node
// Drives `tandem acp` with the official ACP TypeScript SDK through one scenario and
// prints a JSON report on stdout (see harness.mjs for what it holds).
//
//   node client.mjs <scenario> --agent <path to tandem> --cwd <project dir> [--model mock/m]
//
// The agent runs with this process's environment (HOME, PI_CODING_AGENT_DIR) in --cwd.
// --agent defaults to $TANDEM_BIN. Exit code: 0 when the scenario ran to its end with no
// schema failure, 1 otherwise (the report says why), 2 for bad usage.

import { parseArgs } from "node:util";
import { Harness } from "./harness.mjs";
import { scenarios } from "./scenarios.mjs";

// Hang guard only: no scenario should come anywhere near it.
const HANG_GUARD_MS = 30_000;

// The SDK logs with console.*: keep stdout for the report.
console.log = console.info = console.debug = console.error;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    agent: { type: "string", default: process.env.TANDEM_BIN },
    cwd: { type: "string", default: process.cwd() },
    model: { type: "string", default: "mock/m" },
  },
});
const name = positionals[0];
if (!name || !(name in scenarios) || !values.agent) {
  console.error(`usage: node client.mjs <scenario> --agent <tandem> --cwd <dir> [--model P/M]`);
  console.error(`scenarios: ${Object.keys(scenarios).join(", ")}`);
  process.exit(2);
}

const harness = new Harness({ agent: values.agent, model: values.model, cwd: values.cwd });
let error = null;
let timer;
const guard = new Promise((_, reject) => {
  timer = setTimeout(
    () => reject(new Error(`hang guard: scenario not finished after ${HANG_GUARD_MS / 1000} s`)),
    HANG_GUARD_MS,
  );
});
try {
  await Promise.race([scenarios[name](harness), guard]);
} catch (e) {
  error = String(e?.stack ?? e);
}
clearTimeout(timer);
// Closing stdin must make every agent exit on its own (close() kills it after 10 s),
// also after a failed scenario, so that the report has its exit status and stderr.
await harness.closeAll();

const report = harness.report(name, error);
const failed = error !== null || report.validation.length > 0;
process.stdout.write(JSON.stringify(report, null, 1) + "\n", () => process.exit(failed ? 1 : 0));
