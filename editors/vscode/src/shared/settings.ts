// The extension's `tandem.*` settings → the server's configuration object (protocol-ext
// "Configuration"). Empty values mean "absent": the server then uses pi's own defaults, so
// they are left out rather than sent as "" (which the server would report as a bad value).

export const SERVER_KEYS = ["model", "thinkingLevel", "editMode", "bashPermission", "agentDir", "editTimeoutMs", "saveBeforeCommands", "tools"] as const;

export type ServerKey = (typeof SERVER_KEYS)[number];

export interface ServerSettings {
    model?: string;
    thinkingLevel?: string;
    editMode?: string;
    bashPermission?: string;
    agentDir?: string;
    editTimeoutMs?: number;
    saveBeforeCommands?: boolean;
    tools?: string[];
}

/** The defaults the extension itself declares (package.json): edits are confirmed, bash asks. */
export const DEFAULTS = { editMode: "confirm", bashPermission: "ask" } as const;

/**
 * Builds the server settings from a getter over the `tandem` section (`get("model")` …).
 * `editMode` and `bashPermission` are always sent, so the safe defaults hold whatever the
 * server's own defaults become.
 */
export function toServerSettings(get: (key: ServerKey) => unknown): ServerSettings {
    const out: ServerSettings = {};
    const text = (key: ServerKey): string | undefined => {
        const value = get(key);
        return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
    };
    const model = text("model");
    if (model) out.model = model;
    const thinking = text("thinkingLevel");
    if (thinking) out.thinkingLevel = thinking;
    out.editMode = text("editMode") ?? DEFAULTS.editMode;
    out.bashPermission = text("bashPermission") ?? DEFAULTS.bashPermission;
    const agentDir = text("agentDir");
    if (agentDir) out.agentDir = agentDir;
    const timeout = get("editTimeoutMs");
    if (typeof timeout === "number" && Number.isInteger(timeout) && timeout > 0) out.editTimeoutMs = timeout;
    const save = get("saveBeforeCommands");
    if (typeof save === "boolean") out.saveBeforeCommands = save;
    const tools = get("tools");
    if (Array.isArray(tools) && tools.every((t) => typeof t === "string")) out.tools = tools;
    return out;
}
