// The scenarios. Each one drives `tandem acp` through a few named steps; the Rust tests
// (server/tandem/tests/acp_sdk.rs) queue the mock LLM's answers, run one scenario and
// check the report: step results, updates, the agent's requests, files on disk.
//
// A scenario stops early (with an error in the report) only when a later step cannot be
// taken at all, e.g. session/new gave no session id.

import { dirname, join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";

const M = acp.methods.agent;

const text = (t) => [{ type: "text", text: t }];

// The result of a step, or an Error that stops the scenario.
function need(step, what) {
  if (step.error) throw new Error(`cannot go on: ${what} failed: ${JSON.stringify(step.error)}`);
  return step.result;
}

// initialize + session/new in the project directory; returns the session id.
async function openSession(h, p) {
  need(await h.step(p, "initialize", () => p.initialize()), "initialize");
  const session = need(
    await h.step(p, "new", () => p.agent.request(M.session.new, { cwd: h.cwd, mcpServers: [] })),
    "session/new",
  );
  return session.sessionId;
}

// Resolves once the answer of step `step` of process `p` has started streaming.
async function streaming(h, p, step) {
  const started = () =>
    h.updates.some((u) => u.proc === p.index && u.step === step && u.update.sessionUpdate === "agent_message_chunk");
  while (!started()) await new Promise((resolve) => setTimeout(resolve, 10));
}

function prompt(h, p, name, sessionId, message) {
  return h.step(p, name, () => p.agent.request(M.session.prompt, { sessionId, prompt: text(message) }));
}

export const scenarios = {
  // initialize, authenticate, session/new and the error cases around them.
  async handshake(h) {
    const p = h.start();
    // The agent answers protocol version 1 whatever the client asks.
    need(await h.step(p, "initialize", () => p.initialize(7)), "initialize");
    await h.step(p, "authenticate", () => p.agent.request(M.authenticate, { methodId: "pi-config" }));
    await h.step(p, "authenticate_unknown", () => p.agent.request(M.authenticate, { methodId: "no-such-method" }));
    await h.step(p, "new", () => p.agent.request(M.session.new, { cwd: h.cwd, mcpServers: [] }));
    await h.step(p, "new_relative_cwd", () => p.agent.request(M.session.new, { cwd: "relative/dir", mcpServers: [] }));
    await prompt(h, p, "prompt_unknown_session", "no-such-session", "hello?");
    await h.step(p, "ext_notification", () => p.agent.notify("_tandem_tests/unknown", { hello: "world" }));
    await h.step(p, "ext_request", () => p.agent.request("_tandem_tests/unknown", { hello: "world" }));
    // The connection still works after all that.
    await h.step(p, "new_again", () => p.agent.request(M.session.new, { cwd: h.cwd, mcpServers: [] }));
  },

  // Two turns: a streamed answer with thinking, then one cut by the output limit.
  async streamed(h) {
    const p = h.start();
    const sessionId = await openSession(h, p);
    await prompt(h, p, "prompt", sessionId, "Say hello");
    await prompt(h, p, "prompt_length", sessionId, "Tell me a story");
  },

  // The model edits hello.txt in "ask" mode; the user allows it.
  async permission_allowed(h) {
    const p = h.start({ permissions: ["allow_once"] });
    const sessionId = await openSession(h, p);
    await prompt(h, p, "prompt", sessionId, "Change hello world to hello there in hello.txt");
  },

  // The same edit; the user rejects it.
  async permission_rejected(h) {
    const p = h.start({ permissions: ["reject_once"] });
    const sessionId = await openSession(h, p);
    await prompt(h, p, "prompt", sessionId, "Change hello world to hello there in hello.txt");
  },

  // The client advertises fs and holds notes.txt in an unsaved buffer that differs from
  // the disk. The model reads notes.txt, then edits it (allowed).
  async fs(h) {
    const notes = join(h.cwd, "notes.txt");
    const p = h.start({ fs: true, buffers: { [notes]: "unsaved buffer line\n" }, permissions: ["allow_once"] });
    const sessionId = await openSession(h, p);
    await prompt(h, p, "prompt", sessionId, "Read notes.txt and fix it");
  },

  // The client advertises terminal; the model runs a bash command (allowed).
  async terminal(h) {
    const p = h.start({ terminal: true, permissions: ["allow_once"] });
    const sessionId = await openSession(h, p);
    await prompt(h, p, "prompt", sessionId, "Run the command");
  },

  // The model stalls mid-answer; the client cancels the turn, then prompts again.
  async cancel(h) {
    const p = h.start();
    const sessionId = await openSession(h, p);
    const turn = prompt(h, p, "prompt", sessionId, "Take your time");
    // Cancel once the stalled answer has started streaming.
    await p.waitForUpdate((u) => u.sessionUpdate === "agent_message_chunk");
    await h.step(p, "cancel", () => p.agent.notify(M.session.cancel, { sessionId }), { tag: false });
    await turn;
    await prompt(h, p, "prompt_after_cancel", sessionId, "Are you still there?");
  },

  // The model edits hello.txt; while the permission request is open, the client cancels
  // the turn and answers the request "cancelled". Then a new turn works.
  async cancel_permission(h) {
    const p = h.start({ permissions: ["cancel-turn"] });
    const sessionId = await openSession(h, p);
    await prompt(h, p, "prompt", sessionId, "Change hello world to hello there in hello.txt");
    await prompt(h, p, "prompt_after_cancel", sessionId, "Never mind");
  },

  // One process runs a turn with a tool call; a new process lists and loads that session,
  // then continues it with one more turn.
  async load(h) {
    const first = h.start();
    const sessionId = await openSession(h, first);
    await prompt(h, first, "prompt", sessionId, "Please read notes.txt");
    await first.close();

    const second = h.start();
    need(await h.step(second, "initialize_2", () => second.initialize()), "initialize");
    await h.step(second, "list", () => second.agent.request(M.session.list, { cwd: h.cwd }));
    await h.step(second, "load_unknown", () =>
      second.agent.request(M.session.load, { sessionId: "no-such-session", cwd: h.cwd, mcpServers: [] }),
    );
    need(
      await h.step(second, "load", () => second.agent.request(M.session.load, { sessionId, cwd: h.cwd, mcpServers: [] })),
      "session/load",
    );
    await prompt(h, second, "prompt_after_load", sessionId, "Thanks, and now?");
  },

  // read-only: an edit fails without a permission request; accept-edits: an edit is
  // applied without one; then the mode goes back to "ask" through set_config_option.
  async modes(h) {
    const p = h.start();
    const sessionId = await openSession(h, p);
    await h.step(p, "set_read_only", () => p.agent.request(M.session.setMode, { sessionId, modeId: "read-only" }));
    await prompt(h, p, "prompt_read_only", sessionId, "Change hello world to hello there in hello.txt");
    await h.step(p, "set_accept_edits", () =>
      p.agent.request(M.session.setMode, { sessionId, modeId: "accept-edits" }),
    );
    await prompt(h, p, "prompt_accept_edits", sessionId, "Change hello world to hello there in hello.txt");
    await h.step(p, "set_config_mode_ask", () =>
      p.agent.request(M.session.setConfigOption, { sessionId, configId: "mode", value: "ask" }),
    );
  },

  // Extra workspace roots on session/new (one good, then a relative and a missing one), and
  // the configuration options: the boolean auto-compact (this client declares boolean
  // options), a thinking level the model lacks. Then a client that declares none gets
  // auto-compact as a select of on and off.
  async roots_and_options(h) {
    const p = h.start({ booleanOptions: true });
    need(await h.step(p, "initialize", () => p.initialize()), "initialize");
    const extra = join(dirname(h.cwd), "extra");
    const newWith = (dirs) => () =>
      p.agent.request(M.session.new, { cwd: h.cwd, mcpServers: [], additionalDirectories: dirs });
    const session = need(await h.step(p, "new_extra", newWith([extra])), "session/new");
    await h.step(p, "new_relative_extra", newWith(["relative/extra"]));
    await h.step(p, "new_missing_extra", newWith([join(extra, "missing")]));
    const { sessionId } = session;
    const set = (configId, value, type) => () =>
      p.agent.request(M.session.setConfigOption, { sessionId, configId, value, ...(type ? { type } : {}) });
    await h.step(p, "set_auto_compact_off", set("auto-compact", false, "boolean"));
    await h.step(p, "set_thinking_high", set("thinking", "high"));
    const plain = h.start();
    need(await h.step(plain, "initialize_plain", () => plain.initialize()), "initialize");
    const other = need(
      await h.step(plain, "new_plain", () => plain.agent.request(M.session.new, { cwd: h.cwd, mcpServers: [] })),
      "session/new",
    );
    await h.step(plain, "set_plain_auto_compact_off", () =>
      plain.agent.request(M.session.setConfigOption, { sessionId: other.sessionId, configId: "auto-compact", value: "off" }),
    );
  },

  // The provider refuses the first turn; the second one works.
  async provider_error(h) {
    const p = h.start();
    const sessionId = await openSession(h, p);
    await prompt(h, p, "prompt", sessionId, "Hello?");
    await prompt(h, p, "prompt_again", sessionId, "Hello again?");
  },

  // A prompt with an embedded file and a file link; the answer keeps a task list.
  async plan(h) {
    const p = h.start();
    const sessionId = await openSession(h, p);
    const prompt = [
      { type: "text", text: "Make a plan for these files:" },
      {
        type: "resource",
        resource: { uri: `file://${join(h.cwd, "embedded.txt")}`, mimeType: "text/plain", text: "embedded file text\n" },
      },
      { type: "resource_link", uri: `file://${join(h.cwd, "linked.txt")}`, name: "linked.txt" },
    ];
    await h.step(p, "prompt", () => p.agent.request(M.session.prompt, { sessionId, prompt }));
  },

  // Two sessions with one turn each, then session/list for this cwd and for another one.
  async list(h) {
    const p = h.start();
    need(await h.step(p, "initialize", () => p.initialize()), "initialize");
    const newSession = async (name) =>
      need(await h.step(p, name, () => p.agent.request(M.session.new, { cwd: h.cwd, mcpServers: [] })), name)
        .sessionId;
    const a = await newSession("new_a");
    await prompt(h, p, "prompt_a", a, "First session");
    const b = await newSession("new_b");
    await prompt(h, p, "prompt_b", b, "Second session");
    await h.step(p, "list", () => p.agent.request(M.session.list, { cwd: h.cwd }));
    await h.step(p, "list_all", () => p.agent.request(M.session.list, {}));
    await h.step(p, "list_other_cwd", () => p.agent.request(M.session.list, { cwd: join(h.cwd, "elsewhere") }));
  },

  // One process has a turn; a new process resumes that session (no history replayed), goes
  // on with it, then: a prompt cancelled with $/cancel_request, session/close during a
  // turn, session/delete (refused while open, for hostile ids, then done), session/list
  // pages, logout.
  async lifecycle(h) {
    const first = h.start();
    const sessionId = await openSession(h, first);
    await prompt(h, first, "prompt", sessionId, "Remember the word pineapple");
    await first.close();

    const p = h.start();
    need(await h.step(p, "initialize_2", () => p.initialize()), "initialize");
    need(
      await h.step(p, "resume", () => p.agent.request(M.session.resume, { sessionId, cwd: h.cwd })),
      "session/resume",
    );
    await h.step(p, "resume_unknown", () =>
      p.agent.request(M.session.resume, { sessionId: "no-such-session", cwd: h.cwd }),
    );
    await prompt(h, p, "prompt_after_resume", sessionId, "Which word?");

    // $/cancel_request for a running prompt, once its answer streams.
    const aborter = new AbortController();
    const cancelled = h.step(p, "prompt_cancel_request", () =>
      p.agent.request(M.session.prompt, { sessionId, prompt: text("Take your time") }, { cancellationSignal: aborter.signal }),
    );
    await streaming(h, p, "prompt_cancel_request");
    aborter.abort();
    await cancelled;

    // session/close while a turn runs: the turn answers cancelled, the session is gone.
    const running = prompt(h, p, "prompt_closed", sessionId, "Take your time again");
    await streaming(h, p, "prompt_closed");
    await h.step(p, "close", () => p.agent.request(M.session.close, { sessionId }), { tag: false });
    await running;
    await prompt(h, p, "prompt_after_close", sessionId, "Hello?");
    await h.step(p, "close_again", () => p.agent.request(M.session.close, { sessionId }));

    await h.step(p, "delete_hostile", () => p.agent.request(M.session.delete, { sessionId: "../../etc/passwd" }));
    await h.step(p, "delete", () => p.agent.request(M.session.delete, { sessionId }));
    await h.step(p, "delete_again", () => p.agent.request(M.session.delete, { sessionId }));
    await h.step(p, "list_after_delete", () => p.agent.request(M.session.list, { cwd: h.cwd }));
    await h.step(p, "list_bad_cursor", () => p.agent.request(M.session.list, { cwd: h.cwd, cursor: "not-a-cursor" }));

    await h.step(p, "logout", () => p.agent.request(M.logout, {}));
    await h.step(p, "new_after_logout", () => p.agent.request(M.session.new, { cwd: h.cwd, mcpServers: [] }));
    await h.step(p, "authenticate", () => p.agent.request(M.authenticate, { methodId: "pi-config" }));
    await h.step(p, "new_after_authenticate", () =>
      p.agent.request(M.session.new, { cwd: h.cwd, mcpServers: [] }),
    );
  },
};
