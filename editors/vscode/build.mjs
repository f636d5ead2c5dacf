// Builds the extension with esbuild:
//   dist/extension.js  the extension host code (CommonJS, `vscode` left external)
//   dist/webview.js    the chat webview (one browser script)
//   out/shared/*.js    the shared modules as ES modules, for the node tests
import { build } from "esbuild";
import { readdirSync } from "node:fs";

const common = { bundle: true, sourcemap: false, logLevel: "warning", target: "es2022" };

await Promise.all([
    build({ ...common, entryPoints: ["src/host/extension.ts"], outfile: "dist/extension.js", platform: "node", format: "cjs", external: ["vscode"] }),
    build({ ...common, entryPoints: ["src/webview/main.ts"], outfile: "dist/webview.js", platform: "browser", format: "iife" }),
    build({
        entryPoints: [
            ...readdirSync("src/shared").filter((f) => f.endsWith(".ts")).map((f) => `src/shared/${f}`),
            "src/host/binary.ts",
            "src/host/intel.ts",
        ],
        outdir: "out",
        outbase: "src",
        outExtension: { ".js": ".mjs" },
        bundle: true,
        platform: "node",
        format: "esm",
        target: "es2022",
        logLevel: "warning",
    }),
]);
