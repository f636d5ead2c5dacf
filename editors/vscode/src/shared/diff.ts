// Unified diffs (a tool_end `diff`) as the chat shows them, and the size of a review's change.

export type NumberedDiffKind = "add" | "del" | "context" | "hunk" | "meta" | "file";

/** One line of a unified diff with the file's line numbers (null where a side has none). */
export interface NumberedDiffLine {
    kind: NumberedDiffKind;
    /** The line as in the diff, its +/-/space prefix included. */
    text: string;
    oldLine: number | null;
    newLine: number | null;
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * Numbers a unified diff's lines from its hunk headers (`@@ -3,7 +3,7 @@`: old and new lines
 * from 3), so the chat shows the file's own line numbers. Inside a hunk a line is read by the
 * counts the header gives, so a removed line that itself starts with "-- " is not taken for a
 * file header.
 */
export function numberDiffLines(diff: string): NumberedDiffLine[] {
    const lines = diff.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    const out: NumberedDiffLine[] = [];
    let oldLine = 0;
    let newLine = 0;
    let oldLeft = 0;
    let newLeft = 0;
    for (const text of lines) {
        const hunk = HUNK.exec(text);
        if (hunk && oldLeft <= 0 && newLeft <= 0) {
            oldLine = Number(hunk[1]);
            newLine = Number(hunk[3]);
            oldLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
            newLeft = hunk[4] === undefined ? 1 : Number(hunk[4]);
            out.push({ kind: "hunk", text, oldLine: null, newLine: null });
        } else if (text.startsWith("\\")) {
            out.push({ kind: "meta", text, oldLine: null, newLine: null });
        } else if (oldLeft > 0 || newLeft > 0) {
            if (text.startsWith("-")) {
                out.push({ kind: "del", text, oldLine: oldLine++, newLine: null });
                oldLeft--;
            } else if (text.startsWith("+")) {
                out.push({ kind: "add", text, oldLine: null, newLine: newLine++ });
                newLeft--;
            } else {
                out.push({ kind: "context", text, oldLine: oldLine++, newLine: newLine++ });
                oldLeft--;
                newLeft--;
            }
        } else {
            out.push({ kind: text.startsWith("--- ") || text.startsWith("+++ ") ? "file" : "meta", text, oldLine: null, newLine: null });
        }
    }
    return out;
}

/**
 * Lines removed and added between two texts, counting what lies between their common first and
 * last lines (a review's "+1 −1"; not a minimal diff, but exact for one changed region).
 */
export function countLineChanges(before: string, after: string): { added: number; removed: number } {
    const a = before === "" ? [] : before.split("\n");
    const b = after === "" ? [] : after.split("\n");
    let start = 0;
    while (start < a.length && start < b.length && a[start] === b[start]) start++;
    let endA = a.length;
    let endB = b.length;
    while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
        endA--;
        endB--;
    }
    return { added: endB - start, removed: endA - start };
}
