// Drives an agent in RPC mode with pi 1.6's own RpcClient, with extensions loaded (-e), and
// answers their dialogs (pi's extension UI sub-protocol) as a client would; prints what it saw
// as one JSON object. PI16_PACKAGE is the pi 1.6 package; RPC_CLI is the script RpcClient
// starts with node (pi's dist/cli.js, or tandem-cli.cjs for Tandem); SCENARIO names what to do
// (below); EXTENSIONS is a JSON list of extension files. The mock LLM answers the prompts.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const clientModule = path.join(process.env.PI16_PACKAGE, "dist/modes/rpc/rpc-client.js");
const { RpcClient } = await import(pathToFileURL(clientModule).href);

const extensions = JSON.parse(process.env.EXTENSIONS ?? "[]");
const client = new RpcClient({
  cliPath: process.env.RPC_CLI,
  cwd: process.cwd(),
  model: "mock/mock-model",
  args: extensions.flatMap((file) => ["-e", file]),
});

// The answers the client gives, per dialog method, in order: an object with the answer's
// fields, or "ignore" to leave the question unanswered.
const plan = { select: [], confirm: [], input: [], editor: [] };
// Every extension record the client saw, without its id, in order.
const seen = [];
client.onEvent((event) => {
  if (event.type === "extension_error") {
    seen.push(event);
    return;
  }
  if (event.type !== "extension_ui_request") return;
  const { id, ...fields } = event;
  seen.push(fields);
  const answers = plan[event.method];
  if (!answers) return;
  const answer = answers.shift();
  if (answer === undefined || answer === "ignore") return;
  client.process.stdin.write(`${JSON.stringify({ type: "extension_ui_response", id, ...answer })}\n`);
});

/** What a run's tool calls returned. */
function toolResults(events) {
  return events
    .filter((e) => e.type === "tool_execution_end")
    .map((e) => ({ text: e.result.content.map((c) => c.text ?? "").join(""), isError: e.isError }));
}

/** Waits until a record that `found` accepts has been seen since `from` (at most 10 s). */
async function waitFor(from, found) {
  const deadline = Date.now() + 10000;
  while (!seen.slice(from).some(found)) {
    if (Date.now() > deadline) throw new Error(`waited too long; seen: ${JSON.stringify(since(from))}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The records seen since `from`. */
function since(from) {
  return seen.slice(from);
}

const scenarios = {
  // permission-gate.ts: a dangerous command asks `select`; "Yes" runs it, "No" blocks it.
  async gate(result) {
    plan.select.push({ value: "Yes" }, { value: "No" });
    fs.mkdirSync("build", { recursive: true });
    result.allowed = toolResults(await client.promptAndWait("clean up", undefined, 30000));
    result.buildAfterYes = fs.existsSync("build");
    fs.mkdirSync("build", { recursive: true });
    result.blocked = toolResults(await client.promptAndWait("clean up again", undefined, 30000));
    result.buildAfterNo = fs.existsSync("build");
    result.records = since(0);
  },

  // rpc-demo.ts and timed-confirm.ts: every dialog and notice of the sub-protocol, commands
  // through `prompt`, get_commands, a new session an extension refuses and then allows.
  async demo(result) {
    // session_start's notices come while the client starts.
    await waitFor(0, (r) => r.method === "setStatus");
    result.atStart = since(0);
    result.commands = (await client.getCommands()).map((c) => ({
      name: c.name,
      description: c.description,
      source: c.source,
      scope: c.sourceInfo?.scope,
      path: c.sourceInfo?.path,
    }));
    let mark = seen.length;
    plan.input.push({ value: "hello" });
    result.input = { disposition: await client.prompt("/rpc-input") };
    result.input.records = since(mark);
    mark = seen.length;
    plan.editor.push({ cancelled: true });
    result.editor = { disposition: await client.prompt("/rpc-editor") };
    result.editor.records = since(mark);
    mark = seen.length;
    result.prefill = { disposition: await client.prompt("/rpc-prefill") };
    result.prefill.records = since(mark);
    try {
      await client.steer("/rpc-prefill");
      result.steer = "queued";
    } catch (e) {
      result.steer = e.message;
    }
    mark = seen.length;
    plan.confirm.push({ confirmed: true });
    result.timed = { disposition: await client.prompt("/timed") };
    result.timed.records = since(mark);
    mark = seen.length;
    plan.confirm.push({ confirmed: false });
    result.refusedNew = { answer: await client.newSession() };
    result.refusedNew.records = since(mark);
    mark = seen.length;
    plan.confirm.push({ confirmed: true });
    result.allowedNew = { answer: await client.newSession() };
    // The new session's session_start notices may follow the answer.
    await waitFor(mark, (r) => r.method === "setStatus");
    result.allowedNew.records = since(mark);
    mark = seen.length;
    const events = await client.promptAndWait("hi", undefined, 30000);
    // Handlers of notification-only events may still be running when the run has settled.
    await waitFor(mark, (r) => r === seen.at(-1) && r.statusText?.endsWith("done"));
    result.turn = { last: events.at(-1)?.type, records: since(mark) };
    mark = seen.length;
    plan.confirm.push("ignore");
    result.timedOut = { disposition: await client.prompt("/timed") };
    result.timedOut.records = since(mark);
  },

  // input-transform.ts: a prompt its `input` handler handles is answered `handled` and runs
  // nothing; one it transforms runs with the new text.
  async input(result) {
    result.ping = { disposition: await client.prompt("ping") };
    await waitFor(0, (r) => r.method === "notify");
    result.ping.records = since(0);
    const events = await client.promptAndWait("?quick What is Rust?", undefined, 30000);
    result.quick = {
      last: events.at(-1)?.type,
      prompt: (await client.getMessages()).find((m) => m.role === "user")?.content,
    };
  },

  // lifecycle.js (written by the test) logs the session events: new_session, switch_session,
  // fork and clone replace the session, each with pi's reasons, and the process's end.
  async lifecycle(result) {
    await client.promptAndWait("hi", undefined, 30000);
    const first = (await client.getState()).sessionFile;
    result.newSession = await client.newSession();
    result.switchSession = await client.switchSession(first);
    result.clone = await client.clone();
    const forkable = await client.getForkMessages();
    result.fork = await client.fork(forkable[0].entryId);
  },

  // An extension whose command and whose handler throw: extension_error events, and the
  // prompt's run goes on.
  async errors(result) {
    result.command = { disposition: await client.prompt("/explode") };
    result.command.records = since(0);
    const mark = seen.length;
    const events = await client.promptAndWait("hi", undefined, 30000);
    result.turn = { last: events.at(-1)?.type, records: since(mark) };
    result.text = await client.getLastAssistantText();
  },
};

const result = {};
try {
  await client.start();
  await scenarios[process.env.SCENARIO](result);
} catch (e) {
  result.failure = `${e.stack ?? e}\nstderr: ${client.getStderr()}`;
} finally {
  await client.stop();
}
if (fs.existsSync("lifecycle.log")) {
  result.log = fs.readFileSync("lifecycle.log", "utf8").split("\n").filter(Boolean);
}
process.stdout.write(`${JSON.stringify(result)}\n`);
