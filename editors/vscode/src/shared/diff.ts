// Splits a unified diff (a tool_end `diff`) into classified lines for display.

export type DiffLineKind = "add" | "del" | "hunk" | "file" | "meta" | "context";

export interface DiffLine {
    kind: DiffLineKind;
    text: string;
}

export function parseUnifiedDiff(diff: string): DiffLine[] {
    const lines = diff.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    return lines.map((text) => ({ kind: classify(text), text }));
}

function classify(line: string): DiffLineKind {
    if (line.startsWith("+++ ") || line.startsWith("--- ")) return "file";
    if (line.startsWith("@@")) return "hunk";
    if (line.startsWith("+")) return "add";
    if (line.startsWith("-")) return "del";
    if (line.startsWith("\\")) return "meta";
    return "context";
}

/** Counts added and removed lines, for a card's summary ("+1 −1"). */
export function diffStats(diff: string): { added: number; removed: number } {
    let added = 0;
    let removed = 0;
    for (const line of parseUnifiedDiff(diff)) {
        if (line.kind === "add") added++;
        else if (line.kind === "del") removed++;
    }
    return { added, removed };
}
