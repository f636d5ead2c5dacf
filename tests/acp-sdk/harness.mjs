// Runs `tandem acp` as a child process and talks to it as an ACP client through the
// official SDK, recording everything a scenario may want to check:
//   - every line on the wire, both ways, checked against the schema (schema.mjs),
//   - the result or error of each step the scenario takes,
//   - the session/update notifications, tagged with the step they arrived in,
//   - the requests the agent made to the client, with the answers given.

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { Readable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { WireChecker } from "./schema.mjs";

export class Harness {
  constructor({ agent, model, cwd }) {
    this.agentPath = agent;
    this.model = model;
    this.cwd = cwd;
    this.checker = new WireChecker();
    this.wire = [];
    this.steps = {};
    this.updates = [];
    this.calls = [];
    this.procs = [];
    this.lastStep = null;
  }

  // Starts a new agent process. Options:
  //   fs: advertise fs.readTextFile and fs.writeTextFile
  //   terminal: advertise terminal
  //   buffers: { absolutePath: text } unsaved editor buffers, served before disk
  //   permissions: answers to session/request_permission, in order: a permission option
  //     kind ("allow_once", "reject_once", ...), "cancelled", or "cancel-turn" (send
  //     session/cancel first, then answer "cancelled")
  start(options = {}) {
    const proc = new AgentProcess(this, this.procs.length, options);
    this.procs.push(proc);
    return proc;
  }

  // Runs one named step; records its result or its JSON-RPC error and returns
  // { result } or { error } without throwing. Updates and agent requests that arrive
  // from now on are tagged with this step's name, unless `tag` is false (for a step taken
  // while another one, e.g. a prompt turn, is still running).
  async step(proc, name, run, { tag = true } = {}) {
    if (name in this.steps) throw new Error(`step name used twice: ${name}`);
    this.lastStep = name;
    proc.requesting = name;
    if (tag) proc.step = name;
    try {
      const result = await run();
      this.steps[name] = { result: result ?? null };
    } catch (e) {
      this.steps[name] = { error: errorOf(e) };
    }
    // Prefer the answer exactly as it came over the wire: the SDK's parsed value may have
    // defaults filled in or unknown fields dropped.
    const raw = proc.answers.get(name);
    if (raw) this.steps[name] = "error" in raw ? { error: raw.error } : { result: raw.result };
    return this.steps[name];
  }

  async closeAll() {
    await Promise.all(this.procs.map((p) => p.close()));
  }

  report(scenario, error) {
    return {
      scenario,
      error: error ?? null,
      lastStep: this.lastStep,
      steps: this.steps,
      updates: this.updates,
      calls: this.calls,
      validation: this.checker.failures,
      wire: this.wire,
      agents: this.procs.map((p) => ({
        exit: p.exit,
        buffers: Object.fromEntries(p.buffers),
        stderr: p.stderr.slice(-8000),
      })),
    };
  }
}

function errorOf(e) {
  if (e instanceof acp.RequestError) return { code: e.code, message: e.message, data: e.data ?? null };
  return { code: null, message: String(e?.stack ?? e) };
}

class AgentProcess {
  constructor(harness, index, options) {
    this.h = harness;
    this.index = index;
    this.options = options;
    this.buffers = new Map(Object.entries(options.buffers ?? {}));
    this.permissions = [...(options.permissions ?? [])];
    this.terminals = new Terminals(harness.cwd);
    this.step = null; // the step that updates and agent requests get tagged with
    this.requesting = null; // the step whose request goes out next
    this.sent = new Map(); // id of a request we sent -> step name
    this.answers = new Map(); // step name -> the agent's raw response
    this.agentRequests = new Map(); // id of a request the agent sent -> its raw params
    this.stderr = "";
    this.exit = null;
    this.waiters = [];

    this.child = spawn(harness.agentPath, ["acp", "--model", harness.model], {
      cwd: harness.cwd,
      env: process.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (text) => (this.stderr += text));
    this.exited = new Promise((resolve) => {
      // "close" rather than "exit": by then all of stdout and stderr has been read.
      this.child.on("close", (code, signal) => resolve((this.exit = { code, signal })));
      this.child.on("error", (e) => resolve((this.exit = { code: null, signal: null, spawnError: String(e) })));
    });
    this.child.stdin.on("error", () => {}); // the agent may exit before we stop writing

    this.agentLines = lineSplitter((line) => this.log("agent", line));
    this.clientLines = lineSplitter((line) => this.log("client", line));
    // Tap both byte streams: every line is checked and logged, the bytes pass on unchanged.
    const fromAgent = Readable.toWeb(this.child.stdout).pipeThrough(
      new TransformStream({
        transform: (chunk, controller) => {
          this.agentLines(chunk);
          controller.enqueue(chunk);
        },
      }),
    );
    const toAgent = new WritableStream({
      write: (chunk) => {
        this.clientLines(chunk);
        return new Promise((resolve, reject) => this.child.stdin.write(chunk, (e) => (e ? reject(e) : resolve())));
      },
      close: () => this.child.stdin.end(),
    });

    this.connection = this.clientApp().connect(acp.ndJsonStream(toAgent, fromAgent));
    // Context for calling the agent.
    this.agent = this.connection.agent;
  }

  // Every line on the wire, both ways. Updates and the agent's requests are recorded
  // from here, as sent, rather than as the SDK parsed them.
  log(sender, line) {
    const msg = this.h.checker.check(sender, line);
    this.h.wire.push({ proc: this.index, sender, msg: msg ?? line });
    if (typeof msg !== "object" || msg === null) return;
    const isRequest = typeof msg.method === "string" && msg.id !== undefined;
    if (sender === "client" && isRequest) this.sent.set(msg.id, this.requesting);
    if (sender === "agent" && msg.method === undefined && this.sent.has(msg.id)) {
      this.answers.set(this.sent.get(msg.id), msg);
    }
    if (sender === "agent" && isRequest) this.agentRequests.set(msg.id, msg.params);
    if (sender === "agent" && msg.method === "session/update") {
      const { sessionId, update } = msg.params ?? {};
      this.h.updates.push({ proc: this.index, step: this.step, sessionId, update });
      this.waiters = this.waiters.filter((w) => !w(update));
    }
  }

  // The client side: what an editor would do for each request of the agent.
  clientApp() {
    const { client: m } = acp.methods;
    return acp
      .client({ name: "tandem-acp-sdk-tests" })
      .onNotification(m.session.update, () => {}) // recorded in log()
      .onRequest(m.session.requestPermission, (cx) => this.record(cx, (p) => this.permission(p)))
      .onRequest(m.fs.readTextFile, (cx) => this.record(cx, (p) => this.readFile(p)))
      .onRequest(m.fs.writeTextFile, (cx) => this.record(cx, (p) => this.writeFile(p)))
      .onRequest(m.terminal.create, (cx) => this.record(cx, (p) => this.terminals.create(p)))
      .onRequest(m.terminal.output, (cx) => this.record(cx, (p) => this.terminals.output(p)))
      .onRequest(m.terminal.waitForExit, (cx) => this.record(cx, (p) => this.terminals.waitForExit(p)))
      .onRequest(m.terminal.kill, (cx) => this.record(cx, (p) => this.terminals.kill(p)))
      .onRequest(m.terminal.release, (cx) => this.record(cx, (p) => this.terminals.release(p)));
  }

  // Runs a client-side handler and records the call (params as sent) with its answer or
  // error.
  async record({ method, params, requestId }, handle) {
    const sent = this.agentRequests.get(requestId) ?? params;
    const call = { proc: this.index, step: this.step, method, params: sent };
    this.h.calls.push(call);
    try {
      call.answer = (await handle(params)) ?? {};
      return call.answer;
    } catch (e) {
      call.error = errorOf(e);
      throw e;
    }
  }

  // The capabilities this client advertises, from the process options.
  capabilities() {
    const fs = !!this.options.fs;
    const caps = { fs: { readTextFile: fs, writeTextFile: fs }, terminal: !!this.options.terminal };
    // Boolean configuration options only when the scenario says the client shows them.
    if (this.options.booleanOptions) caps.session = { configOptions: { boolean: {} } };
    return caps;
  }

  initialize(protocolVersion = acp.PROTOCOL_VERSION) {
    return this.agent.request(acp.methods.agent.initialize, {
      protocolVersion,
      clientCapabilities: this.capabilities(),
      clientInfo: { name: "tandem-acp-sdk-tests", version: "1.0.0" },
    });
  }

  // Resolves with the first session update (already received or still to come) for which
  // `matches` is true.
  waitForUpdate(matches) {
    const seen = this.h.updates.find((u) => u.proc === this.index && matches(u.update));
    if (seen) return Promise.resolve(seen.update);
    return new Promise((resolve) => this.waiters.push((u) => matches(u) && (resolve(u), true)));
  }

  async permission(params) {
    const plan = this.permissions.shift() ?? "reject_once";
    if (plan === "cancel-turn") {
      await this.agent.notify(acp.methods.agent.session.cancel, { sessionId: params.sessionId });
    }
    if (plan === "cancelled" || plan === "cancel-turn") return { outcome: { outcome: "cancelled" } };
    const option = params.options.find((o) => o.kind === plan);
    if (!option) throw acp.RequestError.invalidParams(params.options, `no permission option of kind ${plan}`);
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  }

  // An editor serves the text of an open buffer, unsaved changes included; other files
  // come from disk. `line` is 1-based.
  readFile({ path, line, limit }) {
    let text = this.buffers.get(path);
    if (text === undefined) {
      try {
        text = readFileSync(path, "utf8");
      } catch (e) {
        throw new acp.RequestError(-32002, `Resource not found: ${path}`, { path, cause: e.code });
      }
    }
    if (line || limit) {
      const lines = text.split(/(?<=\n)/);
      const start = Math.max((line ?? 1) - 1, 0);
      text = lines.slice(start, limit ? start + limit : undefined).join("");
    }
    return { content: text };
  }

  // Like an editor: a file open in an unsaved buffer gets the new text in its buffer
  // (the disk stays as it was until the user saves); any other file is written to disk.
  writeFile({ path, content }) {
    if (this.buffers.has(path)) this.buffers.set(path, content);
    else writeFileSync(path, content);
    return {};
  }

  // Closes stdin (the agent must exit on its own) and waits for the process to end; kills
  // it after 10 s. Calling it again waits for the same end.
  close() {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  async shutDown() {
    this.child.stdin.end();
    const timer = setTimeout(() => {
      this.killed = true;
      this.child.kill("SIGKILL");
    }, 10_000);
    await this.exited;
    clearTimeout(timer);
    // Every message must end with a newline.
    const rest = this.agentLines.rest();
    if (rest.trim()) this.h.checker.fail("agent", rest, "unterminated last line", ["no newline at the end"]);
    if (this.killed) this.exit.killedByHarness = true; // did not exit when stdin closed
    this.terminals.releaseAll();
  }
}

// Calls `onLine` for each complete line of a byte stream fed chunk by chunk;
// `feed.rest()` is what is left after the last newline.
function lineSplitter(onLine) {
  const decoder = new TextDecoder();
  let pending = "";
  const feed = (chunk) => {
    pending += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      if (line.trim()) onLine(line);
    }
  };
  feed.rest = () => pending;
  return feed;
}

// Terminals the agent creates: real processes run with node's child_process. Output is
// stdout and stderr interleaved; when it grows past outputByteLimit, the start is dropped
// (at a character boundary) and `truncated` is set.
class Terminals {
  constructor(cwd) {
    this.cwd = cwd;
    this.next = 1;
    this.all = new Map();
  }

  create({ command, args, env, cwd, outputByteLimit }) {
    const id = `term-${this.next++}`;
    const extraEnv = Object.fromEntries((env ?? []).map((v) => [v.name, v.value]));
    const child = spawn(command, args ?? [], { cwd: cwd ?? this.cwd, env: { ...process.env, ...extraEnv } });
    const t = { child, output: Buffer.alloc(0), truncated: false, limit: outputByteLimit ?? null, status: null };
    const append = (chunk) => {
      t.output = Buffer.concat([t.output, chunk]);
      if (t.limit !== null && t.output.length > t.limit) {
        let start = t.output.length - t.limit;
        while (start < t.output.length && (t.output[start] & 0xc0) === 0x80) start++;
        t.output = t.output.subarray(start);
        t.truncated = true;
      }
    };
    child.stdout.on("data", append);
    child.stderr.on("data", append);
    t.exited = new Promise((resolve) => {
      child.on("close", (code, signal) => resolve((t.status = { exitCode: code, signal })));
      child.on("error", (e) => {
        append(Buffer.from(`${e.message}\n`));
        resolve((t.status = { exitCode: 127, signal: null }));
      });
    });
    this.all.set(id, t);
    return { terminalId: id };
  }

  get(terminalId) {
    const t = this.all.get(terminalId);
    if (!t) throw new acp.RequestError(-32002, `Resource not found: terminal ${terminalId}`);
    return t;
  }

  output({ terminalId }) {
    const t = this.get(terminalId);
    const answer = { output: t.output.toString("utf8"), truncated: t.truncated };
    if (t.status) answer.exitStatus = t.status;
    return answer;
  }

  async waitForExit({ terminalId }) {
    return await this.get(terminalId).exited;
  }

  kill({ terminalId }) {
    const t = this.get(terminalId);
    if (!t.status) t.child.kill("SIGKILL");
    return {};
  }

  release({ terminalId }) {
    this.kill({ terminalId });
    this.all.delete(terminalId);
    return {};
  }

  releaseAll() {
    for (const id of [...this.all.keys()]) this.release({ terminalId: id });
  }
}
