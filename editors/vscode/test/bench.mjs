// Measures the chat webview's script time for a long streamed answer in headless Chromium:
// ~100 KB of markdown streamed as 20 000 text deltas, against the same text in 20 deltas, in
// one run (compare the ratios, not the absolute figures, across machines).
//
// Each case loads a fresh page, feeds the stream through window.postMessage as the extension
// host posts it, waits until every event was applied and the page laid out, and reads Chromium's
// own counters (CDP Performance.getMetrics: ScriptDuration, LayoutDuration,
// RecalcStyleDuration, TaskDuration) before and after.
//
// Run: npm run bench   (prints a table; writes target/vscode-webview-bench.json)
import { writeFileSync } from "node:fs";

import { longMarkdown, syntheticStream } from "./fixtures.mjs";
import { openWebview, targetPath } from "./browser.mjs";

const TEXT = longMarkdown(100_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);

const CASES = [
    { name: "20000 deltas, one message each", deltas: 20_000, batch: 1 },
    { name: "20000 deltas, 100 per message", deltas: 20_000, batch: 100 },
    { name: "20 deltas, one message each", deltas: 20, batch: 1 },
];

async function measure({ deltas, batch }) {
    const web = await openWebview();
    try {
        const { page } = web;
        const cdp = await page.context().newCDPSession(page);
        await cdp.send("Performance.enable", { timeDomain: "threadTicks" });
        const events = syntheticStream(TEXT, deltas);
        const messages = [{ type: "showSession", session: "bench" }];
        for (let i = 0; i < events.length; i += batch) messages.push({ type: "events", events: events.slice(i, i + batch) });
        // Hand the messages to the page first, so that what is measured is the page's own work.
        await page.evaluate((m) => { window.__benchMessages = m; }, messages);
        const metrics = async () => Object.fromEntries((await cdp.send("Performance.getMetrics")).metrics.map((m) => [m.name, m.value]));
        const before = await metrics();
        const wall = await page.evaluate(async (expected) => {
            const start = performance.now();
            for (const message of window.__benchMessages) window.postMessage(message, "*");
            await new Promise((resolve) => {
                const check = () => (window.__tandemApplied >= expected ? resolve() : setTimeout(check, 0));
                check();
            });
            void document.body.offsetHeight; // flush style and layout
            await new Promise((resolve) => requestAnimationFrame(() => resolve()));
            return performance.now() - start;
        }, events.length);
        const after = await metrics();
        const check = await page.evaluate(() => ({
            markdown: document.querySelectorAll(".block.text.markdown").length,
            chars: document.querySelector(".msg.role-assistant .block.text")?.textContent.length ?? 0,
            abortDisabled: document.getElementById("abort").disabled,
        }));
        if (check.markdown !== 2 || !check.abortDisabled) throw new Error(`the page did not finish the stream: ${JSON.stringify(check)}`);
        const delta = (key) => (after[key] - before[key]) * 1000;
        return {
            scriptMs: delta("ScriptDuration"),
            layoutMs: delta("LayoutDuration"),
            styleMs: delta("RecalcStyleDuration"),
            taskMs: delta("TaskDuration"),
            wallMs: wall,
            renderedChars: check.chars,
        };
    } finally {
        await web.close();
    }
}

const median = (values) => values.slice().sort((a, b) => a - b)[Math.floor(values.length / 2)];

const results = [];
for (const c of CASES) {
    const runs = [];
    for (let i = 0; i < REPEATS; i++) runs.push(await measure(c));
    const pick = (key) => median(runs.map((r) => r[key]));
    results.push({ ...c, scriptMs: pick("scriptMs"), layoutMs: pick("layoutMs"), styleMs: pick("styleMs"), taskMs: pick("taskMs"), wallMs: pick("wallMs") });
}

const base = results.find((r) => r.deltas === 20);
console.log(`Chat webview, ${TEXT.length} bytes of markdown; median of ${REPEATS} runs each (ms)`);
console.log("case                               | script | layout | style | task   | wall   | script ÷ 20-delta case");
for (const r of results) {
    const f = (v) => v.toFixed(1).padStart(6);
    console.log(`${r.name.padEnd(34)} | ${f(r.scriptMs)} | ${f(r.layoutMs)} | ${f(r.styleMs)} | ${f(r.taskMs)} | ${f(r.wallMs)} | ${(r.scriptMs / base.scriptMs).toFixed(2)}`);
}
writeFileSync(targetPath("vscode-webview-bench.json"), JSON.stringify({ bytes: TEXT.length, repeats: REPEATS, results }, null, 2));
