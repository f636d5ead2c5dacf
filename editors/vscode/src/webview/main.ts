// The chat webview: turns the reducer's changes into small DOM updates.
//
// Streaming text is appended to a text node (`appendData`), never re-rendered per token; its
// finished paragraphs are rendered as markdown on a timer (each once), and the whole block once
// more when it is done. Tool cards update their few fields in place. A session's whole
// transcript is rendered only when the view switches to it.

import { parseUnifiedDiff, diffStats } from "../shared/diff";
import { advanceStreamSplit, newStreamSplit, renderMarkdown, type StreamSplit } from "../shared/markdown";
import type { HostMessage, SendMode, ViewMessage } from "../shared/messages";
import {
    addHostNotice,
    applyHistory,
    applyState,
    createModel,
    reduce,
    type Block,
    type Change,
    type Item,
    type MessageItem,
    type NoticeItem,
    type SessionView,
    type TextBlock,
    type ToolCard,
} from "../shared/reducer";

interface VsCodeApi {
    postMessage(message: ViewMessage): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

declare global {
    interface Window {
        /** Events applied so far: lets tests (and the benchmark) know rendering caught up. */
        __tandemApplied: number;
        /** Host messages handled so far, likewise. */
        __tandemHandled: number;
    }
}

const vscode = acquireVsCodeApi();
const model = createModel();
let shown: string | null = null;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const transcript = $<HTMLElement>("transcript");
const empty = $<HTMLElement>("empty");
const input = $<HTMLTextAreaElement>("input");
const sendButton = $<HTMLButtonElement>("send");
const followUpButton = $<HTMLButtonElement>("follow-up");
const abortButton = $<HTMLButtonElement>("abort");
const runStatus = $<HTMLElement>("run-status");
const queueBox = $<HTMLElement>("queue");
const sessionTitle = $<HTMLElement>("session-title");
const modelButton = $<HTMLButtonElement>("model-button");
const thinkingButton = $<HTMLButtonElement>("thinking-button");
const serverStatus = $<HTMLElement>("server-status");

// DOM nodes of view-model objects; weak, so a dropped session's nodes can be collected.
const itemNodes = new WeakMap<Item, HTMLElement>();
const blockNodes = new WeakMap<Block, HTMLElement>();
const streamNodes = new WeakMap<TextBlock, Text>();

/**
 * A streaming answer is shown as markdown up to its last finished paragraph and as raw text
 * after it: every RENDER_EVERY_MS, the paragraphs completed since the last time are rendered
 * (each once) and appended, and the raw tail shrinks. The whole block is rendered once more
 * when it ends, so the final view never depends on where the cuts fell.
 */
interface StreamingText {
    prefix: HTMLElement;
    tail: Text;
    rendered: number;
    split: StreamSplit;
}
const RENDER_EVERY_MS = 200;
const streaming = new WeakMap<TextBlock, StreamingText>();
const dirty = new Set<TextBlock>();
let renderTimer: ReturnType<typeof setTimeout> | undefined;

function markDirty(block: TextBlock): void {
    if (!streaming.has(block)) return;
    dirty.add(block);
    if (renderTimer === undefined) renderTimer = setTimeout(renderFinishedParagraphs, RENDER_EVERY_MS);
}

function renderFinishedParagraphs(): void {
    renderTimer = undefined;
    for (const block of dirty) {
        const state = streaming.get(block);
        if (!state || block.done) continue;
        const safe = advanceStreamSplit(state.split, block.text);
        if (safe <= state.rendered) continue;
        state.prefix.insertAdjacentHTML("beforeend", renderMarkdown(block.text.slice(state.rendered, safe)));
        state.rendered = safe;
        state.tail.data = block.text.slice(safe);
    }
    dirty.clear();
}
const cardNodes = new WeakMap<ToolCard, CardNodes>();

interface CardNodes {
    root: HTMLElement;
    status: HTMLElement;
    title: HTMLElement;
    progress: HTMLElement;
    output: HTMLElement;
    outputBox: HTMLDetailsElement;
    diffBox: HTMLElement;
    shownDiff: string | null;
}

window.__tandemApplied = 0;
window.__tandemHandled = 0;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
}

// ---- messages from the host ----

window.addEventListener("message", (event: MessageEvent<HostMessage>) => {
    const msg = event.data;
    if (!msg || typeof msg !== "object") return;
    handle(msg);
    window.__tandemHandled++;
});

function handle(msg: HostMessage): void {
    switch (msg.type) {
        case "events":
            for (const params of msg.events) {
                if (shown === null && params?.session) show(params.session);
                applyChanges(reduce(model, params));
                window.__tandemApplied++;
            }
            scheduleScroll();
            break;
        case "state":
            applyChanges(applyState(model, msg.state));
            break;
        case "history":
            applyChanges(applyHistory(model, msg.session, msg.messages, msg.omitted));
            scheduleScroll(true);
            break;
        case "showSession":
            show(msg.session, msg.title);
            break;
        case "notice":
            if (msg.session) {
                applyChanges(addHostNotice(model, msg.session, msg.level === "error" ? "error" : "info", msg.text));
            } else {
                transcript.append(noticeNode({ kind: "notice", key: 0, level: msg.level, text: msg.text, done: true }));
                empty.hidden = true;
            }
            scheduleScroll();
            break;
        case "server":
            serverStatus.hidden = msg.status === "running";
            serverStatus.textContent = msg.status === "starting" ? "Starting the Tandem language server…" : (msg.detail ?? "The Tandem language server is not running.");
            serverStatus.className = msg.status === "stopped" ? "error" : "";
            updateStatus();
            break;
    }
}

function applyChanges(changes: Change[]): void {
    for (const change of changes) {
        if (change.type === "gap") {
            vscode.postMessage({ type: "needState", session: change.session });
            continue;
        }
        if (change.session !== shown) continue;
        switch (change.type) {
            case "item-added":
                empty.hidden = true;
                transcript.append(itemNode(change.item));
                break;
            case "block-added": {
                // The item's node may have been built after the block was added (same event).
                if (blockNodes.get(change.block)?.isConnected) break;
                const parent = itemNodes.get(change.item)?.querySelector(".blocks");
                if (!parent) break;
                const node = blockNode(change.block);
                const next = change.item.blocks[change.item.blocks.indexOf(change.block) + 1];
                const before = next ? blockNodes.get(next) : undefined;
                if (before && before.parentNode === parent) parent.insertBefore(node, before);
                else parent.append(node);
                break;
            }
            case "text-appended": {
                const text = streamNodes.get(change.block);
                if (text) text.appendData(change.delta);
                markDirty(change.block);
                break;
            }
            case "block-done":
                finishBlock(change.block);
                break;
            case "message-changed":
                updateMessageFooter(change.item);
                break;
            case "tool-changed":
                updateCard(change.card);
                break;
            case "notice-changed": {
                const node = itemNodes.get(change.item);
                if (node) node.replaceWith(itemNode(change.item));
                break;
            }
            case "status-changed":
                updateStatus();
                break;
        }
    }
}

// ---- rendering ----

function show(session: string | null, title?: string): void {
    shown = session;
    transcript.replaceChildren(empty);
    sessionTitle.textContent = title ?? (session ? `Session ${session.slice(0, 8)}` : "New session");
    sessionTitle.title = session ?? "A new session starts with your next message";
    const view = session ? model.sessions.get(session) : undefined;
    empty.hidden = !!view && view.items.length > 0;
    if (view) for (const item of view.items) transcript.append(itemNode(item));
    updateStatus();
    scheduleScroll(true);
}

function itemNode(item: Item): HTMLElement {
    const node = item.kind === "message" ? messageNode(item) : noticeNode(item);
    itemNodes.set(item, node);
    return node;
}

function noticeNode(item: NoticeItem): HTMLElement {
    const node = el("div", `notice level-${item.level}${item.done ? "" : " active"}`);
    node.append(el("span", "notice-text", item.text));
    return node;
}

function messageNode(item: MessageItem): HTMLElement {
    const node = el("div", `msg role-${item.role}`);
    node.dataset.key = String(item.key);
    if (item.role !== "assistant" && item.role !== "user") node.append(el("div", "role-label", roleLabel(item.role)));
    if (item.context) {
        const ctx = el("details", "editor-context");
        ctx.append(el("summary", undefined, "Editor context"), el("pre", undefined, item.context));
        node.append(ctx);
    }
    const blocks = el("div", "blocks");
    for (const block of item.blocks) blocks.append(blockNode(block));
    node.append(blocks, el("div", "msg-footer"));
    itemNodes.set(item, node);
    updateMessageFooter(item, node);
    return node;
}

function roleLabel(role: string): string {
    switch (role) {
        case "bashExecution":
            return "Command";
        case "branchSummary":
            return "Branch summary";
        case "compactionSummary":
            return "Compaction summary";
        default:
            return role;
    }
}

function blockNode(block: Block): HTMLElement {
    let node: HTMLElement;
    if (block.kind === "tool") {
        node = cardNode(block.card);
    } else if (block.kind === "thinking") {
        const details = el("details", "block thinking");
        details.open = !block.done;
        details.append(el("summary", undefined, "Thinking"));
        const body = el("div", "thinking-body");
        details.append(body);
        node = details;
        blockNodes.set(block, node);
        if (block.done) body.textContent = block.text;
        else startStream(block, body);
        return node;
    } else {
        node = el("div", "block text");
        blockNodes.set(block, node);
        if (block.done) {
            renderText(block, node);
        } else {
            const prefix = el("div", "stream-prefix markdown");
            const tail = el("span", "stream-tail");
            node.append(prefix, tail);
            node.classList.add("streaming");
            startStream(block, tail);
            streaming.set(block, { prefix, tail: streamNodes.get(block)!, rendered: 0, split: newStreamSplit() });
            markDirty(block);
        }
        return node;
    }
    blockNodes.set(block, node);
    return node;
}

/** A streaming block shows its raw text in a text node that deltas are appended to. */
function startStream(block: TextBlock, container: HTMLElement): void {
    container.classList.add("streaming");
    const text = document.createTextNode(block.text);
    container.append(text);
    streamNodes.set(block, text);
}

function renderText(block: TextBlock, node: HTMLElement): void {
    node.classList.remove("streaming");
    node.classList.add("markdown");
    node.innerHTML = renderMarkdown(block.text);
}

function finishBlock(block: TextBlock): void {
    const node = blockNodes.get(block);
    if (!node) return;
    streamNodes.delete(block);
    streaming.delete(block);
    if (block.kind === "thinking") {
        const body = node.querySelector(".thinking-body") as HTMLElement;
        body.classList.remove("streaming");
        body.textContent = block.text;
        (node as HTMLDetailsElement).open = false;
    } else {
        renderText(block, node);
    }
}

function updateMessageFooter(item: MessageItem, node = itemNodes.get(item)): void {
    const footer = node?.querySelector(".msg-footer");
    if (!footer) return;
    footer.replaceChildren();
    if (item.incomplete) footer.append(el("div", "incomplete", "Some updates were missed; the full text arrives when the message ends."));
    if (item.stopReason === "aborted") footer.append(el("div", "aborted", "Aborted."));
    else if (item.stopReason === "length") footer.append(el("div", "aborted", "Stopped: the model reached its output limit."));
    if (item.errorMessage && item.stopReason !== "aborted") footer.append(el("div", "msg-error", item.errorMessage));
    node!.classList.toggle("streaming", item.streaming);
}

const STATUS_LABELS: Record<ToolCard["status"], string> = {
    writing: "writing…",
    pending: "pending",
    running: "running…",
    done: "done",
    error: "failed",
    interrupted: "interrupted",
};

function cardNode(card: ToolCard): HTMLElement {
    const root = el("div", "block tool-card");
    const header = el("div", "tool-header");
    const status = el("span", "tool-status");
    const title = el("span", "tool-title");
    const progress = el("span", "tool-progress");
    header.append(status, title, progress);
    const outputBox = el("details", "tool-output");
    outputBox.append(el("summary", undefined, "Output"));
    const output = el("pre");
    outputBox.append(output);
    const diffBox = el("div", "tool-diff");
    root.append(header, diffBox, outputBox);
    title.addEventListener("click", () => {
        const location = card.locations[0];
        if (location) vscode.postMessage({ type: "openLocation", uri: location.uri, line: location.line ?? null });
    });
    const nodes: CardNodes = { root, status, title, progress, output, outputBox, diffBox, shownDiff: null };
    cardNodes.set(card, nodes);
    updateCard(card);
    return root;
}

function setText(node: HTMLElement, text: string): void {
    if (node.textContent !== text) node.textContent = text;
}

function updateCard(card: ToolCard): void {
    const nodes = cardNodes.get(card);
    if (!nodes) return;
    nodes.root.className = `block tool-card status-${card.status}`;
    nodes.root.dataset.toolCallId = card.id;
    setText(nodes.status, STATUS_LABELS[card.status]);
    setText(nodes.title, card.title ?? card.name);
    nodes.title.classList.toggle("link", card.locations.length > 0);
    setText(nodes.progress, card.status === "writing" && card.argsLength > 0 ? `${card.argsLength} chars` : "");
    nodes.outputBox.hidden = card.output === "";
    setText(nodes.output, card.output + (card.truncated ? "\n[output shortened for display]" : ""));
    if (card.status === "error") nodes.outputBox.open = true;
    if (card.diff !== nodes.shownDiff) {
        nodes.shownDiff = card.diff;
        nodes.diffBox.replaceChildren();
        if (card.diff) nodes.diffBox.append(diffNode(card.diff));
    }
}

function diffNode(diff: string): HTMLElement {
    const stats = diffStats(diff);
    const box = el("details", "diff");
    box.open = true;
    const summary = el("summary");
    summary.append(el("span", "diff-added", `+${stats.added}`), " ", el("span", "diff-removed", `−${stats.removed}`));
    const pre = el("pre", "diff-lines");
    for (const line of parseUnifiedDiff(diff)) pre.append(el("span", `diff-line diff-${line.kind}`, line.text + "\n"));
    box.append(summary, pre);
    return box;
}

function currentView(): SessionView | undefined {
    return shown ? model.sessions.get(shown) : undefined;
}

function updateStatus(): void {
    const view = currentView();
    const running = !!view?.running;
    const serverDown = !serverStatus.hidden && serverStatus.className === "error";
    abortButton.disabled = !running;
    sendButton.textContent = running ? "Steer" : "Send";
    sendButton.title = running ? "Steer: delivered after the current tool calls (Enter)" : "Send (Enter)";
    sendButton.disabled = serverDown;
    followUpButton.hidden = !running;
    runStatus.textContent = running ? "Working…" : "Idle";
    runStatus.classList.toggle("running", running);
    document.body.classList.toggle("running", running);
    modelButton.textContent = `model: ${view?.model ?? "default"}`;
    thinkingButton.textContent = `thinking: ${view?.thinkingLevel ?? "default"}`;
    const queued = view ? [...view.queue.steering.map((t) => ["steer", t]), ...view.queue.followUp.map((t) => ["follow-up", t])] : [];
    queueBox.hidden = queued.length === 0;
    queueBox.replaceChildren(...queued.map(([kind, text]) => el("div", "queued", `${kind}: ${text}`)));
}

// ---- scrolling: follow the stream while the user is at the bottom ----

let stickToBottom = true;
let scrollPending = false;
transcript.addEventListener("scroll", () => {
    stickToBottom = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
});

function scheduleScroll(force = false): void {
    if (force) stickToBottom = true;
    if (scrollPending || !stickToBottom) return;
    scrollPending = true;
    requestAnimationFrame(() => {
        scrollPending = false;
        if (stickToBottom) transcript.scrollTop = transcript.scrollHeight;
    });
}

// ---- input ----

function send(mode: SendMode | "auto"): void {
    const text = input.value.trim();
    if (!text) return;
    const running = !!currentView()?.running;
    const resolved: SendMode = mode === "auto" ? (running ? "steer" : "prompt") : running ? mode : "prompt";
    vscode.postMessage({ type: "send", text, mode: resolved });
    input.value = "";
    scheduleScroll(true);
}

input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        send(event.altKey ? "followUp" : "auto");
    }
});
sendButton.addEventListener("click", () => send("auto"));
followUpButton.addEventListener("click", () => send("followUp"));
abortButton.addEventListener("click", () => vscode.postMessage({ type: "abort" }));
modelButton.addEventListener("click", () => vscode.postMessage({ type: "command", command: "tandem.selectModel" }));
thinkingButton.addEventListener("click", () => vscode.postMessage({ type: "command", command: "tandem.selectThinkingLevel" }));
$("sessions-button").addEventListener("click", () => vscode.postMessage({ type: "command", command: "tandem.sessions" }));
transcript.addEventListener("click", (event) => {
    const link = (event.target as HTMLElement).closest("a");
    if (link && link.getAttribute("href")) {
        event.preventDefault();
        vscode.postMessage({ type: "openLink", href: link.getAttribute("href")! });
    }
});

updateStatus();
vscode.postMessage({ type: "ready" });
