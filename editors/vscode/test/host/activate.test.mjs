// Activates the built extension (dist/extension.js) in plain node against a stand-in `vscode`
// module and a real `tandem lsp`: the language client starts the server, a message typed in
// the chat view becomes a tandem/prompt, and the streamed events reach the (fake) webview.
//
// Needs the tandem binary: TANDEM_BIN, or target/debug/tandem (cargo build -p tandem). The Rust
// test server/tandem/tests/vscode.rs runs it with the binary it just built.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import Module from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";

import { createModel, messageText, reduce } from "../../out/shared/reducer.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const extensionDir = join(here, "../..");
const require = createRequire(import.meta.url);
const bin = process.env.TANDEM_BIN ?? join(extensionDir, "../../target/debug/tandem");

// Every require("vscode") gets the stand-in.
const fake = require("./fake-vscode.cjs");
const originalLoad = Module._load;
Module._load = function (request, ...rest) {
    return request === "vscode" ? fake : originalLoad.call(this, request, ...rest);
};

function agentDir() {
    const dir = mkdtempSync(join(tmpdir(), "tandem-host-test-"));
    const script = {
        turns: [
            { text: "Let me read it.", toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] },
            { text: "The notes say **hello**." },
            { text: "Nothing to fix." },
        ],
    };
    writeFileSync(join(dir, "script.json"), JSON.stringify(script));
    writeFileSync(
        join(dir, "models.json"),
        JSON.stringify({ providers: { script: { api: "scripted", apiKey: "none", baseUrl: join(dir, "script.json"), models: [{ id: "t" }] } } }),
    );
    const project = join(dir, "project");
    mkdirSync(project);
    writeFileSync(join(project, "notes.txt"), "hello\n");
    // A wrapper that records what the client sends to the server (its stdin) and runs it.
    const wrapper = join(dir, "tandem-wrapper");
    const log = join(dir, "client-to-server.log");
    writeFileSync(wrapper, `#!/bin/sh\ntee '${log}' | exec '${bin}' "$@"\n`);
    chmodSync(wrapper, 0o755);
    return { dir, project, wrapper, log };
}

/** The messages in `log` so far: none while it does not exist or ends inside a message. */
function messagesSoFar(log) {
    try {
        return existsSync(log) ? messagesIn(log) : [];
    } catch {
        return [];
    }
}

/** The JSON-RPC messages in a recorded client → server byte stream. */
function messagesIn(log) {
    return readFileSync(log, "utf8")
        .split(/Content-Length: \d+\r\n\r\n/)
        .filter((part) => part.trim() !== "")
        .map((part) => JSON.parse(part));
}

function fakeView() {
    const posted = [];
    let receive;
    const view = {
        webview: {
            options: {},
            html: "",
            cspSource: "vscode-webview:",
            asWebviewUri: (uri) => uri,
            postMessage: async (message) => {
                posted.push(message);
                return true;
            },
            onDidReceiveMessage: (listener) => {
                receive = listener;
                return { dispose() {} };
            },
        },
        onDidDispose: () => ({ dispose() {} }),
        show() {},
    };
    return { view, posted, send: (message) => receive(message) };
}

async function until(what, check, ms = 20_000) {
    const deadline = Date.now() + ms;
    while (!check()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
    }
}

const hasBinary = existsSync(bin);

describe("extension host (stand-in vscode, real tandem lsp)", { skip: hasBinary ? false : `no tandem binary at ${bin} (cargo build -p tandem, or set TANDEM_BIN)` }, () => {
    it("starts the server, sends the chat's prompt and forwards the streamed events", async () => {
        const { dir, project, wrapper, log } = agentDir();
        Object.assign(fake.__settings, {
            "tandem.path": wrapper,
            "tandem.model": "script/t",
            "tandem.agentDir": dir,
            "tandem.bashPermission": "deny",
        });
        const { Uri } = fake;
        // The language client reads the workspace folder at start.
        Object.defineProperty(fake.workspace, "workspaceFolders", { value: [{ uri: Uri.file(project), name: "project", index: 0 }], configurable: true });
        const extension = require(join(extensionDir, "dist/extension.js"));
        const context = fake.__context(extensionDir);
        await extension.activate(context);
        try {
            assert.deepEqual(fake.__calls.errors, [], `no error message at start; output:\n${fake.__calls.output.join("\n")}`);
            await until("the Get Started view's state", () => "tandem.setup" in fake.__calls.contexts);
            assert.equal(fake.__calls.contexts["tandem.setup"], "", "a model is ready: no Get Started view");
            for (const id of ["tandem.sessions", "tandem.selectModel", "tandem.abortRun", "tandem.fixDiagnostic", "tandem.abort", "tandem.undoLastTurn"]) {
                assert.ok(fake.__calls.commands.has(id), `command ${id} is registered`);
            }

            const provider = fake.__calls.views.get("tandem.chat");
            assert.ok(provider, "the chat view provider is registered");
            const web = fakeView();
            provider.resolveWebviewView(web.view);
            assert.match(web.view.webview.html, /<script nonce="\w+" src=".*dist\/webview\.js">/);
            assert.equal(web.view.webview.options.enableScripts, true);
            web.send({ type: "ready" });
            web.send({ type: "send", text: "What do the notes say?", mode: "prompt" });

            const events = () => web.posted.filter((m) => m.type === "events").flatMap((m) => m.events);
            await until("settled", () => events().some((e) => e.event.type === "settled"));
            const model = createModel();
            for (const params of events()) reduce(model, params);
            const [view] = model.sessions.values();
            const answers = view.items.filter((i) => i.kind === "message" && i.role === "assistant").map(messageText);
            assert.deepEqual(answers, ["Let me read it.", "The notes say **hello**."]);
            assert.deepEqual([...view.tools.values()].map((c) => [c.title, c.status, c.output]), [["Read notes.txt", "done", "hello\n"]]);
            const shown = web.posted.find((m) => m.type === "showSession");
            assert.equal(shown.session, view.id, "the chat shows the new session");
            assert.equal(shown.title, "What do the notes say?");
            await until("state", () => web.posted.some((m) => m.type === "state"));
            const state = web.posted.find((m) => m.type === "state").state;
            assert.equal(`${state.model.provider}/${state.model.id}`, "script/t");

            // Undo Last Turn asks the server for the chat's session; a turn that only read has
            // nothing to undo, and the user is told so.
            fake.__calls.warnings.length = 0;
            await fake.commands.executeCommand("tandem.undoLastTurn");
            await until("the undo's answer", () => fake.__calls.warnings.length > 0);
            assert.match(fake.__calls.warnings[0], /^Tandem: Nothing to undo/);
            const undo = messagesIn(log).find((m) => m.method === "tandem/undo");
            assert.deepEqual(undo.params, { session: view.id });

            // What the client told the server: the events capability, change annotations (the
            // refactor preview), the settings as initializationOptions, then their changes.
            fake.__settings["tandem.editMode"] = "auto";
            fake.__configChanged.fire({ affectsConfiguration: (section) => section === "tandem" || section === "tandem.editMode" });
            await until("didChangeConfiguration", () => messagesIn(log).some((m) => m.method === "workspace/didChangeConfiguration"));
            const sent = messagesIn(log);
            const init = sent.find((m) => m.method === "initialize").params;
            assert.deepEqual(init.capabilities.experimental.tandem, { events: true, saveDocuments: true, diagnostics: true, languageRequests: true });
            assert.deepEqual(init.capabilities.workspace.workspaceEdit.changeAnnotationSupport, { groupsOnLabel: true });
            assert.equal(init.capabilities.workspace.applyEdit, true);
            assert.deepEqual(init.initializationOptions, {
                model: "script/t",
                editMode: "confirm",
                bashPermission: "deny",
                agentDir: dir,
                workspaceTrusted: true,
            });
            const prompt = sent.find((m) => m.method === "tandem/prompt").params;
            assert.deepEqual(prompt, { text: "What do the notes say?" });
            const change = sent.find((m) => m.method === "workspace/didChangeConfiguration").params;
            assert.deepEqual(change.settings.tandem, { model: "script/t", editMode: "auto", bashPermission: "deny", agentDir: dir });

            // "Ask Tandem to fix": the server asks for the file's diagnostics (tandem/diagnostics)
            // and the extension answers with VS Code's, converted to LSP, with its generation.
            const notes = Uri.file(join(project, "notes.txt"));
            const range = { start: { line: 0, character: 0 }, end: { line: 0, character: 5 } };
            fake.__diagnostics.set(notes.toString(), [
                { range: new fake.Range(0, 0, 0, 5), message: "a made-up problem", severity: fake.DiagnosticSeverity.Warning, source: "fake", code: "F1" },
            ]);
            fake.__diagnosticsChanged.fire({ uris: [notes] });
            await fake.commands.executeCommand("tandem.fixDiagnostic", { uri: notes.toString(), range, message: "a made-up problem" });
            const answered = () => messagesIn(log).find((m) => m.result && Array.isArray(m.result.files));
            await until("the extension's answer to tandem/diagnostics", () => answered() !== undefined);
            assert.deepEqual(answered().result, {
                settled: true,
                files: [{ uri: notes.toString(), generation: 1, diagnostics: [{ range, message: "a made-up problem", severity: 2, source: "fake", code: "F1" }] }],
            });
        } finally {
            await extension.deactivate();
            for (const d of context.subscriptions) d.dispose?.();
        }
    });

    it("stays quiet at start when the binary is missing, and names tandem.path once the user uses Tandem", async () => {
        fake.__calls.errors.length = 0;
        fake.__calls.output.length = 0;
        fake.__settings["tandem.path"] = "/nonexistent/tandem";
        const extension = require(join(extensionDir, "dist/extension.js"));
        const context = fake.__context(extensionDir);
        fake.__calls.commands.clear();
        await extension.activate(context);
        try {
            // The extension starts with every window: a user who never asked for Tandem gets
            // no pop-up, only the log and the Get Started view.
            assert.deepEqual(fake.__calls.errors, [], "no pop-up at start");
            assert.match(fake.__calls.output.join("\n"), /\/nonexistent\/tandem does not exist.*`tandem\.path`/);
            await until("the Get Started view's state", () => fake.__calls.contexts["tandem.setup"] === "noServer");

            // A command is using Tandem: the start is tried again and its failure pops up, once
            // (the command, which needs the server, stops there).
            await fake.commands.executeCommand("tandem.sessions");
            assert.equal(fake.__calls.errors.length, 1, `one pop-up: ${fake.__calls.errors.join(" | ")}`);
            assert.match(fake.__calls.errors[0], /\/nonexistent\/tandem does not exist.*`tandem\.path`/);
            // The chat view shown afterwards repeats nothing (its Get Started view says it).
            const web = fakeView();
            fake.__calls.views.get("tandem.chat").resolveWebviewView(web.view);
            web.send({ type: "ready" });
            await new Promise((r) => setImmediate(r));
            assert.equal(fake.__calls.errors.length, 1);
        } finally {
            await extension.deactivate();
            for (const d of context.subscriptions) d.dispose?.();
        }
    });

    it("in a window without a folder, starts the server with the first file opened", async () => {
        fake.__calls.errors.length = 0;
        fake.__calls.commands.clear();
        fake.__calls.contexts = {};
        const { dir, project, wrapper, log } = agentDir();
        Object.assign(fake.__settings, { "tandem.path": wrapper, "tandem.model": "script/t", "tandem.agentDir": dir });
        Object.defineProperty(fake.workspace, "workspaceFolders", { value: undefined, configurable: true });
        const extension = require(join(extensionDir, "dist/extension.js"));
        const context = fake.__context(extensionDir);
        await extension.activate(context);
        try {
            const document = (uri) => ({ uri, languageId: "plaintext", version: 1, getText: () => "hello\n", isClosed: false });
            fake.__documentOpened.fire(document(fake.Uri.parse("untitled:Untitled-1")));
            await new Promise((r) => setTimeout(r, 200));
            assert.ok(!existsSync(log), "no server for an empty window (nor for an untitled document)");
            fake.__documentOpened.fire(document(fake.Uri.file(join(project, "notes.txt"))));
            await until("the server to start", () => messagesSoFar(log).some((m) => m.method === "initialized"));
            await until("the Get Started view's state", () => fake.__calls.contexts["tandem.setup"] === "");
            assert.deepEqual(fake.__calls.errors, []);
        } finally {
            await extension.deactivate();
            for (const d of context.subscriptions) d.dispose?.();
        }
    });

    it("stops the server when the window closes, its LSP trace on", async () => {
        fake.__calls.commands.clear();
        const { dir, project, wrapper, log } = agentDir();
        Object.assign(fake.__settings, { "tandem.path": wrapper, "tandem.model": "script/t", "tandem.agentDir": dir, "tandem.trace.server": "verbose" });
        Object.defineProperty(fake.workspace, "workspaceFolders", { value: [{ uri: fake.Uri.file(project), name: "project", index: 0 }], configurable: true });
        const extension = require(join(extensionDir, "dist/extension.js"));
        const context = fake.__context(extensionDir);
        try {
            await extension.activate(context);
            await until("the server to start", () => messagesSoFar(log).some((m) => m.method === "initialized"));
            // As VS Code does: deactivate, and at once dispose the subscriptions. The client
            // traces the shutdown's answer to the output channel, which must still be open, or
            // the answer is lost and the exit never sent.
            const stopped = extension.deactivate();
            for (const d of context.subscriptions) d.dispose?.();
            await stopped;
            await until("the exit notification", () => messagesSoFar(log).some((m) => m.method === "exit"));
            const methods = messagesIn(log).map((m) => m.method);
            assert.deepEqual(methods.slice(-2), ["shutdown", "exit"], `the last messages: ${methods.slice(-5)}`);
        } finally {
            delete fake.__settings["tandem.trace.server"];
        }
    });

    it("stores an API key in secret storage and hands it to the restarted server, never logging it", async () => {
        fake.__calls.errors.length = 0;
        fake.__calls.commands.clear();
        fake.__calls.contexts = {};
        const dir = mkdtempSync(join(tmpdir(), "tandem-key-test-"));
        const project = join(dir, "project");
        mkdirSync(project);
        // No models.json and no key: nothing can be called.
        const envFile = join(dir, "server-env");
        const wrapper = join(dir, "tandem-wrapper");
        writeFileSync(wrapper, `#!/bin/sh\nenv > '${envFile}'\nexec '${bin}' "$@"\n`);
        chmodSync(wrapper, 0o755);
        for (const name of ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN"]) delete process.env[name];
        Object.assign(fake.__settings, { "tandem.path": wrapper, "tandem.model": "", "tandem.agentDir": dir, "tandem.trace.server": "verbose" });
        Object.defineProperty(fake.workspace, "workspaceFolders", { value: [{ uri: fake.Uri.file(project), name: "project", index: 0 }], configurable: true });
        const extension = require(join(extensionDir, "dist/extension.js"));
        const context = fake.__context(extensionDir);
        await extension.activate(context);
        const secret = "sk-tandem-test-9f8e7d6c5b4a";
        try {
            await until("the Get Started view", () => fake.__calls.contexts["tandem.setup"] === "noModel");
            let offered;
            fake.__calls.answers.push(({ items }) => {
                offered = items.map((i) => i.label);
                return items.find((i) => i.label === "anthropic");
            });
            fake.__calls.answers.push(({ options }) => {
                assert.equal(options.password, true, "the key is typed into a password box");
                assert.equal(options.validateInput("two words"), "A key has no spaces");
                return secret;
            });
            await fake.commands.executeCommand("tandem.setApiKey");
            assert.ok(offered.includes("openai") && offered.includes("anthropic"), `providers offered: ${offered}`);
            assert.equal(context.secrets.__map.get("tandem.apiKey.anthropic"), secret);
            assert.deepEqual(context.globalState.get("tandem.apiKeys"), { anthropic: ["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"] });
            await until("a model is ready", () => fake.__calls.contexts["tandem.setup"] === "");
            const env = readFileSync(envFile, "utf8");
            assert.match(env, new RegExp(`^ANTHROPIC_API_KEY=${secret}$`, "m"), "the restarted server has the key");
            assert.doesNotMatch(env, /^ANTHROPIC_OAUTH_TOKEN=/m);
            assert.ok(!fake.__calls.output.join("\n").includes(secret), "the key is not in the output channel (verbose trace on)");
            assert.ok(!JSON.stringify(fake.__settings).includes(secret), "nor in the settings");
            assert.ok(fake.__calls.infos.some((m) => m.includes("stored the anthropic API key")));

            // Forgetting it restarts the server without it.
            fake.__calls.answers.push(({ items }) => items.find((i) => i === "anthropic"));
            await fake.commands.executeCommand("tandem.forgetApiKey");
            assert.equal(context.secrets.__map.has("tandem.apiKey.anthropic"), false);
            await until("no model again", () => fake.__calls.contexts["tandem.setup"] === "noModel");
            assert.doesNotMatch(readFileSync(envFile, "utf8"), /ANTHROPIC_API_KEY/);
        } finally {
            await extension.deactivate();
            for (const d of context.subscriptions) d.dispose?.();
            delete fake.__settings["tandem.trace.server"];
        }
    });
});
