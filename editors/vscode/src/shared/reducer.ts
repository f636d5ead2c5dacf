// The chat's view model: what the `tandem/event` stream of each session amounts to, built one
// event at a time. It knows nothing of the DOM or of VS Code, so the webview (compiled for the
// browser) and the node tests share it.
//
// `reduce` updates the model in place and returns the list of changes it made. The webview turns
// each change into a small DOM update (a text delta becomes `appendData` on a text node), so a
// long answer costs work proportional to its length, never a re-render per token. Updating in
// place keeps each event O(size of the event); the model is owned by one reducer.

import type { ContentBlock, EventParams, SessionState, TandemEvent, ToolLocation, WireMessage } from "./protocol";

export type ToolStatus =
    /** The model is still writing the call's arguments. */
    | "writing"
    /** The call is complete; the tool has not started yet. */
    | "pending"
    | "running"
    | "done"
    | "error"
    /** The run ended (abort, failure) before the tool finished. */
    | "interrupted";

export interface ToolCard {
    id: string;
    name: string;
    status: ToolStatus;
    /** "Read src/a.rs", "Run `cargo test`": the server's title, once the tool starts. */
    title: string | null;
    kind: string | null;
    locations: ToolLocation[];
    /** Raw argument JSON streamed so far (only its length is shown while streaming). */
    argsLength: number;
    arguments: unknown;
    /** The latest partial output (`tool_update`) or the final result text (`tool_end`). */
    output: string;
    truncated: boolean;
    /** Unified diff of the change an edit or write proposed (applied or not). */
    diff: string | null;
    /**
     * Whether the proposed change reached the file: `tool_end.isError` says (a rejected edit, or
     * one the editor refused or never answered, is a tool error that keeps its diff). Null while
     * there is no diff.
     */
    applied: boolean | null;
}

export interface TextBlock {
    kind: "text" | "thinking";
    contentIndex: number;
    text: string;
    /** No more deltas will come: the view may render the text as markdown. */
    done: boolean;
}

export interface ToolBlock {
    kind: "tool";
    card: ToolCard;
}

export type Block = TextBlock | ToolBlock;

export interface MessageItem {
    kind: "message";
    /** Unique within the view model, for the DOM. */
    key: number;
    /** The server's message index within the session (-1 when unknown). */
    index: number;
    role: string;
    blocks: Block[];
    /** The editor context a user message was sent with (`message_start.context`), shown apart. */
    context: string | null;
    streaming: boolean;
    /** Deltas were lost (sequence gap): the text is incomplete until `message_end`. */
    incomplete: boolean;
    stopReason: string | null;
    errorMessage: string | null;
    /**
     * The message's error is shown by a later line instead of under the message: the call is
     * being retried (the retry line carries the error), or the overflow it hit is being compacted.
     */
    errorRetried: boolean;
}

export type NoticeLevel = "error" | "retry" | "compaction" | "info";

export interface NoticeItem {
    kind: "notice";
    key: number;
    level: NoticeLevel;
    text: string;
    /** The notice is final (a retry or compaction that ended). */
    done: boolean;
    /** The full error behind a short text ("Rate limited (429)"), for a tooltip. */
    detail: string | null;
}

export type Item = MessageItem | NoticeItem;

export interface SessionView {
    id: string;
    /** The last `seq` applied; 0 before the first event. */
    lastSeq: number;
    /** True from `agent_start` to `settled`. */
    running: boolean;
    items: Item[];
    queue: { steering: string[]; followUp: string[] };
    /** Notifications missed so far (sum of the gaps). */
    missed: number;
    /** Events ignored because their `seq` was not newer than the last one applied. */
    stale: number;
    model: string | null;
    thinkingLevel: string | null;
    /** The message being streamed, if any. */
    current: MessageItem | null;
    tools: Map<string, ToolCard>;
    /** The retry in progress: its notice is updated by each attempt and by `retry_end`. */
    retry: RetryState | null;
    /** The notice of a compaction in progress, updated when it ends. */
    lastCompaction: NoticeItem | null;
    /**
     * Where the current run's failure is shown (a failed message's footer, or the line of a retry
     * that gave up). The run's final `error` event updates it instead of adding a second line.
     */
    failure: MessageItem | NoticeItem | null;
}

export interface RetryState {
    notice: NoticeItem;
    /** "Rate limited (429)", or the error's first line when its kind is not known. */
    reason: string;
    error: string;
}

export interface ChatModel {
    sessions: Map<string, SessionView>;
    nextKey: number;
}

/** What changed, for the view to patch the DOM. `session` is the session id. */
export type Change =
    | { type: "item-added"; session: string; item: Item }
    | { type: "block-added"; session: string; item: MessageItem; block: Block }
    | { type: "text-appended"; session: string; item: MessageItem; block: TextBlock; delta: string }
    /** The block's text is final (and may have been replaced): render it fully. */
    | { type: "block-done"; session: string; item: MessageItem; block: TextBlock }
    | { type: "message-changed"; session: string; item: MessageItem }
    | { type: "tool-changed"; session: string; card: ToolCard }
    | { type: "notice-changed"; session: string; item: NoticeItem }
    /** `running`, the queue, the model or the thinking level changed. */
    | { type: "status-changed"; session: string }
    /** Notifications were missed: ask the server for the session's state. */
    | { type: "gap"; session: string; missed: number };

export function createModel(): ChatModel {
    return { sessions: new Map(), nextKey: 1 };
}

export function getSession(model: ChatModel, id: string): SessionView {
    let view = model.sessions.get(id);
    if (!view) {
        view = {
            id,
            lastSeq: 0,
            running: false,
            items: [],
            queue: { steering: [], followUp: [] },
            missed: 0,
            stale: 0,
            model: null,
            thinkingLevel: null,
            current: null,
            tools: new Map(),
            retry: null,
            lastCompaction: null,
            failure: null,
        };
        model.sessions.set(id, view);
    }
    return view;
}

const CONTEXT_END = "</editor-context>";

/**
 * Splits an `<editor-context>…</editor-context>` block from the text after it: the block of a
 * user message's `context`, or the preamble older servers wrote into the text itself.
 */
export function splitEditorContext(text: string): { context: string | null; text: string } {
    if (!text.startsWith("<editor-context>")) return { context: null, text };
    const end = text.indexOf(CONTEXT_END);
    if (end < 0) return { context: null, text };
    const context = text.slice("<editor-context>".length, end).trim();
    return { context, text: text.slice(end + CONTEXT_END.length).replace(/^\s+/, "") };
}

/**
 * Applies one `tandem/event` notification. Returns the changes (empty for an ignored event).
 *
 * Sequence numbers follow the spec: `seq <= last` is stale and ignored; `seq > last + 1` is a
 * gap, reported as a `gap` change (the host then asks `tandem/state`) before the event is
 * applied; the streaming message is marked incomplete until its `message_end`.
 */
export function reduce(model: ChatModel, params: EventParams): Change[] {
    if (!params || typeof params.session !== "string" || typeof params.seq !== "number" || !params.event) return [];
    const view = getSession(model, params.session);
    const changes: Change[] = [];
    if (params.seq <= view.lastSeq) {
        view.stale++;
        return changes;
    }
    if (params.seq > view.lastSeq + 1) {
        const missed = params.seq - view.lastSeq - 1;
        view.missed += missed;
        changes.push({ type: "gap", session: view.id, missed });
        if (view.current && !view.current.incomplete) {
            view.current.incomplete = true;
            changes.push({ type: "message-changed", session: view.id, item: view.current });
        }
    }
    view.lastSeq = params.seq;
    applyEvent(model, view, params.event, changes);
    return changes;
}

function applyEvent(model: ChatModel, view: SessionView, event: TandemEvent, changes: Change[]): void {
    const s = view.id;
    const e = event as Record<string, any>;
    switch (event.type) {
        case "agent_start":
            if (!view.running) {
                // A new run (a retry's agent_start comes while the run is still on).
                view.running = true;
                view.failure = null;
                changes.push({ type: "status-changed", session: s });
            }
            return;
        case "agent_end":
        case "turn_start":
        case "turn_end":
            return;
        case "message_start": {
            finishCurrent(view, changes);
            if (e.role === "toolResult") return; // shown on its tool card
            const item = newMessage(model, view, e.role, num(e.index, -1), changes);
            item.streaming = true;
            view.current = item;
            if (e.role === "user" && typeof e.context === "string" && e.context.length > 0) {
                // The editor context the prompt was sent with (beside its text).
                item.context = splitEditorContext(e.context).context ?? e.context.trim();
            }
            if (typeof e.text === "string" && e.text.length > 0) {
                // Older servers wrote the context into the text itself.
                const split = e.role === "user" ? splitEditorContext(e.text) : { context: null, text: e.text };
                if (split.context !== null) item.context = split.context;
                const block: TextBlock = { kind: "text", contentIndex: 0, text: split.text, done: true };
                item.blocks.push(block);
                changes.push({ type: "block-added", session: s, item, block });
            }
            return;
        }
        case "text_delta":
        case "thinking_delta": {
            if (typeof e.delta !== "string") return;
            const item = currentOrNew(model, view, changes);
            const kind = event.type === "text_delta" ? "text" : "thinking";
            const index = num(e.contentIndex, 0);
            const last = item.blocks[item.blocks.length - 1];
            if (last && last.kind === kind && last.contentIndex === index && !last.done) {
                last.text += e.delta;
                changes.push({ type: "text-appended", session: s, item, block: last, delta: e.delta });
                return;
            }
            endOpenBlocks(view, item, changes);
            const block: TextBlock = { kind, contentIndex: index, text: e.delta, done: false };
            item.blocks.push(block);
            changes.push({ type: "block-added", session: s, item, block });
            return;
        }
        case "toolcall_start": {
            const item = currentOrNew(model, view, changes);
            endOpenBlocks(view, item, changes);
            const card = toolCard(view, String(e.toolCallId), String(e.name ?? "tool"));
            card.status = "writing";
            if (!messageHasCard(item, card)) {
                const block: ToolBlock = { kind: "tool", card };
                item.blocks.push(block);
                changes.push({ type: "block-added", session: s, item, block });
            } else {
                changes.push({ type: "tool-changed", session: s, card });
            }
            return;
        }
        case "toolcall_delta": {
            const card = view.tools.get(String(e.toolCallId));
            if (!card || typeof e.delta !== "string") return;
            card.argsLength += e.delta.length;
            changes.push({ type: "tool-changed", session: s, card });
            return;
        }
        case "toolcall_end": {
            const card = view.tools.get(String(e.toolCallId));
            if (!card) return;
            card.arguments = e.arguments;
            if (card.status === "writing") card.status = "pending";
            changes.push({ type: "tool-changed", session: s, card });
            return;
        }
        case "message_end": {
            const item = applyMessageEnd(model, view, num(e.index, -1), e.message as WireMessage, changes);
            // A failed model call: its error shows under the message until a retry takes it over.
            if (item && item.stopReason === "error" && item.errorMessage) view.failure = item;
            return;
        }
        case "tool_start": {
            const card = attachedCard(model, view, String(e.toolCallId), String(e.name ?? "tool"), changes);
            card.status = "running";
            card.title = typeof e.title === "string" ? e.title : card.title;
            card.kind = typeof e.kind === "string" ? e.kind : card.kind;
            card.locations = Array.isArray(e.locations) ? e.locations : card.locations;
            changes.push({ type: "tool-changed", session: s, card });
            return;
        }
        case "tool_update": {
            const card = view.tools.get(String(e.toolCallId));
            if (!card || typeof e.text !== "string") return;
            card.output = e.text;
            changes.push({ type: "tool-changed", session: s, card });
            return;
        }
        case "tool_end": {
            const card = attachedCard(model, view, String(e.toolCallId), String(e.name ?? "tool"), changes);
            card.status = e.isError ? "error" : "done";
            card.output = typeof e.text === "string" ? e.text : card.output;
            card.truncated = e.truncated === true;
            card.diff = typeof e.diff === "string" && e.diff.length > 0 ? e.diff : card.diff;
            card.applied = card.diff === null ? null : !e.isError;
            changes.push({ type: "tool-changed", session: s, card });
            return;
        }
        case "retry_start": {
            // The failure is being retried: a neutral line, not an error (yet).
            const error = typeof e.errorMessage === "string" ? e.errorMessage : "";
            retryFailedMessage(view, changes);
            const reason = failureReason(error);
            const text = `${reason}, retrying in ${formatDelay(num(e.delayMs, 0))}… (attempt ${num(e.attempt, 1)} of ${num(e.maxAttempts, 1)})`;
            if (view.retry) {
                Object.assign(view.retry, { reason, error });
                setNotice(view, view.retry.notice, "retry", text, false, error, changes);
            } else {
                const notice = addNotice(model, view, "retry", text, changes);
                notice.detail = error || null;
                view.retry = { notice, reason, error };
            }
            return;
        }
        case "retry_end": {
            const attempt = num(e.attempt, 1);
            const retry = view.retry;
            view.retry = null;
            if (e.success) {
                // A quiet note: the answer follows.
                const text = retry ? `${retry.reason}: retry ${attempt} succeeded.` : `Retry ${attempt} succeeded.`;
                if (retry) setNotice(view, retry.notice, "retry", text, true, retry.error || null, changes);
                else addNotice(model, view, "retry", text, changes).done = true;
                return;
            }
            // Retries exhausted: now it is an error, shown once, on the retry's line (the last
            // failed message's own error moves there too).
            const error = typeof e.finalError === "string" && e.finalError ? e.finalError : (retry?.error || "unknown error");
            const text = `Gave up after ${attempt} ${attempt === 1 ? "retry" : "retries"}: ${error}`;
            retryFailedMessage(view, changes);
            const notice = retry?.notice ?? addNotice(model, view, "error", text, changes);
            setNotice(view, notice, "error", text, true, null, changes);
            view.failure = notice;
            return;
        }
        case "compaction_start": {
            const reason = typeof e.reason === "string" ? e.reason : "manual";
            // An overflow compaction recovers the call that overflowed: its error is not final.
            if (reason === "overflow") retryFailedMessage(view, changes);
            view.lastCompaction = addNotice(model, view, "compaction", `Compacting the conversation (${reason})…`, changes);
            return;
        }
        case "compaction_end": {
            let text: string;
            if (e.aborted) text = "Compaction aborted.";
            else if (e.errorMessage) text = `Compaction failed: ${e.errorMessage}`;
            else {
                const before = typeof e.tokensBefore === "number" ? ` (${e.tokensBefore} tokens before)` : "";
                text = `Compacted the conversation${before}.${e.willRetry ? " Continuing…" : ""}`;
            }
            const notice = view.lastCompaction ?? addNotice(model, view, "compaction", "", changes);
            notice.text = text;
            notice.done = true;
            view.lastCompaction = null;
            changes.push({ type: "notice-changed", session: s, item: notice });
            return;
        }
        case "queue_update":
            view.queue = {
                steering: Array.isArray(e.steering) ? e.steering.map(String) : [],
                followUp: Array.isArray(e.followUp) ? e.followUp.map(String) : [],
            };
            changes.push({ type: "status-changed", session: s });
            return;
        case "error": {
            finishCurrent(view, changes);
            const message = typeof e.message === "string" && e.message ? e.message : "The run failed.";
            const shown = view.failure;
            if (shown?.kind === "message") {
                // The failed message already shows the error: the server's words replace its own.
                if (shown.errorMessage !== message) {
                    shown.errorMessage = message;
                    changes.push({ type: "message-changed", session: s, item: shown });
                }
            } else if (shown?.kind === "notice") {
                if (!shown.text.endsWith(message)) setNotice(view, shown, "error", message, true, null, changes);
            } else {
                const notice = addNotice(model, view, "error", message, changes);
                notice.done = true;
                view.failure = notice;
            }
            return;
        }
        case "settled":
            finishCurrent(view, changes);
            if (view.retry) {
                // The run ended during a retry's wait (an abort): the retry never ran.
                const retry = view.retry;
                view.retry = null;
                setNotice(view, retry.notice, "retry", `${retry.reason}: not retried, the run ended.`, true, retry.error || null, changes);
            }
            view.failure = null;
            for (const card of view.tools.values()) {
                if (card.status === "writing" || card.status === "pending" || card.status === "running") {
                    card.status = "interrupted";
                    changes.push({ type: "tool-changed", session: s, card });
                }
            }
            view.running = false;
            changes.push({ type: "status-changed", session: s });
            return;
        default:
            // An event type this client does not know: the spec says to ignore it.
            return;
    }
}

/** Applies a `tandem/state` result: running, queue, model and thinking level. */
export function applyState(model: ChatModel, state: SessionState): Change[] {
    const view = getSession(model, state.session);
    view.running = !!state.running;
    if (state.queued) view.queue = { steering: [...state.queued.steering], followUp: [...state.queued.followUp] };
    view.model = state.model ? `${state.model.provider}/${state.model.id}` : null;
    view.thinkingLevel = state.thinkingLevel ?? null;
    return [{ type: "status-changed", session: view.id }];
}

/**
 * Shows a stored session's earlier messages (read from its file when it is opened). Tool calls
 * get their cards, completed by the tool results that follow them.
 */
export function applyHistory(model: ChatModel, session: string, messages: WireMessage[], omitted = 0): Change[] {
    const view = getSession(model, session);
    const changes: Change[] = [];
    if (omitted > 0) addNotice(model, view, "info", `${omitted} earlier messages are not shown.`, changes).done = true;
    for (const message of messages) {
        if (!message || typeof message !== "object") continue;
        applyMessageEnd(model, view, -1, message, changes);
    }
    for (const card of view.tools.values()) if (card.status === "pending") card.status = "interrupted";
    return changes;
}

/** Adds a line of the host's own (a failed request) to a session's timeline. */
export function addHostNotice(model: ChatModel, session: string, level: NoticeLevel, text: string): Change[] {
    const changes: Change[] = [];
    addNotice(model, getSession(model, session), level, text, changes).done = true;
    return changes;
}

/** The whole text of a message's text blocks (what the user reads), for tests and copying. */
export function messageText(item: MessageItem): string {
    return item.blocks
        .filter((b): b is TextBlock => b.kind === "text")
        .map((b) => b.text)
        .join("");
}

const STATUS_LABELS: Record<ToolStatus, string> = {
    writing: "writing…",
    pending: "pending",
    running: "running…",
    done: "done",
    error: "failed",
    interrupted: "interrupted",
};

/**
 * The word on a tool card's status. A change that did not reach the file (`tool_end.isError`
 * with a diff: the user or the editor said no, or never answered) reads "rejected", not
 * "failed": nothing went wrong, the file is as it was.
 */
export function toolStatusLabel(card: ToolCard): string {
    return card.applied === false ? "rejected" : STATUS_LABELS[card.status];
}

/** The label above a message: who speaks. User and assistant are labelled alike. */
export function roleLabel(role: string): string {
    switch (role) {
        case "user":
            return "You";
        case "assistant":
            return "Tandem";
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

/**
 * The part of a session id that tells sessions apart. Ids are UUIDv7s, whose first digits are a
 * timestamp shared by sessions made close together, so a UUID is shown by its last 8 (random)
 * hex digits; other (opaque) ids are shown whole.
 */
export function shortSessionId(id: string): string {
    const hex = id.replace(/-/g, "");
    return /^[0-9a-f]{32}$/i.test(hex) ? hex.slice(-8).toLowerCase() : id;
}

/**
 * The first line of a session's first user message, what the session is about: cut at 60
 * characters, as the host cuts the prompt that names a new session.
 */
export function firstPrompt(view: SessionView | undefined): string | null {
    for (const item of view?.items ?? []) {
        if (item.kind !== "message" || item.role !== "user") continue;
        const line = messageText(item).trim().split("\n", 1)[0]!.trim();
        if (line) return line.length > 60 ? `${line.slice(0, 57)}…` : line;
    }
    return null;
}

/** A title the host gave a session, and whether the session had a prompt yet when it did. */
export interface SessionTitle {
    text: string;
    /**
     * Given before the session had a prompt ("New session", "Fork"): a placeholder that the
     * session's first prompt, once there, replaces. A stored session's name is not one (the
     * webview clears this when the session's history arrives).
     */
    beforePrompt: boolean;
}

/** The title the host gives a session, judged against what the session shows now. */
export function sessionTitle(text: string, view: SessionView | undefined): SessionTitle {
    return { text, beforePrompt: firstPrompt(view) === null };
}

/**
 * The chat header's label for a session: its name, else its first prompt, else its id's random
 * tail. `tag` is that tail when the label is a name or prompt: two sessions with the same first
 * prompt still read differently. (A UUIDv7's first digits are a timestamp, the same for sessions
 * made together, so the tail, never the head, tells them apart.)
 */
export function sessionLabel(
    id: string,
    title: SessionTitle | null | undefined,
    view: SessionView | undefined,
): { text: string; tag: string | null } {
    const given = title?.text.trim() || null;
    const text = (title && !title.beforePrompt ? given : null) || firstPrompt(view) || given;
    const short = shortSessionId(id);
    return text ? { text, tag: short === id ? null : short } : { text: `Session ${short}`, tag: null };
}

function num(value: unknown, fallback: number): number {
    return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

function newMessage(model: ChatModel, view: SessionView, role: unknown, index: number, changes: Change[]): MessageItem {
    const item: MessageItem = {
        kind: "message",
        key: model.nextKey++,
        index,
        role: typeof role === "string" ? role : "custom",
        blocks: [],
        context: null,
        streaming: false,
        incomplete: false,
        stopReason: null,
        errorMessage: null,
        errorRetried: false,
    };
    view.items.push(item);
    changes.push({ type: "item-added", session: view.id, item });
    return item;
}

function addNotice(model: ChatModel, view: SessionView, level: NoticeLevel, text: string, changes: Change[]): NoticeItem {
    const item: NoticeItem = { kind: "notice", key: model.nextKey++, level, text, done: false, detail: null };
    view.items.push(item);
    changes.push({ type: "item-added", session: view.id, item });
    return item;
}

/** Updates a notice in place (a retry's attempts, its end). */
function setNotice(
    view: SessionView,
    notice: NoticeItem,
    level: NoticeLevel,
    text: string,
    done: boolean,
    detail: string | null,
    changes: Change[],
): void {
    Object.assign(notice, { level, text, done, detail });
    changes.push({ type: "notice-changed", session: view.id, item: notice });
}

/** The failed message whose error a retry (or an overflow compaction) now stands for. */
function retryFailedMessage(view: SessionView, changes: Change[]): void {
    const failed = view.failure;
    view.failure = null;
    if (failed?.kind !== "message" || failed.errorRetried) return;
    failed.errorRetried = true;
    changes.push({ type: "message-changed", session: view.id, item: failed });
}

/**
 * A short name for a transient failure, for the retry line: the HTTP statuses providers retry
 * get a plain name ("Rate limited (429)"); anything else is the error's first line. The full
 * error stays in the line's tooltip.
 */
export function failureReason(error: string): string {
    const status = /(?:^|[^\w.])(429|500|502|503|504|529)(?![\w.])/.exec(error)?.[1];
    if (status === "429") return "Rate limited (429)";
    if (status === "529") return "Overloaded (529)";
    if (!status && /rate.?limit/i.test(error)) return "Rate limited";
    if (!status && /overloaded/i.test(error)) return "Overloaded";
    if (status === "503") return "Service unavailable (503)";
    if (status) return `Server error (${status})`;
    const line = error.split("\n", 1)[0]!.trim();
    if (!line) return "The model call failed";
    return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/** "50 ms", "2 s", "2.5 s". */
export function formatDelay(ms: number): string {
    if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
    return `${Math.round(ms / 100) / 10} s`;
}

/** The streaming message, or a new assistant message when deltas arrive without one (a gap). */
function currentOrNew(model: ChatModel, view: SessionView, changes: Change[]): MessageItem {
    if (view.current) return view.current;
    const item = newMessage(model, view, "assistant", -1, changes);
    item.streaming = true;
    item.incomplete = view.lastSeq > 1 && view.missed > 0;
    view.current = item;
    return item;
}

function toolCard(view: SessionView, id: string, name: string): ToolCard {
    let card = view.tools.get(id);
    if (!card) {
        card = {
            id,
            name,
            status: "pending",
            title: null,
            kind: null,
            locations: [],
            argsLength: 0,
            arguments: undefined,
            output: "",
            truncated: false,
            diff: null,
            applied: null,
        };
        view.tools.set(id, card);
    }
    return card;
}

/** A card for a tool event; when the call was never seen (a gap), it gets a message of its own. */
function attachedCard(model: ChatModel, view: SessionView, id: string, name: string, changes: Change[]): ToolCard {
    const known = view.tools.get(id);
    if (known) return known;
    const card = toolCard(view, id, name);
    const item = newMessage(model, view, "assistant", -1, changes);
    item.incomplete = view.missed > 0;
    const block: ToolBlock = { kind: "tool", card };
    item.blocks.push(block);
    changes.push({ type: "block-added", session: view.id, item, block });
    return card;
}

function messageHasCard(item: MessageItem, card: ToolCard): boolean {
    return item.blocks.some((b) => b.kind === "tool" && b.card === card);
}

/** Marks the message's streaming text blocks final (a new block started after them). */
function endOpenBlocks(view: SessionView, item: MessageItem, changes: Change[]): void {
    for (const block of item.blocks) {
        if (block.kind !== "tool" && !block.done) {
            block.done = true;
            changes.push({ type: "block-done", session: view.id, item, block });
        }
    }
}

/** Ends the streaming message (a new message, `settled`, `error`): its text is final. */
function finishCurrent(view: SessionView, changes: Change[]): void {
    const item = view.current;
    if (!item) return;
    endOpenBlocks(view, item, changes);
    item.streaming = false;
    view.current = null;
    changes.push({ type: "message-changed", session: view.id, item });
}

/**
 * `message_end` carries the complete message: it is the truth. Blocks built from deltas are
 * checked against it and replaced where they differ (deltas lost in a gap), missing blocks and
 * tool calls are added, and the stop reason is recorded.
 */
function applyMessageEnd(
    model: ChatModel,
    view: SessionView,
    index: number,
    message: WireMessage,
    changes: Change[],
): MessageItem | null {
    if (!message || typeof message !== "object") return null;
    const s = view.id;
    if (message.role === "toolResult") {
        finishCurrent(view, changes);
        // The tool card already shows the result; fill it only if its events were missed.
        const card = typeof message.toolCallId === "string" ? view.tools.get(message.toolCallId) : undefined;
        if (card && card.status !== "done" && card.status !== "error") {
            card.status = message.isError ? "error" : "done";
            card.output = contentText(message.content);
            changes.push({ type: "tool-changed", session: s, card });
        }
        return null;
    }
    let item = view.current;
    if (!item || (item.index >= 0 && index >= 0 && item.index !== index)) {
        finishCurrent(view, changes);
        item = newMessage(model, view, message.role, index, changes);
    }
    if (item.index < 0) item.index = index;
    item.role = typeof message.role === "string" ? message.role : item.role;

    const content: ContentBlock[] =
        typeof message.content === "string" ? [{ type: "text", text: message.content }] : Array.isArray(message.content) ? message.content : [];
    const isUser = item.role === "user";
    let textIndex = 0;
    content.forEach((part, contentIndex) => {
        if (part.type === "text" || part.type === "thinking") {
            const kind = part.type;
            let text = (kind === "text" ? part.text : part.thinking) ?? "";
            if (isUser && textIndex++ === 0) {
                const split = splitEditorContext(text);
                if (split.context !== null) item!.context = split.context;
                text = split.text;
            }
            // User messages carry their text in message_start (contentIndex 0); deltas carry theirs.
            let block = item!.blocks.find(
                (b): b is TextBlock => b.kind === kind && (b.contentIndex === contentIndex || (isUser && b.contentIndex === 0)),
            );
            if (!block) {
                block = { kind, contentIndex, text, done: true };
                insertBlock(item!, block);
                changes.push({ type: "block-added", session: s, item: item!, block });
            } else if (block.text !== text || !block.done) {
                block.text = text;
                block.done = true;
                changes.push({ type: "block-done", session: s, item: item!, block });
            }
        } else if (part.type === "toolCall" && typeof part.id === "string") {
            const card = toolCard(view, part.id, part.name ?? "tool");
            card.arguments = part.arguments;
            if (card.status === "writing") card.status = "pending";
            if (!messageHasCard(item!, card)) {
                const block: ToolBlock = { kind: "tool", card };
                item!.blocks.push(block);
                changes.push({ type: "block-added", session: s, item: item!, block });
            } else {
                changes.push({ type: "tool-changed", session: s, card });
            }
        }
    });
    endOpenBlocks(view, item, changes);
    item.stopReason = typeof message.stopReason === "string" ? message.stopReason : null;
    item.errorMessage = typeof message.errorMessage === "string" && message.errorMessage ? message.errorMessage : null;
    item.incomplete = false;
    item.streaming = false;
    if (view.current === item) view.current = null;
    changes.push({ type: "message-changed", session: s, item });
    return item;
}

/** Inserts a text block found only in `message_end` before the tool calls that follow it. */
function insertBlock(item: MessageItem, block: TextBlock): void {
    const at = item.blocks.findIndex((b) => b.kind !== "tool" && b.contentIndex > block.contentIndex);
    if (at < 0) item.blocks.push(block);
    else item.blocks.splice(at, 0, block);
}

function contentText(content: WireMessage["content"]): string {
    if (typeof content === "string") return content;
    if (!Array.isArray(content)) return "";
    return content
        .filter((c) => c.type === "text")
        .map((c) => c.text ?? "")
        .join("");
}
