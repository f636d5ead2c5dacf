// The chat view's host side: serves the webview page, forwards `tandem/event`s to it in
// batches, and keeps a log of everything sent so a re-created webview (closed and reopened)
// is rebuilt by replaying it.

import * as fs from "node:fs";
import * as vscode from "vscode";

import { fillTemplate, makeNonce } from "../shared/html";
import type { HostMessage, ViewMessage } from "../shared/messages";
import type { EventParams, SessionState, WireMessage } from "../shared/protocol";

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
    static readonly viewId = "tandem.chat";

    private view: vscode.WebviewView | undefined;
    private ready = false;
    /** Every event received, for replay into a new webview. */
    private readonly eventLog: EventParams[] = [];
    /** Events not yet posted (flushed together, once per tick). */
    private outbox: EventParams[] = [];
    private flushScheduled = false;
    /** The latest non-event messages, replayed after the events. */
    private shownSession: HostMessage | undefined;
    private serverStatus: HostMessage | undefined;
    private readonly states = new Map<string, SessionState>();
    private readonly notices: HostMessage[] = [];
    private readonly histories: HostMessage[] = [];
    /** Sessions the view already has messages for (from events or a history). */
    private readonly known = new Set<string>();
    private readonly messages = new vscode.EventEmitter<ViewMessage>();

    /** Messages from the webview (send, abort, commands…). */
    readonly onMessage = this.messages.event;

    constructor(private readonly extensionUri: vscode.Uri) {}

    resolveWebviewView(view: vscode.WebviewView): void {
        this.view = view;
        this.ready = false;
        const media = vscode.Uri.joinPath(this.extensionUri, "media");
        const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
        view.webview.options = { enableScripts: true, localResourceRoots: [media, dist] };
        const template = fs.readFileSync(vscode.Uri.joinPath(media, "chat.html").fsPath, "utf8");
        view.webview.html = fillTemplate(template, {
            cspSource: view.webview.cspSource,
            nonce: makeNonce(),
            scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.js")).toString(),
            styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, "chat.css")).toString(),
        });
        view.webview.onDidReceiveMessage((message: ViewMessage) => {
            if (message?.type === "ready") this.replay();
            this.messages.fire(message);
        });
        view.onDidDispose(() => {
            if (this.view === view) {
                this.view = undefined;
                this.ready = false;
            }
        });
    }

    /** Shows the view (and focuses it). */
    async reveal(): Promise<void> {
        if (this.view) this.view.show(true);
        else await vscode.commands.executeCommand(`${ChatViewProvider.viewId}.focus`);
    }

    /** Whether the view already shows something of this session. */
    hasContent(session: string): boolean {
        return this.known.has(session);
    }

    pushEvent(params: EventParams): void {
        this.known.add(params.session);
        this.eventLog.push(params);
        this.outbox.push(params);
        if (this.flushScheduled) return;
        this.flushScheduled = true;
        setImmediate(() => this.flush());
    }

    showSession(session: string | null, title?: string): void {
        this.shownSession = { type: "showSession", session, title };
        this.post(this.shownSession);
    }

    setState(state: SessionState): void {
        this.states.set(state.session, state);
        this.post({ type: "state", state });
    }

    /** A stored session's earlier messages, shown when it is opened. */
    history(session: string, messages: WireMessage[], omitted: number): void {
        this.known.add(session);
        const msg: HostMessage = { type: "history", session, messages, omitted };
        this.histories.push(msg);
        this.post(msg);
    }

    notice(session: string | null, level: "error" | "info", text: string): void {
        const msg: HostMessage = { type: "notice", session, level, text };
        this.notices.push(msg);
        this.post(msg);
    }

    server(status: "starting" | "running" | "stopped", detail?: string): void {
        this.serverStatus = { type: "server", status, detail };
        this.post(this.serverStatus);
    }

    private flush(): void {
        this.flushScheduled = false;
        if (this.outbox.length === 0) return;
        const events = this.outbox;
        this.outbox = [];
        if (this.ready) this.post({ type: "events", events });
    }

    private post(message: HostMessage): void {
        if (this.view && this.ready) void this.view.webview.postMessage(message);
    }

    /** A (new) webview said it is ready: send it everything so far. */
    private replay(): void {
        this.ready = true;
        this.outbox = [];
        if (this.serverStatus) this.post(this.serverStatus);
        if (this.shownSession) this.post(this.shownSession);
        for (const history of this.histories) this.post(history);
        if (this.eventLog.length > 0) this.post({ type: "events", events: this.eventLog.slice() });
        for (const state of this.states.values()) this.post({ type: "state", state });
        for (const notice of this.notices) this.post(notice);
    }

    dispose(): void {
        this.messages.dispose();
    }
}
