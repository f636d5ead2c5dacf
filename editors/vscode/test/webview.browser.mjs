// The chat webview in headless Chromium, fed recorded `tandem/event` streams exactly as the
// extension host posts them. Asserts the DOM and saves a screenshot to target/vscode-webview.png.
//
// Run: npm run test:webview   (needs /usr/bin/chromium: scripts/install-chromium)
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { advanceStreamSplit, newStreamSplit, renderMarkdown } from "../out/shared/markdown.mjs";
import { loadStream } from "./fixtures.mjs";
import { feed, openWebview, post, targetPath } from "./browser.mjs";

let web;
before(async () => {
    web = await openWebview();
    await post(web.page, { type: "server", status: "running" });
});
after(async () => {
    await web?.close();
});

const posted = () => web.page.evaluate(() => window.__posted.splice(0));
const text = (selector) => web.page.locator(selector).allTextContents();

describe("chat webview", () => {
    const demo = loadStream("demo-edit");
    // The recording's last sequence number: later events of the session continue from it.
    const last = demo[demo.length - 1].seq;

    it("renders a run while it streams: abort enabled, tool cards with status and diff", async () => {
        const { page } = web;
        await post(page, { type: "showSession", session: "session-demo-edit", title: "Fix the greeting" });
        assert.equal(await page.locator("#abort").isDisabled(), true, "abort is disabled before the run");
        await feed(page, demo.slice(0, -1)); // everything but `settled`
        assert.equal(await page.locator("#abort").isEnabled(), true, "abort is enabled while the run is active");
        assert.equal(await page.locator("#send").textContent(), "Steer");
        assert.equal(await page.locator("#follow-up").isVisible(), true);

        const cards = page.locator(".tool-card");
        assert.equal(await cards.count(), 3);
        assert.deepEqual(await text(".tool-card .tool-title"), ["Read src/greet.py", "Edit src/greet.py", "Run `./check.sh`"]);
        assert.deepEqual(await text(".tool-card .tool-status"), ["done", "done", "done"]);
        const edit = page.locator('.tool-card[data-tool-call-id="call_2_1"]');
        // The file's own lines, indentation included (the diff is the file's, not the arguments').
        assert.deepEqual(await edit.locator(".diff-add").allTextContents(), ['+    return f"Hello, {name}!"\n']);
        assert.deepEqual(await edit.locator(".diff-del").allTextContents(), ['-    return f"Helo, {name}!"\n']);
        assert.equal(await edit.locator("details.diff").getAttribute("open"), "");

        const answers = await text(".msg.role-assistant .block.text");
        assert.equal(answers.at(-1), 'Fixed: greet() now returns "Hello, {name}!" and ./check.sh passes.');
        assert.equal(await page.locator(".msg.role-assistant .block.text code").first().textContent(), "greet()");
        assert.equal(await page.locator("details.thinking").count(), 1);
        assert.equal(await page.locator("details.thinking").getAttribute("open"), null, "thinking collapses when done");
        assert.deepEqual(await text(".msg.role-user .block.text"), ["The greeting is wrong, please fix it."]);
        assert.match(await page.locator(".msg.role-user details.editor-context pre").textContent(), /File: src\/greet\.py/);
        // Each block is in the DOM once.
        assert.equal(await page.locator(".msg .block").count(), 9);
    });

    it("disables abort once the run settled", async () => {
        const { page } = web;
        await feed(page, demo.slice(-1));
        assert.equal(await page.locator("#abort").isDisabled(), true);
        assert.equal(await page.locator("#send").textContent(), "Send");
        assert.equal(await page.locator("#follow-up").isVisible(), false);
        await page.screenshot({ path: targetPath("vscode-webview.png"), fullPage: false });
    });

    it("appends streamed text to one text node, then renders markdown once the block ends", async () => {
        const { page } = web;
        const long = loadStream("long-answer");
        await post(page, { type: "showSession", session: "session-long-answer" });
        const end = long.findIndex((e) => e.event.type === "message_end" && e.event.message.role === "assistant");
        await feed(page, long.slice(0, end));
        const streamed = long.slice(0, end).filter((e) => e.event.type === "text_delta").map((e) => e.event.delta).join("");
        const block = page.locator(".msg.role-assistant .block.text.streaming");
        assert.equal(await block.count(), 1);
        const tail = block.locator(".stream-tail");
        assert.equal(await tail.evaluate((node) => node.childNodes.length), 1, "one text node, appended to");
        assert.equal(await tail.evaluate((node) => node.firstChild.nodeType), 3);
        // Finished paragraphs are rendered on a timer; the raw tail is the rest of the stream.
        const rawTail = await tail.textContent();
        assert.ok(streamed.endsWith(rawTail), "the raw tail is the end of the streamed text");
        const cut = streamed.length - rawTail.length;
        assert.ok(cut === 0 || streamed.slice(0, cut).endsWith("\n"), "cut after a finished paragraph");
        assert.equal(await page.locator("#abort").isEnabled(), true);

        // Once the render timer ran, everything up to the last finished paragraph is markdown.
        await page.waitForTimeout(400);
        const split = newStreamSplit();
        const safe = advanceStreamSplit(split, streamed);
        assert.equal(await tail.textContent(), streamed.slice(safe));
        assert.equal(await block.locator(".stream-prefix h1").textContent(), "How the parser recovers from errors");
        assert.equal(await block.locator(".stream-prefix").innerHTML(), renderMarkdown(streamed.slice(0, safe)));

        await feed(page, long.slice(end));
        const rendered = page.locator(".msg.role-assistant .block.text.markdown");
        assert.equal(await rendered.locator("h1").textContent(), "How the parser recovers from errors");
        assert.equal(await rendered.locator("h2").count(), 40);
        assert.equal(await rendered.locator("pre code").count(), 4);
        assert.equal(await page.locator("#abort").isDisabled(), true);
    });

    it("shows failed tools, the rejected edit's diff and the run's error", async () => {
        const { page } = web;
        await post(page, { type: "showSession", session: "session-tool-errors" });
        await feed(page, loadStream("tool-errors"));
        assert.deepEqual(await text(".tool-card .tool-status"), ["failed", "failed"]);
        assert.equal(await page.locator(".tool-card.status-error .diff-add").count(), 1);
        assert.match((await text(".tool-card.status-error .tool-output pre"))[0], /rejected/i);
        assert.match((await text(".msg-error")).join("\n"), /400 Bad Request/);
        assert.match((await text(".notice.level-error")).join("\n"), /400 Bad Request/);
    });

    it("shows retries and aborted answers", async () => {
        const { page } = web;
        await post(page, { type: "showSession", session: "session-retry" });
        await feed(page, loadStream("retry"));
        assert.match((await text(".notice.level-retry")).join(), /Retry 1 succeeded/);
        await post(page, { type: "showSession", session: "session-aborted" });
        await feed(page, loadStream("aborted"));
        assert.deepEqual(await text(".msg-footer .aborted"), ["Aborted."]);
    });

    it("re-renders a session's whole transcript when switching back to it", async () => {
        const { page } = web;
        await post(page, { type: "showSession", session: "session-demo-edit" });
        assert.equal(await page.locator(".tool-card").count(), 3);
        assert.equal(await page.locator(".tool-card .diff-add").count(), 1);
    });

    it("sends prompts when idle, steers or follows up when busy, and aborts", async () => {
        const { page } = web;
        await posted();
        await page.fill("#input", "Explain this");
        await page.press("#input", "Enter");
        await feed(page, [{ session: "session-demo-edit", seq: last + 1, event: { type: "agent_start" } }]);
        await page.fill("#input", "only the parser");
        await page.press("#input", "Enter");
        await page.fill("#input", "then add a test");
        await page.press("#input", "Alt+Enter");
        await page.fill("#input", "and document it");
        await page.click("#follow-up");
        await page.click("#abort");
        assert.deepEqual(await posted(), [
            { type: "send", text: "Explain this", mode: "prompt" },
            { type: "send", text: "only the parser", mode: "steer" },
            { type: "send", text: "then add a test", mode: "followUp" },
            { type: "send", text: "and document it", mode: "followUp" },
            { type: "abort" },
        ]);
        await feed(page, [{ session: "session-demo-edit", seq: last + 2, event: { type: "queue_update", steering: ["only the parser"], followUp: [] } }]);
        assert.equal(await page.locator("#queue").textContent(), "steer: only the parser");
        await feed(page, [{ session: "session-demo-edit", seq: last + 3, event: { type: "settled" } }]);
    });

    it("asks the host for the state after a sequence gap, and ignores unknown events", async () => {
        const { page } = web;
        await posted();
        await feed(page, [
            { session: "session-demo-edit", seq: last + 12, event: { type: "agent_start" } },
            { session: "session-demo-edit", seq: last + 13, event: { type: "brand_new_event", x: 1 } },
        ]);
        assert.deepEqual(await posted(), [{ type: "needState", session: "session-demo-edit" }]);
        await post(page, {
            type: "state",
            state: { session: "session-demo-edit", model: { provider: "script", id: "t" }, thinkingLevel: "high", running: false },
        });
        assert.equal(await page.locator("#model-button").textContent(), "model: script/t");
        assert.equal(await page.locator("#thinking-button").textContent(), "thinking: high");
        assert.equal(await page.locator("#abort").isDisabled(), true);
    });

    it("shows a stored session's history when it is opened", async () => {
        const { page } = web;
        const { readFileSync } = await import("node:fs");
        const { historyFromJsonl } = await import("../out/shared/history.mjs");
        const file = new URL("../../../fixtures/reference/pi-0.73.1-session.jsonl", import.meta.url);
        const history = historyFromJsonl(readFileSync(file, "utf8"));
        await post(page, { type: "showSession", session: "stored", title: "hello fix" }, { type: "history", session: "stored", ...history });
        assert.equal(await page.locator("#session-title").textContent(), "hello fix");
        assert.deepEqual(await text(".msg.role-user .block.text"), ["change world to there in hello.txt"]);
        assert.deepEqual(await text(".tool-card .tool-status"), ["done", "done"]);
    });

    it("logged no page errors", () => {
        assert.deepEqual(web.errors, []);
    });
});
