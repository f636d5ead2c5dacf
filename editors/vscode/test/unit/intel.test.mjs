// The editor's language intelligence (src/host/intel.ts) with stand-ins for the VS Code API and
// the language client's converter: generations and the settle wait of tandem/diagnostics, the
// LSP shapes of tandem/languageRequest's answers, and `servers`.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { DiagnosticGenerations } from "../../out/shared/generations.mjs";
import { EditorIntel, UnknownMethod, hoverText } from "../../out/host/intel.mjs";

class Uri {
    constructor(value) {
        this.value = value;
    }
    static parse(value) {
        if (!/^[a-z]+:/.test(value)) throw new Error(`not a URI: ${value}`);
        return new Uri(value);
    }
    toString() {
        return this.value;
    }
}
class Position {
    constructor(line, character) {
        this.line = line;
        this.character = character;
    }
}
const range = (l1, c1, l2, c2) => ({ start: new Position(l1, c1), end: new Position(l2, c2) });
const lspRange = (l1, c1, l2, c2) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });

/** A stand-in `vscode`: diagnostics per URI, open documents, and `vscode.execute…` answers. */
function fakeApi({ diagnostics = {}, documents = {}, answers = {} } = {}) {
    const listeners = new Set();
    const executed = [];
    const api = {
        Uri,
        Position,
        languages: {
            onDidChangeDiagnostics(listener) {
                listeners.add(listener);
                return { dispose: () => listeners.delete(listener) };
            },
            getDiagnostics(uri) {
                if (uri) return diagnostics[uri.toString()] ?? [];
                return Object.entries(diagnostics).map(([key, list]) => [new Uri(key), list]);
            },
        },
        workspace: {
            get textDocuments() {
                return Object.entries(documents).map(([key, languageId]) => ({ uri: new Uri(key), languageId }));
            },
            openTextDocument: async (uri) => ({ uri, languageId: documents[uri.toString()] ?? "python" }),
        },
        commands: {
            executeCommand: async (command, ...args) => {
                executed.push([command, ...args]);
                const answer = answers[command];
                return typeof answer === "function" ? answer(...args) : answer;
            },
        },
    };
    /** Diagnostics of `uris` changed (`languages.onDidChangeDiagnostics`). */
    const change = (...uris) => {
        for (const l of [...listeners]) l({ uris: uris.map((u) => new Uri(u)) });
    };
    return { api, change, executed };
}

const asUri = (u) => u.toString();
const asRange = (r) => lspRange(r.start.line, r.start.character, r.end.line, r.end.character);
const asLocation = (l) => ({ uri: asUri(l.uri), range: asRange(l.range) });
/** The language client's converter, as far as the handlers use it (kinds shifted as VS Code's are). */
const client = {
    code2ProtocolConverter: {
        asUri,
        asRange,
        asLocation,
        asDiagnostic: (d) => ({ range: asRange(d.range), severity: d.severity + 1, message: d.message, ...(d.source ? { source: d.source } : {}) }),
        asSymbolKind: (k) => k + 1,
        asSymbolTags: (t) => t,
        asTextEdit: (e) => ({ range: asRange(e.range), newText: e.newText }),
        asWorkspaceSymbol: (s) => ({ name: s.name, kind: s.kind + 1, location: asLocation(s.location) }),
    },
};

const APP = "file:///w/app.py";
const NOTES = "file:///w/notes.txt";

describe("diagnostic generations", () => {
    it("settle once the listed documents report again and stay quiet", async () => {
        const g = new DiagnosticGenerations();
        g.bump([APP]);
        const waiting = g.settle(new Map([[APP, 1]]), 2_000, 30, () => false);
        setTimeout(() => g.bump(["file:///w/other.py"]), 5);
        setTimeout(() => g.bump([APP]), 10);
        setTimeout(() => g.bump([APP]), 20);
        const started = Date.now();
        assert.equal(await waiting, true);
        assert.equal(g.generation(APP), 3);
        assert.ok(Date.now() - started >= 45, "waited for the quiet time after the last report");
    });

    it("give up when the wait runs out, and skip documents nobody analyzes", async () => {
        const g = new DiagnosticGenerations();
        assert.equal(await g.settle(new Map([[APP, 0]]), 40, 10, () => false), false);
        assert.equal(await g.settle(new Map([[NOTES, 0]]), 5_000, 0, (key) => key === NOTES), true);
        assert.equal(await g.settle(new Map(), 5_000, 0, () => false), true);
    });
});

describe("tandem/diagnostics", () => {
    it("answers each document with its generation, less Tandem's own diagnostics", async () => {
        const own = { message: "Tandem's own", range: range(0, 0, 0, 1), severity: 0 };
        const { api, change } = fakeApi({
            diagnostics: {
                [APP]: [{ message: "\"nme\" is not defined", source: "Pyright", range: range(4, 11, 4, 14), severity: 0 }, own],
            },
            documents: { [APP]: "python", [NOTES]: "plaintext" },
        });
        const intel = new EditorIntel(api);
        const tandem = { ...client, diagnostics: { get: (uri) => (uri.toString() === APP ? [own] : []) } };
        change(APP);
        const result = await intel.diagnostics({ uris: [APP, NOTES] }, tandem);
        assert.deepEqual(result, {
            settled: true,
            files: [
                { uri: APP, generation: 1, diagnostics: [{ range: lspRange(4, 11, 4, 14), severity: 1, source: "Pyright", message: "\"nme\" is not defined" }] },
                { uri: NOTES, generation: 0, analyzed: false, diagnostics: [] },
            ],
        });
        // Every document with diagnostics when no URI is named.
        const all = await intel.diagnostics({}, tandem);
        assert.deepEqual(all.files.map((f) => f.uri), [APP]);
        intel.dispose();
    });

    it("waits for a newer report after `after`, or says it did not settle", async () => {
        const { api, change } = fakeApi({ diagnostics: { [APP]: [] } });
        const intel = new EditorIntel(api);
        change(APP);
        const waiting = intel.diagnostics({ uris: [APP], after: { [APP]: 1 }, waitMs: 2_000, quietMs: 10 }, client);
        setTimeout(() => change(APP), 20);
        const result = await waiting;
        assert.equal(result.settled, true);
        assert.equal(result.files[0].generation, 2);
        const late = await intel.diagnostics({ uris: [APP], after: { [APP]: 2 }, waitMs: 30, quietMs: 10 }, client);
        assert.equal(late.settled, false);
        intel.dispose();
    });
});

describe("tandem/languageRequest", () => {
    const position = { line: 9, character: 8 };
    const at = { textDocument: { uri: APP }, position };

    it("answers a definition with Locations and LocationLinks as LSP has them", async () => {
        const { api, executed } = fakeApi({
            answers: {
                "vscode.executeDefinitionProvider": [
                    { uri: new Uri("file:///w/models.py"), range: range(2, 6, 2, 10) },
                    { targetUri: new Uri("file:///w/user.py"), targetRange: range(0, 0, 9, 0), targetSelectionRange: range(0, 6, 0, 10) },
                ],
            },
        });
        const intel = new EditorIntel(api);
        const answer = await intel.languageRequest({ method: "textDocument/definition", params: at }, client);
        assert.deepEqual(answer, {
            servers: 1,
            result: [
                { uri: "file:///w/models.py", range: lspRange(2, 6, 2, 10) },
                { targetUri: "file:///w/user.py", targetRange: lspRange(0, 0, 9, 0), targetSelectionRange: lspRange(0, 6, 0, 10) },
            ],
        });
        const [command, uri, where] = executed[0];
        assert.equal(command, "vscode.executeDefinitionProvider");
        assert.equal(uri.toString(), APP);
        assert.deepEqual({ ...where }, position);
        intel.dispose();
    });

    it("says no server answered only when the document has no language features", async () => {
        const none = fakeApi({ answers: { "vscode.executeDefinitionProvider": [] } });
        let intel = new EditorIntel(none.api);
        assert.deepEqual(await intel.languageRequest({ method: "textDocument/definition", params: at }, client), { servers: 0, result: [] });
        const understood = fakeApi({
            answers: {
                "vscode.executeHoverProvider": [],
                "vscode.executeDocumentSymbolProvider": [{ name: "main", kind: 11, location: { uri: new Uri(APP), range: range(0, 0, 1, 0) } }],
            },
        });
        intel = new EditorIntel(understood.api);
        assert.deepEqual(await intel.languageRequest({ method: "textDocument/hover", params: at }, client), { servers: 1, result: null });
        const plain = fakeApi({ documents: { [NOTES]: "plaintext" } });
        intel = new EditorIntel(plain.api);
        const answer = await intel.languageRequest({ method: "textDocument/hover", params: { textDocument: { uri: NOTES }, position } }, client);
        assert.deepEqual(answer, { servers: 0, result: null });
        assert.equal(plain.executed.filter(([c]) => c === "vscode.executeDocumentSymbolProvider").length, 0);
    });

    it("joins hovers, nests document symbols and turns a rename into changes", async () => {
        assert.equal(hoverText([{ contents: [{ value: "**x**: int" }, "plain", { language: "python", value: "x = 1" }] }, { contents: [{ value: " " }] }]), "**x**: int\n\nplain\n\n```python\nx = 1\n```");
        const rename = { entries: () => [[new Uri(APP), [{ range: range(9, 8, 9, 11), newText: "name" }]], [new Uri("file:///w/m.py"), [{ range: range(1, 0, 1, 3), newText: "name" }]]] };
        const { api } = fakeApi({
            answers: {
                "vscode.executeHoverProvider": [{ contents: [{ value: "`nme`" }] }],
                "vscode.executeDocumentSymbolProvider": [
                    {
                        name: "User",
                        kind: 4,
                        detail: "",
                        range: range(0, 0, 9, 0),
                        selectionRange: range(0, 6, 0, 10),
                        location: { uri: new Uri(APP), range: range(0, 0, 9, 0) },
                        children: [{ name: "greet", kind: 5, detail: "(self)", range: range(2, 4, 4, 0), selectionRange: range(2, 8, 2, 13), children: [] }],
                    },
                ],
                "vscode.executeDocumentRenameProvider": (uri, where, newName) => (newName === "name" ? rename : undefined),
                "vscode.executeWorkspaceSymbolProvider": (query) => [{ name: query, kind: 4, location: { uri: new Uri(APP), range: range(0, 6, 0, 10) } }],
            },
        });
        const intel = new EditorIntel(api);
        assert.deepEqual(await intel.languageRequest({ method: "textDocument/hover", params: at }, client), { servers: 1, result: { contents: { kind: "markdown", value: "`nme`" } } });
        assert.deepEqual(await intel.languageRequest({ method: "textDocument/documentSymbol", params: { textDocument: { uri: APP } } }, client), {
            servers: 1,
            result: [
                {
                    name: "User",
                    kind: 5,
                    range: lspRange(0, 0, 9, 0),
                    selectionRange: lspRange(0, 6, 0, 10),
                    children: [{ name: "greet", detail: "(self)", kind: 6, range: lspRange(2, 4, 4, 0), selectionRange: lspRange(2, 8, 2, 13), children: [] }],
                },
            ],
        });
        assert.deepEqual(await intel.languageRequest({ method: "textDocument/rename", params: { ...at, newName: "name" } }, client), {
            servers: 1,
            result: {
                changes: {
                    [APP]: [{ range: lspRange(9, 8, 9, 11), newText: "name" }],
                    "file:///w/m.py": [{ range: lspRange(1, 0, 1, 3), newText: "name" }],
                },
            },
        });
        assert.deepEqual(await intel.languageRequest({ method: "workspace/symbol", params: { query: "User" } }, client), {
            servers: 1,
            result: [{ name: "User", kind: 5, location: { uri: APP, range: lspRange(0, 6, 0, 10) } }],
        });
    });

    it("leaves the declaration out of references when asked", async () => {
        const { api } = fakeApi({
            answers: {
                "vscode.executeReferenceProvider": [
                    { uri: new Uri("file:///w/m.py"), range: range(2, 6, 2, 10) },
                    { uri: new Uri(APP), range: range(9, 8, 9, 12) },
                ],
                "vscode.executeDefinitionProvider": [{ uri: new Uri("file:///w/m.py"), range: range(2, 6, 2, 10) }],
            },
        });
        const intel = new EditorIntel(api);
        const answer = await intel.languageRequest({ method: "textDocument/references", params: { ...at, context: { includeDeclaration: false } } }, client);
        assert.deepEqual(answer.result, [{ uri: APP, range: lspRange(9, 8, 9, 12) }]);
    });

    it("refuses unknown methods with -32601 and bad params with an error", async () => {
        const intel = new EditorIntel(fakeApi().api);
        await assert.rejects(intel.languageRequest({ method: "textDocument/formatting", params: {} }, client), (e) => e instanceof UnknownMethod && e.code === -32601);
        await assert.rejects(intel.languageRequest({ method: "textDocument/hover", params: { textDocument: { uri: "not a uri" }, position } }, client), /textDocument.uri/);
        await assert.rejects(intel.languageRequest({ method: "textDocument/hover", params: { textDocument: { uri: APP } } }, client), /position/);
    });
});
