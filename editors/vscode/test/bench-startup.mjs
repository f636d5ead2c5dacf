// What activating with every window costs: a fresh code-server window on a folder, with the
// extension activating as package.json says (`onLanguage` + `onStartupFinished`), with either
// event alone, as it did before (`[]`: only on its commands and views), and without the
// extension.
//
//   node test/bench-startup.mjs --code-server <launcher> --vsix <file> [--runs 5] [--out <dir>]
//   node test/bench-startup.mjs --report <dir>/startup.json     (the tables of an earlier run)
//
// Each run is a new code-server (new user data, the .vsix installed and its package.json's
// activationEvents rewritten for the variant) and a new Chromium page; the scripted user opens
// data.json (it has an error) as soon as the workbench has started, like someone about to press
// Ctrl+. on it. The variants take turns, so that drift on a shared machine spreads over all.
// Per run, in ms since the page's navigation started:
//
// - workbench: VS Code's own marks `code/didStartWorkbench`, `code/LifecyclePhase/Restored`,
//   `…/Eventually` (start-up finished: what `onStartupFinished` waits for) and
//   `code/didLoadExtensions`;
// - the file: when it was opened, and when VS Code's JSON server's error showed (its squiggle):
//   from then on a user can press Ctrl+. on it;
// - Tandem: when the extension host activated it (its log), and when Tandem's language client had
//   sent data.json to the server (a copy of what the client writes to the server, polled every
//   50 ms; the LSP trace stays off, as users have it): from then on Ctrl+. offers "Ask Tandem
//   to fix";
// - cost: the extension host's CPU time and the `tandem lsp` process's CPU time and resident
//   memory (the wrapper's `sh` and `tee` not counted), 20 s after navigation;
// - then the page is reloaded (VS Code restores data.json's editor during start-up, as when a
//   project is opened again): when the workbench started, when data.json and its error showed,
//   and when the new extension host's Tandem had sent it to its server.
//
// Prints tables of medians (and min to max) per variant; the raw runs go to <out>/startup.json
// (default target/vscode-bench-startup/).
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

import { baseSettings, startCodeServer } from "./e2e/code-server.mjs";

const args = Object.fromEntries(
    process.argv
        .slice(2)
        .reduce((pairs, arg, i, all) => (arg.startsWith("--") ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []),
);
for (const required of args.report ? [] : ["code-server", "vsix"]) {
    if (!args[required]) {
        console.error(`bench-startup.mjs: --${required} is required (see the usage at the top of the file)`);
        process.exit(2);
    }
}
const runs = Number(args.runs ?? 5);
const outDir = args.out ?? join(import.meta.dirname, "../../../target/vscode-bench-startup");
mkdirSync(outDir, { recursive: true });
const SAMPLE_AT_MS = 20_000;
const TICKS = 100; // clock ticks per second in /proc/<pid>/stat (USER_HZ)

/** The variants: package.json's activationEvents, or no extension at all. */
const VARIANTS = [
    { name: "no extension", events: null },
    { name: "[] (before)", events: [] },
    { name: "onStartupFinished", events: ["onStartupFinished"] },
    { name: "onLanguage", events: ["onLanguage"] },
    { name: "onLanguage + onStartupFinished", events: ["onLanguage", "onStartupFinished"] },
];

/**
 * Rewrites the installed extension's activationEvents, and puts a wrapper in place of its
 * binary that copies what the language client sends to the server into `log` (`tee`: the LSP
 * trace would do, but it is off by default and costs the extension host its own work).
 */
function prepareExtension(extensionsDir, events, log) {
    for (const entry of readdirSync(extensionsDir)) {
        const manifest = join(extensionsDir, entry, "package.json");
        if (!entry.startsWith("tandem.") || !existsSync(manifest)) continue;
        const json = JSON.parse(readFileSync(manifest, "utf8"));
        json.activationEvents = events;
        writeFileSync(manifest, JSON.stringify(json, null, 2));
        const bin = join(extensionsDir, entry, "bin");
        renameSync(join(bin, "tandem"), join(bin, "tandem-real"));
        writeFileSync(join(bin, "tandem"), `#!/bin/sh\ntee -a '${log}' | exec "$(dirname "$0")/tandem-real" "$@"\n`);
        chmodSync(join(bin, "tandem"), 0o755);
    }
}

/** Every process below `pid`, with its command line. */
function descendants(pid) {
    const children = new Map();
    for (const entry of readdirSync("/proc")) {
        if (!/^\d+$/.test(entry)) continue;
        try {
            const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
            const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
            if (!children.has(ppid)) children.set(ppid, []);
            children.get(ppid).push(Number(entry));
        } catch {}
    }
    const out = [];
    const queue = [pid];
    while (queue.length) {
        for (const child of children.get(queue.shift()) ?? []) {
            let cmdline = "";
            try {
                cmdline = readFileSync(`/proc/${child}/cmdline`, "utf8").replaceAll("\0", " ");
            } catch {}
            out.push({ pid: child, cmdline });
            queue.push(child);
        }
    }
    return out;
}

/** CPU time (ms) and resident memory (MiB) of a process. */
function usage(pid) {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cpuMs = ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return { cpuMs, rssMiB: rss ? Number(rss[1]) / 1024 : NaN };
}

/** How many times Tandem's language client has sent data.json to a server (`log`: see prepareExtension). */
function openCount(log) {
    if (!existsSync(log)) return 0;
    return (readFileSync(log, "utf8").match(/"method":"textDocument\/didOpen","params":\{"textDocument":\{"uri":"[^"]*\/data\.json"/g) ?? []).length;
}

/** When the extension host started activating Tandem (epoch ms), from its log. */
function activatedAt(userData) {
    const logs = join(userData, "logs");
    for (const entry of readdirSync(logs, { withFileTypes: true, recursive: true })) {
        if (!entry.isFile() || entry.name !== "remoteexthost.log") continue;
        const text = readFileSync(join(entry.parentPath ?? entry.path, entry.name), "utf8");
        const line = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3}) \[info\] ExtensionService#_doActivateExtension tandem\.tandem/m.exec(text);
        if (line) return new Date(`${line[1]}T${line[2]}`).getTime();
    }
    return undefined;
}

async function oneRun(browser, variant, index) {
    const root = mkdtempSync(join(tmpdir(), "tandem-bench-startup-"));
    const folder = join(root, "project");
    mkdirSync(folder);
    writeFileSync(join(folder, "data.json"), '{\n    "a": 1,, "b": 2\n}\n');
    const agent = join(root, "agent");
    mkdirSync(agent);
    const sent = join(root, "client-to-server.log");
    const server = await startCodeServer({
        codeServer: args["code-server"],
        vsix: variant.events ? args.vsix : undefined,
        root,
        outDir: root,
        name: "bench",
        folder,
        // The LSP trace off, as users have it.
        settings: { ...baseSettings, "security.workspace.trust.enabled": false, "tandem.trace.server": "off" },
        env: { ...process.env, PI_CODING_AGENT_DIR: agent },
        prepare: (dir) => variant.events && prepareExtension(dir, variant.events, sent),
    });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
        await page.goto(server.url);
        const origin = await page.evaluate(() => performance.timeOrigin);
        const since = () => Date.now() - origin;
        const mark = (name) => page.evaluate((n) => performance.getEntriesByName(n)[0]?.startTime, name);
        await page.waitForFunction(() => performance.getEntriesByName("code/didStartWorkbench").length > 0, null, { timeout: 60_000, polling: 20 });
        // The user opens data.json at once.
        await page.keyboard.press("Control+P");
        const input = page.locator(".quick-input-widget input");
        await input.waitFor({ state: "visible" });
        await input.fill("data.json");
        await page.locator(".quick-input-list .monaco-list-row", { hasText: "data.json" }).first().waitFor({ state: "visible" });
        await input.press("Enter");
        const opened = since();
        const squiggle = page.locator(".squiggly-error");
        let ready;
        let error;
        while (since() < SAMPLE_AT_MS) {
            if (ready === undefined && variant.events && openCount(sent) > 0) ready = since();
            if (error === undefined && (await squiggle.count()) > 0) error = since();
            await new Promise((r) => setTimeout(r, 50));
        }
        const processes = descendants(server.pid);
        const extHost = processes.find((p) => p.cmdline.includes("--type=extensionHost"));
        const tandem = processes.find((p) => / lsp\s*$/.test(p.cmdline) && p.cmdline.includes("tandem-real"));
        const activated = variant.events ? activatedAt(server.userData) : undefined;
        const result = {
            variant: variant.name,
            run: index,
            workbench: await mark("code/didStartWorkbench"),
            restored: await mark("code/LifecyclePhase/Restored"),
            eventually: await mark("code/LifecyclePhase/Eventually"),
            extensionsLoaded: await mark("code/didLoadExtensions"),
            fileOpened: opened,
            errorShown: error,
            tandemActivated: activated === undefined ? undefined : activated - origin,
            tandemReady: ready,
            extHostCpuMs: extHost ? usage(extHost.pid).cpuMs : undefined,
            tandemCpuMs: tandem ? usage(tandem.pid).cpuMs : undefined,
            tandemRssMiB: tandem ? usage(tandem.pid).rssMiB : undefined,
        };

        // The same window reloaded: VS Code restores data.json's editor during start-up, the
        // everyday case of reopening a project. The new extension host's Tandem opens it again.
        const before = openCount(sent);
        await page.reload();
        const origin2 = await page.evaluate(() => performance.timeOrigin);
        const since2 = () => Date.now() - origin2;
        await page.waitForFunction(() => performance.getEntriesByName("code/didStartWorkbench").length > 0, null, { timeout: 60_000, polling: 20 });
        // (Rarely VS Code has not stored the editor before the reload: then the reload's
        // figures stay empty.)
        const tab = page.locator('.tab.active[aria-label^="data.json"]');
        const restored = await tab.waitFor({ state: "visible", timeout: 15_000 }).then(
            () => true,
            () => false,
        );
        const shown = restored ? since2() : undefined;
        let ready2;
        let error2;
        while (restored && since2() < SAMPLE_AT_MS && (error2 === undefined || (variant.events && ready2 === undefined))) {
            if (ready2 === undefined && variant.events && openCount(sent) > before) ready2 = since2();
            if (error2 === undefined && (await squiggle.count()) > 0) error2 = since2();
            await new Promise((r) => setTimeout(r, 50));
        }
        Object.assign(result, {
            reloadWorkbench: await mark("code/didStartWorkbench"),
            reloadEditorShown: shown,
            reloadErrorShown: error2,
            reloadTandemReady: ready2,
        });
        console.log(JSON.stringify(result));
        return result;
    } finally {
        await page.close().catch(() => undefined);
        server.stop();
        // code-server's children end with it; give them a moment before the next window.
        await new Promise((r) => setTimeout(r, 1_000));
        rmSync(root, { recursive: true, force: true });
    }
}

function median(values) {
    const sorted = values.filter((v) => typeof v === "number" && Number.isFinite(v)).sort((a, b) => a - b);
    if (sorted.length === 0) return undefined;
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function cell(values, digits = 0) {
    const present = values.filter((v) => typeof v === "number" && Number.isFinite(v));
    if (present.length === 0) return "—";
    const f = (v) => v.toFixed(digits);
    return `${f(median(present))} (${f(Math.min(...present))} to ${f(Math.max(...present))})`;
}

/** Runs every variant `runs` times, taking turns; or, with --report, reads an earlier run's file. */
async function measure() {
    if (args.report) return JSON.parse(readFileSync(args.report, "utf8"));
    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox", "--disable-dev-shm-usage"] });
    const results = [];
    try {
        for (let i = 1; i <= runs; i++) {
            for (const variant of VARIANTS) {
                results.push(await oneRun(browser, variant, i));
                writeFileSync(join(outDir, "startup.json"), JSON.stringify(results, null, 2));
            }
        }
    } finally {
        await browser.close().catch(() => undefined);
    }
    return results;
}

const results = await measure();
// How long after its error showed Ctrl+. offers the fix (negative: before it showed).
for (const r of results) {
    if (r.tandemReady !== undefined && r.errorShown !== undefined) r.readyAfterError = r.tandemReady - r.errorShown;
    if (r.reloadTandemReady !== undefined && r.reloadErrorShown !== undefined) r.reloadReadyAfterError = r.reloadTandemReady - r.reloadErrorShown;
}

/** Prints a markdown table of `columns` ([title, key, digits]) per variant. */
function table(title, columns) {
    console.log(`\n${title}\n`);
    console.log(`| variant | ${columns.map(([name]) => name).join(" | ")} |`);
    console.log(`|---|${columns.map(() => "---").join("|")}|`);
    for (const variant of VARIANTS) {
        const mine = results.filter((r) => r.variant === variant.name);
        console.log(`| ${variant.name} | ${columns.map(([, key, digits]) => cell(mine.map((r) => r[key]), digits)).join(" | ")} |`);
    }
}

console.log(`\n${results.length / VARIANTS.length} runs per variant; median (min to max)`);
table("A fresh window; the user opens data.json at once (ms since navigation)", [
    ["workbench started", "workbench"],
    ["Restored", "restored"],
    ["Eventually", "eventually"],
    ["extensions loaded", "extensionsLoaded"],
    ["data.json opened", "fileOpened"],
    ["its error shown", "errorShown"],
    ["Tandem activated", "tandemActivated"],
    ["Ctrl+. offers the fix", "tandemReady"],
    ["… after the error showed", "readyAfterError"],
]);
table("The window reloaded, data.json's editor restored (ms since navigation)", [
    ["workbench started", "reloadWorkbench"],
    ["data.json shown", "reloadEditorShown"],
    ["its error shown", "reloadErrorShown"],
    ["Ctrl+. offers the fix", "reloadTandemReady"],
    ["… after the error showed", "reloadReadyAfterError"],
]);
table(`Cost, ${SAMPLE_AT_MS / 1000} s after the first navigation`, [
    ["extension host CPU (ms)", "extHostCpuMs"],
    ["tandem lsp CPU (ms)", "tandemCpuMs"],
    ["tandem lsp RSS (MiB)", "tandemRssMiB", 1],
]);
