// The chat webview in headless Chromium, fed recorded `tandem/event` streams exactly as the
// extension host posts them. Asserts the DOM and saves screenshots to target/: vscode-webview.png
// (a finished run), vscode-webview-{320,380,420}.png and vscode-webview-320-long.png (the header
// at narrow widths), vscode-webview-errors.png (a rejected edit and a model error) and
// vscode-webview-retry.png (a 429 being retried).
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
/** Text of the elements a user can see (display: none ones left out). */
const visibleText = (selector) =>
    web.page.locator(selector).evaluateAll((nodes) => nodes.filter((n) => n.getClientRects().length > 0).map((n) => n.textContent));

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
        // Backticks in titles are code, not raw backticks.
        assert.deepEqual(await text(".tool-card .tool-title"), ["Read src/greet.py", "Edit src/greet.py", "Run ./check.sh"]);
        assert.deepEqual(await text(".tool-card .tool-title code"), ["./check.sh"]);
        assert.deepEqual(await text(".tool-card .tool-status"), ["done", "done", "done"]);
        const edit = page.locator('.tool-card[data-tool-call-id="call_2_1"]');
        // The file's own lines, indentation included (the diff is the file's, not the arguments'),
        // with the file's line numbers from the hunk header (@@ -3,7 +3,7 @@).
        assert.deepEqual(await edit.locator(".diff-add .diff-text").allTextContents(), ['+    return f"Hello, {name}!"']);
        assert.deepEqual(await edit.locator(".diff-del .diff-text").allTextContents(), ['-    return f"Helo, {name}!"']);
        assert.deepEqual(await edit.locator(".diff-del .ln").allTextContents(), ["6", ""]);
        assert.deepEqual(await edit.locator(".diff-add .ln").allTextContents(), ["", "6"]);
        assert.deepEqual(await edit.locator(".diff-context .ln-new").allTextContents(), ["3", "4", "5", "7", "8", "9"]);
        assert.equal(await edit.locator(".diff-file").count(), 0, "the title names the file");
        assert.equal(await edit.locator("details.diff").getAttribute("open"), "");
        assert.equal(await edit.locator("details.diff > summary").textContent(), "+1 −1");

        const answers = await text(".msg.role-assistant .block.text");
        assert.equal(answers.at(-1), 'Fixed: greet() now returns "Hello, {name}!" and ./check.sh passes.');
        assert.equal(await page.locator(".msg.role-assistant .block.text code").first().textContent(), "greet()");
        assert.equal(await page.locator("details.thinking").count(), 1);
        assert.equal(await page.locator("details.thinking").getAttribute("open"), null, "thinking collapses when done");
        assert.deepEqual(await text(".msg.role-user .block.text"), ["The greeting is wrong, please fix it."]);
        // Who speaks: "You" on the user's message, "Tandem" once on the answer (its next tool
        // rounds continue it), styled alike.
        assert.deepEqual(await visibleText(".msg.role-user > .role-label"), ["You"]);
        assert.deepEqual(await visibleText(".msg.role-assistant > .role-label"), ["Tandem"]);
        const [userLabel, assistantLabel] = await page
            .locator(".role-label")
            .evaluateAll((nodes) => nodes.slice(0, 2).map((n) => [getComputedStyle(n).fontSize, getComputedStyle(n).textTransform]));
        assert.deepEqual(userLabel, assistantLabel);
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

    it("shows failed tools, the rejected edit's diff marked not applied, and the run's error once", async () => {
        const { page } = web;
        await post(page, { type: "showSession", session: "session-tool-errors" });
        await feed(page, loadStream("tool-errors"));
        assert.deepEqual(await text(".tool-card .tool-status"), ["rejected", "failed"]);
        const edit = page.locator('.tool-card[data-tool-call-id="call_1_1"]');
        assert.equal(await edit.locator(".diff-add").count(), 1);
        // Rejected, not "+1 −1" as if applied: the status, the summary and the struck, dimmed lines say so.
        assert.equal(await edit.locator(".tool-status").getAttribute("title"), "Not applied: the file is unchanged.");
        assert.equal(await edit.locator("details.diff.not-applied > summary").textContent(), "+1 −1 not applied");
        assert.equal(await edit.locator(".diff-add .diff-text").evaluate((n) => getComputedStyle(n).textDecorationLine), "line-through");
        assert.equal(await edit.locator(".diff-lines").evaluate((n) => getComputedStyle(n).opacity), "0.6");
        assert.deepEqual(await edit.locator(".diff-add .ln").allTextContents(), ["", "4"]);
        assert.match((await text(".tool-card.status-error .tool-output pre"))[0], /rejected/i);
        // The model error appears once: under the message that failed, not again as a notice.
        const shown = (await page.locator("#transcript").innerText()).split("400 Bad Request").length - 1;
        assert.equal(shown, 1);
        assert.deepEqual(await text(".msg-error"), ["script error: 400 Bad Request: invalid request: messages.2.content is empty"]);
        assert.equal(await page.locator(".notice.level-error").count(), 0);
        await page.screenshot({ path: targetPath("vscode-webview-errors.png"), fullPage: false });
    });

    it("shows a retried 429 as a neutral retrying line, then a quiet success note, never as an error", async () => {
        const { page } = web;
        const retry = loadStream("retry");
        await post(page, { type: "showSession", session: "session-retry" });
        const started = retry.findIndex((e) => e.event.type === "retry_start") + 1;
        await feed(page, retry.slice(0, started));
        const line = page.locator(".notice.level-retry");
        assert.deepEqual(await text(".notice.level-retry.active"), ["Rate limited (429), retrying in 50 ms… (attempt 1 of 2)"]);
        assert.equal(await line.getAttribute("title"), "script error: 429 Too Many Requests: rate limit exceeded");
        assert.equal(await page.locator(".msg-error").count(), 0, "the failed call's error is on the retry line");
        assert.equal(await page.locator(".notice.level-error").count(), 0);
        assert.equal(await page.locator(".msg.role-assistant.blank").count(), 1, "the failed call streamed nothing");
        assert.equal(await page.locator(".msg.role-assistant.blank").isVisible(), false, "and is not shown as a bare label");
        const errorColour = await page.evaluate(() => {
            const probe = document.body.appendChild(document.createElement("div"));
            probe.className = "msg-error";
            const colour = getComputedStyle(probe).color;
            probe.remove();
            return colour;
        });
        const style = await line.evaluate((n) => [getComputedStyle(n).color, getComputedStyle(n).borderLeftColor]);
        assert.ok(!style.includes(errorColour), `the retry line is not in the error colour ${errorColour}: ${style}`);
        await page.setViewportSize({ width: 380, height: 420 });
        await page.screenshot({ path: targetPath("vscode-webview-retry.png"), fullPage: false });
        // A narrow view drops "model:" before a model's name, never before "default".
        assert.deepEqual(await page.locator("#chips .chip").allInnerTexts(), ["model: default", "thinking: default"]);
        await page.setViewportSize({ width: 480, height: 900 });
        await feed(page, retry.slice(started));
        assert.deepEqual(await text(".notice.level-retry"), ["Rate limited (429): retry 1 succeeded."]);
        assert.equal(await page.locator(".notice.level-retry.active").count(), 0);
        assert.equal(await page.locator(".msg-error, .notice.level-error").count(), 0);
        assert.deepEqual(await visibleText(".msg.role-assistant > .role-label"), ["Tandem"]);
        assert.deepEqual(await text(".msg.role-assistant .block.text"), ["Here is the answer after the retry."]);
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

    it("labels a session by its name or first prompt with its id's random tail, else by that tail", async () => {
        const { page } = web;
        const label = () => page.locator("#session-title").evaluate((n) => [n.querySelector(".title-text").textContent, n.querySelector(".session-tag").hidden ? null : n.querySelector(".session-tag").textContent]);
        // UUIDv7s made in the same millisecond differ only at the end.
        const a = "019ad4e2-6b2c-7d4e-8f90-a1b2c3d4e5f6";
        const b = "019ad4e2-6b2c-7a11-9c3b-5e6f7a8b9c0d";
        await post(page, { type: "showSession", session: a });
        assert.deepEqual(await label(), ["Session c3d4e5f6", null]);
        assert.equal(await page.locator("#session-title").getAttribute("title"), `Session c3d4e5f6\nSession ${a}`);
        // A new session's placeholder title gives way to its first prompt.
        await post(page, { type: "showSession", session: b, title: "New session" });
        assert.deepEqual(await label(), ["New session", "7a8b9c0d"]);
        await feed(page, loadStream("retry").slice(0, 4).map((e) => ({ ...e, session: b })));
        assert.deepEqual(await label(), ["Say something.", "7a8b9c0d"]);
        // The same first prompt in another session made at the same time: the tails differ.
        await post(page, { type: "showSession", session: a });
        await feed(page, loadStream("retry").slice(0, 4).map((e) => ({ ...e, session: a })));
        assert.deepEqual(await label(), ["Say something.", "c3d4e5f6"]);
        await post(page, { type: "showSession", session: b, title: "New session" });
        assert.deepEqual(await label(), ["Say something.", "7a8b9c0d"], "shown again with the same title: still its prompt");
        await post(page, { type: "showSession", session: "session-demo-edit" });
        // Its title was given before its prompt: the prompt names it; an opaque id has no tail.
        assert.deepEqual(await label(), ["The greeting is wrong, please fix it.", null]);
        // A stored session's name stays, though its history has a first prompt.
        await post(page, { type: "showSession", session: "stored" });
        assert.deepEqual(await label(), ["hello fix", null], "the host's title is remembered");
    });

    /** The header's parts: boxes, and whether each one's text is cut (overflows its box). */
    const header = () =>
        web.page.evaluate(() => {
            const part = (id) => {
                const n = document.getElementById(id);
                const r = n.getBoundingClientRect();
                const lineHeight = parseFloat(getComputedStyle(n).lineHeight);
                return {
                    x: r.x, y: r.y, width: r.width, height: r.height,
                    cut: n.scrollWidth > n.clientWidth + 1 || n.scrollHeight > n.clientHeight + 1,
                    lines: Math.round(n.clientHeight / lineHeight),
                    text: n.innerText,
                };
            };
            return {
                title: part("session-title"),
                model: part("model-button"),
                thinking: part("thinking-button"),
                sessions: part("sessions-button"),
                toolbar: part("toolbar"),
                scrollWidth: document.documentElement.scrollWidth,
            };
        });

    // A session with a UUIDv7 id (its label has the id's tail beside the title) and a whole run
    // in it, so the screenshots show tool cards and a diff at that width too.
    const narrowSession = "019ad4e2-6b2c-7c3d-9e1f-0a1b2c3d4e5f";
    let narrowFed = false;
    const showNarrow = async (width, title, model) => {
        await web.page.setViewportSize({ width, height: 640 });
        if (!narrowFed) {
            await post(web.page, { type: "showSession", session: narrowSession });
            await feed(web.page, loadStream("demo-edit").map((e) => ({ ...e, session: narrowSession })));
            narrowFed = true;
        }
        await post(
            web.page,
            { type: "showSession", session: narrowSession, title },
            { type: "state", state: { session: narrowSession, model, thinkingLevel: "medium", running: false } },
        );
        return header();
    };

    for (const width of [320, 380, 420]) {
        it(`keeps the header whole at ${width} px: the title not cut, the chips side by side on one line each`, async () => {
            // As long as the host makes them: a prompt's first line, cut at 60 characters.
            const title = "Fix the greeting in src/greet.py and make ./check.sh pass…";
            assert.equal(title.length, 58);
            const h = await showNarrow(width, title, { provider: "anthropic", id: "claude-sonnet-4-5" });
            await web.page.screenshot({ path: targetPath(`vscode-webview-${width}.png`), fullPage: false });
            const where = JSON.stringify(h);
            for (const name of ["title", "model", "thinking", "sessions"]) {
                const b = h[name];
                assert.ok(b.x >= 0 && b.x + b.width <= width + 0.5, `${name} lies within the ${width} px view: ${where}`);
                assert.equal(b.cut, false, `${name} shows all its text: ${where}`);
            }
            assert.equal(h.scrollWidth, width, "nothing sticks out sideways");
            // The title wraps (three lines at most) instead of being cut; its tooltip has the id too.
            assert.equal(h.title.text, `${title}2c3d4e5f`);
            assert.ok(h.title.lines <= 3, where);
            assert.equal(await web.page.locator("#session-title").getAttribute("title"), `${title}\nSession ${narrowSession}`);
            // The chips share one row under the title, each one line high, and do not overlap.
            assert.deepEqual([h.model.text, h.thinking.text], ["anthropic/claude-sonnet-4-5", "thinking: medium"]);
            assert.equal(Math.round(h.model.y), Math.round(h.thinking.y));
            assert.ok(h.model.y >= h.title.y + h.title.height - 1, "the chips are on the row below the title");
            assert.ok(h.model.x + h.model.width <= h.thinking.x, "the chips do not overlap");
            assert.ok(h.model.lines === 1 && h.thinking.lines === 1 && Math.abs(h.model.height - h.thinking.height) < 1, where);
            assert.ok(Math.abs(h.sessions.y + h.sessions.height / 2 - (h.title.y + h.title.height / 2)) < 3, "Sessions stays beside the title");
            assert.match(await web.page.locator("#model-button").getAttribute("title"), /anthropic\/claude-sonnet-4-5\./);
        });
    }

    it("at 320 px cuts only what cannot fit: a very long title after three lines, a very long model name, both whole in their tooltips", async () => {
        const title = "Refactor the session store so that forks keep their parent's model and thinking level, and add tests for each of the three fork paths";
        const h = await showNarrow(320, title, { provider: "openrouter", id: "anthropic/claude-sonnet-4-5-20250929-extended-context" });
        await web.page.screenshot({ path: targetPath("vscode-webview-320-long.png"), fullPage: false });
        const where = JSON.stringify(h);
        assert.deepEqual([h.title.cut, h.title.lines], [true, 3], `three lines, then an ellipsis: ${where}`);
        assert.equal(await web.page.locator("#session-title").evaluate((n) => getComputedStyle(n).webkitLineClamp), "3");
        assert.ok((await web.page.locator("#session-title").getAttribute("title")).startsWith(`${title}\n`));
        assert.equal(h.model.cut, true);
        assert.equal(await web.page.locator("#model-button").evaluate((n) => getComputedStyle(n).textOverflow), "ellipsis");
        assert.match(await web.page.locator("#model-button").getAttribute("title"), /openrouter\/anthropic\/claude-sonnet-4-5-20250929-extended-context/);
        assert.equal(h.thinking.cut, false, "the thinking level stays readable");
        for (const name of ["title", "model", "thinking", "sessions"]) {
            assert.ok(h[name].x >= 0 && h[name].x + h[name].width <= 320.5, `${name} lies within the view: ${where}`);
        }
        assert.ok(h.model.lines === 1 && Math.round(h.model.y) === Math.round(h.thinking.y), where);
        assert.ok(h.toolbar.height < 100, `the header stays small: ${where}`);
        assert.equal(h.scrollWidth, 320);
    });

    it("keeps the header on one row where there is room", async () => {
        const { page } = web;
        await page.setViewportSize({ width: 700, height: 640 });
        const [head, model, sessions] = await Promise.all(["#session-title", "#model-button", "#sessions-button"].map((s) => page.locator(s).boundingBox()));
        assert.ok(Math.abs(head.y + head.height / 2 - (model.y + model.height / 2)) < 3);
        assert.ok(Math.abs(head.y + head.height / 2 - (sessions.y + sessions.height / 2)) < 3);
        await page.setViewportSize({ width: 480, height: 900 });
    });

    it("logged no page errors", () => {
        assert.deepEqual(web.errors, []);
    });
});
