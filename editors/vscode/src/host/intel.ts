// The editor's language intelligence for the Tandem server: answers `tandem/diagnostics` and
// `tandem/languageRequest` (protocol-ext/README.md, "Language intelligence") from VS Code's
// own language features — every language server and extension VS Code runs, Tandem excepted.
//
// - Diagnostics: `languages.getDiagnostics`, less the Tandem client's own collection; each
//   document's generation counts `languages.onDidChangeDiagnostics` events for it. `analyzed`
//   is false for plaintext documents (no language server looks at those) and absent otherwise:
//   VS Code cannot tell whether a provider will report.
// - Language requests: VS Code's `vscode.execute…Provider` commands, which merge every
//   provider's answer, converted to LSP JSON. VS Code does not say how many providers it asked:
//   `servers` is 1 when the answer holds something, or when it is empty but the document has
//   symbols (a language server understands it and found nothing there); else 0. An empty
//   `workspace/symbol` is answered with `servers: 1` (no match).
// - Positions pass through: the client offers only UTF-16, VS Code's own unit.
//
// The VS Code API and the language client's converter are passed in, so the node tests can
// drive these handlers with stand-ins.

import type * as vscode from "vscode";
import type { Code2ProtocolConverter } from "vscode-languageclient/node";

import { DiagnosticGenerations } from "../shared/generations";
import type {
    Diagnostic,
    DiagnosticsParams,
    DiagnosticsResult,
    DocumentDiagnostics,
    LanguageRequestParams,
    LanguageRequestResult,
    Position,
} from "../shared/protocol";

/** The parts of the `vscode` module the handlers use. */
export type VsCodeApi = Pick<typeof vscode, "languages" | "workspace" | "commands" | "Uri" | "Position">;

/** The language client's parts the handlers use. */
export interface ClientParts {
    code2ProtocolConverter: Pick<Code2ProtocolConverter, "asUri" | "asRange" | "asLocation" | "asDiagnostic" | "asSymbolKind" | "asSymbolTags" | "asTextEdit" | "asWorkspaceSymbol">;
    /** The client's own diagnostics (Tandem's), left out of every answer. */
    diagnostics?: vscode.DiagnosticCollection;
}

/** A `tandem/languageRequest` method the extension does not answer (JSON-RPC -32601). */
export class UnknownMethod extends Error {
    readonly code = -32601;
    constructor(method: unknown) {
        super(`tandem/languageRequest: the method ${JSON.stringify(method)} is not one this editor answers`);
    }
}

const DEFAULT_WAIT_MS = 1500;
const DEFAULT_QUIET_MS = 250;
/** The longest wait the editor accepts, whatever the server asks. */
const MAX_WAIT_MS = 60_000;

export class EditorIntel {
    readonly generations = new DiagnosticGenerations();
    private readonly subscription: vscode.Disposable;

    constructor(private readonly api: VsCodeApi) {
        this.subscription = api.languages.onDidChangeDiagnostics((event) => this.generations.bump(event.uris.map((uri) => uri.toString())));
    }

    dispose(): void {
        this.subscription.dispose();
    }

    /** `tandem/diagnostics`. */
    async diagnostics(params: DiagnosticsParams | undefined, client: ClientParts): Promise<DiagnosticsResult> {
        const requested = params?.uris;
        let settled = true;
        if (params?.after && typeof params.after === "object") {
            const after = new Map<string, number>();
            for (const [raw, generation] of Object.entries(params.after)) {
                const uri = this.parse(raw);
                if (uri && typeof generation === "number") after.set(uri.toString(), generation);
            }
            const wait = Math.min(MAX_WAIT_MS, numberOr(params.waitMs, DEFAULT_WAIT_MS));
            const quiet = Math.min(MAX_WAIT_MS, numberOr(params.quietMs, DEFAULT_QUIET_MS));
            settled = await this.generations.settle(after, wait, quiet, (key) => this.analyzed(key) === false);
        }
        const files: DocumentDiagnostics[] = [];
        if (Array.isArray(requested)) {
            for (const raw of requested) {
                if (typeof raw !== "string") continue;
                const uri = this.parse(raw);
                const key = uri?.toString() ?? raw;
                const file: DocumentDiagnostics = {
                    uri: raw,
                    generation: this.generations.generation(key),
                    diagnostics: uri ? this.diagnosticsOf(uri, client) : [],
                };
                const analyzed = this.analyzed(key);
                if (analyzed !== undefined) file.analyzed = analyzed;
                files.push(file);
            }
        } else {
            for (const [uri] of this.api.languages.getDiagnostics()) {
                const diagnostics = this.diagnosticsOf(uri, client);
                if (diagnostics.length === 0) continue;
                const key = uri.toString();
                const file: DocumentDiagnostics = { uri: client.code2ProtocolConverter.asUri(uri), generation: this.generations.generation(key), diagnostics };
                const analyzed = this.analyzed(key);
                if (analyzed !== undefined) file.analyzed = analyzed;
                files.push(file);
            }
        }
        return { files, settled };
    }

    /** `tandem/languageRequest`. */
    async languageRequest(request: LanguageRequestParams | undefined, client: ClientParts): Promise<LanguageRequestResult> {
        const c = client.code2ProtocolConverter;
        const params = (request?.params ?? {}) as Record<string, unknown>;
        switch (request?.method) {
            case "textDocument/definition": {
                const { document, position } = await this.target(params);
                const found = await this.execute<(vscode.Location | vscode.LocationLink)[]>("vscode.executeDefinitionProvider", document.uri, position);
                const result = (found ?? []).map((item) => ("targetUri" in item ? locationLink(item, c) : c.asLocation(item)));
                return this.answer(result, document);
            }
            case "textDocument/references": {
                const { document, position } = await this.target(params);
                const found = await this.execute<vscode.Location[]>("vscode.executeReferenceProvider", document.uri, position);
                let result = (found ?? []).map((l) => c.asLocation(l));
                const context = params.context as { includeDeclaration?: unknown } | undefined;
                if (context?.includeDeclaration === false) {
                    // VS Code's references include the declaration: leave out the definitions.
                    const definitions = await this.execute<(vscode.Location | vscode.LocationLink)[]>("vscode.executeDefinitionProvider", document.uri, position);
                    const places = new Set((definitions ?? []).map((d) => ("targetUri" in d ? key(c.asUri(d.targetUri), c.asRange(d.targetSelectionRange ?? d.targetRange)) : key(c.asUri(d.uri), c.asRange(d.range)))));
                    result = result.filter((l) => !places.has(key(l.uri, l.range)));
                }
                return this.answer(result, document);
            }
            case "textDocument/documentSymbol": {
                const document = await this.document(params);
                const found = await this.execute<(vscode.SymbolInformation & vscode.DocumentSymbol)[]>("vscode.executeDocumentSymbolProvider", document.uri);
                const result = (found ?? []).map((s) => documentSymbol(s, c));
                return { servers: result.length > 0 ? 1 : 0, result };
            }
            case "workspace/symbol": {
                const query = typeof params.query === "string" ? params.query : "";
                const found = await this.execute<vscode.SymbolInformation[]>("vscode.executeWorkspaceSymbolProvider", query);
                return { servers: 1, result: (found ?? []).map((s) => c.asWorkspaceSymbol(s)) };
            }
            case "textDocument/hover": {
                const { document, position } = await this.target(params);
                const found = await this.execute<vscode.Hover[]>("vscode.executeHoverProvider", document.uri, position);
                const value = hoverText(found ?? []);
                return this.answer(value ? { contents: { kind: "markdown", value } } : null, document);
            }
            case "textDocument/rename": {
                const { document, position } = await this.target(params);
                const newName = typeof params.newName === "string" ? params.newName : "";
                const edit = await this.execute<vscode.WorkspaceEdit>("vscode.executeDocumentRenameProvider", document.uri, position, newName);
                const result = edit ? workspaceEdit(edit, c) : null;
                return this.answer(result, document);
            }
            default:
                throw new UnknownMethod(request?.method);
        }
    }

    /** `result` with `servers: 1` when it holds something or the document has symbols. */
    private async answer(result: unknown, document: vscode.TextDocument): Promise<LanguageRequestResult> {
        const empty = result === null || (Array.isArray(result) && result.length === 0);
        if (!empty) return { servers: 1, result };
        if (document.languageId === "plaintext") return { servers: 0, result };
        const symbols = await this.execute<unknown[]>("vscode.executeDocumentSymbolProvider", document.uri).catch(() => undefined);
        return { servers: Array.isArray(symbols) && symbols.length > 0 ? 1 : 0, result };
    }

    private execute<T>(command: string, ...args: unknown[]): Promise<T | undefined> {
        return Promise.resolve(this.api.commands.executeCommand<T>(command, ...args));
    }

    private parse(raw: string): vscode.Uri | undefined {
        try {
            return this.api.Uri.parse(raw, true);
        } catch {
            return undefined;
        }
    }

    /** `params.textDocument`, opened (not shown) so that its language features can answer. */
    private async document(params: Record<string, unknown>): Promise<vscode.TextDocument> {
        const raw = (params.textDocument as { uri?: unknown } | undefined)?.uri;
        const uri = typeof raw === "string" ? this.parse(raw) : undefined;
        if (!uri) throw new Error(`textDocument.uri is not a URI: ${JSON.stringify(raw)}`);
        return this.api.workspace.openTextDocument(uri);
    }

    private async target(params: Record<string, unknown>): Promise<{ document: vscode.TextDocument; position: vscode.Position }> {
        const document = await this.document(params);
        const p = params.position as Partial<Position> | undefined;
        if (typeof p?.line !== "number" || typeof p.character !== "number") {
            throw new Error(`position is not an LSP position: ${JSON.stringify(p)}`);
        }
        return { document, position: new this.api.Position(p.line, p.character) };
    }

    /** false for an open plaintext document; undefined (cannot tell) otherwise. */
    private analyzed(key: string): boolean | undefined {
        const document = this.api.workspace.textDocuments.find((d) => d.uri.toString() === key);
        return document?.languageId === "plaintext" ? false : undefined;
    }

    /** The diagnostics VS Code shows for `uri`, less the Tandem client's own, as LSP's. */
    private diagnosticsOf(uri: vscode.Uri, client: ClientParts): Diagnostic[] {
        const own = new Set<vscode.Diagnostic>(client.diagnostics?.get(uri) ?? []);
        return this.api.languages
            .getDiagnostics(uri)
            .filter((d) => !own.has(d))
            .map((d) => client.code2ProtocolConverter.asDiagnostic(d) as Diagnostic);
    }
}

function numberOr(value: unknown, fallback: number): number {
    return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : fallback;
}

function key(uri: string, range: { start: Position; end: Position }): string {
    return `${uri}#${range.start.line}:${range.start.character}-${range.end.line}:${range.end.character}`;
}

function locationLink(link: vscode.LocationLink, c: ClientParts["code2ProtocolConverter"]) {
    return {
        targetUri: c.asUri(link.targetUri),
        targetRange: c.asRange(link.targetRange),
        targetSelectionRange: c.asRange(link.targetSelectionRange ?? link.targetRange),
        ...(link.originSelectionRange ? { originSelectionRange: c.asRange(link.originSelectionRange) } : {}),
    };
}

/** LSP's `DocumentSymbol` (with children), or `SymbolInformation` for a flat answer. */
export function documentSymbol(symbol: vscode.SymbolInformation & Partial<vscode.DocumentSymbol>, c: ClientParts["code2ProtocolConverter"]): unknown {
    if (!symbol.range || !symbol.selectionRange) {
        return {
            name: symbol.name,
            kind: c.asSymbolKind(symbol.kind),
            location: c.asLocation(symbol.location),
            ...(symbol.containerName ? { containerName: symbol.containerName } : {}),
        };
    }
    const children = (symbol.children ?? []) as (vscode.SymbolInformation & vscode.DocumentSymbol)[];
    return {
        name: symbol.name,
        ...(symbol.detail ? { detail: symbol.detail } : {}),
        kind: c.asSymbolKind(symbol.kind),
        ...(symbol.tags && symbol.tags.length > 0 ? { tags: c.asSymbolTags(symbol.tags) } : {}),
        range: c.asRange(symbol.range),
        selectionRange: c.asRange(symbol.selectionRange),
        children: children.map((child) => documentSymbol(child, c)),
    };
}

/** Every hover's contents as one markdown text, a blank line between them. */
export function hoverText(hovers: readonly vscode.Hover[]): string | undefined {
    const parts: string[] = [];
    for (const hover of hovers) {
        for (const content of hover.contents) {
            let text: string;
            if (typeof content === "string") text = content;
            else if ("language" in content && typeof content.language === "string") text = `\`\`\`${content.language}\n${content.value}\n\`\`\``;
            else text = content.value;
            if (text.trim() !== "") parts.push(text.trim());
        }
    }
    return parts.length > 0 ? parts.join("\n\n") : undefined;
}

/** A rename's edit as LSP's `changes` (VS Code's `entries()`: the text edits of each file). */
function workspaceEdit(edit: vscode.WorkspaceEdit, c: ClientParts["code2ProtocolConverter"]) {
    const changes: Record<string, unknown[]> = {};
    for (const [uri, edits] of edit.entries()) {
        const key = c.asUri(uri);
        changes[key] = [...(changes[key] ?? []), ...edits.map((e) => c.asTextEdit(e))];
    }
    return { changes };
}
