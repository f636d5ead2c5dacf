// The extension in real VS Code: code-server (VS Code 1.139 in a browser) with the platform
// .vsix installed, driven through Debian's Chromium with playwright-core, as a user would.
//
//   node test/e2e/real-vscode.mjs --code-server <launcher> --vsix <file> --out <dir>
//
// Four runs, each a fresh code-server (a new window: its own user data, extensions and Tandem
// agent dir):
//
// - a trusted folder: straight to a diagnostic of VS Code's own JSON server, before any Tandem
//   view or command, the first Ctrl+. offers "Ask Tandem to fix" (the extension starts with the
//   window); its context holds the whole file's diagnostics (the extension answered
//   tandem/diagnostics), it is reviewed in the extension's diff and applied, then `cat
//   data.json` run by the agent on the file the extension saved when asked
//   (tandem/saveDocuments); the chat, opened then, shows that run; a question in the chat with
//   its streamed answer; an edit rejected in the review; a long answer aborted;
// - a folder in Restricted Mode: Tandem starts quietly with the window, still chats, and the
//   project's own settings (.pi/settings.json, which picks another model) are not used;
// - a new user without a key: no pop-up at start; the Get Started view; a key stored;
// - an empty window (no folder): Tandem activates quietly, and the first file opened gets the
//   fix's code action.
//
// The model is Tandem's scripted one (models.json `api: "scripted"`): its turns are below. The
// binary is the one inside the .vsix (`tandem.path` stays empty). Each step saves a screenshot
// in --out; a failure saves one named `failed-<step>.png` and exits 1 with what was expected.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { chromium } from "playwright-core";

import { baseSettings, startCodeServer as start, tandemOpened, tandemOutput } from "./code-server.mjs";

const args = Object.fromEntries(
    process.argv
        .slice(2)
        .reduce((pairs, arg, i, all) => (arg.startsWith("--") ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []),
);
for (const required of ["code-server", "vsix", "out"]) {
    if (!args[required]) {
        console.error(`real-vscode.mjs: --${required} is required (see the usage at the top of the file)`);
        process.exit(2);
    }
}
const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const outDir = args.out;
mkdirSync(outDir, { recursive: true });

const root = mkdtempSync(join(tmpdir(), "tandem-real-vscode-"));

/** The scripted model's turns for the trusted run, in the order the steps reach them. */
const TRUSTED_TURNS = [
    // "Ask Tandem to fix" (a new session): the edit, then the answer after it was applied.
    { text: "The object has a doubled comma; removing it.", toolCalls: [{ name: "edit", arguments: { path: "data.json", oldText: "1,, ", newText: "1, " } }] },
    // A command after the accepted edit: the extension saves data.json first (tandem/saveDocuments).
    { text: "Checking the file.", toolCalls: [{ name: "bash", arguments: { command: "cat data.json" } }] },
    { text: "Fixed the doubled comma." },
    // A question typed in the chat (the same session, which the chat now shows).
    { text: "Let me read it.", toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] },
    { text: "The notes say **hello world**, and nothing else.", chunkSize: 4, delayMs: 15 },
    // An edit the user rejects.
    { text: "Changing the greeting.", toolCalls: [{ name: "edit", arguments: { path: "notes.txt", oldText: "hello world", newText: "goodbye world" } }] },
    { text: "Understood: I left notes.txt as it was." },
    // The language tools on TypeScript, then an edit that makes a type error.
    {
        text: "Looking `area` up.",
        toolCalls: [
            { name: "definition", arguments: { path: "src/main.ts", line: 3, column: 30 } },
            { name: "references", arguments: { path: "src/shapes.ts", line: 1, column: 17 } },
        ],
    },
    { text: "Making `total` a string.", toolCalls: [{ name: "edit", arguments: { path: "src/main.ts", oldText: "total: number", newText: "total: string" } }] },
    { text: "`area` is in src/shapes.ts, and `total` is a string now, which does not type-check." },
    // A long answer the user aborts.
    { text: `${"A very long essay about editors. ".repeat(400)}`, chunkSize: 8, delayMs: 40 },
];

const DATA_JSON = '{\n    "a": 1,, "b": 2,\n\n    "c": {"d": 1, "d": 2}\n}\n';

/** A small TypeScript project for VS Code's built-in TypeScript features (TypeScript 6, shipped with code-server). */
const TS_PROJECT = {
    "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, target: "es2022", module: "esnext", moduleResolution: "bundler", types: [] }, include: ["src"] }, null, 2),
    "src/shapes.ts": "export function area(width: number, height: number): number {\n    return width * height;\n}\n",
    "src/main.ts": 'import { area } from "./shapes";\n\nexport const total: number = area(2, 3);\n',
};

/** The editor contexts the model read beside prompts: every session file's hidden context entries. */
function promptContexts(agentDir) {
    const texts = [];
    for (const entry of readdirSync(join(agentDir, "sessions"), { withFileTypes: true, recursive: true })) {
        if (!entry.isFile() || !entry.name.endsWith(".jsonl")) continue;
        for (const line of readFileSync(join(entry.parentPath ?? entry.path, entry.name), "utf8").split("\n")) {
            if (!line.includes("tandem.promptContext")) continue;
            const content = JSON.parse(line).content;
            texts.push(typeof content === "string" ? content : content.map((c) => c.text ?? "").join("\n"));
        }
    }
    return texts;
}

/** Every tool result in the session files: `{tool, text, error}`, in the files' order. */
function toolResults(agentDir) {
    const results = [];
    for (const entry of readdirSync(join(agentDir, "sessions"), { withFileTypes: true, recursive: true })) {
        if (!entry.isFile() || !entry.name.endsWith(".jsonl")) continue;
        for (const line of readFileSync(join(entry.parentPath ?? entry.path, entry.name), "utf8").split("\n")) {
            if (!line.includes('"toolResult"')) continue;
            const message = JSON.parse(line).message;
            if (message?.role !== "toolResult") continue;
            const text = (message.content ?? []).map((c) => c.text ?? "").join("\n");
            results.push({ tool: message.toolName, text, error: message.isError === true });
        }
    }
    return results;
}

/** The first tool result of `tool` whose text matches `test`; else fails, listing that tool's results. */
function toolResult(agentDir, tool, test, what) {
    const all = toolResults(agentDir).filter((r) => r.tool === tool);
    const found = all.find((r) => test.test(r.text));
    if (!found) throw new Error(`no ${tool} result ${what}; the ${tool} results were:\n${all.map((r) => r.text).join("\n---\n") || "(none)"}`);
    return found;
}

function scriptedModels(dir, providers) {
    const entries = {};
    for (const [name, turns] of Object.entries(providers)) {
        const script = join(dir, `${name}.json`);
        writeFileSync(script, JSON.stringify({ turns }));
        entries[name] = { api: "scripted", apiKey: "none", baseUrl: script, models: [{ id: "m", name: `${name} script` }] };
    }
    writeFileSync(join(dir, "models.json"), JSON.stringify({ providers: entries }, null, 2));
}

/** A fresh code-server serving `folder` with the .vsix under test installed. */
function startCodeServer(name, folder, settings, env = process.env) {
    return start({ codeServer: args["code-server"], vsix: args.vsix, root, outDir, name, folder, settings, env });
}

let page;
let step = "start";

async function shot(name) {
    await page.screenshot({ path: join(outDir, `${name}.png`) });
    console.log(`screenshot ${join(outDir, `${name}.png`)}`);
}

/** Waits for `check` (async, truthy when done) or fails naming `what`. */
async function until(what, check, ms = 30_000) {
    const deadline = Date.now() + ms;
    for (;;) {
        const value = await check().catch(() => undefined);
        if (value) return value;
        if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 150));
    }
}

/** Runs a command from the command palette by its title. */
async function palette(title) {
    // Right after the workbench appears, the palette may list commands before the extensions'
    // contributions are in: close it and ask again.
    const input = page.locator(".quick-input-widget input");
    const row = page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
    for (let attempt = 1; ; attempt++) {
        await page.keyboard.press("F1");
        await input.waitFor({ state: "visible" });
        await input.fill(`>${title}`);
        try {
            await row.waitFor({ state: "visible", timeout: 3_000 });
            break;
        } catch (error) {
            if (attempt >= 10) throw error;
            await page.keyboard.press("Escape");
            await new Promise((r) => setTimeout(r, 1_000));
        }
    }
    await input.press("Enter");
}

/** Opens `file` with Quick Open and waits for its editor. */
async function open(file) {
    await page.keyboard.press("Control+P");
    const input = page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible" });
    await input.fill(file);
    await page.locator(".quick-input-list .monaco-list-row", { hasText: file }).first().waitFor({ state: "visible" });
    await input.press("Enter");
    await page.locator(`.tab.active[aria-label^="${file}"]`).waitFor({ state: "visible" });
}

/** The frame of the Tandem chat webview (inside VS Code's webview iframes). */
async function chatFrame() {
    return until("the Tandem chat webview", async () => {
        for (const frame of page.frames()) {
            if (await frame.locator("#composer #input").count().catch(() => 0)) return frame;
        }
        return undefined;
    });
}

async function transcriptText(chat) {
    return chat.locator("#transcript").innerText();
}

/** Clicks the button `label` of the notification that contains `text`. */
async function answerNotification(text, label) {
    const toast = page.locator(".notification-toast", { hasText: text }).first();
    await toast.waitFor({ state: "visible", timeout: 30_000 });
    await toast.locator(".monaco-button", { hasText: label }).first().click();
}

/**
 * Waits until Tandem's language client has given the server `file` (its didOpen, in the LSP
 * trace of the Tandem output channel): from then on Ctrl+. there gets the server's code
 * actions. The extension starts with the first editor or once the window has started; in
 * BENCHMARKS.md that is about when the file's error shows, before a user can press Ctrl+. on
 * it. The test waits for the event rather than racing it. Where Tandem never starts
 * (an extension that waits for its view) the wait ends after `ms` without failing: the code
 * action menu, checked next, then says what is missing.
 */
async function tandemHas(userData, file, ms = 60_000) {
    try {
        await until(`Tandem's language client to open ${file}`, async () => tandemOpened(userData, file), ms);
        return true;
    } catch {
        console.log(`Tandem's language client did not open ${file} within ${ms} ms`);
        return false;
    }
}

/** Waits until the Tandem output channel (its log and LSP trace) contains `text`. */
async function tandemSaid(userData, text, what, ms = 60_000) {
    await until(what, async () => tandemOutput(userData).includes(text), ms);
}

/**
 * Fails when the window has shown a notification of Tandem's (the notification center keeps
 * every one, toasts that went away included): a window whose user did not use Tandem yet
 * gets none, whatever is missing.
 */
async function noTandemNotification(when) {
    await palette("Notifications: Show Notifications");
    const center = page.locator(".notifications-center");
    await center.waitFor({ state: "visible" });
    const text = await center.innerText();
    await palette("Notifications: Hide Notifications");
    await center.waitFor({ state: "hidden" });
    if (/tandem/i.test(text)) throw new Error(`a notification of Tandem's ${when}:\n${text}`);
}

/**
 * The entry `title` of the code action menu just opened (Ctrl+.); fails listing the menu's
 * entries when it does not offer it.
 */
async function codeAction(title) {
    const rows = page.locator(".action-widget .monaco-list-row");
    const none = page.locator(".monaco-editor-overlaymessage", { hasText: "No code actions available" });
    await rows.first().or(none).first().waitFor({ state: "visible", timeout: 20_000 });
    if (await none.isVisible()) throw new Error(`Ctrl+. offers no code action at all ("No code actions available"); expected "${title}"`);
    const item = rows.filter({ hasText: title }).first();
    try {
        await item.waitFor({ state: "visible", timeout: 5_000 });
    } catch {
        const entries = (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
        throw new Error(`the code action menu does not offer "${title}"; its entries: ${JSON.stringify(entries)}`);
    }
    return item;
}

/**
 * Opens a page on `server` and runs `steps` in it; a failure saves `failed-<step>.png`. The
 * page closes and the server stops either way.
 */
async function inPage(browser, server, steps) {
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
        await steps();
    } catch (error) {
        await page.screenshot({ path: join(outDir, `failed-${step}.png`) }).catch(() => undefined);
        throw error;
    } finally {
        await page.close().catch(() => undefined);
        server.stop();
    }
}

async function trustedRun(browser) {
    const folder = join(root, "trusted");
    const agent = join(root, "trusted-agent");
    mkdirSync(folder);
    mkdirSync(agent);
    scriptedModels(agent, { script: TRUSTED_TURNS });
    // The doubled comma is an error; the duplicate keys two lines below, warnings elsewhere in
    // the file, which the fix's context gets from VS Code (tandem/diagnostics).
    writeFileSync(join(folder, "data.json"), DATA_JSON);
    writeFileSync(join(folder, "notes.txt"), "hello world\n");
    for (const [file, text] of Object.entries(TS_PROJECT)) {
        mkdirSync(dirname(join(folder, file)), { recursive: true });
        writeFileSync(join(folder, file), text);
    }
    // The after-edit report waits for the editor's new diagnostics up to settleMs (the default
    // 1.5 s): a condition, not a sleep, lengthened so that a loaded machine's TypeScript server
    // still answers within it.
    writeFileSync(join(agent, "settings.json"), JSON.stringify({ diagnostics: { settleMs: 15_000 } }));
    const server = await startCodeServer("trusted", folder, {
        ...baseSettings,
        "security.workspace.trust.enabled": false,
        "tandem.agentDir": agent,
        "tandem.model": "script/m",
        "tandem.bashPermission": "allow",
    }, { ...process.env, PI_CODING_AGENT_DIR: agent });
    await inPage(browser, server, async () => {
        step = "trusted-open";
        await page.goto(server.url);
        await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });
        await page.locator(".statusbar").waitFor({ state: "visible" });

        step = "trusted-fix";
        // A fresh window, and straight to the error: no Tandem view or command first. The
        // extension starts with the window (onLanguage, onStartupFinished) and its language
        // client gets the file, so the first Ctrl+. offers the server's "Ask Tandem to fix".
        await open("data.json");
        // VS Code's JSON server reports the doubled comma; F8 puts the cursor on it.
        await until("the JSON diagnostic", async () => (await page.locator(".squiggly-error").count()) > 0);
        // And the duplicate keys' warnings: the code action list is asked for once the
        // diagnostics stopped changing (a change refreshes the list under the click).
        await until("the JSON warnings", async () => (await page.locator(".squiggly-warning").count()) >= 2);
        await tandemHas(server.userData, "data.json");
        await new Promise((r) => setTimeout(r, 500));
        // A click on the action can lose a race inside VS Code: the action list, with the
        // command the language client cached for the action, is released when the widget hides,
        // at times before the command runs (the extension host logs "Actual command not found,
        // wanted to execute tandem.fixDiagnostic"). Nothing reached Tandem then: ask again.
        const review = page.locator(".notification-toast", { hasText: "Tandem wants to edit data.json" });
        for (let attempt = 1; ; attempt++) {
            await page.locator(".monaco-editor .view-lines").first().click();
            await page.keyboard.press("F8");
            await page.keyboard.press("Escape");
            await page.keyboard.press("Control+.");
            const fixItem = await codeAction("Ask Tandem to fix");
            if (attempt === 1) await shot("02-fix-code-action");
            await fixItem.click();
            try {
                await until(
                    "the fix to reach Tandem (its session, or its edit's review)",
                    async () => existsSync(join(agent, "sessions")) || (await review.count()) > 0,
                    10_000,
                );
                break;
            } catch (error) {
                if (attempt >= 3) throw error;
                console.log(`the fix did not reach Tandem after click ${attempt}: asking again`);
                await page.keyboard.press("Escape");
            }
        }

        step = "trusted-fix-review";
        // The review: a diff of data.json and a question with Apply / Reject.
        await page.locator(".tab", { hasText: "Tandem's edit" }).first().waitFor({ state: "visible", timeout: 30_000 });
        await review.waitFor({ state: "visible" });
        await shot("03-fix-review");
        await answerNotification("Tandem wants to edit data.json", "Apply");
        await until("the review's diff to close", async () => (await page.locator(".tab", { hasText: "Tandem's edit" }).count()) === 0);

        step = "trusted-chat-open";
        // The chat, opened only now, shows the fix's run from its start.
        await palette("Tandem: Open Chat");
        let chat = await chatFrame();
        await until("the server to run", async () => (await chat.locator("#server-status").isHidden()) && (await chat.locator("#input").isEnabled()));
        await until("the fix's answer", async () => (await transcriptText(chat)).includes("Fixed the doubled comma."));
        if (!(await transcriptText(chat)).includes("The object has a doubled comma")) {
            throw new Error(`the chat lacks the start of the fix's run:\n${await transcriptText(chat)}`);
        }
        // (VS Code may hand the extension its machine-scoped settings, tandem.agentDir among
        // them, a moment after start: the view may show until then.)
        await until("no Get Started view, since a model is configured", async () => (await page.locator(".pane-header", { hasText: "Get Started" }).count()) === 0, 15_000);
        await shot("01-chat-open");

        step = "trusted-fix-applied";
        // Nobody pressed Ctrl+S: the extension saved the accepted edit when the server asked,
        // before `cat data.json` ran.
        if (readFileSync(join(folder, "data.json"), "utf8") !== DATA_JSON.replace("1,, ", "1, ")) {
            throw new Error(`data.json was not saved before the command ran: ${JSON.stringify(readFileSync(join(folder, "data.json"), "utf8"))}`);
        }
        // The model read the whole file's diagnostics beside the request, not only the one it
        // was asked to fix: VS Code's answer to tandem/diagnostics.
        const fixContext = promptContexts(agent).find((text) => text.includes("File: data.json"));
        if (!/Elsewhere in this file: \d+ warnings? \(line 4\)/.test(fixContext ?? "")) {
            throw new Error(`the fix's context lacks the file's other diagnostics:\n${fixContext ?? "(no context for data.json)"}`);
        }
        // The fix's result says what it fixed, from VS Code's JSON server (tandem/diagnostics
        // after the edit), and that it made nothing new.
        const fixResult = toolResult(agent, "edit", /data\.json/, "for data.json");
        if (!/Fixed by this change \(\d+\): error \[json/.test(fixResult.text) || /New diagnostics/.test(fixResult.text)) {
            throw new Error(`the fix's result does not say it fixed the JSON error (and nothing else):\n${fixResult.text}`);
        }
        await open("data.json");
        await until("no error squiggle", async () => (await page.locator(".squiggly-error").count()) === 0);
        await until("the model's name in the chat's header", async () => (await chat.locator("#model-button").innerText()).includes("script"));
        const afterFix = await transcriptText(chat);
        if (/rejected/i.test(afterFix)) throw new Error(`the applied fix reads as rejected in the chat:\n${afterFix}`);
        await shot("04-fix-applied");

        step = "trusted-keybinding";
        // Ctrl+K A is ours alone: VS Code's default keyboard shortcuts (which list the installed
        // extensions' too) have it once, for tandem.ask, and pressing it in an editor asks.
        await palette("Preferences: Open Default Keyboard Shortcuts (JSON)");
        await page.locator(".tab.active", { hasText: "Default Keybindings" }).waitFor({ state: "visible", timeout: 20_000 });
        await page.locator(".monaco-editor .view-lines").first().click();
        await page.keyboard.press("Control+F");
        await page.locator(".find-widget textarea, .find-widget input").first().fill('"ctrl+k a"');
        const count = await until("the find widget's count", async () => {
            const text = (await page.locator(".find-widget .matchesCount").innerText()).trim();
            return text && !text.startsWith("?") ? text : undefined;
        });
        if (!/^1 of 1$/.test(count)) throw new Error(`"ctrl+k a" is bound ${count} in VS Code's default keyboard shortcuts; expected once (Tandem)`);
        await page.keyboard.press("Escape");
        await page.keyboard.press("Control+W");
        await open("notes.txt");
        await page.locator(".monaco-editor .view-lines").first().click();
        await page.keyboard.press("Control+K");
        await page.keyboard.press("A");
        await page.locator(".quick-input-widget", { hasText: "Ask Tandem" }).waitFor({ state: "visible", timeout: 10_000 });
        await page.keyboard.press("Escape");
        await page.keyboard.press("Control+W");

        step = "trusted-ask";
        await chat.locator("#input").fill("What do the notes say?");
        await chat.locator("#input").press("Enter");
        await until("the streamed answer to start", async () => (await transcriptText(chat)).includes("The notes say"));
        await until("the whole answer", async () => (await transcriptText(chat)).includes("and nothing else."));
        await until("the run to end", async () => (await chat.locator("#abort").isDisabled()));
        await shot("05-chat-answer");

        step = "trusted-reject";
        await chat.locator("#input").fill("Say goodbye instead.");
        await chat.locator("#input").press("Enter");
        await page.locator(".notification-toast", { hasText: "Tandem wants to edit notes.txt" }).waitFor({ state: "visible", timeout: 30_000 });
        await shot("06-reject-review");
        await answerNotification("Tandem wants to edit notes.txt", "Reject");
        await until("the answer after the rejection", async () => (await transcriptText(chat)).includes("I left notes.txt as it was."));
        if (readFileSync(join(folder, "notes.txt"), "utf8") !== "hello world\n") throw new Error("notes.txt changed on disk after Reject");
        const editors = await page.locator(".tab", { hasText: "notes.txt" }).count();
        if (editors > 0 && (await page.locator(".tab.dirty", { hasText: "notes.txt" }).count()) > 0) {
            throw new Error("notes.txt has unsaved changes after Reject");
        }
        const afterReject = await transcriptText(chat);
        if (!/rejected/i.test(afterReject)) throw new Error(`the chat does not say the edit was rejected:\n${afterReject}`);
        await shot("07-rejected");

        step = "trusted-typescript-ready";
        // The user has src/main.ts open (VS Code's TypeScript features check only the files in
        // its tabs), and VS Code's TypeScript server is up: its hover on `area` shows.
        await page.keyboard.press("Escape");
        await open("main.ts");
        await page.keyboard.press("Control+P");
        await page.locator(".quick-input-widget input").fill(":3:30");
        await page.locator(".quick-input-widget input").press("Enter");
        const hover = page.locator(".monaco-hover", { hasText: "area(width: number, height: number): number" }).first();
        await until(
            "VS Code's TypeScript hover on area",
            async () => {
                // A hover already shown (TypeScript's "(loading...)" one while its project
                // loads) would only take the focus: close it and ask again.
                await page.keyboard.press("Escape");
                await page.keyboard.press("Control+K");
                await page.keyboard.press("Control+I");
                await hover.waitFor({ state: "visible", timeout: 3_000 });
                return true;
            },
            60_000,
        );
        await shot("07a-typescript-hover");
        await page.keyboard.press("Escape");

        step = "trusted-language-tools";
        await chat.locator("#input").fill("Where is area defined, and who uses it? Then make total a string.");
        await chat.locator("#input").press("Enter");
        // definition and references, answered by VS Code's TypeScript features.
        const definition = await until("the definition's result", async () => toolResults(agent).find((r) => r.tool === "definition"));
        if (definition.error || !definition.text.startsWith("src/shapes.ts:1:17: export function area(")) {
            throw new Error(`the definition of area is not src/shapes.ts:1:17:\n${definition.text}`);
        }
        const references = await until("the references' result", async () => toolResults(agent).find((r) => r.tool === "references"));
        if (references.error || !references.text.includes("src/main.ts:3:30: export const total: number = area(2, 3);") || references.text.includes("src/shapes.ts:1:17")) {
            throw new Error(`the references of area are not its use in src/main.ts (without the declaration):\n${references.text}`);
        }

        step = "trusted-type-error";
        // The edit, reviewed and applied; its result ends with the type error VS Code's
        // TypeScript server now reports, which the model reads in its next request.
        await page.locator(".notification-toast", { hasText: /Tandem wants to edit src.main\.ts/ }).waitFor({ state: "visible", timeout: 30_000 });
        await shot("07b-typescript-review");
        await answerNotification("main.ts", "Apply");
        await until("the answer after the edit", async () => (await transcriptText(chat)).includes("which does not type-check."));
        const typeError = toolResult(agent, "edit", /src.main\.ts/, "for src/main.ts");
        const reported = "New diagnostics in src/main.ts after this change, from the editor:\nsrc/main.ts:3:14: error [ts 2322] Type 'number' is not assignable to type 'string'.";
        if (!typeError.text.includes(reported)) {
            throw new Error(`the edit's result lacks the type error from VS Code's TypeScript server:\n${typeError.text}`);
        }
        await until("the run to end", async () => (await chat.locator("#abort").isDisabled()));
        await until("the type error's squiggle", async () => (await page.locator(".squiggly-error").count()) > 0);
        await shot("07c-typescript-error");

        step = "trusted-abort";
        await chat.locator("#input").fill("Write a long essay about editors.");
        await chat.locator("#input").press("Enter");
        await until("the essay to stream", async () => (await transcriptText(chat)).includes("A very long essay about editors. A very"));
        await chat.locator("#abort").click();
        await until("the run to be aborted", async () => (await transcriptText(chat)).includes("Aborted."));
        await until("the run to end", async () => (await chat.locator("#abort").isDisabled()));
        const essay = await transcriptText(chat);
        if (essay.split("A very long essay").length > 300) throw new Error("the abort did not stop the stream early");
        // The chat followed the stream to its end (nobody scrolled it).
        await until("the chat to show its last line", async () =>
            chat.locator("#transcript").evaluate((t) => t.scrollHeight - t.scrollTop - t.clientHeight < 40),
        );
        await shot("08-aborted");
    });
}

async function restrictedRun(browser) {
    const folder = join(root, "restricted");
    const agent = join(root, "restricted-agent");
    mkdirSync(join(folder, ".pi"), { recursive: true });
    mkdirSync(agent);
    scriptedModels(agent, {
        user: [{ text: "An answer from the model in your own settings." }],
        project: [{ text: "PROJECT SETTINGS WERE USED" }],
    });
    writeFileSync(join(agent, "settings.json"), JSON.stringify({ defaultProvider: "user", defaultModel: "m" }));
    writeFileSync(join(folder, ".pi", "settings.json"), JSON.stringify({ defaultProvider: "project", defaultModel: "m" }));
    writeFileSync(join(folder, "readme.txt"), "a cloned repository\n");
    const server = await startCodeServer("restricted", folder, {
        ...baseSettings,
        "security.workspace.trust.enabled": true,
        "security.workspace.trust.startupPrompt": "never",
        "security.workspace.trust.banner": "always",
        "tandem.bashPermission": "deny",
        // No tandem.agentDir: in Restricted Mode VS Code ignores a restricted setting's value
        // in remote user settings too (code-server's are remote), so the agent dir comes from
        // the environment, as a user's own would.
    }, { ...process.env, PI_CODING_AGENT_DIR: agent });
    await inPage(browser, server, async () => {
        step = "restricted-open";
        await page.goto(server.url);
        await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });
        await page.locator(".statusbar-item", { hasText: "Restricted Mode" }).first().waitFor({ state: "visible", timeout: 30_000 });

        step = "restricted-quiet-start";
        // Tandem started with the window (limited support in Restricted Mode), told the server
        // the folder is not trusted, and said nothing.
        await tandemSaid(server.userData, "Sending notification 'initialized'", "Tandem's server to start with the window");
        if (!/"workspaceTrusted": false/.test(tandemOutput(server.userData))) throw new Error("the server was not told the folder is untrusted");
        await noTandemNotification("at the start of a window in Restricted Mode");

        step = "restricted-chat";
        await palette("Tandem: Open Chat");
        const chat = await chatFrame();
        await until("the server to run", async () => (await chat.locator("#server-status").isHidden()) && (await chat.locator("#input").isEnabled()));
        await chat.locator("#input").fill("Who answers?");
        // The Send button, not Enter: in Restricted Mode the workbench may take the keyboard
        // focus back just after the window opens, and the key then goes elsewhere (seen in CI:
        // the text stayed in the input and no prompt reached the server). Enter is exercised in
        // the trusted run.
        await chat.locator("#send").click();
        await until("the answer", async () => (await transcriptText(chat)).includes("An answer from the model in your own settings."));
        await until("the user's model in the chat's header", async () => (await chat.locator("#model-button").innerText()).includes("user"));
        if ((await transcriptText(chat)).includes("PROJECT SETTINGS WERE USED")) throw new Error("the untrusted project's settings were used");
        await shot("09-restricted");
    });
}

/** A secret the new user types as their key: it must never reach a log. */
const TYPED_KEY = "sk-ant-e2e-NEVER-LOGGED-7f3a9c";

/** Every file under `dir` whose text contains `needle`. */
function filesContaining(dir, needle) {
    const out = [];
    for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
        if (!entry.isFile()) continue;
        const path = join(entry.parentPath ?? entry.path, entry.name);
        try {
            if (readFileSync(path).includes(needle)) out.push(path);
        } catch {}
    }
    return out;
}

async function newUserRun(browser) {
    const folder = join(root, "new-user");
    const agent = join(root, "new-user-agent");
    mkdirSync(folder);
    mkdirSync(agent);
    writeFileSync(join(folder, "main.py"), "print('hello')\n");
    // No key anywhere: an empty agent dir and no provider variables in the environment.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/(_API_KEY|_OAUTH_TOKEN|_TOKEN)$/.test(name)));
    const server = await startCodeServer(
        "new-user",
        folder,
        { ...baseSettings, "security.workspace.trust.enabled": false, "tandem.bashPermission": "deny" },
        { ...env, PI_CODING_AGENT_DIR: agent },
    );
    await inPage(browser, server, async () => {
        step = "new-user-open";
        await page.goto(server.url);
        await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });

        step = "new-user-quiet-start";
        // No key anywhere: the server started with the window and found no model, and the
        // user, who has not asked for Tandem yet, is not told so in a pop-up.
        await tandemSaid(server.userData, "Received response 'tandem/models/list", "Tandem's server to start with the window and list the models");
        await noTandemNotification("at the start of a window without a key");

        step = "new-user-welcome";
        await palette("Tandem: Open Chat");
        const welcome = page.locator(".welcome-view-content", { hasText: "No model can be called yet" });
        await welcome.waitFor({ state: "visible", timeout: 30_000 });
        await shot("10-get-started");

        step = "new-user-set-key";
        await welcome.locator(".monaco-button", { hasText: "Set API Key" }).first().click();
        const input = page.locator(".quick-input-widget input");
        await input.waitFor({ state: "visible" });
        await input.fill("anthropic");
        await page.locator(".quick-input-list .monaco-list-row", { hasText: "anthropic" }).first().waitFor({ state: "visible" });
        await input.press("Enter");
        await page.locator(".quick-input-widget", { hasText: "API key for anthropic" }).waitFor({ state: "visible" });
        await input.fill(TYPED_KEY);
        await input.press("Enter");
        await page.locator(".notification-toast", { hasText: "stored the anthropic API key" }).waitFor({ state: "visible", timeout: 30_000 });
        await until("the Get Started view to go", async () => (await page.locator(".pane-header", { hasText: "Get Started" }).count()) === 0);
        await shot("11-key-stored");
    });
    const leaks = filesContaining(join(root, "new-user-user-data"), TYPED_KEY);
    if (leaks.length > 0) throw new Error(`the API key was written to ${leaks.join(", ")}`);
}

async function emptyWindowRun(browser) {
    const files = join(root, "loose-files");
    mkdirSync(files);
    const broken = join(files, "broken.json");
    writeFileSync(broken, '{\n    "a": 1,, "b": 2\n}\n');
    const agent = join(root, "empty-agent");
    mkdirSync(agent);
    const server = await startCodeServer("empty", undefined, { ...baseSettings, "security.workspace.trust.enabled": false }, { ...process.env, PI_CODING_AGENT_DIR: agent });
    await inPage(browser, server, async () => {
        step = "empty-open";
        await page.goto(server.url);
        await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });

        step = "empty-activated";
        // No folder and no file: Tandem activates without an error or a pop-up, and waits for
        // a file. (Had VS Code opened a file of its own, settings.json say, the server would
        // start with it; the host test covers the wait itself.)
        await until(
            "Tandem to activate in the empty window",
            async () => /the server starts with the first file|^Starting /m.test(tandemOutput(server.userData)),
            60_000,
        );
        await noTandemNotification("at the start of an empty window");

        step = "empty-first-file";
        // The first file opened starts the server, and Ctrl+. on its error offers the fix.
        await page.keyboard.press("Control+P");
        const input = page.locator(".quick-input-widget input");
        await input.waitFor({ state: "visible" });
        await input.fill(broken);
        await page.locator(".quick-input-list .monaco-list-row", { hasText: "broken.json" }).first().waitFor({ state: "visible" });
        await input.press("Enter");
        await page.locator('.tab.active[aria-label^="broken.json"]').waitFor({ state: "visible" });
        await until("the JSON diagnostic", async () => (await page.locator(".squiggly-error").count()) > 0);
        await tandemHas(server.userData, "broken.json");
        await page.locator(".monaco-editor .view-lines").first().click();
        await page.keyboard.press("F8");
        await page.keyboard.press("Escape");
        await page.keyboard.press("Control+.");
        await codeAction("Ask Tandem to fix");
        await shot("12-empty-window-fix");
        await page.keyboard.press("Escape");
    });
}

const browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
let status = 0;
try {
    await trustedRun(browser);
    await restrictedRun(browser);
    await newUserRun(browser);
    await emptyWindowRun(browser);
    console.log("real VS Code: every step passed");
} catch (error) {
    console.error(`real VS Code: step ${step} failed: ${error instanceof Error ? error.stack : error}`);
    status = 1;
} finally {
    await browser.close().catch(() => undefined);
    // Kept after a failure: the user data holds VS Code's logs, Tandem's output among them.
    if (status === 0) rmSync(root, { recursive: true, force: true });
    else console.error(`real VS Code: the run's folders and VS Code's logs are kept in ${root}`);
}
process.exit(status);
