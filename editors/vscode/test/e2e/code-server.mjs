// What the real-VS-Code suite (real-vscode.mjs) and the start-up benchmark (bench-startup.mjs)
// share: a fresh code-server with the .vsix installed, the settings that keep its window
// quiet, and the Tandem output channel as VS Code writes it to disk.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

/** User settings for a window without tips, updates, telemetry or AI features. */
export const baseSettings = {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "extensions.autoCheckUpdates": false,
    // ("off", not false: VS Code 1.139 would rewrite false to "off" in settings.json at start.)
    "extensions.autoUpdate": "off",
    "extensions.ignoreRecommendations": true,
    "telemetry.telemetryLevel": "off",
    "chat.disableAIFeatures": true,
    "update.mode": "none",
    "files.autoSave": "off",
    // The LSP traffic goes to the Tandem output channel, kept with VS Code's logs after a failure.
    "tandem.trace.server": "verbose",
};

async function freePort() {
    return new Promise((resolve, reject) => {
        const server = createServer();
        server.listen(0, "127.0.0.1", () => {
            const { port } = server.address();
            server.close(() => resolve(port));
        });
        server.on("error", reject);
    });
}

/**
 * A code-server (`codeServer`, the launcher) with its own user data and extensions under `root`
 * (a fresh VS Code: no state from an earlier window), `vsix` installed (none: no extension),
 * serving `folder` (none: an empty window). `prepare(extensionsDir)` runs after the install,
 * before the server starts. Its output goes to `<outDir>/<name>-code-server.log` on stop.
 */
export async function startCodeServer({ codeServer, vsix, root, outDir, name, folder, settings, env = process.env, prepare }) {
    const userData = join(root, `${name}-user-data`);
    const extensions = join(root, `${name}-extensions`);
    mkdirSync(join(userData, "User"), { recursive: true });
    mkdirSync(extensions, { recursive: true });
    writeFileSync(join(userData, "User", "settings.json"), JSON.stringify(settings, null, 2));
    const common = ["--user-data-dir", userData, "--extensions-dir", extensions];
    if (vsix) execFileSync(codeServer, [...common, "--install-extension", vsix], { stdio: "pipe" });
    if (prepare) prepare(extensions);
    const port = await freePort();
    const log = join(outDir, `${name}-code-server.log`);
    const child = spawn(
        codeServer,
        [...common, "--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--disable-telemetry", "--disable-update-check", "--disable-getting-started-override", ...(folder ? [folder] : [])],
        { stdio: ["ignore", "pipe", "pipe"], detached: true, env },
    );
    const lines = [];
    child.stdout.on("data", (d) => lines.push(d.toString()));
    child.stderr.on("data", (d) => lines.push(d.toString()));
    const deadline = Date.now() + 60_000;
    while (!lines.join("").includes("HTTP server listening")) {
        if (child.exitCode !== null || Date.now() > deadline) {
            writeFileSync(log, lines.join(""));
            throw new Error(`code-server did not start (log: ${log})`);
        }
        await new Promise((r) => setTimeout(r, 100));
    }
    return {
        url: folder ? `http://127.0.0.1:${port}/?folder=${encodeURIComponent(folder)}` : `http://127.0.0.1:${port}/`,
        userData,
        pid: child.pid,
        stop() {
            writeFileSync(log, lines.join(""));
            try {
                process.kill(-child.pid, "SIGTERM");
            } catch {}
        },
    };
}

/**
 * The Tandem output channel's text so far: VS Code writes each extension's channel to a log
 * file under the user data (`…/output_logging_…/N-Tandem.log`); "" before it exists.
 */
export function tandemOutput(userData) {
    let text = "";
    const logs = join(userData, "logs");
    if (!existsSync(logs)) return text;
    for (const entry of readdirSync(logs, { withFileTypes: true, recursive: true })) {
        if (entry.isFile() && entry.name.endsWith("Tandem.log")) text += readFileSync(join(entry.parentPath ?? entry.path, entry.name), "utf8");
    }
    return text;
}

/** Whether the Tandem output channel shows the language client's didOpen of a file named `file`. */
export function tandemOpened(userData, file) {
    const name = file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const opened = new RegExp(`Sending notification 'textDocument/didOpen'[^\\n]*\\nParams: \\{\\s*"textDocument": \\{\\s*"uri": "[^"]*/${name}"`);
    return opened.test(tandemOutput(userData));
}
