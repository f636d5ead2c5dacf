// A stand-in for the `vscode` module, enough to activate the extension in plain node (VS Code
// itself cannot run here). The parts the extension's own code relies on are real little
// implementations; anything else the language client touches is an inert "auto" object whose
// properties and calls return more inert objects (disposables that do nothing).
"use strict";

const path = require("node:path");
const { pathToFileURL, fileURLToPath } = require("node:url");

const calls = { errors: [], warnings: [], infos: [], commands: new Map(), executed: [], views: new Map(), output: [], contexts: {}, answers: [] };

/** The next scripted answer to a quick pick or an input box (`calls.answers`, in order). */
function answer(kind, question) {
    const next = calls.answers.shift();
    if (!next) throw new Error(`no scripted answer for a ${kind}`);
    return next(question);
}

function auto(name) {
    const cache = new Map();
    const target = function () {};
    return new Proxy(target, {
        get(_t, prop) {
            if (prop === "then") return undefined; // not a promise
            if (prop === Symbol.toPrimitive) return () => name;
            if (prop === "dispose") return () => {};
            if (prop === "toString") return () => name;
            if (typeof prop === "symbol") return undefined;
            if (!cache.has(prop)) cache.set(prop, auto(`${name}.${prop}`));
            return cache.get(prop);
        },
        apply() {
            return auto(`${name}()`);
        },
        construct() {
            return auto(`new ${name}`);
        },
    });
}

class Disposable {
    constructor(fn) {
        this.fn = fn;
    }
    static from(...items) {
        return new Disposable(() => items.forEach((d) => d && d.dispose && d.dispose()));
    }
    dispose() {
        if (this.fn) this.fn();
        this.fn = undefined;
    }
}

class EventEmitter {
    constructor() {
        this.listeners = new Set();
        this.event = (listener, thisArg) => {
            const bound = thisArg ? listener.bind(thisArg) : listener;
            this.listeners.add(bound);
            return new Disposable(() => this.listeners.delete(bound));
        };
    }
    fire(value) {
        for (const l of [...this.listeners]) l(value);
    }
    dispose() {
        this.listeners.clear();
    }
}

class Uri {
    constructor(scheme, fsPath) {
        this.scheme = scheme;
        this.fsPath = fsPath;
        this.path = fsPath;
    }
    static file(p) {
        return new Uri("file", p);
    }
    static parse(value) {
        if (value.startsWith("file:")) return new Uri("file", fileURLToPath(value));
        const u = new Uri(value.split(":")[0], value);
        return u;
    }
    static joinPath(base, ...parts) {
        return new Uri(base.scheme, path.join(base.fsPath, ...parts));
    }
    toString() {
        return this.scheme === "file" ? pathToFileURL(this.fsPath).href : this.fsPath;
    }
    toJSON() {
        return this.toString();
    }
    with() {
        return this;
    }
}

class Position {
    constructor(line, character) {
        this.line = line;
        this.character = character;
    }
}
class Range {
    constructor(a, b, c, d) {
        if (typeof a === "number") {
            this.start = new Position(a, b);
            this.end = new Position(c, d);
        } else {
            this.start = a;
            this.end = b;
        }
    }
}

const settings = {};
const configChanged = new EventEmitter();
const documentOpened = new EventEmitter();

function event() {
    return new EventEmitter().event;
}

const workspace = new Proxy(
    {
        workspaceFolders: undefined,
        isTrusted: true,
        onDidGrantWorkspaceTrust: event(),
        textDocuments: [],
        getConfiguration(section) {
            const prefix = section ? `${section}.` : "";
            return {
                get: (key, fallback) => (`${prefix}${key}` in settings ? settings[`${prefix}${key}`] : fallback),
                has: (key) => `${prefix}${key}` in settings,
                inspect: () => undefined,
                update: async () => {},
            };
        },
        onDidChangeConfiguration: configChanged.event,
        onDidOpenTextDocument: documentOpened.event,
        onDidChangeTextDocument: event(),
        onDidCloseTextDocument: event(),
        onDidSaveTextDocument: event(),
        onWillSaveTextDocument: event(),
        onDidChangeWorkspaceFolders: event(),
        onDidCreateFiles: event(),
        onDidRenameFiles: event(),
        onDidDeleteFiles: event(),
        onWillCreateFiles: event(),
        onWillRenameFiles: event(),
        onWillDeleteFiles: event(),
        onDidOpenNotebookDocument: event(),
        onDidChangeNotebookDocument: event(),
        onDidCloseNotebookDocument: event(),
        onDidSaveNotebookDocument: event(),
        notebookDocuments: [],
        applyEdit: async () => true,
    },
    { get: (t, p) => (p in t ? t[p] : auto(`workspace.${String(p)}`)) },
);

const window = new Proxy(
    {
        activeTextEditor: undefined,
        visibleTextEditors: [],
        onDidChangeActiveTextEditor: event(),
        onDidChangeVisibleTextEditors: event(),
        createOutputChannel(name) {
            // As VS Code's: writing to a disposed channel throws.
            let closed = false;
            const line = (text) => {
                if (closed) throw new Error("Channel has been closed");
                calls.output.push(text);
            };
            return { name, append: line, appendLine: line, replace: line, clear() {}, show() {}, hide() {}, dispose: () => void (closed = true) };
        },
        showErrorMessage: async (message) => {
            calls.errors.push(message);
            return undefined;
        },
        showWarningMessage: async (message) => {
            calls.warnings.push(message);
            return undefined;
        },
        showInformationMessage: async (message) => {
            calls.infos.push(message);
            return undefined;
        },
        registerWebviewViewProvider(id, provider) {
            calls.views.set(id, provider);
            return new Disposable();
        },
        showQuickPick: async (items, options) => answer("quick pick", { items: await items, options }),
        showInputBox: async (options) => answer("input box", { options }),
        withProgress: async (_options, task) => task({ report() {} }, { isCancellationRequested: false, onCancellationRequested: event() }),
    },
    { get: (t, p) => (p in t ? t[p] : auto(`window.${String(p)}`)) },
);

// Diagnostics as VS Code keeps them: per URI string, with the change event the extension counts.
const diagnostics = new Map();
const diagnosticsChanged = new EventEmitter();
const DiagnosticSeverity = { Error: 0, Warning: 1, Information: 2, Hint: 3 };

const languages = new Proxy(
    {
        onDidChangeDiagnostics: diagnosticsChanged.event,
        getDiagnostics(uri) {
            if (uri) return diagnostics.get(uri.toString()) ?? [];
            return [...diagnostics].map(([key, list]) => [Uri.parse(key), list]);
        },
        createDiagnosticCollection(name) {
            return { name, get: () => [], set() {}, delete() {}, clear() {}, forEach() {}, has: () => false, dispose() {} };
        },
    },
    { get: (t, p) => (p in t ? t[p] : auto(`languages.${String(p)}`)) },
);

const commands = {
    registerCommand(id, fn) {
        if (calls.commands.has(id)) throw new Error(`command '${id}' already exists`);
        calls.commands.set(id, fn);
        return new Disposable(() => calls.commands.delete(id));
    },
    async executeCommand(id, ...args) {
        calls.executed.push(id);
        if (id === "setContext") calls.contexts[args[0]] = args[1];
        const fn = calls.commands.get(id);
        return fn ? fn(...args) : undefined;
    },
    getCommands: async () => [...calls.commands.keys()],
};

const real = {
    version: "1.82.0",
    Disposable,
    EventEmitter,
    Uri,
    Position,
    Range,
    Selection: Range,
    DiagnosticSeverity,
    workspace,
    window,
    languages,
    commands,
    env: new Proxy({ appName: "fake", language: "en", machineId: "x", sessionId: "y", uriScheme: "vscode" }, { get: (t, p) => (p in t ? t[p] : auto(`env.${String(p)}`)) }),
    __calls: calls,
    /** An ExtensionContext with in-memory secret storage and global state. */
    __context(extensionDir) {
        const secrets = new Map();
        const state = new Map();
        return {
            subscriptions: [],
            extensionUri: Uri.file(extensionDir),
            extensionPath: extensionDir,
            asAbsolutePath: (relative) => path.join(extensionDir, relative),
            secrets: {
                get: async (key) => secrets.get(key),
                store: async (key, value) => void secrets.set(key, value),
                delete: async (key) => void secrets.delete(key),
                onDidChange: event(),
                __map: secrets,
            },
            globalState: { get: (key) => state.get(key), update: async (key, value) => void state.set(key, value), keys: () => [...state.keys()] },
        };
    },
    /** VS Code's diagnostics by URI string; fire `__diagnosticsChanged` with `{uris}` after a change. */
    __diagnostics: diagnostics,
    __diagnosticsChanged: diagnosticsChanged,
    __settings: settings,
    __configChanged: configChanged,
    /** Fire with a document (`{uri, languageId, version, getText}`) to tell listeners it opened. */
    __documentOpened: documentOpened,
};

module.exports = new Proxy(real, { get: (t, p) => (p in t ? t[p] : typeof p === "symbol" ? undefined : auto(`vscode.${p}`)) });
