// Reads the messages of a stored session (pi's JSONL v3 session file) for display when the
// session is opened: the current branch, from the root to the last entry, messages only.

import type { WireMessage } from "./protocol";

export interface History {
    messages: WireMessage[];
    /** Messages left out at the start, to keep the view quick on very long sessions. */
    omitted: number;
}

interface Entry {
    type?: string;
    id?: string;
    parentId?: string | null;
    message?: WireMessage;
}

/** Parses a session file's text. Unreadable lines (a torn last line) are skipped. */
export function historyFromJsonl(text: string, limit = 500): History {
    const byId = new Map<string, Entry>();
    let leaf: Entry | undefined;
    for (const line of text.split("\n")) {
        if (line.trim() === "") continue;
        let entry: Entry;
        try {
            entry = JSON.parse(line) as Entry;
        } catch {
            continue;
        }
        if (!entry || typeof entry !== "object" || typeof entry.id !== "string") continue;
        byId.set(entry.id, entry);
        leaf = entry;
    }
    const branch: WireMessage[] = [];
    const seen = new Set<string>();
    for (let entry = leaf; entry && !seen.has(entry.id!); entry = entry.parentId ? byId.get(entry.parentId) : undefined) {
        seen.add(entry.id!);
        if (entry.type === "message" && entry.message && typeof entry.message.role === "string") branch.push(entry.message);
    }
    branch.reverse();
    const omitted = Math.max(0, branch.length - limit);
    return { messages: branch.slice(omitted), omitted };
}
