// Messages between the extension host and the chat webview (postMessage in both directions).

import type { EventParams, SessionState, WireMessage } from "./protocol";

/** How a message typed in the chat is sent: a new prompt, or queued while a run is active. */
export type SendMode = "prompt" | "steer" | "followUp";

/** Host → webview. */
export type HostMessage =
    /** Events as the server sent them, in order (the host batches them). */
    | { type: "events"; events: EventParams[] }
    /** The result of `tandem/state` (after a sequence gap, or when a session is shown). */
    | { type: "state"; state: SessionState }
    /** A stored session's earlier messages, read from its file when it was opened. */
    | { type: "history"; session: string; messages: WireMessage[]; omitted: number }
    /** The session the view shows (`null`: none yet; the next prompt creates one). */
    | { type: "showSession"; session: string | null; title?: string }
    /** A line from the host itself: a failed request, a missing binary. */
    | { type: "notice"; session: string | null; level: "error" | "info"; text: string }
    /** Whether the language server is running. */
    | { type: "server"; status: "starting" | "running" | "stopped"; detail?: string };

/** Webview → host. */
export type ViewMessage =
    | { type: "ready" }
    | { type: "send"; text: string; mode: SendMode }
    | { type: "abort" }
    /** One of the extension's commands (sessions, model, thinking level, logs). */
    | { type: "command"; command: string }
    /** The view saw a sequence gap for this session and wants its state. */
    | { type: "needState"; session: string }
    | { type: "openLocation"; uri: string; line?: number | null }
    | { type: "openLink"; href: string };
