// The parts of Tandem's LSP extension (protocol-ext/README.md) the extension uses: the
// `tandem/event` notification and the results of the `tandem/*` requests. Only the fields the
// chat view reads are typed; the server may send more, and unknown fields are ignored.

export const PROTOCOL_VERSION = 1;

export const Methods = {
    event: "tandem/event",
    prompt: "tandem/prompt",
    abort: "tandem/abort",
    sessionsNew: "tandem/sessions/new",
    sessionsList: "tandem/sessions/list",
    sessionsOpen: "tandem/sessions/open",
    sessionsFork: "tandem/sessions/fork",
    state: "tandem/state",
    modelsList: "tandem/models/list",
    modelsSet: "tandem/models/set",
    thinkingSet: "tandem/thinking/set",
    compact: "tandem/compact",
    /** Server → client: save these documents before a command runs. */
    saveDocuments: "tandem/saveDocuments",
    /** Server → client: the diagnostics VS Code shows (from every language server but Tandem). */
    diagnostics: "tandem/diagnostics",
    /** Server → client: a standard LSP request answered by VS Code's language features. */
    languageRequest: "tandem/languageRequest",
    undo: "tandem/undo",
} as const;

/** `tandem/saveDocuments` params (server → client). */
export interface SaveDocumentsParams {
    uris: string[];
    reason?: string;
}

/** `tandem/saveDocuments` result. */
export interface SaveDocumentsResult {
    saved: string[];
    failed: { uri: string; message: string }[];
}

/** LSP's `Position` and `Range` (columns in the negotiated encoding: UTF-16 for this client). */
export interface Position {
    line: number;
    character: number;
}
export interface Range {
    start: Position;
    end: Position;
}

/** The fields of an LSP `Diagnostic` the server reads (others are ignored). */
export interface Diagnostic {
    range: Range;
    severity?: number;
    code?: number | string;
    source?: string;
    message: string;
}

/** `tandem/diagnostics` params (server → client; protocol-ext/README.md, "tandem/diagnostics"). */
export interface DiagnosticsParams {
    /** Absent: every document with diagnostics. */
    uris?: string[];
    /** Answer once each of these documents' generation is higher (or it is not analyzed). */
    after?: Record<string, number>;
    waitMs?: number;
    quietMs?: number;
}

/** One document in a `tandem/diagnostics` answer. */
export interface DocumentDiagnostics {
    uri: string;
    generation: number;
    /** false: no language server looks at it; absent: cannot tell. */
    analyzed?: boolean;
    diagnostics: Diagnostic[];
}

/** `tandem/diagnostics` result. */
export interface DiagnosticsResult {
    files: DocumentDiagnostics[];
    settled: boolean;
}

/** `tandem/languageRequest` params: one standard LSP request. */
export interface LanguageRequestParams {
    method: string;
    params: unknown;
}

/** `tandem/languageRequest` result: how many servers answered, and the merged LSP result. */
export interface LanguageRequestResult {
    servers: number;
    result: unknown;
}

/** `tandem/undo`'s answer (protocol-ext/README.md, "tandem/undo"). */
export interface UndoResult {
    status: "applied" | "rejected" | "nothingToApply" | "nothingToUndo";
    turns: { checkpoint: string; turn?: string; prompt: string }[];
    changed: string[];
    deleted: string[];
    /** Hunks left as they are; `line` is 0-based. */
    refused: { uri: string; line: number; reason: string }[];
    message: string;
}

/** The error codes of the spec's "Error codes" section. */
export const ErrorCodes = {
    unknownSession: -32001,
    busy: -32007,
    noModel: -32003,
    unknownModel: -32004,
    sessionFile: -32005,
    nothingToCompact: -32006,
} as const;

export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"] as const;
export type ThinkingLevel = (typeof THINKING_LEVELS)[number];

/** `params` of a `tandem/event` notification. */
export interface EventParams {
    session: string;
    seq: number;
    event: TandemEvent;
}

export interface ContentBlock {
    type: string;
    text?: string;
    thinking?: string;
    id?: string;
    name?: string;
    arguments?: unknown;
}

/** pi's message JSON, as sent once in `message_end`. */
export interface WireMessage {
    role: string;
    content?: ContentBlock[] | string;
    stopReason?: string;
    errorMessage?: string;
    toolCallId?: string;
    toolName?: string;
    isError?: boolean;
    [key: string]: unknown;
}

export interface ToolLocation {
    uri: string;
    line?: number | null;
}

/** One event, tagged by `type`. Unknown types are possible and must be ignored. */
export type TandemEvent =
    | { type: "agent_start" }
    | { type: "agent_end" }
    | { type: "turn_start" }
    | { type: "turn_end" }
    | { type: "message_start"; role: string; index: number; text?: string | null; context?: string | null }
    | { type: "text_delta"; contentIndex: number; delta: string }
    | { type: "thinking_delta"; contentIndex: number; delta: string }
    | { type: "message_end"; index: number; message: WireMessage }
    | { type: "toolcall_start"; toolCallId: string; name: string }
    | { type: "toolcall_delta"; toolCallId: string; delta: string }
    | { type: "toolcall_end"; toolCallId: string; arguments: unknown }
    | { type: "tool_start"; toolCallId: string; name: string; title?: string; kind?: string; locations?: ToolLocation[] }
    | { type: "tool_update"; toolCallId: string; text: string }
    | {
          type: "tool_end";
          toolCallId: string;
          isError: boolean;
          text: string;
          truncated?: boolean | null;
          diff?: string | null;
          details?: unknown;
      }
    | { type: "retry_start"; attempt: number; maxAttempts: number; delayMs: number; errorMessage: string }
    | { type: "retry_end"; success: boolean; attempt: number; finalError?: string | null }
    | { type: "compaction_start"; reason: string }
    | {
          type: "compaction_end";
          aborted: boolean;
          willRetry: boolean;
          summary?: string | null;
          tokensBefore?: number | null;
          errorMessage?: string | null;
      }
    | { type: "queue_update"; steering: string[]; followUp: string[] }
    | { type: "settled" }
    | { type: "error"; message: string }
    | { type: string; [key: string]: unknown };

export interface ModelInfo {
    provider: string;
    id: string;
    name?: string;
    reasoning?: boolean;
    contextWindow?: number;
    available?: boolean;
    /** The environment variables the server reads the provider's key from (absent: none). */
    keyEnv?: string[];
}

/** Result of `tandem/state`. */
export interface SessionState {
    session: string;
    model: ModelInfo | null;
    thinkingLevel?: string;
    running: boolean;
    queued?: { steering: string[]; followUp: string[] };
    messageCount?: number;
    sessionFile?: string | null;
    tokens?: { input: number; output: number; contextTokens?: number; cost?: number } | null;
}

/** One entry of `tandem/sessions/list`. */
export interface SessionInfo {
    id: string;
    path: string;
    cwd: string;
    name?: string | null;
    created: string;
    modified: string;
    messageCount: number;
    firstMessage: string;
    parentSessionPath?: string | null;
}

export interface PromptResult {
    session: string;
    queued: boolean;
}
