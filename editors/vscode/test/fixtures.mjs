// Loads the recorded `tandem/event` streams of fixtures/editor-events (JSONL of notification params).
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// TANDEM_EVENTS_DIR points the tests at other recordings (the Rust test records fresh ones).
export const fixturesDir =
    process.env.TANDEM_EVENTS_DIR ?? join(dirname(fileURLToPath(import.meta.url)), "../../../fixtures/editor-events");

export function loadStream(name) {
    return readFileSync(join(fixturesDir, `${name}.jsonl`), "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line));
}

export function streamNames() {
    return readdirSync(fixturesDir)
        .filter((f) => f.endsWith(".jsonl"))
        .map((f) => f.slice(0, -".jsonl".length));
}

/** A synthetic answer streamed in `count` text deltas (the benchmark's and the tests' shape). */
export function syntheticStream(text, count, session = "bench") {
    const events = [];
    let seq = 0;
    const push = (event) => events.push({ session, seq: ++seq, event });
    push({ type: "agent_start" });
    push({ type: "turn_start" });
    push({ type: "message_start", role: "user", index: 0, text: "Write a long answer." });
    push({ type: "message_end", index: 0, message: { role: "user", content: [{ type: "text", text: "Write a long answer." }] } });
    push({ type: "message_start", role: "assistant", index: 1 });
    const size = Math.ceil(text.length / count);
    for (let i = 0; i < count; i++) push({ type: "text_delta", contentIndex: 0, delta: text.slice(i * size, (i + 1) * size) });
    push({ type: "message_end", index: 1, message: { role: "assistant", content: [{ type: "text", text }], stopReason: "stop" } });
    push({ type: "turn_end" });
    push({ type: "agent_end" });
    push({ type: "settled" });
    return events;
}

/** About `bytes` of markdown: paragraphs, lists and code, as a model writes. */
export function longMarkdown(bytes) {
    const parts = [];
    let size = 0;
    for (let i = 1; size < bytes; i++) {
        const part =
            `## Section ${i}\n\nThe parser reads token **${i}** and checks it against the *expected* set; ` +
            "on a mismatch it records a diagnostic and skips to the next `;`.\n\n" +
            `- keep the span of item ${i}\n- resume at the statement boundary\n\n` +
            (i % 5 === 0 ? "```rust\nfn recover(&mut self) {\n    while !self.at(T![;]) { self.bump(); }\n}\n```\n\n" : "");
        parts.push(part);
        size += part.length;
    }
    return parts.join("").slice(0, bytes);
}
