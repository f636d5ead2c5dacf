// The chat webview: turns the reducer's changes into small DOM updates.
//
// Streaming text is appended to a text node (`appendData`), never re-rendered per token; its
// finished paragraphs are rendered as markdown on a timer (each once), and the whole block once
// more when it is done. Tool cards update their few fields in place. A session's whole
// transcript is rendered only when the view switches to it.

import { advanceStreamSplit, newStreamSplit, renderCodeSpans, renderMarkdown, type StreamSplit } from "../shared/markdown";
import { numberDiffLines } from "../shared/diff";
import type { HostMessage, SendMode, ViewMessage } from "../shared/messages";
import {
    addHostNotice,
    applyHistory,
    applyState,
    createModel,
    reduce,
    roleLabel,
    sessionLabel,
    sessionTitle,
    toolStatusLabel,
    type Block,
    type Change,
    type Item,
    type MessageItem,
    type NoticeItem,
    type SessionTitle,
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
/** The titles the host gave sessions (a stored session's name, the prompt that made it). */
const titles = new Map<string, SessionTitle>();

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const transcript = $<HTMLElement>("transcript");
const empty = $<HTMLElement>("empty");
const input = $<HTMLTextAreaElement>("input");
const sendButton = $<HTMLButtonElement>("send");
const followUpButton = $<HTMLButtonElement>("follow-up");
const abortButton = $<HTMLButtonElement>("abort");
const runStatus = $<HTMLElement>("run-status");
const queueBox = $<HTMLElement>("queue");
const titleBox = $<HTMLElement>("session-title");
const titleText = titleBox.querySelector<HTMLElement>(".title-text")!;
const titleTag = titleBox.querySelector<HTMLElement>(".session-tag")!;
const modelButton = $<HTMLButtonElement>("model-button");
const modelValue = modelButton.querySelector<HTMLElement>(".chip-value")!;
const thinkingButton = $<HTMLButtonElement>("thinking-button");
const thinkingValue = thinkingButton.querySelector<HTMLElement>(".chip-value")!;
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
    shownTitle: string | null;
    progress: HTMLElement;
    output: HTMLElement;
    outputBox: HTMLDetailsElement;
    diffBox: HTMLElement;
    shownDiff: string | null;
    shownApplied: boolean | null;
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
            // The first prompt may have arrived: it labels a session the host gave no name.
            updateTitle();
            scheduleScroll();
            break;
        case "state":
            applyChanges(applyState(model, msg.state));
            break;
        case "history": {
            applyChanges(applyHistory(model, msg.session, msg.messages, msg.omitted));
            // The host names a stored session just before sending its history: a name, not a
            // placeholder for a prompt to come.
            const title = titles.get(msg.session);
            if (title) title.beforePrompt = false;
            updateTitle();
            scheduleScroll(true);
            break;
        }
        case "showSession":
            show(msg.session, msg.title);
            break;
        case "notice":
            if (msg.session) {
                applyChanges(addHostNotice(model, msg.session, msg.level === "error" ? "error" : "info", msg.text));
            } else {
                transcript.append(noticeNode({ kind: "notice", key: 0, level: msg.level, text: msg.text, done: true, detail: null }));
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
    // Judged when first given: the host gives a session the same title again when it is shown again.
    if (session && title && titles.get(session)?.text !== title) titles.set(session, sessionTitle(title, model.sessions.get(session)));
    transcript.replaceChildren(empty);
    updateTitle();
    const view = session ? model.sessions.get(session) : undefined;
    empty.hidden = !!view && view.items.length > 0;
    if (view) for (const item of view.items) transcript.append(itemNode(item));
    updateStatus();
    scheduleScroll(true);
}

/**
 * The header's label: the session's name or first prompt with its id's random tail beside it,
 * else that tail alone (see `sessionLabel`).
 */
function updateTitle(): void {
    const label = shown ? sessionLabel(shown, titles.get(shown), model.sessions.get(shown)) : { text: "New session", tag: null };
    setText(titleText, label.text);
    setText(titleTag, label.tag ?? "");
    titleTag.hidden = label.tag === null;
    // The whole label (it may be cut with an ellipsis) and the full id.
    titleBox.title = shown ? `${label.text}\nSession ${shown}` : "A new session starts with your next message";
}

function itemNode(item: Item): HTMLElement {
    const node = item.kind === "message" ? messageNode(item) : noticeNode(item);
    itemNodes.set(item, node);
    return node;
}

function noticeNode(item: NoticeItem): HTMLElement {
    const node = el("div", `notice level-${item.level}${item.done ? "" : " active"}`);
    node.append(el("span", "notice-text", item.text));
    if (item.detail) node.title = item.detail;
    return node;
}

function messageNode(item: MessageItem): HTMLElement {
    const node = el("div", `msg role-${item.role}`);
    node.dataset.key = String(item.key);
    // Every message says who speaks; the stylesheet hides the label of an assistant message that
    // continues the one before it (each tool round is a message of its own).
    node.append(el("div", "role-label", roleLabel(item.role)));
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
    // A retried failure is shown by the retry's line, not here.
    if (item.errorMessage && item.stopReason !== "aborted" && !item.errorRetried) footer.append(el("div", "msg-error", item.errorMessage));
    node!.classList.toggle("streaming", item.streaming);
    // A failed call that streamed nothing and was retried would be a label alone.
    node!.classList.toggle("blank", !item.streaming && item.blocks.length === 0 && footer.childElementCount === 0 && !item.context);
}

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
    const nodes: CardNodes = { root, status, title, shownTitle: null, progress, output, outputBox, diffBox, shownDiff: null, shownApplied: null };
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
    nodes.root.className = `block tool-card status-${card.status}${card.applied === false ? " not-applied" : ""}`;
    nodes.root.dataset.toolCallId = card.id;
    setText(nodes.status, toolStatusLabel(card));
    nodes.status.title = card.applied === false ? "Not applied: the file is unchanged." : "";
    const title = card.title ?? card.name;
    if (title !== nodes.shownTitle) {
        // Titles quote commands and patterns in backticks: render those as code.
        nodes.shownTitle = title;
        nodes.title.innerHTML = renderCodeSpans(title);
    }
    nodes.title.classList.toggle("link", card.locations.length > 0);
    setText(nodes.progress, card.status === "writing" && card.argsLength > 0 ? `${card.argsLength} chars` : "");
    nodes.outputBox.hidden = card.output === "";
    setText(nodes.output, card.output + (card.truncated ? "\n[output shortened for display]" : ""));
    if (card.status === "error") nodes.outputBox.open = true;
    if (card.diff !== nodes.shownDiff || card.applied !== nodes.shownApplied) {
        nodes.shownDiff = card.diff;
        nodes.shownApplied = card.applied;
        nodes.diffBox.replaceChildren();
        if (card.diff) nodes.diffBox.append(diffNode(card.diff, card.applied !== false));
    }
}

/**
 * A diff with the file's line numbers (old and new) in a gutter. The file header lines are left
 * out: the card's title names the file. A change that was not applied says so and is dimmed.
 */
function diffNode(diff: string, applied: boolean): HTMLElement {
    const lines = numberDiffLines(diff).filter((line) => line.kind !== "file");
    const added = lines.filter((line) => line.kind === "add").length;
    const removed = lines.filter((line) => line.kind === "del").length;
    const box = el("details", `diff ${applied ? "applied" : "not-applied"}`);
    box.open = true;
    const summary = el("summary");
    const stats = el("span", "diff-stats");
    stats.append(el("span", "diff-added", `+${added}`), " ", el("span", "diff-removed", `−${removed}`));
    summary.append(stats);
    // The card's status says "rejected"; the summary must not read like a change made.
    if (!applied) summary.append(" ", el("span", "diff-not-applied", "not applied"));
    const pre = el("pre", "diff-lines");
    // The gutter is as wide as the largest line number.
    const widest = Math.max(1, ...lines.map((line) => Math.max(line.oldLine ?? 0, line.newLine ?? 0)));
    pre.style.setProperty("--ln-width", `${String(widest).length}ch`);
    for (const line of lines) {
        const row = el("span", `diff-line diff-${line.kind}`);
        if (line.kind === "hunk") {
            row.append(el("span", "diff-text", line.text));
        } else {
            row.append(
                el("span", "ln ln-old", line.oldLine === null ? "" : String(line.oldLine)),
                el("span", "ln ln-new", line.newLine === null ? "" : String(line.newLine)),
                el("span", "diff-text", line.text),
            );
        }
        row.append("\n");
        pre.append(row);
    }
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
    setText(modelValue, view?.model ?? "default");
    // A model's name says what it is; "default" alone would not (a narrow view drops "model:").
    modelButton.classList.toggle("named", !!view?.model);
    modelButton.title = `Model: ${view?.model ?? "the default"}. Click to change it.`;
    setText(thinkingValue, view?.thinkingLevel ?? "default");
    thinkingButton.title = `Thinking level: ${view?.thinkingLevel ?? "the default"}. Click to change it.`;
    const queued = view ? [...view.queue.steering.map((t) => ["steer", t]), ...view.queue.followUp.map((t) => ["follow-up", t])] : [];
    queueBox.hidden = queued.length === 0;
    queueBox.replaceChildren(...queued.map(([kind, text]) => el("div", "queued", `${kind}: ${text}`)));
}

// ---- scrolling: follow the stream while the user is at the bottom ----

let stickToBottom = true;
let scrollPending = false;
let lastScrollTop = 0;
// Only a scroll up lets go of the bottom. A scroll event of our own jump to the bottom can
// arrive after more of a fast stream was appended, when the bottom is already further away:
// read as "the user left the bottom", it would stop the chat from following the answer.
transcript.addEventListener("scroll", () => {
    const top = transcript.scrollTop;
    const nearBottom = transcript.scrollHeight - top - transcript.clientHeight < 40;
    if (nearBottom) stickToBottom = true;
    else if (top < lastScrollTop - 1) stickToBottom = false;
    lastScrollTop = top;
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
