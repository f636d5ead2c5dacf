// The extension runtime: loads pi extensions, gives each its `pi` (ExtensionAPI) and `ctx`
// objects, composes handler results as pi does, and serves the protocol methods of EXTENSIONS.md.

import { EventEmitter } from "node:events";
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, extname, isAbsolute, join, resolve as resolvePath } from "node:path";
import { pathToFileURL } from "node:url";
import { builtinOrigin } from "./builtin-tools.mjs";
import { execCommand } from "./exec.mjs";
import { hostState } from "./host-state.mjs";
import { installLoader, runtimeProblem } from "./loader.mjs";
import { compileTypeScript } from "./loader-hooks.mjs";
import { ErrorCodes, RpcError, toJson } from "./protocol.mjs";
import { plainTheme } from "./theme.mjs";
import { truncateTail } from "./truncate.mjs";
import { NotSupportedError } from "./unsupported.mjs";

export const PROTOCOL_VERSION = 1;
/** How long a factory may take to load before it is reported as failed. */
const LOAD_TIMEOUT_MS = Number(process.env.TANDEM_EXTENSION_LOAD_TIMEOUT_MS) || 30_000;
/** After `$/cancelRequest`, how long a handler may take to finish before the host answers for it. */
const CANCEL_GRACE_MS = 1000;

const mirror = () => hostState.mirror;
const messageOf = (error) => (error instanceof Error ? error.message : String(error));
const jsonClone = (value) => (value === undefined ? undefined : JSON.parse(toJson(value)));

// --- notes: what the host cannot do, told to the user once per extension and feature -----------

const NOTES = {
	custom: "ctx.ui.custom() draws a pi-tui component, which Tandem does not draw here",
	footer: "ctx.ui.setFooter() replaces the footer with a pi-tui component, which Tandem does not draw",
	header: "ctx.ui.setHeader() replaces the header with a pi-tui component, which Tandem does not draw",
	editorComponent: "ctx.ui.setEditorComponent() replaces the prompt editor, which Tandem does not do for extensions",
	terminalInput: "ctx.ui.onTerminalInput() reads raw terminal keys, which Tandem does not pass to extensions",
	working: "ctx.ui.setWorkingMessage()/setWorkingIndicator() change pi's working indicator, which Tandem does not show",
	hiddenThinkingLabel: "ctx.ui.setHiddenThinkingLabel() labels hidden thinking, which Tandem does not show",
	autocomplete: "ctx.ui.addAutocompleteProvider() adds prompt completions, which Tandem does not use",
	toolsExpanded: "ctx.ui.setToolsExpanded() expands tool output, which Tandem does not do for extensions",
	themes: "ctx.ui.setTheme()/getTheme() switch pi themes; Tandem has no extension themes",
	widgetComponent: "ctx.ui.setWidget() with a pi-tui component is not drawn (widgets of text lines are shown)",
	editorText: 'ctx.ui.getEditorText() reads the prompt editor, which Tandem does not share (it returns "")',
	toolRenderers: "renderCall/renderResult draw tool calls with pi-tui; Tandem draws tool calls itself",
	messageRenderer: "registerMessageRenderer() draws messages with pi-tui; Tandem draws messages itself",
	entryRenderer: "registerEntryRenderer() draws session entries with pi-tui, which Tandem does not draw",
	toolRenderer: "registerToolRenderer() draws tool calls with pi-tui; Tandem draws tool calls itself",
	markdownTransformer: "registerMarkdownTransformer() changes how Markdown is drawn, which Tandem does not apply",
	shortcut: "registerShortcut() binds keys, which Tandem does not do for extensions",
	provider: "registerProvider() adds a model provider, which Tandem does not use yet",
	virtualModel: "registerVirtualModel() adds a routing model, which Tandem does not use yet",
	mcp: "registerMcpServer() adds an MCP server, which Tandem does not connect yet",
	modelCalls: "calls models through ctx.modelRegistry, which Tandem does not offer extensions yet (those calls fail)",
	sessionControl: "ctx.newSession()/fork()/switchSession()/navigateTree()/reload() are not available through Tandem yet (they fail)",
	executeTool: "ctx.executeTool() calls other tools, which Tandem does not offer extensions yet",
};

/** Source patterns that announce a note before the feature is used (scanned at load). */
const NOTE_PATTERNS = [
	["custom", /\.\s*custom\s*(?:<[^()]*>)?\s*\(/],
	["footer", /\.\s*setFooter\s*\(/],
	["header", /\.\s*setHeader\s*\(/],
	["editorComponent", /\.\s*setEditorComponent\s*\(/],
	["terminalInput", /\.\s*onTerminalInput\s*\(/],
	["working", /\.\s*setWorking(?:Message|Indicator|Visible)\s*\(/],
	["hiddenThinkingLabel", /\.\s*setHiddenThinkingLabel\s*\(/],
	["autocomplete", /\.\s*addAutocompleteProvider\s*\(/],
	["themes", /\.\s*setTheme\s*\(/],
	["modelCalls", /modelRegistry\s*\.\s*(?:complete|streamSimple|stream|classify|generateImages)\s*\(/],
	["sessionControl", /\bctx\s*\.\s*(?:newSession|fork|switchSession|navigateTree|reload)\s*\(/],
	["executeTool", /\.\s*executeTool\s*\(/],
];

// --- extension entries -----------------------------------------------------------------------

const ENTRY_FILES = ["index.ts", "index.mts", "index.js", "index.mjs", "index.cjs"];

/** The files an extension path stands for: the file, or a directory's manifest entries or index. */
function resolveEntries(path) {
	if (!existsSync(path)) throw new Error(`Extension not found: ${path}`);
	if (!statSync(path).isDirectory()) return [path];
	const manifest = join(path, "package.json");
	if (existsSync(manifest)) {
		let pkg;
		try {
			pkg = JSON.parse(readFileSync(manifest, "utf8"));
		} catch (error) {
			throw new Error(`${manifest} is not valid JSON: ${messageOf(error)}`);
		}
		const declared = Array.isArray(pkg?.pi?.extensions) ? pkg.pi.extensions : [];
		const entries = declared.map((p) => resolvePath(path, String(p))).filter((p) => existsSync(p));
		if (entries.length > 0) return entries.flatMap((p) => (statSync(p).isDirectory() ? resolveEntries(p) : [p]));
	}
	for (const name of ENTRY_FILES) if (existsSync(join(path, name))) return [join(path, name)];
	throw new Error(`No extension entry point in ${path} (expected index.ts, index.js or package.json "pi.extensions")`);
}

function extensionName(requested, entry, count) {
	const stem = (p) => basename(p, extname(p));
	const isDir = requested !== entry;
	if (!isDir) return stem(entry);
	const dirName = basename(requested);
	if (count === 1) return dirName;
	return `${dirName}/${stem(entry)}`;
}

function extensionLabel(requested, entry) {
	return requested === entry ? basename(entry) : `${basename(requested)}/${entry.slice(requested.length + 1)}`;
}

/** An extension's own source files: its entry and the local files it imports (not node_modules). */
function localSourceFiles(entry, limit = 50) {
	const seen = new Set();
	const queue = [entry];
	while (queue.length > 0 && seen.size < limit) {
		const file = queue.shift();
		if (seen.has(file)) continue;
		seen.add(file);
		let source;
		try {
			source = readFileSync(file, "utf8");
		} catch {
			continue;
		}
		for (const m of source.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
			const base = resolvePath(dirname(file), m[1]);
			const candidates = [base, base.replace(/\.js$/, ".ts"), `${base}.ts`, `${base}.js`, join(base, "index.ts"), join(base, "index.js")];
			const found = candidates.find((c) => existsSync(c) && statSync(c).isFile());
			if (found && !found.split(/[\\/]/).includes("node_modules")) queue.push(found);
		}
	}
	return [...seen];
}

/**
 * For a JavaScript syntax error V8 reported without a place: parse the extension's files with
 * Node's TypeScript parser (JavaScript is TypeScript), which names the line.
 */
function locateSyntaxError(entry) {
	for (const file of localSourceFiles(entry)) {
		if (!/\.(?:js|mjs|cjs)$/.test(file)) continue;
		try {
			compileTypeScript(readFileSync(file, "utf8"), file, pathToFileURL(file).href);
		} catch (error) {
			if (error instanceof SyntaxError) return error.message;
		}
	}
	return undefined;
}

function describeLoadError(error, ext) {
	const message = messageOf(error);
	if (!(error instanceof Error)) return message;
	if (error.code === "ERR_MODULE_NOT_FOUND" && /^Cannot find package/.test(message)) {
		let dir = dirname(ext.entry);
		while (dir !== dirname(dir) && !existsSync(join(dir, "package.json"))) dir = dirname(dir);
		const where = existsSync(join(dir, "package.json")) ? dir : dirname(ext.entry);
		return `${message} (its dependencies are not installed: run npm install in ${where})`;
	}
	// Errors from type stripping already name the place; V8's module syntax errors do not.
	if (error instanceof SyntaxError && !error.code) return locateSyntaxError(ext.entry) ?? message;
	return message;
}

function withTimeout(promise, ms, what) {
	let timer;
	return Promise.race([
		promise,
		new Promise((_, reject) => {
			timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
			timer.unref?.();
		}),
	]).finally(() => clearTimeout(timer));
}

// --- the host ---------------------------------------------------------------------------------

export class Host {
	constructor(connection) {
		this.conn = connection;
		this.extensions = [];
		this.rows = [];
		this.flagValues = new Map();
		this.notes = [];
		this.noteKeys = new Set();
		this.bus = new EventEmitter();
		this.bus.setMaxListeners(0);
		this.initialized = false;
		this.initializing = undefined;
		this.inflight = new Map();
		this.dirty = new Set();
		this.flushScheduled = false;
		this.promptDepth = 0;
		this.exiting = false;
		this.sessionManager = this.makeSessionManager();
		connection.onRequest((id, method, params) => this.handleRequest(id, method, params));
		connection.onNotification((method, params) => this.handleNotification(method, params));
		connection.onClose(() => this.exit(0));
		connection.beforeSend = () => this.flushRegistered();
	}

	// --- protocol plumbing ---------------------------------------------------------------------

	log(level, message) {
		try {
			this.conn.notify("log", { level, message });
		} catch {}
	}

	handleRequest(id, method, params) {
		const controller = new AbortController();
		const entry = { settled: false, method };
		this.inflight.set(id, entry);
		let graceTimer;
		// Events are handled one at a time, in the order they came: a notification-only event's
		// handlers finish before the next event's start (EXTENSIONS.md "Events"). The queue moves on
		// when an event is answered, so a handler that outlives its cancellation does not block it.
		let release = () => {};
		let gate = Promise.resolve();
		if (method === "event") {
			gate = this.eventQueue ?? Promise.resolve();
			const answered = new Promise((resolve) => {
				release = resolve;
			});
			this.eventQueue = gate.then(() => answered);
		}
		const finish = (error, result) => {
			if (entry.settled) return;
			entry.settled = true;
			release();
			clearTimeout(graceTimer);
			this.inflight.delete(id);
			if (!error) return this.conn.respond(id, result);
			if (error instanceof RpcError) return this.conn.respondError(id, error.code, error.message, error.data);
			const data = error instanceof Error && error.stack ? { stack: error.stack } : undefined;
			this.conn.respondError(id, ErrorCodes.HandlerFailed, messageOf(error) || "Extension handler failed", data);
		};
		entry.cancel = () => {
			if (controller.signal.aborted) return;
			controller.abort(Object.assign(new Error("Cancelled by Tandem"), { name: "AbortError" }));
			graceTimer = setTimeout(() => {
				finish(new RpcError(ErrorCodes.RequestCancelled, method === "tool/execute" ? "Tool execution was aborted" : "Request cancelled"));
			}, CANCEL_GRACE_MS);
		};
		gate
			.then(() => (entry.settled ? undefined : this.dispatch(method, params ?? {}, controller.signal)))
			.then(
				(result) => finish(null, result),
				(error) => finish(error),
			);
	}

	handleNotification(method, params) {
		switch (method) {
			case "state":
				this.applyState(params ?? {});
				break;
			case "$/cancelRequest":
				this.inflight.get(params?.id)?.cancel?.();
				break;
			case "exit":
				this.exit(0);
				break;
			default:
				break;
		}
	}

	async dispatch(method, params, signal) {
		if (method === "initialize") return this.initialize(params);
		if (method === "shutdown") return null;
		if (!this.initializing) throw new RpcError(ErrorCodes.InvalidRequest, "initialize has not been sent");
		await this.initializing.catch(() => {});
		if (!this.initialized) throw new RpcError(ErrorCodes.InvalidRequest, "initialize failed");
		switch (method) {
			case "event":
				return this.handleEvent(params, signal);
			case "tool/execute":
				return this.executeTool(params, signal);
			case "command/run":
				return this.runCommand(params, signal);
			case "command/complete":
				return this.completeCommand(params);
			default:
				throw new RpcError(ErrorCodes.MethodNotFound, `Unknown method: ${method}`);
		}
	}

	async exit(code) {
		if (this.exiting) return;
		this.exiting = true;
		for (const entry of this.inflight.values()) entry.cancel?.();
		try {
			this.flushRegistered();
			await this.conn.close();
		} catch {}
		process.exit(code);
	}

	applyState(state) {
		const m = mirror();
		for (const [key, value] of Object.entries(state)) {
			if (key === "appendedEntries") {
				if (Array.isArray(value)) m.entries = [...(m.entries ?? []), ...value];
			} else {
				m[key] = value;
			}
		}
	}

	// --- registrations announced after initialize ----------------------------------------------

	markDirty(kind) {
		if (!this.initialized) return;
		this.dirty.add(kind);
		if (!this.flushScheduled) {
			this.flushScheduled = true;
			setImmediate(() => this.flushRegistered());
		}
	}

	flushRegistered() {
		this.flushScheduled = false;
		if (this.dirty.size === 0) return;
		const params = {};
		if (this.dirty.has("tools")) params.tools = this.toolList();
		if (this.dirty.has("commands")) params.commands = this.commandList();
		if (this.dirty.has("events")) params.events = this.eventList();
		if (this.dirty.has("flags")) params.flags = this.flagList();
		if (this.dirty.has("notes")) params.notes = [...this.notes];
		this.dirty.clear();
		this.conn.notify("registered", params);
	}

	addNote(ext, key) {
		const id = `${ext.label}\u0000${key}`;
		if (this.noteKeys.has(id)) return;
		this.noteKeys.add(id);
		this.notes.push(`${ext.label}: ${NOTES[key] ?? key}`);
		this.markDirty("notes");
	}

	addBuiltinNote(ext, toolName) {
		const id = `${ext.label}\u0000builtin:${toolName}`;
		if (this.noteKeys.has(id)) return;
		this.noteKeys.add(id);
		this.notes.push(`${ext.label}: re-registers the built-in tool ${toolName} only to draw it differently; Tandem keeps its own ${toolName}`);
		this.markDirty("notes");
	}

	/** Notes for features an extension's source uses (it and the local files it imports). */
	scanNotes(ext) {
		for (const file of localSourceFiles(ext.entry)) {
			let source;
			try {
				source = readFileSync(file, "utf8");
			} catch {
				continue;
			}
			for (const [key, pattern] of NOTE_PATTERNS) if (pattern.test(source)) this.addNote(ext, key);
		}
	}

	// --- initialize ----------------------------------------------------------------------------

	initialize(params) {
		if (this.initializing) throw new RpcError(ErrorCodes.InvalidRequest, "initialize was already sent");
		this.initializing = this.doInitialize(params);
		return this.initializing;
	}

	async doInitialize(params) {
		const problem = runtimeProblem();
		if (problem) throw new RpcError(ErrorCodes.InternalError, problem);
		await installLoader();
		const m = mirror();
		if (typeof params.cwd === "string") {
			m.cwd = params.cwd;
			// Extensions read process.cwd() as pi's project directory.
			try {
				process.chdir(params.cwd);
			} catch {}
		}
		if (typeof params.mode === "string") m.mode = params.mode;
		if (typeof params.hasUI === "boolean") m.hasUI = params.hasUI;
		if (typeof params.isProjectTrusted === "boolean") m.isProjectTrusted = params.isProjectTrusted;
		if (typeof params.agentDir === "string") hostState.agentDir = params.agentDir;
		for (const [name, value] of Object.entries(params.flags ?? {})) this.flagValues.set(name, value);

		for (const spec of params.extensions ?? []) {
			const requested = isAbsolute(String(spec?.path ?? "")) ? String(spec.path) : resolvePath(m.cwd, String(spec?.path ?? ""));
			let entries;
			try {
				entries = resolveEntries(requested);
			} catch (error) {
				this.rows.push({ path: spec?.path, name: basename(requested, extname(requested)), error: messageOf(error) });
				continue;
			}
			const errors = [];
			for (const entry of entries) {
				const ext = this.newExtension(requested, entry, spec?.scope, entries.length);
				try {
					await withTimeout(this.loadExtension(ext), LOAD_TIMEOUT_MS, `Loading ${ext.label}`);
					this.extensions.push(ext);
				} catch (error) {
					ext.state = "failed";
					for (const unsubscribe of ext.busSubscriptions) unsubscribe();
					process.stderr.write(`extension host: ${ext.label} failed to load: ${error?.stack ?? error}\n`);
					errors.push(entries.length > 1 ? `${ext.label}: ${describeLoadError(error, ext)}` : describeLoadError(error, ext));
				}
			}
			this.rows.push({ path: spec?.path, name: extensionName(requested, entries[0], entries.length === 1 ? 1 : 2).split("/")[0], error: errors.length > 0 ? errors.join("; ") : null });
		}
		this.initialized = true;
		this.dirty.clear();
		return {
			protocolVersion: PROTOCOL_VERSION,
			extensions: this.rows,
			tools: this.toolList(),
			commands: this.commandList(),
			flags: this.flagList(),
			events: this.eventList(),
			notes: [...this.notes],
		};
	}

	newExtension(requested, entry, scope, count) {
		const ext = {
			path: requested,
			entry,
			scope: scope ?? "cli",
			name: extensionName(requested, entry, count),
			label: extensionLabel(requested, entry),
			state: "loading",
			handlers: new Map(),
			tools: new Map(),
			commands: new Map(),
			flags: new Map(),
			shortcuts: new Map(),
			messageRenderers: new Map(),
			entryRenderers: new Map(),
			toolRenderers: [],
			markdownTransformer: undefined,
			providers: new Map(),
			virtualModels: new Map(),
			mcpServers: new Map(),
			busSubscriptions: new Set(),
		};
		ext.ui = this.makeUi(ext);
		return ext;
	}

	async loadExtension(ext) {
		const module = await import(pathToFileURL(ext.entry).href);
		const candidates = [module.default, module.default?.default, module["module.exports"]];
		const factory = candidates.find((c) => typeof c === "function");
		if (!factory) throw new Error(`${ext.label} does not export a default factory function`);
		const api = this.makeApi(ext);
		await factory(api);
		ext.state = "active";
		this.scanNotes(ext);
	}

	// --- lists for initialize and `registered` ---------------------------------------------------

	toolList() {
		const tools = [];
		for (const ext of this.extensions) {
			for (const tool of ext.tools.values()) {
				const def = tool.definition;
				if (tool.keepsBuiltin) {
					// Tandem keeps its own tool of that name; registering it still makes it active.
					const out = { name: def.name, builtin: true, extension: ext.name };
					if (def.defaultActive !== undefined) out.defaultActive = def.defaultActive;
					tools.push(out);
					continue;
				}
				const out = {
					name: def.name,
					label: def.label ?? def.name,
					description: def.description ?? "",
					parameters: jsonClone(def.parameters) ?? { type: "object", properties: {} },
				};
				if (def.promptSnippet !== undefined) out.promptSnippet = String(def.promptSnippet);
				if (Array.isArray(def.promptGuidelines)) out.promptGuidelines = def.promptGuidelines.map(String);
				if (def.executionMode !== undefined) out.executionMode = def.executionMode;
				if (def.defaultActive !== undefined) out.defaultActive = def.defaultActive;
				for (const key of ["exposure", "namespace", "annotations", "outputSchema"]) {
					if (def[key] !== undefined) out[key] = jsonClone(def[key]);
				}
				out.extension = ext.name;
				tools.push(out);
			}
		}
		return tools;
	}

	commandList() {
		const commands = [];
		for (const ext of this.extensions) {
			for (const command of ext.commands.values()) {
				const out = { name: command.name, description: command.description ?? "", extension: ext.name };
				if (typeof command.getArgumentCompletions === "function") out.completions = true;
				commands.push(out);
			}
		}
		return commands;
	}

	flagList() {
		const flags = [];
		for (const ext of this.extensions) {
			for (const flag of ext.flags.values()) {
				const out = { name: flag.name, type: flag.type ?? "boolean", description: flag.description ?? "", extension: ext.name };
				if (flag.default !== undefined) out.default = flag.default;
				flags.push(out);
			}
		}
		return flags;
	}

	eventList() {
		const events = [];
		for (const ext of this.extensions) {
			for (const [name, handlers] of ext.handlers) if (handlers.length > 0 && !events.includes(name)) events.push(name);
		}
		return events;
	}

	// --- the `pi` object -------------------------------------------------------------------------

	makeApi(ext) {
		const host = this;
		const active = () => {
			if (ext.state === "failed") throw new Error(`Extension "${ext.label}" failed to load and its API is no longer active.`);
		};
		const action = () => {
			active();
			if (ext.state === "loading") throw new Error("Extension runtime not initialized. Action methods cannot be called during extension loading.");
		};
		const api = {
			on(event, handler) {
				active();
				if (typeof handler !== "function") throw new Error(`pi.on("${event}") needs a handler function`);
				const registered = (...args) => handler(...args);
				const list = ext.handlers.get(event) ?? [];
				const wasEmpty = list.length === 0;
				list.push(registered);
				ext.handlers.set(event, list);
				if (wasEmpty) host.markDirty("events");
				return () => {
					const handlers = ext.handlers.get(event);
					const index = handlers?.indexOf(registered) ?? -1;
					if (index === -1) return;
					handlers.splice(index, 1);
					if (handlers.length === 0) {
						ext.handlers.delete(event);
						host.markDirty("events");
					}
				};
			},
			registerTool(tool) {
				active();
				if (!tool || typeof tool.name !== "string" || tool.name.length === 0) throw new Error(`A tool registered by extension "${ext.label}" needs a name`);
				if (typeof tool.parameters !== "object" || tool.parameters === null || Array.isArray(tool.parameters)) {
					throw new Error(`Tool "${tool.name}" registered by extension "${ext.label}" must define an object parameter schema.`);
				}
				if (typeof tool.execute !== "function") throw new Error(`Tool "${tool.name}" registered by extension "${ext.label}" must define execute().`);
				const origin = builtinOrigin(tool.execute);
				const keepsBuiltin = !!origin?.pristine && origin.name === tool.name;
				ext.tools.set(tool.name, { definition: tool, keepsBuiltin });
				if (keepsBuiltin) host.addBuiltinNote(ext, tool.name);
				else if (typeof tool.renderCall === "function" || typeof tool.renderResult === "function") host.addNote(ext, "toolRenderers");
				host.markDirty("tools");
			},
			registerCommand(name, options) {
				active();
				if (typeof name !== "string" || name.length === 0) {
					throw new Error(`Command registered by extension "${ext.label}" must have a non-empty string name. Use pi.registerCommand("name", { description, handler }).`);
				}
				if (typeof options?.handler !== "function") throw new Error(`Command "/${name}" registered by extension "${ext.label}" must define handler().`);
				ext.commands.set(name, { ...options, name });
				host.markDirty("commands");
			},
			registerShortcut(shortcut, options) {
				active();
				ext.shortcuts.set(shortcut, { shortcut, ...options });
				host.addNote(ext, "shortcut");
			},
			registerFlag(name, options = {}) {
				active();
				if (options.default !== undefined && typeof options.default !== (options.type ?? "boolean")) {
					throw new Error(`Invalid default for flag "${name}": expected ${options.type ?? "boolean"}, got ${typeof options.default}`);
				}
				ext.flags.set(name, { name, ...options });
				host.markDirty("flags");
			},
			getFlag(name) {
				active();
				const flag = ext.flags.get(name);
				if (!flag) return undefined;
				return host.flagValues.has(name) ? host.flagValues.get(name) : flag.default;
			},
			registerMessageRenderer(customType, renderer) {
				active();
				ext.messageRenderers.set(customType, renderer);
				host.addNote(ext, "messageRenderer");
			},
			registerEntryRenderer(customType, renderer) {
				active();
				ext.entryRenderers.set(customType, renderer);
				host.addNote(ext, "entryRenderer");
			},
			registerToolRenderer(resolver) {
				active();
				ext.toolRenderers.push(resolver);
				host.addNote(ext, "toolRenderer");
			},
			registerMarkdownTransformer(transformer, options) {
				active();
				ext.markdownTransformer = { transformer, options };
				host.addNote(ext, "markdownTransformer");
			},
			registerProvider(nameOrProvider, config) {
				active();
				const name = typeof nameOrProvider === "string" ? nameOrProvider : nameOrProvider?.id;
				if (typeof nameOrProvider === "string" && !config) throw new Error("Provider config is required when registering by name");
				ext.providers.set(name, typeof nameOrProvider === "string" ? config : nameOrProvider);
				host.addNote(ext, "provider");
			},
			unregisterProvider(name) {
				active();
				ext.providers.delete(name);
			},
			registerVirtualModel(model) {
				active();
				ext.virtualModels.set(`${model?.provider}/${model?.id}`, model);
				host.addNote(ext, "virtualModel");
			},
			unregisterVirtualModel(provider, id) {
				active();
				ext.virtualModels.delete(`${provider}/${id}`);
			},
			registerMcpServer(name, config) {
				active();
				if (typeof name !== "string" || name.length === 0) throw new Error(`Invalid MCP server registered by extension "${ext.label}": the name must be a non-empty string`);
				for (const other of host.extensions) {
					if (other !== ext && other.mcpServers.has(name)) throw new Error(`MCP server "${name}" is already registered by extension "${other.label}"`);
				}
				ext.mcpServers.set(name, { name, config: structuredClone(config), extensionPath: ext.entry });
				host.addNote(ext, "mcp");
			},
			unregisterMcpServer(name) {
				active();
				ext.mcpServers.delete(name);
			},
			getMcpServers() {
				active();
				return [...host.extensions, ...(host.extensions.includes(ext) ? [] : [ext])].flatMap((e) => [...e.mcpServers.values()]);
			},
			sendMessage(message, options) {
				action();
				host.fire(ext, "session/sendMessage", { message, options: options ?? {} });
			},
			sendUserMessage(content, options) {
				action();
				host.fire(ext, "session/sendUserMessage", { content, options: options ?? {} });
			},
			appendEntry(customType, data) {
				action();
				host.fire(ext, "session/appendEntry", data === undefined ? { customType } : { customType, data });
			},
			setSessionName(name) {
				action();
				const m = mirror();
				m.session = { ...(m.session ?? {}), name };
				host.fire(ext, "session/setName", { name });
			},
			getSessionName() {
				active();
				return mirror().session?.name ?? undefined;
			},
			setLabel(entryId, label) {
				action();
				const m = mirror();
				const labels = { ...(m.labels ?? {}) };
				if (label === undefined || label === null) delete labels[entryId];
				else labels[entryId] = label;
				m.labels = labels;
				host.fire(ext, "session/setLabel", { entryId, label: label ?? null });
			},
			exec(command, args, options) {
				active();
				return execCommand(command, args ?? [], options?.cwd ?? mirror().cwd, options);
			},
			getActiveTools() {
				active();
				return [...(mirror().activeTools ?? [])];
			},
			getAllTools() {
				active();
				return host.allTools();
			},
			getSettings() {
				active();
				return structuredClone(mirror().settings ?? {});
			},
			setActiveTools(names) {
				action();
				const list = Array.isArray(names) ? names.map(String) : [];
				const known = new Set(host.allTools().map((t) => t.name));
				mirror().activeTools = list.filter((n) => known.has(n));
				host.request(ext, "agent/setActiveTools", { names: list }).then((result) => {
					if (Array.isArray(result)) mirror().activeTools = result;
				});
			},
			getCommands() {
				active();
				return host.commandsForApi();
			},
			async setModel(model) {
				action();
				if (!model?.provider || !model?.id) return false;
				const result = await host.request(ext, "agent/setModel", { provider: model.provider, id: model.id });
				if (result === true) mirror().model = mirror().models?.find((m) => m.provider === model.provider && m.id === model.id) ?? model;
				return result === true;
			},
			getThinkingLevel() {
				active();
				return mirror().thinkingLevel ?? "off";
			},
			setThinkingLevel(level) {
				action();
				mirror().thinkingLevel = level;
				host.request(ext, "agent/setThinkingLevel", { level }).then((result) => {
					if (typeof result === "string") mirror().thinkingLevel = result;
				});
			},
			events: {
				emit(channel, data) {
					active();
					host.bus.emit(channel, data);
				},
				on(channel, handler) {
					active();
					const listener = async (data) => {
						try {
							await handler(data);
						} catch (error) {
							host.log("error", `Extension "${ext.name}" failed in events:${channel}: ${messageOf(error)}`);
						}
					};
					host.bus.on(channel, listener);
					const unsubscribe = () => {
						host.bus.off(channel, listener);
						ext.busSubscriptions.delete(unsubscribe);
					};
					ext.busSubscriptions.add(unsubscribe);
					return unsubscribe;
				},
			},
		};
		return api;
	}

	/** Sends a request for an extension; failures are logged and resolve to undefined. */
	request(ext, method, params) {
		return this.conn.request(method, params).catch((error) => {
			this.log("warning", `Extension "${ext.name}": ${method} failed: ${messageOf(error)}`);
			return undefined;
		});
	}

	fire(ext, method, params) {
		void this.request(ext, method, params);
	}

	allTools() {
		const list = (mirror().allTools ?? []).map((tool) => ({ promptGuidelines: [], exposure: "direct", ...tool }));
		const names = new Set(list.map((t) => t.name));
		for (const ext of this.extensions) {
			for (const tool of ext.tools.values()) {
				const def = tool.definition;
				if (names.has(def.name)) continue;
				names.add(def.name);
				list.push({
					name: def.name,
					description: def.description ?? "",
					parameters: def.parameters,
					promptGuidelines: def.promptGuidelines ?? [],
					exposure: def.exposure ?? "direct",
					sourceInfo: { path: ext.entry, source: "local", scope: ext.scope, origin: "top-level" },
				});
			}
		}
		return list;
	}

	commandsForApi() {
		const own = new Map();
		for (const ext of this.extensions) for (const c of ext.commands.values()) if (!own.has(c.name)) own.set(c.name, ext);
		const fromTandem = mirror().commands ?? [];
		const sourceInfo = (command) => {
			const ext = own.get(command.name);
			return ext ? { path: ext.entry, source: "local", scope: ext.scope, origin: "top-level" } : { path: "", source: command.source ?? "extension", scope: "user", origin: "top-level" };
		};
		if (fromTandem.length > 0) return fromTandem.map((c) => ({ ...c, sourceInfo: c.sourceInfo ?? sourceInfo(c) }));
		return this.commandList().map((c) => ({ name: c.name, description: c.description, source: "extension", sourceInfo: sourceInfo(c) }));
	}

	// --- `ctx` ------------------------------------------------------------------------------------

	makeSessionManager() {
		const entries = () => mirror().entries ?? [];
		const byId = (id) => entries().find((e) => e?.id === id);
		const leafId = () => mirror().session?.leafId ?? entries()[entries().length - 1]?.id ?? null;
		return {
			getCwd: () => mirror().cwd,
			getSessionDir: () => {
				const file = mirror().session?.file;
				return file ? dirname(file) : join(hostState.agentDir ?? "", "sessions");
			},
			getSessionId: () => mirror().session?.id ?? "",
			getSessionFile: () => mirror().session?.file ?? undefined,
			getSessionName: () => mirror().session?.name ?? undefined,
			getHeader: () => mirror().session?.header ?? null,
			getEntries: () => [...entries()],
			getEntry: (id) => byId(id),
			getLeafId: () => leafId(),
			getLeafEntry: () => byId(leafId()),
			getLabel: (id) => mirror().labels?.[id],
			getChildren: (id) => entries().filter((e) => e?.parentId === id),
			getBranch: (fromId) => {
				if (fromId === undefined) return [...entries()];
				const path = [];
				const seen = new Set();
				for (let entry = byId(fromId); entry && !seen.has(entry.id); entry = byId(entry.parentId)) {
					seen.add(entry.id);
					path.unshift(entry);
				}
				return path;
			},
			getTree: () => {
				const nodes = new Map(entries().map((e) => [e.id, { entry: e, children: [], label: mirror().labels?.[e.id] }]));
				const roots = [];
				for (const node of nodes.values()) {
					const parent = nodes.get(node.entry.parentId);
					if (parent) parent.children.push(node);
					else roots.push(node);
				}
				return roots;
			},
			buildContextEntries: () => [...entries()],
			isPersisted: () => !!mirror().session?.file,
		};
	}

	makeModelRegistry(ext) {
		const host = this;
		const models = () => mirror().models ?? [];
		const modelCall = (name) => () => {
			host.addNote(ext, "modelCalls");
			throw new NotSupportedError(`ctx.modelRegistry.${name}()`);
		};
		return {
			find: (provider, id) => models().find((m) => m.provider === provider && m.id === id),
			getAll: () => [...models()],
			getAvailable: () => [...models()],
			hasConfiguredAuth: (model) => models().some((m) => m.provider === model?.provider && m.id === model?.id),
			getApiKey: async () => undefined,
			getApiKeyForProvider: async () => undefined,
			getProvider: () => undefined,
			getProviderAuth: async () => undefined,
			findOfType: () => undefined,
			getModelsOfType: () => [],
			getAvailableOfType: () => [],
			getModelOfType: () => undefined,
			refresh: async () => {},
			complete: modelCall("complete"),
			completeSimple: modelCall("completeSimple"),
			stream: modelCall("stream"),
			streamSimple: modelCall("streamSimple"),
			classify: modelCall("classify"),
			generateImages: modelCall("generateImages"),
		};
	}

	/**
	 * The `ctx` a handler gets. `kind` is "event", "tool" or "command"; `getSystemPrompt`
	 * overrides ctx.getSystemPrompt() (before_agent_start's chained prompt).
	 */
	makeContext(ext, { kind = "event", signal, getSystemPrompt, getSystemPromptOptions } = {}) {
		const host = this;
		const registry = this.makeModelRegistry(ext);
		const ctx = {
			get ui() {
				return ext.ui;
			},
			get mode() {
				return mirror().mode;
			},
			get hasUI() {
				return !!mirror().hasUI;
			},
			get cwd() {
				return mirror().cwd;
			},
			get sessionManager() {
				return host.sessionManager;
			},
			get modelRegistry() {
				return registry;
			},
			get model() {
				return mirror().model ?? undefined;
			},
			get scopedModels() {
				return [];
			},
			get thinkingLevel() {
				return mirror().thinkingLevel ?? "off";
			},
			get signal() {
				return signal;
			},
			isIdle: () => !!mirror().isIdle,
			isProjectTrusted: () => !!mirror().isProjectTrusted,
			hasPendingMessages: () => !!mirror().hasPendingMessages,
			abort: () => host.fire(ext, "agent/abort", {}),
			shutdown: () => host.fire(ext, "agent/shutdown", {}),
			getContextUsage: () => mirror().contextUsage ?? undefined,
			getSystemPrompt: () => (getSystemPrompt ? getSystemPrompt() : (mirror().systemPrompt ?? "")),
			compact: (options) => {
				const params = options?.customInstructions !== undefined ? { customInstructions: options.customInstructions } : {};
				host.conn.request("session/compact", params).then(
					(result) => options?.onComplete?.(result ?? undefined),
					(error) => {
						if (options?.onError) options.onError(error instanceof Error ? error : new Error(messageOf(error)));
						else host.log("warning", `Extension "${ext.name}": compaction failed: ${messageOf(error)}`);
					},
				);
			},
		};
		if (kind === "tool") {
			Object.defineProperty(ctx, "tools", { get: () => [], enumerable: true });
			ctx.executeTool = async (name, args) => {
				host.addNote(ext, "executeTool");
				return {
					toolCall: { type: "toolCall", id: "nested", name, arguments: args ?? {} },
					result: { content: [{ type: "text", text: "Nested tool calls are not available in Tandem's extension host" }], details: {} },
					isError: true,
				};
			};
		}
		if (kind === "command") {
			const unavailable = (name) => async () => {
				host.addNote(ext, "sessionControl");
				throw new NotSupportedError(`ctx.${name}()`);
			};
			ctx.getSystemPromptOptions = () => getSystemPromptOptions?.() ?? { cwd: mirror().cwd, selectedTools: [...(mirror().activeTools ?? [])], toolSnippets: {}, toolGuidelines: {}, promptGuidelines: [], sections: {}, contextFiles: [], skills: [] };
			ctx.waitForIdle = async () => {
				await host.conn.request("agent/waitForIdle", {});
			};
			ctx.newSession = unavailable("newSession");
			ctx.fork = unavailable("fork");
			ctx.navigateTree = unavailable("navigateTree");
			ctx.switchSession = unavailable("switchSession");
			ctx.reload = unavailable("reload");
		}
		return ctx;
	}

	// --- `ctx.ui` ---------------------------------------------------------------------------------

	makeUi(ext) {
		const host = this;
		const notifyOnly = (method, params) => {
			if (!mirror().hasUI) return;
			try {
				host.conn.notify(method, params);
			} catch {}
		};
		const unsupported = (key, result) => (arg) => {
			if (arg !== undefined) host.addNote(ext, key);
			return result;
		};
		return {
			select: (title, options, opts) =>
				host.dialog(ext, "select", "ui/select", { title: String(title ?? ""), options: (options ?? []).map(String) }, opts, (v) => (typeof v === "string" ? v : undefined)),
			confirm: (title, message, opts) =>
				host.dialog(ext, "confirm", "ui/confirm", { title: String(title ?? ""), message: String(message ?? "") }, opts, (v) => v === true),
			input: (title, placeholder, opts) =>
				host.dialog(ext, "input", "ui/input", placeholder === undefined ? { title: String(title ?? "") } : { title: String(title ?? ""), placeholder: String(placeholder) }, opts, (v) =>
					typeof v === "string" ? v : undefined,
				),
			editor: (title, prefill, opts) =>
				host.dialog(ext, "editor", "ui/editor", prefill === undefined ? { title: String(title ?? "") } : { title: String(title ?? ""), prefill: String(prefill) }, opts, (v) =>
					typeof v === "string" ? v : undefined,
				),
			notify: (message, type = "info") => notifyOnly("ui/notify", { message: String(message ?? ""), level: ["info", "warning", "error"].includes(type) ? type : "info" }),
			setStatus: (key, text) => notifyOnly("ui/setStatus", { key: String(key), text: text === undefined || text === null ? null : String(text) }),
			setWidget: (key, content, options) => {
				if (typeof content === "function") {
					host.addNote(ext, "widgetComponent");
					return;
				}
				const lines = Array.isArray(content) ? content.map(String) : content === undefined || content === null ? null : String(content).split("\n");
				const params = { key: String(key), lines };
				if (options?.placement) params.placement = options.placement;
				notifyOnly("ui/setWidget", params);
			},
			setTitle: (title) => notifyOnly("ui/setTitle", { title: String(title ?? "") }),
			setEditorText: (text) => notifyOnly("ui/setEditorText", { text: String(text ?? "") }),
			pasteToEditor: (text) => notifyOnly("ui/setEditorText", { text: String(text ?? "") }),
			getEditorText: () => {
				host.addNote(ext, "editorText");
				return "";
			},
			custom: async (factory) => {
				if (factory !== undefined) host.addNote(ext, "custom");
				return undefined;
			},
			onTerminalInput: (handler) => {
				if (handler !== undefined) host.addNote(ext, "terminalInput");
				return () => {};
			},
			setWorkingMessage: unsupported("working"),
			setWorkingVisible: (visible) => {
				if (visible === false) host.addNote(ext, "working");
			},
			setWorkingIndicator: unsupported("working"),
			setHiddenThinkingLabel: unsupported("hiddenThinkingLabel"),
			setFooter: unsupported("footer"),
			setHeader: unsupported("header"),
			setEditorComponent: unsupported("editorComponent"),
			getEditorComponent: () => undefined,
			addAutocompleteProvider: unsupported("autocomplete"),
			setToolsExpanded: unsupported("toolsExpanded"),
			getToolsExpanded: () => false,
			get theme() {
				return plainTheme;
			},
			getAllThemes: () => [],
			getTheme: () => undefined,
			setTheme: () => {
				host.addNote(ext, "themes");
				return { success: false, error: "Theme switching is not supported by Tandem" };
			},
		};
	}

	/** A dialog: the answer of Tandem's `ui/*` request, or `fallback(undefined)` without a UI. */
	async dialog(ext, kind, method, params, opts, convert) {
		if (!mirror().hasUI) return convert(undefined);
		if (opts?.signal?.aborted) return convert(undefined);
		const controller = new AbortController();
		const abort = () => controller.abort();
		opts?.signal?.addEventListener("abort", abort, { once: true });
		const timeout = typeof opts?.timeout === "number" && opts.timeout > 0 ? opts.timeout : undefined;
		const timer = timeout ? setTimeout(abort, timeout) : undefined;
		this.promptStarted(kind, params.title);
		try {
			const result = await this.conn.request(method, timeout ? { ...params, timeout } : params, { signal: controller.signal });
			return convert(result ?? undefined);
		} catch (error) {
			if (!controller.signal.aborted) this.log("warning", `Extension "${ext.name}": ${method} failed: ${messageOf(error)}`);
			return convert(undefined);
		} finally {
			clearTimeout(timer);
			opts?.signal?.removeEventListener("abort", abort);
			this.promptEnded(kind, params.title);
		}
	}

	promptStarted(kind, title) {
		if (this.promptDepth++ > 0) return;
		this.activePrompt = { kind, title };
		queueMicrotask(() => void this.dispatchEvent({ type: "ui_prompt_start", reason: "ui_prompt", kind, ...(title ? { title } : {}) }));
	}

	promptEnded(kind, title) {
		if (--this.promptDepth > 0) return;
		this.promptDepth = 0;
		const prompt = this.activePrompt ?? { kind, title };
		this.activePrompt = undefined;
		queueMicrotask(() => void this.dispatchEvent({ type: "ui_prompt_end", reason: "ui_prompt", kind: prompt.kind, ...(prompt.title ? { title: prompt.title } : {}) }));
	}

	// --- events -----------------------------------------------------------------------------------

	async handleEvent(params, signal) {
		const name = params?.name ?? params?.event?.type;
		if (typeof name !== "string") throw new RpcError(ErrorCodes.InvalidParams, "event needs a name");
		const event = params.event && typeof params.event === "object" ? params.event : {};
		event.type = name;
		return this.dispatchEvent(event, signal);
	}

	/** Runs the handlers for `event` with pi's composition; answers `{ result, errors }`. */
	async dispatchEvent(event, signal) {
		const name = event.type;
		const errors = [];
		const runs = this.extensions.map((ext) => ({ ext, handlers: [...(ext.handlers.get(name) ?? [])] })).filter((r) => r.handlers.length > 0);
		const report = (ext, error) => {
			errors.push({ extension: ext.name, message: messageOf(error) });
			process.stderr.write(`extension host: ${ext.label} failed in ${name}: ${error?.stack ?? error}\n`);
		};
		const answer = (result) => ({ result: result ?? null, errors });
		if (runs.length === 0) return answer(null);
		if (name === "session_before_compact" || name === "session_before_tree") {
			Object.defineProperty(event, "signal", { value: signal ?? new AbortController().signal, enumerable: false, configurable: true, writable: true });
		}
		const ctxFor = (ext, extra) => this.makeContext(ext, { signal, ...extra });

		/** Calls each handler in order; `step(ext, handler)` returns true to stop. Throws are reported. */
		const each = async (step, { throwStops } = {}) => {
			for (const { ext, handlers } of runs) {
				for (const handler of handlers) {
					try {
						if (await step(ext, handler)) return true;
					} catch (error) {
						report(ext, error);
						if (throwStops) return throwStops(ext, error);
					}
				}
			}
			return false;
		};

		switch (name) {
			case "tool_call": {
				const before = toJson(event.input);
				let result;
				let thrown;
				await each(
					async (ext, handler) => {
						const r = await handler(event, ctxFor(ext));
						if (r) {
							result = r;
							if (r.block) return true;
						}
						return false;
					},
					{
						throwStops: (ext, error) => {
							thrown = error;
							return true;
						},
					},
				);
				if (thrown !== undefined) return answer({ block: true, reason: messageOf(thrown) });
				if (result?.block) {
					const out = { block: true };
					if (result.reason !== undefined) out.reason = String(result.reason);
					if (result.terminate !== undefined) out.terminate = !!result.terminate;
					return answer(out);
				}
				return answer(toJson(event.input) !== before ? { input: event.input } : null);
			}

			case "tool_result": {
				const current = { ...event };
				const original = { content: toJson(event.content), details: toJson(event.details) };
				let modified = false;
				await each(async (ext, handler) => {
					const r = await handler(current, ctxFor(ext));
					if (!r) return false;
					if (r.content !== undefined) {
						current.content = r.content;
						if (r.structuredContent === undefined) delete current.structuredContent;
						modified = true;
					}
					for (const key of ["details", "structuredContent", "isError", "usage"]) {
						if (r[key] !== undefined) {
							current[key] = r[key];
							modified = true;
						}
					}
					return false;
				});
				if (!modified && toJson(current.content) === original.content && toJson(current.details) === original.details) return answer(null);
				const out = { content: current.content, details: current.details, isError: !!current.isError };
				if (current.structuredContent !== undefined) out.structuredContent = current.structuredContent;
				if (current.usage !== undefined) out.usage = current.usage;
				return answer(out);
			}

			case "input": {
				let text = event.text;
				let images = event.images;
				let handled = false;
				await each(async (ext, handler) => {
					const r = await handler({ ...event, text, images }, ctxFor(ext));
					if (r?.action === "handled") {
						handled = true;
						return true;
					}
					if (r?.action === "transform") {
						if (typeof r.text === "string") text = r.text;
						if (r.images !== undefined) images = r.images;
					}
					return false;
				});
				if (handled) return answer({ action: "handled" });
				if (text !== event.text || images !== event.images) {
					const out = { action: "transform", text };
					if (images !== undefined) out.images = images;
					return answer(out);
				}
				return answer(null);
			}

			case "before_agent_start": {
				let prompt = typeof event.systemPrompt === "string" ? event.systemPrompt : (mirror().systemPrompt ?? "");
				let promptChanged = false;
				const messages = [];
				const optionsBefore = toJson(event.systemPromptOptions);
				Object.defineProperty(event, "systemPrompt", { get: () => prompt, enumerable: true, configurable: true });
				await each(async (ext, handler) => {
					const ctx = ctxFor(ext, { getSystemPrompt: () => prompt });
					const r = await handler(event, ctx);
					if (r?.message) messages.push(r.message);
					if (r?.systemPrompt !== undefined) {
						prompt = String(r.systemPrompt);
						promptChanged = true;
					}
					return false;
				});
				const out = {};
				if (promptChanged) out.systemPrompt = prompt;
				if (messages.length === 1) out.message = messages[0];
				else if (messages.length > 1) out.messages = messages;
				if (event.systemPromptOptions !== undefined && toJson(event.systemPromptOptions) !== optionsBefore) out.systemPromptOptions = event.systemPromptOptions;
				return answer(Object.keys(out).length > 0 ? out : null);
			}

			case "context":
			case "context_with_system": {
				const before = toJson(event.messages);
				let messages = Array.isArray(event.messages) ? event.messages : [];
				await each(async (ext, handler) => {
					const visible = messages;
					const r = await handler({ ...event, messages: visible }, ctxFor(ext));
					if (Array.isArray(r?.messages)) messages = r.messages;
					return false;
				});
				return answer(toJson(messages) !== before ? { messages } : null);
			}

			case "before_provider_request": {
				const before = toJson(event.payload);
				let payload = event.payload;
				let replaced = false;
				await each(async (ext, handler) => {
					const r = await handler({ ...event, payload }, ctxFor(ext));
					if (r !== undefined) {
						payload = r;
						replaced = true;
					}
					return false;
				});
				return answer(replaced || toJson(payload) !== before ? payload : null);
			}

			case "before_provider_headers": {
				const before = toJson(event.headers);
				await each(async (ext, handler) => {
					await handler(event, ctxFor(ext));
					return false;
				});
				return answer(toJson(event.headers) !== before ? { headers: event.headers } : null);
			}

			case "message_end": {
				let message = event.message;
				let modified = false;
				await each(async (ext, handler) => {
					const r = await handler({ ...event, message }, ctxFor(ext));
					if (!r?.message) return false;
					if (r.message.role !== message?.role) {
						report(ext, new Error("message_end handlers must return a message with the same role"));
						return false;
					}
					message = r.message;
					modified = true;
					return false;
				});
				return answer(modified ? { message } : null);
			}

			case "session_before_switch":
			case "session_before_fork":
			case "session_before_compact":
			case "session_before_tree": {
				let result;
				await each(async (ext, handler) => {
					const r = await handler(event, ctxFor(ext));
					if (r) {
						result = r;
						if (r.cancel) return true;
					}
					return false;
				});
				return answer(result ? jsonClone(result) : null);
			}

			case "user_bash": {
				let result;
				await each(
					async (ext, handler) => {
						const r = await handler(event, ctxFor(ext));
						if (r === undefined) return false;
						result = await this.userBashResult(r, event, signal);
						return true;
					},
					{
						throwStops: (ext, error) => {
							result = { result: { output: `Extension "${ext.name}" failed in user_bash: ${messageOf(error)}`, exitCode: 1, cancelled: false, truncated: false } };
							return true;
						},
					},
				);
				return answer(result ?? null);
			}

			case "project_trust": {
				let result;
				await each(async (ext, handler) => {
					const r = await handler(event, ctxFor(ext));
					if (!r || r.trusted === "undecided") return false;
					result = r;
					return true;
				});
				return answer(result ? jsonClone(result) : null);
			}

			case "resources_discover": {
				const found = { skillPaths: [], promptPaths: [], themePaths: [] };
				await each(async (ext, handler) => {
					const r = await handler(event, ctxFor(ext));
					for (const key of Object.keys(found)) if (Array.isArray(r?.[key])) found[key].push(...r[key].map(String));
					return false;
				});
				return answer(Object.values(found).some((l) => l.length > 0) ? found : null);
			}

			case "turn_end":
			case "agent_before_settle": {
				let entries = Array.isArray(event.entries) ? event.entries : [];
				let proceed = event.continue === true;
				let touched = false;
				await each(async (ext, handler) => {
					const r = await handler({ ...event, entries, continue: proceed }, ctxFor(ext));
					if (r?.entries !== undefined) {
						entries = r.entries;
						touched = true;
					}
					if (r?.continue !== undefined) {
						proceed = !!r.continue;
						touched = true;
					}
					return false;
				});
				return answer(touched ? { entries, continue: proceed } : null);
			}

			case "cache_warming_decision": {
				let action;
				await each(async (ext, handler) => {
					const r = await handler(event, ctxFor(ext));
					if (r?.action !== undefined) action = r.action;
					return false;
				});
				return answer(action !== undefined ? { action } : null);
			}

			default: {
				await each(async (ext, handler) => {
					await handler(event, ctxFor(ext));
					return false;
				});
				return answer(null);
			}
		}
	}

	/** A user_bash handler's answer as the protocol's `{ result }`; `{ operations }` are run here. */
	async userBashResult(r, event, signal) {
		const valid = (x) => x && typeof x === "object" && typeof x.output === "string" && typeof x.cancelled === "boolean" && typeof x.truncated === "boolean";
		if (r && typeof r === "object" && r.result !== undefined && r.operations === undefined) {
			if (!valid(r.result)) throw new Error("Invalid user_bash handler result: { result } needs output, exitCode, cancelled and truncated");
			return { result: jsonClone(r.result) };
		}
		if (r && typeof r === "object" && typeof r.operations?.exec === "function" && r.result === undefined) {
			let output = "";
			const onData = (chunk) => {
				output += Buffer.isBuffer(chunk) ? chunk.toString("utf8") : String(chunk);
			};
			try {
				const { exitCode } = await r.operations.exec(event.command, event.cwd ?? mirror().cwd, { onData, signal, env: { ...process.env } });
				const truncation = truncateTail(output);
				return { result: { output: truncation.content, exitCode: exitCode ?? undefined, cancelled: false, truncated: truncation.truncated } };
			} catch (error) {
				const truncation = truncateTail(output);
				const cancelled = messageOf(error) === "aborted" || !!signal?.aborted;
				const note = cancelled ? "" : `${truncation.content ? "\n" : ""}${messageOf(error)}`;
				return { result: { output: truncation.content + note, exitCode: cancelled ? undefined : 1, cancelled, truncated: truncation.truncated } };
			}
		}
		throw new Error("Invalid user_bash handler result: return undefined for local execution or exactly one valid { operations } or { result } object");
	}

	// --- tools and commands -------------------------------------------------------------------------

	/** The tool Tandem knows by `name`: the first announced registration (unannounced ones last). */
	findTool(name) {
		let fallback;
		for (const ext of this.extensions) {
			const tool = ext.tools.get(name);
			if (tool && !tool.keepsBuiltin) return { ext, tool };
			if (tool) fallback ??= { ext, tool };
		}
		return fallback;
	}

	async executeTool(params, signal) {
		const { toolCallId, name } = params;
		const found = this.findTool(name);
		if (!found) throw new RpcError(ErrorCodes.InvalidParams, `No extension in this host registered the tool "${name}"`);
		const { ext, tool } = found;
		const def = tool.definition;
		let input = params.input ?? {};
		if (typeof def.prepareArguments === "function") input = def.prepareArguments(input) ?? input;
		let finished = false;
		const onUpdate = (partial) => {
			if (finished || signal.aborted) return;
			const partialResult = { content: Array.isArray(partial?.content) ? partial.content : [] };
			if (partial?.details !== undefined) partialResult.details = partial.details;
			this.conn.notify("tool/update", { toolCallId, partialResult });
		};
		try {
			const result = await def.execute(toolCallId, input, signal, onUpdate, this.makeContext(ext, { kind: "tool", signal }));
			return normalizeToolResult(result);
		} finally {
			finished = true;
		}
	}

	findCommand(name, extensionName) {
		const all = [];
		for (const ext of this.extensions) for (const command of ext.commands.values()) all.push({ ext, command });
		if (extensionName) {
			const match = all.find((c) => c.command.name === name && c.ext.name === extensionName);
			if (match) return match;
		}
		const exact = all.find((c) => c.command.name === name);
		if (exact) return exact;
		const suffixed = /^(.*):(\d+)$/.exec(String(name));
		if (suffixed) return all.filter((c) => c.command.name === suffixed[1])[Number(suffixed[2]) - 1];
		return undefined;
	}

	async runCommand(params, signal) {
		const found = this.findCommand(params.name, params.extension);
		if (!found) throw new RpcError(ErrorCodes.InvalidParams, `No extension in this host registered the command "/${params.name}"`);
		await found.command.handler(typeof params.args === "string" ? params.args : "", this.makeContext(found.ext, { kind: "command", signal }));
		return null;
	}

	async completeCommand(params) {
		const found = this.findCommand(params.name, params.extension);
		if (!found || typeof found.command.getArgumentCompletions !== "function") return null;
		const items = await found.command.getArgumentCompletions(typeof params.prefix === "string" ? params.prefix : "");
		if (!Array.isArray(items)) return null;
		return items
			.filter((item) => item && (typeof item.value === "string" || typeof item === "string"))
			.map((item) => {
				if (typeof item === "string") return { value: item, label: item };
				const out = { value: item.value, label: item.label ?? item.value };
				if (item.description !== undefined) out.description = String(item.description);
				return out;
			});
	}
}

/** A tool's return value in the protocol's shape. */
export function normalizeToolResult(result) {
	if (result === undefined || result === null || typeof result !== "object") {
		return { content: result === undefined || result === null ? [] : [{ type: "text", text: String(result) }], isError: false };
	}
	let content = result.content;
	if (typeof content === "string") content = [{ type: "text", text: content }];
	if (!Array.isArray(content)) content = [];
	const out = { content };
	if (result.details !== undefined) out.details = result.details;
	out.isError = result.isError === true;
	if (result.terminate === true) out.terminate = true;
	if (result.structuredContent !== undefined) out.structuredContent = result.structuredContent;
	if (result.usage !== undefined) out.usage = result.usage;
	return out;
}
