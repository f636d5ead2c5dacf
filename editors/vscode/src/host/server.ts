// Starts `tandem lsp` with vscode-languageclient and owns its lifecycle: the binary lookup and
// its error message, the client capabilities that turn on `tandem/event` and the requests the
// extension answers (saving documents, diagnostics and language requests: see intel.ts), the
// settings sent as initializationOptions and didChangeConfiguration, and restarts. It stays
// quiet (no pop-ups) until the user uses Tandem in the window: see `TandemServer.quiet`.

import * as vscode from "vscode";
import {
    ApplyWorkspaceEditRequest,
    DidChangeConfigurationNotification,
    LanguageClient,
    ResponseError,
    RevealOutputChannelOn,
    State,
    type ClientCapabilities,
    type FeatureState,
    type LanguageClientOptions,
    type ServerOptions,
    type StaticFeature,
} from "vscode-languageclient/node";

import {
    Methods,
    PROTOCOL_VERSION,
    type DiagnosticsParams,
    type EventParams,
    type LanguageRequestParams,
    type SaveDocumentsParams,
    type SaveDocumentsResult,
} from "../shared/protocol";
import { toServerSettings, type ServerSettings } from "../shared/settings";
import { findBinary, missingBinaryMessage } from "./binary";
import { EditorIntel, UnknownMethod } from "./intel";
import { EditReview } from "./review";

/**
 * vscode-languageclient's client, whose own pop-ups ("couldn't create connection to server",
 * "crashed 5 times") are held back while `quiet()` says so: they go to the output channel only.
 */
class Client extends LanguageClient {
    quiet: () => boolean = () => false;

    override error(message: string, data?: unknown, showNotification: boolean | "force" = true): void {
        super.error(message, data, this.quiet() ? false : showNotification);
    }
}

/** The server's state; `failed` when it stopped on its own or could not start (not by a stop). */
export type ServerStatus = { status: "starting" | "running" | "stopped"; detail?: string; failed?: boolean };

/**
 * Declares `experimental.tandem.events: true`, without which the server sends no events,
 * `saveDocuments: true` (the extension answers `tandem/saveDocuments`, see saveDocuments), and
 * `diagnostics` and `languageRequests` (it answers from VS Code's language features, see
 * intel.ts).
 */
class TandemEventsFeature implements StaticFeature {
    fillClientCapabilities(capabilities: ClientCapabilities): void {
        const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
        experimental.tandem = {
            ...((experimental.tandem as object | undefined) ?? {}),
            events: true,
            saveDocuments: true,
            diagnostics: true,
            languageRequests: true,
        };
        capabilities.experimental = experimental;
    }
    initialize(): void {}
    getState(): FeatureState {
        return { kind: "static" };
    }
    clear(): void {}
}

/**
 * Answers `tandem/saveDocuments`: saves each open, dirty document the server names (before the
 * agent runs a command, so the command sees what the user sees). A document that is not open
 * or not dirty has nothing to save and is in neither list; a failed save is reported with its
 * reason, never dropped.
 */
export async function saveDocuments(params: SaveDocumentsParams): Promise<SaveDocumentsResult> {
    const result: SaveDocumentsResult = { saved: [], failed: [] };
    for (const raw of params?.uris ?? []) {
        let uri: vscode.Uri;
        try {
            uri = vscode.Uri.parse(raw, true);
        } catch {
            result.failed.push({ uri: raw, message: "not a valid URI" });
            continue;
        }
        const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
        if (!document || !document.isDirty) continue;
        try {
            if (await document.save()) result.saved.push(raw);
            else result.failed.push({ uri: raw, message: "VS Code did not save it" });
        } catch (error) {
            result.failed.push({ uri: raw, message: error instanceof Error ? error.message : String(error) });
        }
    }
    return result;
}

/** The server settings from the `tandem` configuration section. */
export function currentSettings(): ServerSettings {
    const config = vscode.workspace.getConfiguration("tandem");
    return toServerSettings((key) => config.get(key));
}

/**
 * What `initialize` sends: the settings, and VS Code's own workspace trust as
 * `workspaceTrusted`. The trust is set here from the API, after the settings, and only here
 * (never in didChangeConfiguration), so no settings file can vouch for the workspace.
 */
export function initializationOptions(): ServerSettings & { workspaceTrusted: boolean } {
    return { ...currentSettings(), workspaceTrusted: vscode.workspace.isTrusted === true };
}

export class TandemServer implements vscode.Disposable {
    private client: Client | undefined;
    /** The start under way, which every caller of `start` shares. */
    private starting: Promise<boolean> | undefined;
    /**
     * True until the user uses Tandem in this window (`use`). The extension starts with every
     * window (for its code actions), so until then a failure is logged and shown in the Get
     * Started view, never as a pop-up: a window whose user never asked for Tandem stays quiet.
     */
    private quiet = true;
    private readonly events = new vscode.EventEmitter<EventParams>();
    private readonly statusEmitter = new vscode.EventEmitter<ServerStatus>();
    private readonly disposables: vscode.Disposable[] = [];
    private lastStatus: ServerStatus = { status: "stopped" };
    private readonly review: EditReview;
    /** Counts diagnostics changes from the start, for `tandem/diagnostics`. */
    private readonly intel: EditorIntel;

    /** Every `tandem/event` notification, in order. */
    readonly onEvent = this.events.event;
    readonly onStatus = this.statusEmitter.event;

    constructor(
        private readonly output: vscode.OutputChannel,
        /** The binary a platform package carries (used when `tandem.path` is empty). */
        private readonly bundledBinary: string,
        /** The server's environment (with the keys the user stored in VS Code). */
        private readonly environment: () => Promise<NodeJS.ProcessEnv>,
    ) {
        this.review = new EditReview(output);
        this.intel = new EditorIntel(vscode);
        this.disposables.push(
            this.review,
            this.intel,
            vscode.workspace.onDidChangeConfiguration((change) => this.configurationChanged(change)),
            // The server learns the workspace's trust at initialize: start it again once the
            // user trusts the workspace, so new sessions use the project's configuration.
            vscode.workspace.onDidGrantWorkspaceTrust(() => void this.startAgain()),
        );
    }

    get status(): ServerStatus {
        return this.lastStatus;
    }

    private setStatus(status: ServerStatus): void {
        this.lastStatus = status;
        this.statusEmitter.fire(status);
    }

    /**
     * The user used Tandem (a command, the chat view): from now on failures pop up. Starts the
     * server unless it runs, so a start that failed quietly is tried again and its error shown;
     * with `retry` false, a start that failed since the user used Tandem (and popped up) is not
     * tried again (the chat view, shown again, repeats no error: its Get Started view says it).
     */
    use(retry = true): Promise<boolean> {
        const wasQuiet = this.quiet;
        this.quiet = false;
        if (this.client) return Promise.resolve(true);
        if (!retry && !wasQuiet && !this.starting && this.lastStatus.failed) return Promise.resolve(false);
        return this.start();
    }

    /**
     * Starts the server unless it runs; concurrent calls share one start. On failure it
     * resolves to false after an actionable error (a pop-up once the user used Tandem, see
     * `quiet`; the output channel and the status in any case).
     */
    start(): Promise<boolean> {
        if (this.client) return Promise.resolve(true);
        this.starting ??= this.launch().finally(() => {
            this.starting = undefined;
        });
        return this.starting;
    }

    private async launch(): Promise<boolean> {
        const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
        const setting = vscode.workspace.getConfiguration("tandem").get<string>("path", "");
        const lookup = findBinary(setting, process.env, folder, this.bundledBinary);
        if (!lookup.found) {
            this.fail(missingBinaryMessage(lookup.reason));
            return false;
        }
        this.setStatus({ status: "starting" });
        this.output.appendLine(`Starting ${lookup.path} lsp`);

        // No `transport`: with TransportKind.stdio the client would append `--stdio` to the
        // arguments, which `tandem lsp` rejects. Without it the client still talks over stdio.
        // The environment carries stored API keys: it is never logged.
        const env = await this.environment();
        const serverOptions: ServerOptions = {
            command: lookup.path,
            args: ["lsp"],
            options: folder ? { cwd: folder, env } : { env },
        };
        const clientOptions: LanguageClientOptions = {
            // Tandem works on any file: it gives every file buffer to the agent as context.
            documentSelector: [{ scheme: "file" }],
            initializationOptions: initializationOptions(),
            outputChannel: this.output,
            traceOutputChannel: this.output,
            revealOutputChannelOn: RevealOutputChannelOn.Never,
            middleware: {
                // Running one of the server's commands (a code action picked) is using Tandem.
                executeCommand: (command, args, next) => {
                    this.quiet = false;
                    return next(command, args);
                },
                workspace: {
                    // The server pulls the `tandem` section: answer with the mapped settings,
                    // not VS Code's raw section (which holds `path` and empty strings).
                    configuration: (params, token, next) => {
                        const mapped = params.items.map((item) => (item.section === "tandem" ? currentSettings() : undefined));
                        if (mapped.every((m) => m !== undefined)) return mapped;
                        return Promise.resolve(next(params, token)).then((raw) =>
                            Array.isArray(raw) ? raw.map((value, i) => mapped[i] ?? value) : raw,
                        );
                    },
                },
            },
            initializationFailedHandler: (error) => {
                this.output.appendLine(`initialize failed: ${error instanceof Error ? error.message : String(error)}`);
                return false;
            },
        };

        const client = new Client("tandem", "Tandem", serverOptions, clientOptions);
        client.quiet = () => this.quiet;
        client.registerFeature(new TandemEventsFeature());
        client.onNotification(Methods.event, (params: EventParams) => this.events.fire(params));
        client.onRequest(Methods.saveDocuments, (params: SaveDocumentsParams) => saveDocuments(params));
        client.onRequest(Methods.diagnostics, (params: DiagnosticsParams) => this.intel.diagnostics(params, client));
        client.onRequest(Methods.languageRequest, async (params: LanguageRequestParams) => {
            try {
                return await this.intel.languageRequest(params, client);
            } catch (error) {
                if (error instanceof UnknownMethod) return new ResponseError(error.code, error.message);
                throw error;
            }
        });
        client.onDidChangeState((change) => {
            if (change.newState === State.Stopped && this.client === client) {
                this.setStatus({ status: "stopped", failed: true, detail: "The Tandem language server stopped. Run “Tandem: Restart Server”; details are in the Tandem output channel." });
            } else if (change.newState === State.Running) {
                this.setStatus({ status: "running" });
            }
        });
        this.client = client;
        try {
            await client.start();
            // After start, so this replaces the client's own handler: edits that need
            // confirmation get a real review (see review.ts), not an unticked Refactor Preview.
            client.onRequest(ApplyWorkspaceEditRequest.type, (params) => this.review.handle(client, params));
        } catch (error) {
            this.client = undefined;
            const detail = error instanceof Error ? error.message : String(error);
            this.fail(
                `Tandem: \`${lookup.path} lsp\` failed to start (${detail}). Check that \`tandem.path\` points to a working ` +
                    "Tandem binary; the Tandem output channel has the server's log.",
            );
            await client.dispose().catch(() => undefined);
            return false;
        }
        const version = (client.initializeResult?.capabilities.experimental as { tandem?: { version?: number } } | undefined)?.tandem
            ?.version;
        if (version !== PROTOCOL_VERSION) {
            // The spec: a plugin refuses protocol versions it does not know.
            this.client = undefined;
            await client.stop().catch(() => undefined);
            this.fail(
                `Tandem: the server speaks protocol version ${version ?? "(none)"}, this extension version ${PROTOCOL_VERSION}. ` +
                    "Update the extension or the tandem binary so that they match.",
            );
            return false;
        }
        this.setStatus({ status: "running" });
        return true;
    }

    private fail(message: string): void {
        this.setStatus({ status: "stopped", failed: true, detail: message });
        this.output.appendLine(message);
        if (this.quiet) return;
        void vscode.window.showErrorMessage(message, "Open Settings", "Show Logs").then((choice) => {
            if (choice === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "tandem.path");
            if (choice === "Show Logs") this.output.show(true);
        });
    }

    async stop(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        if (client) {
            try {
                await client.stop(5000);
            } catch (error) {
                this.output.appendLine(`Stopping the server: ${error instanceof Error ? error.message : String(error)}`);
            }
        }
        this.setStatus({ status: "stopped", detail: "The Tandem language server is stopped." });
    }

    /** Starts the server again if it runs or failed to (not if it never started), quiet if it was. */
    private async startAgain(): Promise<void> {
        if (!this.client && !this.lastStatus.failed) return;
        await this.stop();
        await this.start();
    }

    /** Stops and starts the server again, at the user's request (failures pop up). */
    async restart(): Promise<boolean> {
        this.quiet = false;
        await this.stop();
        return this.start();
    }

    /** Sends a `tandem/*` request; rejects with a readable error when the server is not running. */
    async request<R>(method: string, params: unknown): Promise<R> {
        const client = this.client;
        if (!client || !client.isRunning()) {
            throw new Error("the Tandem language server is not running (see the Tandem output channel, or run “Tandem: Restart Server”)");
        }
        return client.sendRequest<R>(method, params);
    }

    /** The client's converter, for the prompt's editor context. */
    get converter() {
        return this.client?.code2ProtocolConverter;
    }

    private configurationChanged(change: vscode.ConfigurationChangeEvent): void {
        if (!change.affectsConfiguration("tandem")) return;
        if (change.affectsConfiguration("tandem.path")) {
            // Before the user used Tandem (a remote window may deliver machine settings after
            // the start), without asking.
            if (this.quiet) void this.startAgain();
            else void vscode.window.showInformationMessage("Tandem: `tandem.path` changed. Restart the server to use it?", "Restart").then((choice) => {
                if (choice === "Restart") void this.restart();
            });
        }
        const client = this.client;
        if (client?.isRunning()) {
            // The spec: `settings.tandem` replaces the previous settings as a whole.
            void client.sendNotification(DidChangeConfigurationNotification.type, { settings: { tandem: currentSettings() } });
        }
    }

    dispose(): void {
        void this.stop();
        for (const d of this.disposables) d.dispose();
        this.events.dispose();
        this.statusEmitter.dispose();
    }
}
