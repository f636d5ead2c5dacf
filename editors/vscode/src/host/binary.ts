// Finds the `tandem` binary the way a shell would, to explain a failure before the language
// client reports a bare ENOENT. No VS Code API here: the node tests use it directly.

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export type BinaryLookup =
    | { found: true; path: string }
    | { found: false; reason: string };

function isExecutableFile(file: string): boolean {
    try {
        const stat = fs.statSync(file);
        if (!stat.isFile()) return false;
        if (process.platform === "win32") return true;
        fs.accessSync(file, fs.constants.X_OK);
        return true;
    } catch {
        return false;
    }
}

/**
 * Resolves the `tandem.path` setting: empty means the binary bundled with the extension (a
 * platform package carries one at `bundled`) and otherwise `tandem` on PATH; `~` is expanded, a
 * path with a separator is checked as is (relative ones against `cwd`), a bare name is searched
 * on `PATH`.
 */
export function findBinary(setting: string, env: NodeJS.ProcessEnv = process.env, cwd?: string, bundled?: string): BinaryLookup {
    if (setting.trim() === "" && bundled && isExecutableFile(bundled)) return { found: true, path: bundled };
    let value = setting.trim() || "tandem";
    if (value === "~" || value.startsWith("~/")) value = path.join(os.homedir(), value.slice(1));
    const exts = process.platform === "win32" ? (env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").concat([""]) : [""];
    if (value.includes("/") || value.includes(path.sep)) {
        const full = path.isAbsolute(value) ? value : path.resolve(cwd ?? process.cwd(), value);
        for (const ext of exts) if (isExecutableFile(full + ext)) return { found: true, path: full + ext };
        return {
            found: false,
            reason: fs.existsSync(full) ? `${full} is not an executable file` : `${full} does not exist`,
        };
    }
    const dirs = (env.PATH ?? "").split(path.delimiter).filter((d) => d !== "");
    for (const dir of dirs) {
        for (const ext of exts) {
            const candidate = path.join(dir, value + ext);
            if (isExecutableFile(candidate)) return { found: true, path: candidate };
        }
    }
    return { found: false, reason: `\`${value}\` was not found on PATH` };
}

/** The message shown when the server cannot start; it names the setting to change. */
export function missingBinaryMessage(reason: string): string {
    return (
        `Tandem: cannot start the language server: ${reason}. ` +
        "Install the extension's package for your platform (it carries the binary), or install Tandem " +
        "(`cargo install --path server/tandem --locked` in the Tandem repository) and leave `tandem.path` empty, " +
        "or set `tandem.path` to the `tandem` binary's absolute path."
    );
}
