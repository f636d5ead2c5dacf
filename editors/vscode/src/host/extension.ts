// The extension's entry point: starts the server, registers the chat view and the commands,
// and keeps track of the session the chat shows.
//
// It activates with every window, so that the server's code actions ("Ask Tandem to fix") are
// there the first time the user presses Ctrl+. on a diagnostic: as soon as an editor shows a
// document (`onLanguage`, any language: the client's selector is every file), at the latest once
// start-up has finished (`onStartupFinished`). The server starts at once when the window has a
// folder or a file open, else with the first file opened. Until the user uses Tandem (a command, the chat view, one of its
// code actions) it stays quiet: a missing binary or key is logged and shown in the Get Started
// view, never popped up.
//
// Command ids avoid the server's own commands (`tandem.fixDiagnostic`, `tandem.explain`,
// `tandem.document`, `tandem.writeTests`, `tandem.abort`): vscode-languageclient registers those
// itself from the server's executeCommandProvider, and code actions run them.

import * as fs from "node:fs";
import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient/node";

import { historyFromJsonl } from "../shared/history";
import type { SendMode, ViewMessage } from "../shared/messages";
import {
    ErrorCodes,
    Methods,
    THINKING_LEVELS,
    type EventParams,
    type ModelInfo,
    type PromptResult,
    type SessionInfo,
    type SessionState,
    type UndoResult,
} from "../shared/protocol";
import { ChatViewProvider } from "./chatView";
import { ApiKeys, keyedProviders } from "./keys";
import { TandemServer, type ServerStatus } from "./server";

/** The "Get started" view's state (context key `tandem.setup`): what is missing, if anything. */
type Setup = "" | "noModel" | "noServer";

/** The session the chat shows, and which sessions are running (from their events). */
class Controller implements vscode.Disposable {
    current: string | null = null;
    private readonly running = new Set<string>();
    private readonly titles = new Map<string, string>();
    /** The first line of a prompt that creates a session, its title once the id is known. */
    private pendingTitle: string | undefined;

    constructor(
        private readonly server: TandemServer,
        private readonly chat: ChatViewProvider,
        private readonly output: vscode.OutputChannel,
    ) {}

    onEvent(params: EventParams): void {
        const type = params.event?.type;
        if (type === "agent_start") {
            this.running.add(params.session);
            // A run started elsewhere (a code action, another prompt): show it unless the
            // session on screen is busy.
            if (params.session !== this.current && (this.current === null || !this.running.has(this.current))) {
                this.show(params.session);
            }
        } else if (type === "settled") {
            this.running.delete(params.session);
        }
        this.chat.pushEvent(params);
    }

    isRunning(session: string | null): boolean {
        return session !== null && this.running.has(session);
    }

    show(session: string | null, title?: string): void {
        this.current = session;
        if (session && !title && this.pendingTitle && !this.titles.has(session)) title = this.pendingTitle;
        this.pendingTitle = undefined;
        if (session && title) this.titles.set(session, title);
        this.chat.showSession(session, session ? this.titles.get(session) : undefined);
        if (session) void this.refreshState(session);
    }

    async refreshState(session: string): Promise<void> {
        try {
            this.chat.setState(await this.server.request<SessionState>(Methods.state, { session }));
        } catch (error) {
            this.output.appendLine(`tandem/state ${session}: ${describe(error)}`);
        }
    }

    /** The current session, creating one when there is none (for model and thinking choices). */
    async ensureSession(): Promise<string> {
        if (this.current) return this.current;
        const result = await this.server.request<{ session: string }>(Methods.sessionsNew, {});
        this.show(result.session);
        return result.session;
    }

    async send(text: string, mode: SendMode): Promise<void> {
        const context = this.editorContext();
        const params: Record<string, unknown> = { text };
        if (this.current) params.session = this.current;
        if (context) params.context = context;
        if (mode !== "prompt") params.whenBusy = mode;
        if (!this.current) this.pendingTitle = firstLine(text);
        try {
            const result = await this.server.request<PromptResult>(Methods.prompt, params);
            if (result.session !== this.current) this.show(result.session, firstLine(text));
        } catch (error) {
            this.reportError(error, "Could not send the message");
        }
    }

    async abort(): Promise<void> {
        if (!this.current) return;
        try {
            await this.server.request(Methods.abort, { session: this.current });
        } catch (error) {
            this.reportError(error, "Could not abort");
        }
    }

    /** Where the user is: the active file editor, its selection and its diagnostics. */
    private editorContext(): Record<string, unknown> | undefined {
        const editor = vscode.window.activeTextEditor;
        const converter = this.server.converter;
        if (!editor || !converter || editor.document.uri.scheme !== "file") return undefined;
        const diagnostics = vscode.languages.getDiagnostics(editor.document.uri).slice(0, 50);
        return {
            uri: converter.asUri(editor.document.uri),
            selection: converter.asRange(editor.selection),
            includeDiagnostics: diagnostics.length > 0,
            diagnostics: diagnostics.map((d) => converter.asDiagnostic(d)),
        };
    }

    /**
     * Logs a failure and shows it in the chat. A missing model or key also gets a pop-up with
     * what to do; `popup` asks for one in any case (commands run from the palette).
     */
    reportError(error: unknown, what: string, popup = false): void {
        const message = `${what}: ${describe(error)}`;
        this.output.appendLine(message);
        this.chat.notice(this.current, "error", message);
        if (error instanceof ResponseError && error.code === ErrorCodes.noModel) {
            void vscode.window.showErrorMessage(`Tandem: ${describe(error)}`, "Select Model", "Show Logs").then((choice) => {
                if (choice === "Select Model") void vscode.commands.executeCommand("tandem.selectModel");
                if (choice === "Show Logs") this.output.show(true);
            });
        } else if (popup) {
            void vscode.window.showErrorMessage(`Tandem: ${message}`, "Show Logs").then((choice) => {
                if (choice === "Show Logs") this.output.show(true);
            });
        }
    }

    dispose(): void {}
}

function describe(error: unknown): string {
    if (error instanceof ResponseError) return error.message;
    if (error instanceof Error) return error.message;
    return String(error);
}

function firstLine(text: string): string {
    const line = text.split("\n", 1)[0]!.trim();
    return line.length > 60 ? `${line.slice(0, 57)}…` : line;
}

function relativeTime(iso: string): string {
    const ms = Date.now() - Date.parse(iso);
    if (!Number.isFinite(ms)) return iso;
    const minutes = Math.round(ms / 60000);
    if (minutes < 1) return "just now";
    if (minutes < 60) return `${minutes} min ago`;
    const hours = Math.round(minutes / 60);
    if (hours < 48) return `${hours} h ago`;
    return `${Math.round(hours / 24)} days ago`;
}

/**
 * The channel, with writes after its disposal dropped: the language client logs until its
 * process is gone, after deactivation, and VS Code's channels throw once closed.
 */
function closable(channel: vscode.OutputChannel): vscode.OutputChannel {
    let open = true;
    return {
        get name() {
            return channel.name;
        },
        append: (value: string) => void (open && channel.append(value)),
        appendLine: (value: string) => void (open && channel.appendLine(value)),
        replace: (value: string) => void (open && channel.replace(value)),
        clear: () => void (open && channel.clear()),
        show: ((preserveFocus?: boolean) => void (open && channel.show(preserveFocus))) as vscode.OutputChannel["show"],
        hide: () => void (open && channel.hide()),
        dispose: () => {
            if (open) channel.dispose();
            open = false;
        },
    };
}

/** The running server, stopped (and awaited) on deactivation, and its output channel. */
let activeServer: TandemServer | undefined;
let activeOutput: vscode.OutputChannel | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const output = closable(vscode.window.createOutputChannel("Tandem"));
    const keys = new ApiKeys(context);
    const server = new TandemServer(output, context.asAbsolutePath("bin/tandem"), () => keys.environment());
    activeServer = server;
    // Not a subscription: deactivate disposes it (see there).
    activeOutput = output;
    const chat = new ChatViewProvider(context.extensionUri);
    const controller = new Controller(server, chat, output);
    context.subscriptions.push(server, chat, controller);
    context.subscriptions.push(
        vscode.window.registerWebviewViewProvider(ChatViewProvider.viewId, chat, { webviewOptions: { retainContextWhenHidden: true } }),
    );
    context.subscriptions.push(server.onEvent((params) => controller.onEvent(params)));
    context.subscriptions.push(server.onStatus((s) => chat.server(s.status, s.detail)));

    // The "Get started" view above the chat: shown while no model can be called or the server
    // cannot start, with the steps that fix it (its welcome content is in package.json).
    context.subscriptions.push(vscode.window.registerTreeDataProvider("tandem.setup", { getChildren: () => [], getTreeItem: (item: vscode.TreeItem) => item }));
    // Statuses come quickly one after another (starting, running): only the newest one's answer
    // sets the context, whatever order the models/list answers arrive in.
    let setupAsked = 0;
    const showSetup = async (status: ServerStatus): Promise<void> => {
        const asked = ++setupAsked;
        let setup: Setup = "";
        if (status.status === "stopped" && status.failed) setup = "noServer";
        if (status.status === "running") {
            try {
                const models = await server.request<ModelInfo[]>(Methods.modelsList, {});
                if (!models.some((m) => m.available !== false)) setup = "noModel";
            } catch (error) {
                output.appendLine(`tandem/models/list: ${describe(error)}`);
            }
        }
        if (asked !== setupAsked) return;
        await vscode.commands.executeCommand("setContext", "tandem.setup", setup);
    };
    context.subscriptions.push(server.onStatus((s) => void showSetup(s)));
    // A setting can make models callable (tandem.agentDir, tandem.model). In a remote window
    // VS Code may also deliver machine-scoped settings after the server started.
    context.subscriptions.push(
        vscode.workspace.onDidChangeConfiguration((change) => {
            if (change.affectsConfiguration("tandem")) void showSetup(server.status);
        }),
    );

    /** Runs a command body, showing failures as error messages instead of losing them. */
    const guarded =
        (what: string, body: (...args: any[]) => Promise<unknown>) =>
        async (...args: any[]) => {
            try {
                await body(...args);
            } catch (error) {
                controller.reportError(error, what, true);
            }
        };

    const openSession = async (all = false): Promise<void> => {
        const sessions = await server.request<SessionInfo[]>(Methods.sessionsList, { all });
        type Item = vscode.QuickPickItem & { session?: SessionInfo; toggle?: boolean };
        const items: Item[] = sessions.map((s) => ({
            label: s.name || s.firstMessage,
            description: `${relativeTime(s.modified)} · ${s.messageCount} messages`,
            detail: all ? `${s.cwd} · ${s.path}` : s.path,
            session: s,
        }));
        if (!all) items.push({ label: "$(globe) Show every project's sessions…", toggle: true, alwaysShow: true });
        const pick = await vscode.window.showQuickPick(items, {
            title: "Tandem: open a session",
            placeHolder: sessions.length ? "Stored sessions, newest first" : "No stored sessions for this folder yet",
            matchOnDetail: true,
        });
        if (!pick) return;
        if (pick.toggle) return openSession(true);
        const opened = await server.request<{ session: string }>(Methods.sessionsOpen, { path: pick.session!.path });
        controller.show(opened.session, pick.label);
        if (!chat.hasContent(opened.session)) {
            try {
                const history = historyFromJsonl(await fs.promises.readFile(pick.session!.path, "utf8"));
                chat.history(opened.session, history.messages, history.omitted);
            } catch (error) {
                output.appendLine(`Reading ${pick.session!.path}: ${describe(error)}`);
            }
            chat.notice(opened.session, "info", `Opened ${pick.session!.path}.`);
        }
        await chat.reveal();
    };

    const newSession = async (): Promise<void> => {
        const created = await server.request<{ session: string }>(Methods.sessionsNew, {});
        controller.show(created.session, "New session");
        await chat.reveal();
    };

    const forkSession = async (): Promise<void> => {
        if (!controller.current) {
            void vscode.window.showInformationMessage("Tandem: there is no session to fork yet.");
            return;
        }
        const forked = await server.request<{ session: string }>(Methods.sessionsFork, { session: controller.current });
        controller.show(forked.session, "Fork");
        chat.notice(forked.session, "info", "Forked: this session continues from a copy of the previous one's history.");
    };

    // The last turn's file changes taken back through the same review as the agent's edits;
    // hunks the user changed since are left, and listed in the output channel.
    const undoLastTurn = async (): Promise<void> => {
        const session = controller.current;
        if (!session) {
            void vscode.window.showInformationMessage("Tandem: there is no session with a turn to undo yet.");
            return;
        }
        const result = await server.request<UndoResult>(Methods.undo, { session });
        for (const hunk of result.refused) {
            const where = vscode.workspace.asRelativePath(vscode.Uri.parse(hunk.uri));
            output.appendLine(`undo: left ${where}:${hunk.line + 1}: ${hunk.reason}`);
        }
        const partial = result.status === "applied" && result.refused.length > 0;
        chat.notice(session, result.status === "applied" && !partial ? "info" : "error", result.message);
        if (result.status === "applied" && !partial) {
            void vscode.window.showInformationMessage(`Tandem: ${result.message}`);
        } else {
            void vscode.window.showWarningMessage(`Tandem: ${result.message}`);
        }
    };

    const selectModel = async (): Promise<void> => {
        const models = await server.request<ModelInfo[]>(Methods.modelsList, {});
        const items = models.map((m) => ({
            label: `${m.provider}/${m.id}`,
            description: m.name ?? "",
            detail: m.available === false ? "$(warning) no API key: set it in ~/.pi/agent/auth.json or the provider's environment variable" : undefined,
            model: m,
        }));
        items.sort((a, b) => Number(b.model.available !== false) - Number(a.model.available !== false));
        const pick = await vscode.window.showQuickPick(items, { title: "Tandem: model for this session", matchOnDescription: true });
        if (!pick) return;
        const session = await controller.ensureSession();
        await server.request(Methods.modelsSet, { session, provider: pick.model.provider, id: pick.model.id });
        await controller.refreshState(session);
    };

    const setApiKey = async (): Promise<void> => {
        const providers = keyedProviders(await server.request<ModelInfo[]>(Methods.modelsList, {}));
        const stored = new Set(keys.providers());
        const pick = await vscode.window.showQuickPick(
            providers.map((p) => ({
                label: p.provider,
                description: stored.has(p.provider) ? "key stored in VS Code" : p.available ? "has a key" : "no key",
                detail: `Handed to the server as ${p.keyEnv[p.keyEnv.length - 1]}`,
                provider: p,
            })),
            { title: "Tandem: the provider whose API key to store", placeHolder: "Providers keyed from models.json or auth.json are not listed" },
        );
        if (!pick) return;
        const key = await vscode.window.showInputBox({
            title: `Tandem: API key for ${pick.provider.provider}`,
            prompt: "Stored in VS Code's secret storage (your system keychain where there is one), never in settings or logs.",
            password: true,
            ignoreFocusOut: true,
            validateInput: (value) => (value.trim() === "" ? "Enter the key" : /\s/.test(value.trim()) ? "A key has no spaces" : undefined),
        });
        if (!key) return;
        await keys.store(pick.provider, key.trim());
        output.appendLine(`Stored an API key for ${pick.provider.provider}; restarting the server with it.`);
        if (await server.restart()) {
            void vscode.window.showInformationMessage(`Tandem: stored the ${pick.provider.provider} API key; its models are ready.`);
        }
    };

    const forgetApiKey = async (): Promise<void> => {
        const stored = keys.providers();
        if (stored.length === 0) {
            void vscode.window.showInformationMessage("Tandem: no API key is stored in VS Code.");
            return;
        }
        const provider = await vscode.window.showQuickPick(stored, { title: "Tandem: forget the stored API key of" });
        if (!provider) return;
        await keys.forget(provider);
        output.appendLine(`Forgot the stored API key for ${provider}; restarting the server.`);
        await server.restart();
    };

    const selectThinking = async (): Promise<void> => {
        const pick = await vscode.window.showQuickPick([...THINKING_LEVELS], { title: "Tandem: thinking level for this session" });
        if (!pick) return;
        const session = await controller.ensureSession();
        const result = await server.request<{ level: string }>(Methods.thinkingSet, { session, level: pick });
        if (result.level !== pick) {
            void vscode.window.showInformationMessage(`Tandem: the model supports thinking level “${result.level}” at most; using it.`);
        }
        await controller.refreshState(session);
    };

    /**
     * Registers a command. Running one is using Tandem (`server.use`): the server starts if it
     * is not running and a failure pops up. `needs`: "server" waits for the server and stops
     * when it cannot start; "start" starts it without waiting; "nothing" leaves it alone.
     */
    const register = (id: string, body: (...args: any[]) => Promise<unknown>, what: string, needs: "server" | "start" | "nothing" = "server") =>
        context.subscriptions.push(
            vscode.commands.registerCommand(
                id,
                guarded(what, async (...args: any[]) => {
                    if (needs === "server" && !(await server.use())) return;
                    if (needs === "start") void server.use();
                    await body(...args);
                }),
            ),
        );

    register("tandem.openChat", () => chat.reveal(), "Could not open the chat", "start");
    register(
        "tandem.ask",
        async () => {
            const text = await vscode.window.showInputBox({ title: "Ask Tandem", prompt: "The file and selection go with your question." });
            if (!text) return;
            await chat.reveal();
            await controller.send(text, controller.isRunning(controller.current) ? "steer" : "prompt");
        },
        "Could not ask",
    );
    register("tandem.abortRun", () => controller.abort(), "Could not abort");
    register(
        "tandem.sessions",
        async () => {
            const items = [
                { label: "$(add) New session", run: newSession },
                { label: "$(history) Open a stored session…", run: () => openSession(false) },
                ...(controller.current ? [{ label: "$(repo-forked) Fork the current session", run: forkSession }] : []),
            ];
            const pick = await vscode.window.showQuickPick(items, { title: "Tandem: sessions" });
            if (pick) await pick.run();
        },
        "Session command failed",
    );
    register("tandem.newSession", newSession, "Could not create a session");
    register("tandem.openSession", () => openSession(false), "Could not open the session");
    register("tandem.forkSession", forkSession, "Could not fork the session");
    register("tandem.undoLastTurn", undoLastTurn, "Could not undo the last turn");
    register("tandem.selectModel", selectModel, "Could not set the model");
    register("tandem.selectThinkingLevel", selectThinking, "Could not set the thinking level");
    register("tandem.setApiKey", setApiKey, "Could not store the API key");
    register("tandem.forgetApiKey", forgetApiKey, "Could not forget the API key");
    register("tandem.showLogs", async () => output.show(true), "Could not show the logs", "nothing");
    // restart() is at the user's request: its failure pops up.
    register("tandem.restartServer", () => server.restart(), "Could not restart the server", "nothing");

    context.subscriptions.push(
        chat.onMessage((message: ViewMessage) => {
            switch (message.type) {
                case "ready":
                    // The user opened the chat view: that is using Tandem (an error that
                    // already popped up is not repeated; the Get Started view shows it).
                    void server.use(false);
                    break;
                case "send":
                    void controller.send(message.text, message.mode);
                    break;
                case "abort":
                    void controller.abort();
                    break;
                case "command":
                    void vscode.commands.executeCommand(message.command);
                    break;
                case "needState":
                    void controller.refreshState(message.session);
                    break;
                case "openLocation": {
                    const uri = vscode.Uri.parse(message.uri);
                    const line = typeof message.line === "number" ? message.line : 0;
                    void vscode.window.showTextDocument(uri, { selection: new vscode.Range(line, 0, line, 0), preview: true });
                    break;
                }
                case "openLink":
                    if (/^(https?|mailto|file):/i.test(message.href)) void vscode.env.openExternal(vscode.Uri.parse(message.href));
                    break;
            }
        }),
    );

    // Quietly (see above). A window with neither folder nor file (an empty window) waits for
    // the first file, so that its code actions are there by the time the user asks.
    const hasFiles = () =>
        (vscode.workspace.workspaceFolders?.length ?? 0) > 0 || vscode.workspace.textDocuments.some((d) => d.uri.scheme === "file");
    if (hasFiles()) {
        chat.server("starting");
        await server.start();
    } else {
        output.appendLine("No folder or file is open: the server starts with the first file.");
        const firstFile = vscode.workspace.onDidOpenTextDocument((document) => {
            if (document.uri.scheme !== "file") return;
            firstFile.dispose();
            void server.start();
        });
        context.subscriptions.push(firstFile);
    }
}

export function deactivate(): Promise<void> | undefined {
    // VS Code waits for this promise: the server gets its shutdown and flushes session files.
    // The output channel is closed only after that (VS Code disposes the subscriptions right
    // after calling deactivate), so the stop's log and trace are kept. (A write to a closed
    // channel, which throws in VS Code, once broke the client's handling of the shutdown's
    // answer with tandem.trace.server on: the stop waited for its 5 s timeout, and the
    // extension host of a closed or reloaded window lived that long. `closable` drops such
    // writes now.)
    const server = activeServer;
    const output = activeOutput;
    activeServer = undefined;
    activeOutput = undefined;
    return Promise.resolve(server?.stop()).finally(() => output?.dispose());
}
