// The event → view-model reducer on the recorded streams of fixtures/editor-events.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { applyState, createModel, messageText, reduce, splitEditorContext } from "../../out/shared/reducer.mjs";
import { loadStream, streamNames, syntheticStream } from "../fixtures.mjs";

function run(events) {
    const model = createModel();
    const changes = [];
    for (const params of events) changes.push(...reduce(model, params));
    const [view] = model.sessions.values();
    return { model, view, changes };
}

const messages = (view, role) => view.items.filter((i) => i.kind === "message" && (!role || i.role === role));
const cards = (view) => [...view.tools.values()];

function finalTexts(events) {
    return events
        .filter((e) => e.event.type === "message_end" && e.event.message.role === "assistant")
        .map((e) => e.event.message.content.filter((c) => c.type === "text").map((c) => c.text).join(""));
}

describe("recorded streams", () => {
    it("has the streams the tests rely on", () => {
        for (const name of ["demo-edit", "tool-errors", "aborted", "retry", "long-answer"]) {
            assert.ok(streamNames().includes(name), `fixtures/editor-events/${name}.jsonl is missing`);
        }
    });

    for (const name of streamNames()) {
        it(`${name}: the deltas alone rebuild each message that message_end then confirms`, () => {
            const model = createModel();
            for (const params of loadStream(name)) {
                const event = params.event;
                if (event.type === "message_end" && event.message.role === "assistant") {
                    // Before the truth arrives, the blocks built from deltas must already match it.
                    const view = model.sessions.get(params.session);
                    const item = view.current;
                    assert.ok(item, `${name} seq ${params.seq}: no streaming message`);
                    const built = item.blocks.filter((b) => b.kind !== "tool").map((b) => [b.kind, b.text]);
                    const truth = event.message.content
                        .filter((c) => c.type === "text" || c.type === "thinking")
                        .map((c) => [c.type, c.type === "text" ? c.text : c.thinking]);
                    assert.deepEqual(built, truth, `${name} seq ${params.seq}`);
                }
                reduce(model, params);
            }
            const [view] = model.sessions.values();
            assert.equal(view.running, false, "settled ends the run");
            assert.equal(view.current, null);
            assert.equal(view.missed, 0);
            assert.equal(view.stale, 0);
        });
    }
});

describe("demo-edit: thinking, text, read, edit with a diff, bash", () => {
    const events = loadStream("demo-edit");
    const { view } = run(events);

    it("shows the prompt without the editor context, which is kept apart", () => {
        const [user] = messages(view, "user");
        assert.equal(messageText(user), "The greeting is wrong, please fix it.");
        assert.match(user.context, /File: src\/greet\.py/);
    });

    it("holds the complete text of every assistant message", () => {
        const texts = messages(view, "assistant").map(messageText);
        assert.deepEqual(texts, finalTexts(events));
        assert.equal(texts.at(-1), 'Fixed: `greet()` now returns "Hello, {name}!" and `./check.sh` passes.');
    });

    it("keeps the thinking block, finished", () => {
        const [first] = messages(view, "assistant");
        const thinking = first.blocks.find((b) => b.kind === "thinking");
        assert.equal(thinking.text, "The user says the greeting is wrong. I should look at the code that builds it.");
        assert.equal(thinking.done, true);
    });

    it("has one tool card per call, finished, with titles and the edit's diff", () => {
        const [read, edit, bash] = cards(view);
        assert.deepEqual(
            cards(view).map((c) => [c.name, c.status, c.title]),
            [
                ["read", "done", "Read src/greet.py"],
                ["edit", "done", "Edit src/greet.py"],
                ["bash", "done", "Run `./check.sh`"],
            ],
        );
        assert.match(read.output, /def greet/);
        // The diff is the file's, with its line numbers and indentation.
        assert.match(edit.diff, /^@@ -3,7 \+3,7 @@$/m);
        assert.match(edit.diff, /^-    return f"Helo, \{name\}!"$/m);
        assert.match(edit.diff, /^\+    return f"Hello, \{name\}!"$/m);
        assert.deepEqual(edit.arguments.edits[0], { oldText: 'return f"Helo, {name}!"', newText: 'return f"Hello, {name}!"' });
        assert.equal(bash.output, "ok: Hello, world!\n");
        assert.equal(edit.locations[0].uri, "file:///home/user/project/src/greet.py");
    });

    it("places each card in the message that made the call", () => {
        const withTools = messages(view, "assistant").filter((m) => m.blocks.some((b) => b.kind === "tool"));
        assert.deepEqual(
            withTools.map((m) => m.blocks.map((b) => (b.kind === "tool" ? `tool:${b.card.name}` : b.kind))),
            [["thinking", "text", "tool:read"], ["text", "tool:edit"], ["text", "tool:bash"]],
        );
    });

    it("is busy from agent_start to settled, and only then", () => {
        const model = createModel();
        const busy = [];
        for (const params of events) {
            reduce(model, params);
            busy.push([params.event.type, model.sessions.get(params.session).running]);
        }
        assert.deepEqual(busy[0], ["agent_start", true]);
        assert.ok(busy.slice(0, -1).every(([, running]) => running), "running until settled");
        assert.deepEqual(busy.at(-1), ["settled", false]);
    });
});

describe("tool-errors: a rejected edit, a failing command, a model error", () => {
    const { view } = run(loadStream("tool-errors"));

    it("marks both tools failed, keeping the rejected edit's diff", () => {
        const [edit, bash] = cards(view);
        assert.equal(edit.status, "error");
        assert.match(edit.output, /rejected/i);
        assert.match(edit.diff, /^\+def say_hello\(/m);
        assert.equal(bash.status, "error");
        assert.match(bash.output, /Command exited with code 1/);
    });

    it("shows the model error on its message and as a final error notice", () => {
        const last = messages(view, "assistant").at(-1);
        assert.equal(last.stopReason, "error");
        assert.match(last.errorMessage, /400 Bad Request/);
        const notice = view.items.at(-1);
        assert.equal(notice.kind, "notice");
        assert.equal(notice.level, "error");
        assert.match(notice.text, /400 Bad Request/);
        assert.equal(view.running, false);
    });
});

describe("aborted", () => {
    const events = loadStream("aborted");
    const { view } = run(events);

    it("ends the message as aborted with the text message_end holds", () => {
        const last = messages(view, "assistant").at(-1);
        assert.equal(last.stopReason, "aborted");
        assert.equal(messageText(last), finalTexts(events).at(-1));
        assert.ok(last.blocks.every((b) => b.kind === "tool" || b.done));
        assert.equal(view.running, false);
    });
});

describe("retry", () => {
    const { view } = run(loadStream("retry"));

    it("shows the retry, updated when it succeeds, then the answer", () => {
        const notices = view.items.filter((i) => i.kind === "notice");
        assert.equal(notices.length, 1);
        assert.equal(notices[0].level, "retry");
        assert.equal(notices[0].done, true);
        assert.match(notices[0].text, /succeeded/);
        const [failed, answer] = messages(view, "assistant");
        assert.equal(failed.stopReason, "error");
        assert.match(failed.errorMessage, /429/);
        assert.equal(messageText(answer), "Here is the answer after the retry.");
    });
});

describe("long-answer", () => {
    const events = loadStream("long-answer");
    const { view, changes } = run(events);

    it("appends every delta and renders the block once, at the end", () => {
        const deltas = events.filter((e) => e.event.type === "text_delta").length;
        assert.ok(deltas > 50, `the recording has ${deltas} deltas`);
        assert.equal(changes.filter((c) => c.type === "text-appended").length, deltas - 1);
        assert.equal(changes.filter((c) => c.type === "block-done").length, 1);
        assert.equal(messageText(messages(view, "assistant")[0]), finalTexts(events)[0]);
    });
});

describe("sequence numbers", () => {
    const base = loadStream("demo-edit");

    it("ignores a repeated or older seq", () => {
        const events = [...base.slice(0, 10), base[7], base[3], ...base.slice(10)];
        const { view, model } = run(events);
        assert.equal(view.stale, 2);
        assert.deepEqual(messages(view, "assistant").map(messageText), messages(run(base).view, "assistant").map(messageText));
        assert.equal(model.sessions.size, 1);
    });

    it("reports a gap, marks the message incomplete, and takes message_end as the full text", () => {
        const model = createModel();
        const long = loadStream("long-answer");
        const dropAt = long.findIndex((e) => e.event.type === "text_delta") + 3;
        const gaps = [];
        let incompleteSeen = false;
        for (const params of long) {
            if (params.seq === long[dropAt].seq || params.seq === long[dropAt + 1].seq) continue;
            const changes = reduce(model, params);
            gaps.push(...changes.filter((c) => c.type === "gap"));
            const view = model.sessions.get(params.session);
            if (view.current?.incomplete) incompleteSeen = true;
        }
        assert.deepEqual(gaps.map((g) => g.missed), [2]);
        assert.ok(incompleteSeen);
        const [view] = model.sessions.values();
        const answer = messages(view, "assistant")[0];
        assert.equal(answer.incomplete, false);
        assert.equal(messageText(answer), finalTexts(long)[0]);
    });

    it("accepts a session first seen mid-stream (attaching to a running session)", () => {
        const model = createModel();
        const changes = reduce(model, { session: "s9", seq: 57, event: { type: "text_delta", contentIndex: 0, delta: "The parser stops" } });
        assert.deepEqual(changes[0], { type: "gap", session: "s9", missed: 56 });
        reduce(model, { session: "s9", seq: 58, event: { type: "text_delta", contentIndex: 0, delta: " here." } });
        const view = model.sessions.get("s9");
        assert.equal(messageText(view.items[0]), "The parser stops here.");
        assert.equal(view.items[0].incomplete, true);
        // tandem/state then tells whether it runs.
        applyState(model, { session: "s9", model: { provider: "p", id: "m" }, thinkingLevel: "low", running: true, queued: { steering: ["x"], followUp: [] } });
        assert.equal(view.running, true);
        assert.equal(view.model, "p/m");
        assert.deepEqual(view.queue.steering, ["x"]);
    });

    it("keeps sessions apart, each with its own sequence", () => {
        const a = loadStream("retry");
        const b = loadStream("demo-edit").map((e) => ({ ...e, session: "other" }));
        const mixed = [];
        for (let i = 0; i < Math.max(a.length, b.length); i++) {
            if (a[i]) mixed.push(a[i]);
            if (b[i]) mixed.push(b[i]);
        }
        const model = createModel();
        for (const params of mixed) reduce(model, params);
        assert.equal(model.sessions.size, 2);
        for (const view of model.sessions.values()) {
            assert.equal(view.missed, 0);
            assert.equal(view.running, false);
        }
    });
});

describe("robustness", () => {
    it("ignores unknown event types and unknown fields", () => {
        const events = loadStream("demo-edit");
        const withUnknown = [];
        let seq = 0;
        for (const e of events) {
            withUnknown.push({ ...e, seq: ++seq, event: { ...e.event, somethingNew: 1 } });
            if (e.event.type === "text_delta") withUnknown.push({ session: e.session, seq: ++seq, event: { type: "sparkles", delta: "x" } });
        }
        const model = createModel();
        for (const params of withUnknown) {
            const changes = reduce(model, params);
            if (params.event.type === "sparkles") assert.deepEqual(changes, []);
        }
        const [view] = model.sessions.values();
        assert.equal(view.missed, 0);
        assert.deepEqual(messages(view, "assistant").map(messageText), messages(run(events).view, "assistant").map(messageText));
    });

    it("ignores malformed notifications", () => {
        const model = createModel();
        assert.deepEqual(reduce(model, null), []);
        assert.deepEqual(reduce(model, { session: "s", event: { type: "agent_start" } }), []);
        assert.deepEqual(reduce(model, { session: "s", seq: 1 }), []);
        assert.equal(model.sessions.size, 0);
    });

    it("marks unfinished tools interrupted when the run settles", () => {
        const model = createModel();
        const s = "s";
        const events = [
            { type: "agent_start" },
            { type: "message_start", role: "assistant", index: 0 },
            { type: "toolcall_start", toolCallId: "c1", name: "bash" },
            { type: "toolcall_delta", toolCallId: "c1", delta: '{"command":' },
            { type: "settled" },
        ];
        events.forEach((event, i) => reduce(model, { session: s, seq: i + 1, event }));
        const card = model.sessions.get(s).tools.get("c1");
        assert.equal(card.status, "interrupted");
        assert.equal(card.argsLength, '{"command":'.length);
    });

    it("shows queued steering and follow-up messages", () => {
        const model = createModel();
        reduce(model, { session: "s", seq: 1, event: { type: "queue_update", steering: ["only the parser"], followUp: ["then a test"] } });
        assert.deepEqual(model.sessions.get("s").queue, { steering: ["only the parser"], followUp: ["then a test"] });
    });

    it("handles compaction notices", () => {
        const model = createModel();
        reduce(model, { session: "s", seq: 1, event: { type: "compaction_start", reason: "threshold" } });
        reduce(model, { session: "s", seq: 2, event: { type: "compaction_end", aborted: false, willRetry: false, tokensBefore: 161000 } });
        const [notice] = model.sessions.get("s").items;
        assert.equal(notice.done, true);
        assert.match(notice.text, /161000 tokens/);
    });

    it("costs one change per delta on a 20k-delta stream", () => {
        const text = "x".repeat(100_000);
        const { view, changes } = run(syntheticStream(text, 20_000));
        assert.equal(changes.filter((c) => c.type === "text-appended").length, 19_999);
        assert.equal(messageText(messages(view, "assistant")[0]), text);
    });

    it("splits the editor context only when it is a preamble", () => {
        assert.deepEqual(splitEditorContext("hi"), { context: null, text: "hi" });
        assert.deepEqual(splitEditorContext("<editor-context>\nFile: a\n</editor-context>\n\nfix it"), { context: "File: a", text: "fix it" });
        assert.deepEqual(splitEditorContext("<editor-context> unterminated"), { context: null, text: "<editor-context> unterminated" });
    });
});

describe("stored sessions", () => {
    it("shows the current branch of a pi session file, tool results on their cards", async () => {
        const { readFileSync } = await import("node:fs");
        const { historyFromJsonl } = await import("../../out/shared/history.mjs");
        const { applyHistory } = await import("../../out/shared/reducer.mjs");
        const file = new URL("../../../../fixtures/reference/pi-0.73.1-session.jsonl", import.meta.url);
        const text = readFileSync(file, "utf8");
        const history = historyFromJsonl(text + '{"type":"message","id":"torn","parentId":', 500);
        assert.equal(history.omitted, 0);
        assert.deepEqual(history.messages.map((m) => m.role).slice(0, 3), ["user", "assistant", "toolResult"]);
        const model = createModel();
        applyHistory(model, "stored", history.messages);
        const view = model.sessions.get("stored");
        assert.equal(messageText(view.items[0]), "change world to there in hello.txt");
        assert.deepEqual([...view.tools.values()].map((c) => [c.name, c.status]), [["read", "done"], ["edit", "done"]]);
        assert.equal(view.running, false);
        const limited = historyFromJsonl(text, 2);
        assert.equal(limited.messages.length, 2);
        assert.equal(limited.omitted, history.messages.length - 2);
    });
});
