// Opens the chat webview's real page (media/chat.html + dist/webview.js + media/chat.css) in
// Debian's headless Chromium through playwright-core, with a stub `acquireVsCodeApi` that
// records what the page posts to the extension host.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";

import { fillTemplate } from "../out/shared/html.mjs";

export const extensionDir = join(dirname(fileURLToPath(import.meta.url)), "..");
export const repoDir = join(extensionDir, "../..");
export const CHROMIUM = process.env.TANDEM_CHROMIUM ?? "/usr/bin/chromium";

// Headless, no sandbox (root in a container), and nothing that reaches the network.
const CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

export async function openWebview({ width = 480, height = 900 } = {}) {
    if (!existsSync(CHROMIUM)) {
        throw new Error(`${CHROMIUM} is missing: run scripts/install-chromium (Debian's chromium package)`);
    }
    const { chromium } = await import("playwright-core");
    const profile = mkdtempSync(join(tmpdir(), "tandem-chromium-"));
    const context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_ARGS,
        viewport: { width, height },
    });
    const page = context.pages()[0] ?? (await context.newPage());
    const errors = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    page.on("console", (msg) => {
        if (msg.type() === "error") errors.push(msg.text());
    });
    await page.addInitScript(() => {
        window.__posted = [];
        window.acquireVsCodeApi = () => ({
            postMessage: (message) => window.__posted.push(message),
            getState: () => undefined,
            setState: () => undefined,
        });
    });
    // The page exactly as the extension serves it, with file URLs in place of webview URIs.
    const html = fillTemplate(readFileSync(join(extensionDir, "media/chat.html"), "utf8"), {
        cspSource: "file:",
        nonce: "tandemtestnonce",
        scriptUri: pathToFileURL(join(extensionDir, "dist/webview.js")).href,
        styleUri: pathToFileURL(join(extensionDir, "media/chat.css")).href,
    });
    const pagePath = join(profile, "chat.html");
    writeFileSync(pagePath, html);
    await page.goto(pathToFileURL(pagePath).href);
    await page.waitForFunction(() => window.__posted.some((m) => m.type === "ready"));
    const close = () => context.close();
    return { context, page, errors, close };
}

/** Posts host messages the way the extension host does, and waits until the page applied them. */
export async function post(page, ...messages) {
    await page.evaluate(async (messages) => {
        const expected = window.__tandemHandled + messages.length;
        for (const message of messages) window.postMessage(message, "*");
        await new Promise((resolve) => {
            const check = () => (window.__tandemHandled >= expected ? resolve() : setTimeout(check, 1));
            check();
        });
    }, messages);
}

/** Feeds events one message each (the host's batching when events arrive spaced out). */
export async function feed(page, events) {
    await post(page, ...events.map((e) => ({ type: "events", events: [e] })));
}

export function targetPath(name) {
    const dir = join(repoDir, "target");
    mkdirSync(dir, { recursive: true });
    return join(dir, name);
}
