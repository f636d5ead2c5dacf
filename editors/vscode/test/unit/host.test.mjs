// The host-side pieces that need no VS Code: settings mapping, binary lookup, the page template.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";

import { findBinary, missingBinaryMessage } from "../../out/host/binary.mjs";
import { fillTemplate } from "../../out/shared/html.mjs";
import { toServerSettings } from "../../out/shared/settings.mjs";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));

describe("settings → server configuration", () => {
    const defaults = Object.fromEntries(
        Object.entries(pkg.contributes.configuration.properties).map(([key, spec]) => [key.replace(/^tandem\./, ""), spec.default]),
    );

    it("sends the package defaults as confirm / ask and leaves empty values out", () => {
        assert.deepEqual(toServerSettings((key) => defaults[key]), { editMode: "confirm", bashPermission: "ask", editTimeoutMs: 120000, saveBeforeCommands: true });
        assert.equal(defaults.editMode, "confirm");
    });

    it("maps every server key", () => {
        const values = { model: "anthropic/claude-sonnet-4-5", thinkingLevel: "low", editMode: "auto", bashPermission: "deny", agentDir: "~/.pi/agent", editTimeoutMs: 5000, saveBeforeCommands: false, tools: ["read", "grep"] };
        assert.deepEqual(toServerSettings((key) => values[key]), values);
    });

    it("drops invalid timeouts and blank strings", () => {
        assert.deepEqual(toServerSettings((key) => ({ model: "  ", editTimeoutMs: -1 })[key]), { editMode: "confirm", bashPermission: "ask" });
    });

    it("declares every setting the README and the spec name", () => {
        for (const key of ["path", "model", "thinkingLevel", "editMode", "bashPermission", "agentDir", "editTimeoutMs", "saveBeforeCommands", "tools"]) {
            assert.ok(`tandem.${key}` in pkg.contributes.configuration.properties, key);
        }
    });
});

describe("binary lookup", () => {
    const dir = mkdtempSync(join(tmpdir(), "tandem-bin-"));
    const bin = join(dir, "tandem");
    writeFileSync(bin, "#!/bin/sh\n");
    chmodSync(bin, 0o755);
    writeFileSync(join(dir, "plain"), "");

    it("finds a bare name on PATH", () => {
        assert.deepEqual(findBinary("tandem", { PATH: `/nonexistent:${dir}` }), { found: true, path: bin });
    });

    it("explains a missing binary and names the setting", () => {
        const lookup = findBinary("tandem", { PATH: "/nonexistent" });
        assert.equal(lookup.found, false);
        assert.match(lookup.reason, /not found on PATH/);
        assert.match(missingBinaryMessage(lookup.reason), /tandem\.path/);
        assert.match(findBinary(join(dir, "missing")).reason, /does not exist/);
        assert.match(findBinary(join(dir, "plain")).reason, /not an executable/);
    });

    it("checks explicit paths", () => {
        assert.deepEqual(findBinary(bin, { PATH: "" }), { found: true, path: bin });
    });
});

describe("package", () => {
    it("pins every dependency exactly", () => {
        for (const [name, version] of Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })) {
            assert.match(version, /^\d+\.\d+\.\d+$/, `${name}@${version}`);
        }
        assert.match(pkg.dependencies["vscode-languageclient"], /^9\./);
    });

    it("does not register the server's own command ids (the language client does)", () => {
        const ours = pkg.contributes.commands.map((c) => c.command);
        for (const id of ["tandem.fixDiagnostic", "tandem.explain", "tandem.document", "tandem.writeTests", "tandem.abort"]) {
            assert.ok(!ours.includes(id), id);
        }
    });

    it("fills the chat page's placeholders", () => {
        const page = fillTemplate(readFileSync(new URL("../../media/chat.html", import.meta.url), "utf8"), {
            cspSource: "vscode-resource:",
            nonce: "N0NCE",
            scriptUri: "s.js",
            styleUri: "c.css",
        });
        assert.ok(!/\{\{\w+\}\}/.test(page));
        assert.match(page, /script-src 'nonce-N0NCE'/);
        assert.match(page, /<script nonce="N0NCE" src="s.js">/);
    });
});
