#!/usr/bin/env node
// Checks that the schema checks (schema.mjs) are not vacuous: valid messages pass, and
// each kind of broken message fails with the expected check. Prints "ok" or the problems
// and exits non-zero.

import { WireChecker } from "./schema.mjs";

const rpc = (m) => JSON.stringify({ jsonrpc: "2.0", ...m });
const problems = [];

// Runs `lines` ([sender, line] pairs) through a fresh checker; `expected` lists the checks
// that must fail (by the start of their description), in order; [] means all pass.
function expect(name, lines, expected) {
  const checker = new WireChecker();
  for (const [sender, line] of lines) checker.check(sender, line);
  const got = checker.failures.map((f) => f.what);
  const ok = got.length === expected.length && expected.every((e, i) => got[i].startsWith(e));
  if (!ok) problems.push(`${name}: expected failures ${JSON.stringify(expected)}, got ${JSON.stringify(got)}`);
}

const prompt = rpc({ id: 1, method: "session/prompt", params: { sessionId: "s", prompt: [{ type: "text", text: "hi" }] } });
const update = (u) => rpc({ method: "session/update", params: { sessionId: "s", update: u } });

expect(
  "a valid turn",
  [
    ["client", prompt],
    ["agent", update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hello" } })],
    ["agent", update({ sessionUpdate: "tool_call", toolCallId: "c1", title: "Read", kind: "read", status: "pending" })],
    ["agent", rpc({ id: "p1", method: "session/request_permission", params: {
      sessionId: "s", toolCall: { toolCallId: "c1" },
      options: [{ optionId: "allow_once", kind: "allow_once", name: "Allow" }] } })],
    ["client", rpc({ id: "p1", result: { outcome: { outcome: "selected", optionId: "allow_once" } } })],
    ["agent", rpc({ id: 1, result: { stopReason: "end_turn" } })],
  ],
  [],
);
expect("not JSON", [["agent", "tandem: a log line on stdout"]], ["not JSON"]);
expect("no jsonrpc member", [["agent", JSON.stringify({ id: 1, result: {} })]], ["whole schema", "agent messages", "response to no open request"]);
expect(
  "a bad stopReason",
  [["client", prompt], ["agent", rpc({ id: 1, result: { stopReason: "finished" } })]],
  ["session/prompt result"],
);
expect(
  "an update without its kind",
  [["agent", update({ content: { type: "text", text: "Hello" } })]],
  ["session/update params"],
);
expect(
  "a bad tool call status",
  [["agent", update({ sessionUpdate: "tool_call_update", toolCallId: "c1", status: "done" })]],
  ["session/update params"],
);
expect(
  "a permission answer without outcome",
  [
    ["agent", rpc({ id: 7, method: "session/request_permission", params: {
      sessionId: "s", toolCall: { toolCallId: "c1" }, options: [] } })],
    ["client", rpc({ id: 7, result: { optionId: "allow_once" } })],
  ],
  ["session/request_permission result"],
);
expect("an answer to nothing", [["agent", rpc({ id: 42, result: {} })]], ["response to no open request"]);
expect("an unknown method", [["agent", rpc({ method: "session/updates", params: {} })]], ["unknown method"]);

if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log("ok");
