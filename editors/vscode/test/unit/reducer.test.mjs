// The event → view-model reducer on the recorded streams of fixtures/editor-events.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
    applyState,
    createModel,
    failureReason,
    formatDelay,
    messageText,
    reduce,
    roleLabel,
    sessionLabel,
    sessionTitle,
    shortSessionId,
    splitEditorContext,
    toolStatusLabel,
} from "../../out/shared/reducer.mjs";
import { numberDiffLines } from "../../out/shared/diff.mjs";
import { loadStream, streamNames, syntheticStream } from "../fixtures.mjs";

/** Events of one session, numbered from 1. */
const numbered = (session, events) => events.map((event, i) => ({ session, seq: i + 1, event }));

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

    it("marks both tools failed, keeping the rejected edit's diff, marked not applied", () => {
        const [edit, bash] = cards(view);
        assert.equal(edit.status, "error");
        assert.match(edit.output, /rejected/i);
        assert.match(edit.diff, /^\+def say_hello\(/m);
        assert.equal(edit.applied, false);
        assert.equal(bash.status, "error");
        assert.equal(bash.applied, null, "a command has no diff to apply");
        assert.match(bash.output, /Command exited with code 1/);
    });

    it("calls the edit rejected, not failed, and the command failed", () => {
        const [edit, bash] = cards(view);
        assert.deepEqual([toolStatusLabel(edit), toolStatusLabel(bash)], ["rejected", "failed"]);
        const applied = cards(run(loadStream("demo-edit")).view).find((c) => c.name === "edit");
        assert.deepEqual([applied.applied, toolStatusLabel(applied)], [true, "done"]);
    });

    it("shows the model error once: under the failed message, and the run's error event adds no line", () => {
        const last = messages(view, "assistant").at(-1);
        assert.equal(last.stopReason, "error");
        assert.equal(last.errorMessage, "script error: 400 Bad Request: invalid request: messages.2.content is empty");
        assert.equal(last.errorRetried, false);
        assert.deepEqual(view.items.filter((i) => i.kind === "notice"), []);
        const shown = view.items.filter((i) => (i.kind === "notice" ? /400 Bad Request/.test(i.text) : i.errorMessage && !i.errorRetried));
        assert.equal(shown.length, 1);
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
    const events = loadStream("retry");
    const { view } = run(events);

    it("shows a retried 429 as a neutral retrying line, never as an error, then a quiet success note", () => {
        const model = createModel();
        const retryAt = events.findIndex((e) => e.event.type === "retry_start");
        for (const params of events.slice(0, retryAt + 1)) reduce(model, params);
        const during = model.sessions.get("session-retry");
        const [notice] = during.items.filter((i) => i.kind === "notice");
        assert.deepEqual(
            { level: notice.level, done: notice.done, text: notice.text, detail: notice.detail },
            {
                level: "retry",
                done: false,
                text: "Rate limited (429), retrying in 50 ms… (attempt 1 of 2)",
                detail: "script error: 429 Too Many Requests: rate limit exceeded",
            },
        );
        const [failed] = messages(during, "assistant");
        assert.equal(failed.errorRetried, true, "the failed call's error is on the retry line, not under the message");

        const notices = view.items.filter((i) => i.kind === "notice");
        assert.equal(notices.length, 1);
        assert.deepEqual([notices[0].level, notices[0].done, notices[0].text], ["retry", true, "Rate limited (429): retry 1 succeeded."]);
        assert.equal(view.items.some((i) => i.kind === "notice" && i.level === "error"), false);
        const [answer] = messages(view, "assistant").slice(1);
        assert.equal(messageText(answer), "Here is the answer after the retry.");
        assert.equal(messages(view, "assistant")[0].errorMessage, "script error: 429 Too Many Requests: rate limit exceeded");
    });
});

/** A failed model call: an assistant message_start / message_end with stopReason "error". */
function failedCall(index, errorMessage, text) {
    const content = text ? [{ type: "text", text }] : [];
    return [
        { type: "message_start", role: "assistant", index },
        ...(text ? [{ type: "text_delta", contentIndex: 0, delta: text }] : []),
        { type: "message_end", index, message: { role: "assistant", content, stopReason: "error", errorMessage } },
        { type: "turn_end" },
        { type: "agent_end" },
    ];
}

const userPrompt = (text) => [
    { type: "agent_start" },
    { type: "turn_start" },
    { type: "message_start", role: "user", index: 0, text },
    { type: "message_end", index: 0, message: { role: "user", content: [{ type: "text", text }] } },
];

describe("failures and retries: each failure is shown once", () => {
    const overloaded = "529 Overloaded";

    it("retries exhausted (the spec's example): one error line; the error event adds nothing", () => {
        const events = [
            ...userPrompt("hi"),
            ...failedCall(1, overloaded),
            { type: "retry_start", attempt: 1, maxAttempts: 2, delayMs: 2000, errorMessage: overloaded },
            { type: "agent_start" },
            ...failedCall(2, overloaded),
            { type: "retry_start", attempt: 2, maxAttempts: 2, delayMs: 4500, errorMessage: overloaded },
        ];
        const model = createModel();
        for (const params of numbered("s", events)) reduce(model, params);
        const view = model.sessions.get("s");
        const retrying = view.items.filter((i) => i.kind === "notice");
        assert.equal(retrying.length, 1, "each attempt updates the same line");
        assert.equal(retrying[0].text, "Overloaded (529), retrying in 4.5 s… (attempt 2 of 2)");
        assert.equal(retrying[0].level, "retry");

        const end = [
            { type: "agent_start" },
            ...failedCall(3, overloaded),
            { type: "retry_end", success: false, attempt: 2, finalError: overloaded },
            { type: "error", message: overloaded },
            { type: "settled" },
        ];
        numbered("s", [...events, ...end]).slice(events.length).forEach((params) => reduce(model, params));
        const notices = view.items.filter((i) => i.kind === "notice");
        assert.deepEqual(
            notices.map((n) => [n.level, n.done, n.text]),
            [["error", true, "Gave up after 2 retries: 529 Overloaded"]],
        );
        assert.ok(messages(view, "assistant").every((m) => m.errorRetried), "no failed message shows the error again");
        assert.equal(view.running, false);
    });

    it("the run's error event, worded differently, replaces the failed message's error instead of adding a line", () => {
        const events = [...userPrompt("hi"), ...failedCall(1, "400 Bad Request", "Partial"), { type: "error", message: "anthropic: 400 Bad Request (check the request)" }, { type: "settled" }];
        const { view } = run(numbered("s", events));
        assert.deepEqual(view.items.filter((i) => i.kind === "notice"), []);
        const [failed] = messages(view, "assistant");
        assert.equal(failed.errorMessage, "anthropic: 400 Bad Request (check the request)");
        assert.equal(messageText(failed), "Partial");
    });

    it("an error with no failed message (the run could not start) is one error notice", () => {
        const events = [{ type: "error", message: "the prompt failed: no model" }, { type: "settled" }];
        const { view } = run(numbered("s", events));
        assert.deepEqual(view.items.map((i) => [i.kind, i.level, i.text]), [["notice", "error", "the prompt failed: no model"]]);
    });

    it("a new run's failure is shown even when the last run failed the same way", () => {
        const run1 = [...userPrompt("a"), ...failedCall(1, "400 Bad Request"), { type: "error", message: "400 Bad Request" }, { type: "settled" }];
        const run2 = [...userPrompt("b"), ...failedCall(3, "400 Bad Request"), { type: "error", message: "400 Bad Request" }, { type: "settled" }];
        const { view } = run(numbered("s", [...run1, ...run2]));
        assert.deepEqual(messages(view, "assistant").map((m) => [m.errorMessage, m.errorRetried]), [["400 Bad Request", false], ["400 Bad Request", false]]);
        assert.equal(view.items.filter((i) => i.kind === "notice").length, 0);
    });

    it("a failure recovered by an overflow compaction is not shown as an error", () => {
        const events = [
            ...userPrompt("hi"),
            ...failedCall(1, "prompt is too long: 210000 tokens > 200000 maximum"),
            { type: "compaction_start", reason: "overflow" },
            { type: "compaction_end", aborted: false, willRetry: true, tokensBefore: 210000 },
            { type: "agent_start" },
            { type: "message_start", role: "assistant", index: 2 },
            { type: "message_end", index: 2, message: { role: "assistant", content: [{ type: "text", text: "Done." }], stopReason: "stop" } },
            { type: "settled" },
        ];
        const { view } = run(numbered("s", events));
        assert.equal(messages(view, "assistant")[0].errorRetried, true);
        assert.equal(view.items.some((i) => i.kind === "notice" && i.level === "error"), false);
    });

    it("ends a retry the run never made (aborted while waiting) quietly", () => {
        const events = [...userPrompt("hi"), ...failedCall(1, "429 Too Many Requests"), { type: "retry_start", attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: "429 Too Many Requests" }, { type: "settled" }];
        const { view } = run(numbered("s", events));
        const [notice] = view.items.filter((i) => i.kind === "notice");
        assert.deepEqual([notice.level, notice.done, notice.text], ["retry", true, "Rate limited (429): not retried, the run ended."]);
    });

    it("names the transient failures providers retry, and keeps any other error's first line", () => {
        assert.equal(failureReason("429 Too Many Requests: rate limit exceeded"), "Rate limited (429)");
        assert.equal(failureReason("script error: 429 Too Many Requests"), "Rate limited (429)");
        assert.equal(failureReason("anthropic: 529 Overloaded"), "Overloaded (529)");
        assert.equal(failureReason("503 Service Unavailable"), "Service unavailable (503)");
        assert.equal(failureReason("HTTP 502 Bad Gateway"), "Server error (502)");
        assert.equal(failureReason("You exceeded your rate limit"), "Rate limited");
        assert.equal(failureReason("connection reset by peer\nat line 2"), "connection reset by peer");
        assert.equal(failureReason("read 4290.5 bytes"), "read 4290.5 bytes", "a number that merely contains 429 is not a status");
        assert.equal(failureReason(""), "The model call failed");
        assert.equal(formatDelay(50), "50 ms");
        assert.equal(formatDelay(2000), "2 s");
        assert.equal(formatDelay(2500), "2.5 s");
    });

    it("formats the spec's retry_start as the retrying line", () => {
        const events = [...userPrompt("Run the tests"), ...failedCall(1, "429 Too Many Requests: rate limit exceeded"), { type: "retry_start", attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: "429 Too Many Requests: rate limit exceeded" }];
        const model = createModel();
        numbered("s2", events).forEach((params) => reduce(model, params));
        const [notice] = model.sessions.get("s2").items.filter((i) => i.kind === "notice");
        assert.equal(notice.text, "Rate limited (429), retrying in 2 s… (attempt 1 of 3)");
    });
});

describe("labels", () => {
    it("labels user and assistant messages alike: You and Tandem", () => {
        assert.equal(roleLabel("user"), "You");
        assert.equal(roleLabel("assistant"), "Tandem");
        assert.equal(roleLabel("bashExecution"), "Command");
    });

    it("tells sessions apart by the random tail of their UUIDv7 ids, not their timestamp prefix", () => {
        // Two sessions made in the same millisecond share their first 12 hex digits.
        const a = "019ad4e2-6b2c-7d4e-8f90-a1b2c3d4e5f6";
        const b = "019ad4e2-6b2c-7a11-9c3b-5e6f7a8b9c0d";
        assert.equal(shortSessionId(a), "c3d4e5f6");
        assert.equal(shortSessionId(b), "7a8b9c0d");
        assert.deepEqual(sessionLabel(a, undefined, undefined), { text: "Session c3d4e5f6", tag: null });
        assert.deepEqual(sessionLabel(b, undefined, undefined), { text: "Session 7a8b9c0d", tag: null });
        assert.equal(shortSessionId("session-demo-edit"), "session-demo-edit", "a non-UUID id is opaque: shown whole");
    });

    it("labels a session by its name, else by its first prompt's first line, with its id's tail beside", () => {
        const { view } = run(loadStream("demo-edit"));
        const named = sessionTitle("Fix the greeting", view);
        assert.deepEqual(named, { text: "Fix the greeting", beforePrompt: false });
        assert.deepEqual(sessionLabel(view.id, named, view), { text: "Fix the greeting", tag: null }, "an opaque id has no tail to show");
        assert.deepEqual(sessionLabel(view.id, undefined, view), { text: "The greeting is wrong, please fix it.", tag: null });
        assert.deepEqual(sessionLabel(view.id, { text: "  ", beforePrompt: false }, view).text, "The greeting is wrong, please fix it.");
    });

    it("never gives two sessions made together the same label, even with the same first prompt", () => {
        const a = "019ad4e2-6b2c-7d4e-8f90-a1b2c3d4e5f6";
        const b = "019ad4e2-6b2c-7a11-9c3b-5e6f7a8b9c0d";
        const model = createModel();
        for (const id of [a, b]) numbered(id, userPrompt("Fix the tests")).forEach((params) => reduce(model, params));
        const labels = [a, b].map((id) => sessionLabel(id, undefined, model.sessions.get(id)));
        assert.deepEqual(labels, [{ text: "Fix the tests", tag: "c3d4e5f6" }, { text: "Fix the tests", tag: "7a8b9c0d" }]);
    });

    it("replaces a title given before the first prompt (New session, Fork) by that prompt, cut at 60 characters", () => {
        const id = "019ad4e2-6b2c-7d4e-8f90-a1b2c3d4e5f6";
        const model = createModel();
        const placeholder = sessionTitle("New session", model.sessions.get(id));
        assert.equal(placeholder.beforePrompt, true);
        assert.deepEqual(sessionLabel(id, placeholder, model.sessions.get(id)), { text: "New session", tag: "c3d4e5f6" });
        const prompt = "Rename every use of the old config loader to the new one, and update the tests that mock it";
        numbered(id, userPrompt(`${prompt}\nsecond line`)).forEach((params) => reduce(model, params));
        assert.deepEqual(sessionLabel(id, placeholder, model.sessions.get(id)), { text: `${prompt.slice(0, 57)}…`, tag: "c3d4e5f6" });
    });
});

describe("diff line numbers", () => {
    const row = (l) => [l.kind, l.oldLine, l.newLine, l.text];

    it("numbers the recorded edit's lines from its hunk header (@@ -3,7 +3,7 @@)", () => {
        const edit = cards(run(loadStream("demo-edit")).view).find((c) => c.name === "edit");
        assert.equal(edit.applied, true);
        assert.deepEqual(numberDiffLines(edit.diff).map(row), [
            ["file", null, null, "--- a/src/greet.py"],
            ["file", null, null, "+++ b/src/greet.py"],
            ["hunk", null, null, "@@ -3,7 +3,7 @@"],
            ["context", 3, 3, " "],
            ["context", 4, 4, " def greet(name: str) -> str:"],
            ["context", 5, 5, '     """Returns a friendly greeting for `name`."""'],
            ["del", 6, null, '-    return f"Helo, {name}!"'],
            ["add", null, 6, '+    return f"Hello, {name}!"'],
            ["context", 7, 7, " "],
            ["context", 8, 8, " "],
            ["context", 9, 9, ' if __name__ == "__main__":'],
        ]);
    });

    it("numbers several hunks, a new file, and a removed line that looks like a file header", () => {
        const diff = "--- a/q.sql\n+++ b/q.sql\n@@ -10,2 +10,1 @@\n--- old comment\n select 1;\n@@ -40 +39,2 @@\n-a\n+b\n+c\n\\ No newline at end of file\n";
        assert.deepEqual(numberDiffLines(diff).map(row), [
            ["file", null, null, "--- a/q.sql"],
            ["file", null, null, "+++ b/q.sql"],
            ["hunk", null, null, "@@ -10,2 +10,1 @@"],
            ["del", 10, null, "--- old comment"],
            ["context", 11, 10, " select 1;"],
            ["hunk", null, null, "@@ -40 +39,2 @@"],
            ["del", 40, null, "-a"],
            ["add", null, 39, "+b"],
            ["add", null, 40, "+c"],
            ["meta", null, null, "\\ No newline at end of file"],
        ]);
        const created = numberDiffLines("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n");
        assert.deepEqual(created.slice(3).map(row), [["add", null, 1, "+one"], ["add", null, 2, "+two"]]);
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
