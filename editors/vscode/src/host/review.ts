// The review of an edit Tandem proposes in confirm mode.
//
// The server marks such edits with change annotations that need confirmation, which plain
// vscode-languageclient hands to VS Code's Refactor Preview. There, changes that need
// confirmation start unticked: the natural click on "Apply" applies nothing, and the server is
// told the user rejected the edit. So the extension answers `workspace/applyEdit` itself: an edit
// that needs confirmation opens a diff of each file (what the user has now, left; Tandem's
// change, right) and asks Apply or Reject, in a notification and in the diff's title bar. Apply
// applies exactly what was shown, unless the user typed in the file meanwhile (then nothing is
// applied and the agent is told to read the file again, so no keystroke is lost). Edits that need
// no confirmation (edit mode `auto`) are applied at once, after the same version check.

import * as path from "node:path";
import * as vscode from "vscode";
import type {
    ApplyWorkspaceEditParams,
    ApplyWorkspaceEditResult,
    LanguageClient,
    WorkspaceEdit as LspWorkspaceEdit,
} from "vscode-languageclient/node";

import { countLineChanges } from "../shared/diff";

/** The URI scheme of the proposed texts shown on the right of a review's diff. */
export const PROPOSED_SCHEME = "tandem-proposed";
/** The context key that shows the Apply / Reject buttons in a review's title bar. */
const REVIEWING = "tandem.reviewing";

type Choice = "apply" | "reject";

/** Whether any change of `edit` carries an annotation that needs confirmation. */
export function needsConfirmation(edit: LspWorkspaceEdit): boolean {
    return Object.values(edit.changeAnnotations ?? {}).some((a) => a?.needsConfirmation === true);
}

/** `edit` without its change annotations (its text edits lose their `annotationId`). */
export function withoutAnnotations(edit: LspWorkspaceEdit): LspWorkspaceEdit {
    const strip = <T extends object>(value: T): T => {
        const { annotationId: _ignored, ...rest } = value as T & { annotationId?: string };
        return rest as T;
    };
    const plain: LspWorkspaceEdit = {};
    if (edit.changes) plain.changes = edit.changes;
    if (edit.documentChanges) {
        plain.documentChanges = edit.documentChanges.map((change) =>
            "textDocument" in change ? { ...change, edits: change.edits.map((e) => strip(e)) } : strip(change),
        );
    }
    return plain;
}

/** The versioned documents of `edit` whose open copy has another version now. */
function staleDocuments(edit: LspWorkspaceEdit, client: LanguageClient): string[] {
    const open = new Map(vscode.workspace.textDocuments.map((d) => [d.uri.toString(), d]));
    const stale: string[] = [];
    for (const change of edit.documentChanges ?? []) {
        if (!("textDocument" in change)) continue;
        const version = change.textDocument.version;
        if (typeof version !== "number" || version < 0) continue;
        const uri = client.protocol2CodeConverter.asUri(change.textDocument.uri);
        const doc = open.get(uri.toString());
        if (doc && doc.version !== version) stale.push(vscode.workspace.asRelativePath(uri));
    }
    return stale;
}

/** One file of a review: its text now and with the edit. */
type FileChange = { uri: vscode.Uri; before: string; after: string; created: boolean };

async function textOf(uri: vscode.Uri): Promise<string | undefined> {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (open) return open.getText();
    try {
        return (await vscode.workspace.openTextDocument(uri)).getText();
    } catch {
        return undefined; // a file the edit creates
    }
}

/** `text` with `edits` (ranges in `text`) applied. */
function applyTextEdits(text: string, edits: readonly vscode.TextEdit[]): string {
    const lineStarts = [0];
    for (let i = 0; i < text.length; i++) if (text[i] === "\n") lineStarts.push(i + 1);
    const offset = (p: vscode.Position) => {
        const start = lineStarts[Math.min(p.line, lineStarts.length - 1)] ?? text.length;
        const end = lineStarts[p.line + 1] ?? text.length;
        return Math.min(start + p.character, end);
    };
    const sorted = [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start));
    let out = text;
    for (const e of sorted) out = out.slice(0, offset(e.range.start)) + e.newText + out.slice(offset(e.range.end));
    return out;
}

export class EditReview implements vscode.Disposable {
    private readonly proposed = new Map<string, string>();
    private readonly disposables: vscode.Disposable[] = [];
    private decide: ((choice: Choice) => void) | undefined;
    /** Reviews wait for the one before them. */
    private queue: Promise<unknown> = Promise.resolve();
    private counter = 0;

    constructor(private readonly output: vscode.OutputChannel) {
        const changed = new vscode.EventEmitter<vscode.Uri>();
        this.disposables.push(
            changed,
            vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, {
                onDidChange: changed.event,
                provideTextDocumentContent: (uri) => this.proposed.get(uri.toString()) ?? "",
            }),
            vscode.commands.registerCommand("tandem.applyEdit", () => this.decide?.("apply")),
            vscode.commands.registerCommand("tandem.rejectEdit", () => this.decide?.("reject")),
        );
    }

    /** Answers the server's `workspace/applyEdit`. */
    handle(client: LanguageClient, params: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult> {
        const next = this.queue.then(() => this.run(client, params));
        this.queue = next.catch(() => undefined);
        return next;
    }

    private async run(client: LanguageClient, params: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult> {
        const plain = withoutAnnotations(params.edit);
        const edit = await client.protocol2CodeConverter.asWorkspaceEdit(plain);
        const stale = staleDocuments(params.edit, client);
        if (stale.length > 0) {
            return { applied: false, failureReason: `${stale.join(", ")} changed since Tandem read it` };
        }
        if (!needsConfirmation(params.edit)) {
            return { applied: await vscode.workspace.applyEdit(edit) };
        }
        const files: FileChange[] = [];
        for (const [uri, edits] of edit.entries()) {
            const before = await textOf(uri);
            files.push({ uri, before: before ?? "", after: applyTextEdits(before ?? "", edits), created: before === undefined });
        }
        // An undo deletes the files its turn created: shown as emptied.
        for (const change of params.edit.documentChanges ?? []) {
            if ("kind" in change && change.kind === "delete") {
                const uri = client.protocol2CodeConverter.asUri(change.uri);
                files.push({ uri, before: (await textOf(uri)) ?? "", after: "", created: false });
            }
        }
        const choice = await this.ask(params.label, files);
        if (choice === "reject") {
            return { applied: false, failureReason: "Reject was chosen in VS Code's review of the diff" };
        }
        const changedMeanwhile = staleDocuments(params.edit, client);
        if (changedMeanwhile.length > 0) {
            return {
                applied: false,
                failureReason: `${changedMeanwhile.join(", ")} changed during the review; nothing was applied`,
            };
        }
        return { applied: await vscode.workspace.applyEdit(edit) };
    }

    /** Shows each file's diff and waits for Apply or Reject (dismissing the question rejects). */
    private async ask(label: string | undefined, files: FileChange[]): Promise<Choice> {
        const review = ++this.counter;
        const shown: vscode.Uri[] = [];
        let added = 0;
        let removed = 0;
        for (const file of files) {
            const right = vscode.Uri.from({
                scheme: PROPOSED_SCHEME,
                path: file.uri.path,
                query: `review=${review}&side=after`,
            });
            this.proposed.set(right.toString(), file.after);
            let left = file.uri;
            if (file.created) {
                left = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: file.uri.path, query: `review=${review}&side=before` });
                this.proposed.set(left.toString(), "");
            }
            shown.push(left, right);
            const counts = countLineChanges(file.before, file.after);
            added += counts.added;
            removed += counts.removed;
            const name = path.basename(file.uri.path);
            await vscode.commands.executeCommand("vscode.diff", left, right, `${name} ↔ Tandem's ${file.created ? "new file" : "edit"}`, {
                preview: false,
            });
        }
        const names = files.map((f) => vscode.workspace.asRelativePath(f.uri)).join(", ");
        const verb = files.every((f) => f.created) ? "create" : "edit";
        const question = `${label ? `${label}: ` : ""}Tandem wants to ${verb} ${names} (+${added} −${removed} lines). Apply it?`;
        await vscode.commands.executeCommand("setContext", REVIEWING, true);
        const choice = await new Promise<Choice>((resolve) => {
            this.decide = resolve;
            void vscode.window.showInformationMessage(question, "Apply", "Reject").then((answer) => {
                resolve(answer === "Apply" ? "apply" : "reject");
            });
        });
        this.decide = undefined;
        await vscode.commands.executeCommand("setContext", REVIEWING, false);
        await this.closeDiffs(shown);
        for (const uri of shown) this.proposed.delete(uri.toString());
        this.output.appendLine(`review ${review} of ${names}: ${choice}`);
        return choice;
    }

    private async closeDiffs(shown: vscode.Uri[]): Promise<void> {
        const wanted = new Set(shown.map((u) => u.toString()));
        const tabs = vscode.window.tabGroups.all
            .flatMap((g) => g.tabs)
            .filter((t) => t.input instanceof vscode.TabInputTextDiff && wanted.has(t.input.modified.toString()));
        if (tabs.length > 0) await vscode.window.tabGroups.close(tabs);
    }

    dispose(): void {
        this.decide?.("reject");
        for (const d of this.disposables) d.dispose();
    }
}
