// Local versions of pi's built-in tools (read, write, edit, bash, ls, find, grep, powershell) for
// extensions that build on them: `createReadTool()`, `createBashToolDefinition()` and the rest.
// They take pi's parameters and pluggable `operations`, and return pi's result shapes.
//
// A definition made with default options (no custom operations or spawn hook) is "pristine": an
// extension that registers it unchanged (to draw it differently, like minimal-mode.ts) does not
// replace Tandem's own built-in tool; see `builtinOrigin()` and host.mjs.

import { spawn } from "node:child_process";
import { constants, createWriteStream, existsSync, mkdtempSync } from "node:fs";
import { access, mkdir, open, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { createLocalBashOperations, createLocalPowerShellOperations, getShellEnv } from "./exec.mjs";
import { withFileMutationQueue } from "./file-queue.mjs";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, GREP_MAX_LINE_LENGTH, truncateHead, truncateLine, truncateTail } from "./truncate.mjs";
import { Type } from "./typebox.mjs";

const origins = new WeakMap();

/** `{ name, pristine }` when `execute` is the executor of one of these built-in definitions. */
export function builtinOrigin(execute) {
	return typeof execute === "function" ? origins.get(execute) : undefined;
}

function mark(definition, pristine) {
	origins.set(definition.execute, { name: definition.name, pristine });
	return definition;
}

/** Resolves a tool's path argument: a leading `@` (some models add one) and `~` are handled. */
export function resolveToCwd(path, cwd) {
	let p = String(path ?? "").trim();
	if (p.startsWith("@")) p = p.slice(1);
	if (p === "~") p = homedir();
	else if (p.startsWith("~/")) p = join(homedir(), p.slice(2));
	return isAbsolute(p) ? p : resolve(cwd, p);
}

/** An AgentTool (pi's `createXTool()`): the definition's fields, `execute(id, params, signal, onUpdate, ctx?)`. */
export function wrapToolDefinition(definition, ctxFactory) {
	const tool = {
		name: definition.name,
		label: definition.label,
		description: definition.description,
		parameters: definition.parameters,
		outputSchema: definition.outputSchema,
		prepareArguments: definition.prepareArguments,
		executionMode: definition.executionMode,
		promptSnippet: definition.promptSnippet,
		promptGuidelines: definition.promptGuidelines,
		execute: (toolCallId, params, signal, onUpdate, ctx) => definition.execute(toolCallId, params, signal, onUpdate, ctx ?? ctxFactory?.(toolCallId, signal)),
	};
	const origin = builtinOrigin(definition.execute);
	if (origin) origins.set(tool.execute, origin);
	return tool;
}

const throwIfAborted = (signal) => {
	if (signal?.aborted) throw new Error("Operation aborted");
};

// --- read ------------------------------------------------------------------------------------

const readSchema = Type.Object({
	path: Type.String({ description: "Path of the file to read, relative to the working directory or absolute" }),
	offset: Type.Optional(Type.Number({ description: "First line to read, counting from 1" })),
	limit: Type.Optional(Type.Number({ description: "How many lines to read at most" })),
});

async function sniffImageType(path) {
	let handle;
	try {
		handle = await open(path, "r");
		const { buffer, bytesRead } = await handle.read(Buffer.alloc(16), 0, 16, 0);
		const b = buffer.subarray(0, bytesRead);
		if (b.length >= 8 && b[0] === 0x89 && b.toString("latin1", 1, 4) === "PNG") return "image/png";
		if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
		if (b.toString("latin1", 0, 4) === "GIF8") return "image/gif";
		if (b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP") return "image/webp";
		if (b.toString("latin1", 0, 2) === "BM") return "image/bmp";
		return undefined;
	} catch {
		return undefined;
	} finally {
		await handle?.close();
	}
}

export const detectSupportedImageMimeTypeFromFile = sniffImageType;

const defaultReadOperations = {
	readFile: (path) => readFile(path),
	access: (path) => access(path, constants.R_OK),
	detectImageMimeType: sniffImageType,
};

export function createReadToolDefinition(cwd, options) {
	const ops = options?.operations ?? defaultReadOperations;
	return mark(
		{
			name: "read",
			label: "read",
			description: `Read a file. Text comes back as lines, cut to ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB, whichever is reached first; continue with offset for long files. Images (png, jpeg, gif, webp, bmp) come back as attachments.`,
			promptSnippet: "Read file contents",
			promptGuidelines: ["Use read to look at files rather than cat or sed."],
			parameters: readSchema,
			async execute(_toolCallId, params, signal, _onUpdate, ctx) {
				throwIfAborted(signal);
				const { path, offset, limit } = params ?? {};
				const absolute = resolveToCwd(path, ctx?.cwd || cwd);
				await ops.access(absolute);
				throwIfAborted(signal);
				const mimeType = ops.detectImageMimeType ? await ops.detectImageMimeType(absolute) : undefined;
				if (mimeType) {
					const data = Buffer.from(await ops.readFile(absolute)).toString("base64");
					throwIfAborted(signal);
					const details = ctx?.model && Array.isArray(ctx.model.input) && !ctx.model.input.includes("image") ? { imageUnsupportedByModel: ctx.model.id } : undefined;
					return {
						content: [
							{ type: "text", text: `Read image file [${mimeType}]` },
							{ type: "image", data, mimeType },
						],
						details,
					};
				}
				const text = Buffer.from(await ops.readFile(absolute)).toString("utf-8");
				throwIfAborted(signal);
				const lines = text.split("\n");
				const start = offset ? Math.max(0, Math.floor(offset) - 1) : 0;
				if (start >= lines.length) throw new Error(`Offset ${offset} is beyond end of file (${lines.length} lines total)`);
				const end = limit === undefined ? lines.length : Math.min(lines.length, start + Math.max(0, Math.floor(limit)));
				const truncation = truncateHead(lines.slice(start, end).join("\n"));
				const first = start + 1;
				let output;
				let details;
				if (truncation.firstLineExceedsLimit) {
					const size = formatSize(Buffer.byteLength(lines[start], "utf-8"));
					output = `[Line ${first} is ${size}, over the ${formatSize(DEFAULT_MAX_BYTES)} limit. Read it with bash: sed -n '${first}p' ${path} | head -c ${DEFAULT_MAX_BYTES}]`;
					details = { truncation };
				} else if (truncation.truncated) {
					const last = first + truncation.outputLines - 1;
					const why = truncation.truncatedBy === "bytes" ? ` (${formatSize(DEFAULT_MAX_BYTES)} limit)` : "";
					output = `${truncation.content}\n\n[Showing lines ${first}-${last} of ${lines.length}${why}. Use offset=${last + 1} to continue.]`;
					details = { truncation };
				} else if (end < lines.length) {
					output = `${truncation.content}\n\n[${lines.length - end} more lines in file. Use offset=${end + 1} to continue.]`;
				} else {
					output = truncation.content;
				}
				return { content: [{ type: "text", text: output }], details };
			},
		},
		!options?.operations,
	);
}

// --- write -----------------------------------------------------------------------------------

const writeSchema = Type.Object({
	path: Type.String({ description: "Path of the file to write, relative to the working directory or absolute" }),
	content: Type.String({ description: "The whole new content of the file" }),
});

const defaultWriteOperations = {
	writeFile: (path, content) => writeFile(path, content, "utf-8"),
	mkdir: (dir) => mkdir(dir, { recursive: true }).then(() => {}),
};

export function createWriteToolDefinition(cwd, options) {
	const ops = options?.operations ?? defaultWriteOperations;
	return mark(
		{
			name: "write",
			label: "write",
			description: "Write a file, replacing what it held or creating it (and any missing parent directories).",
			promptSnippet: "Create or overwrite files",
			promptGuidelines: ["Use write only for new files or complete rewrites."],
			parameters: writeSchema,
			async execute(_toolCallId, params, signal, _onUpdate, ctx) {
				const { path, content } = params ?? {};
				const absolute = resolveToCwd(path, ctx?.cwd || cwd);
				return withFileMutationQueue(absolute, async () => {
					throwIfAborted(signal);
					await ops.mkdir(dirname(absolute));
					throwIfAborted(signal);
					await ops.writeFile(absolute, content);
					throwIfAborted(signal);
					return {
						content: [{ type: "text", text: `Successfully wrote ${Buffer.byteLength(content, "utf-8")} bytes to ${path}` }],
						details: undefined,
					};
				});
			},
		},
		!options?.operations,
	);
}

// --- edit ------------------------------------------------------------------------------------

const editSchema = Type.Object({
	path: Type.String({ description: "Path of the file to edit, relative to the working directory or absolute" }),
	edits: Type.Array(
		Type.Object({
			oldText: Type.String({ description: "Text to replace; it must occur exactly once in the file and not overlap another edit" }),
			newText: Type.String({ description: "The replacement text" }),
		}),
		{ description: "Replacements, each matched against the original file" },
	),
});

const defaultEditOperations = {
	readFile: (path) => readFile(path),
	writeFile: (path, content) => writeFile(path, content, "utf-8"),
	access: (path) => access(path, constants.R_OK | constants.W_OK),
};

function isEdit(value) {
	return !!value && typeof value === "object" && !Array.isArray(value) && typeof value.oldText === "string" && typeof value.newText === "string";
}

/** Accepts the shapes models send: `edits` as a JSON string or a single object, and the old top-level oldText/newText. */
export function prepareEditArguments(input) {
	if (!input || typeof input !== "object") return input;
	const args = { ...input };
	if (typeof args.edits === "string") {
		try {
			const parsed = JSON.parse(args.edits);
			if (Array.isArray(parsed)) args.edits = parsed;
			else if (isEdit(parsed)) args.edits = [parsed];
		} catch {}
	} else if (isEdit(args.edits)) {
		args.edits = [args.edits];
	}
	if (typeof args.oldText === "string" && typeof args.newText === "string") {
		args.edits = [...(Array.isArray(args.edits) ? args.edits : []), { oldText: args.oldText, newText: args.newText }];
		delete args.oldText;
		delete args.newText;
	}
	return args;
}

function lineOf(text, index) {
	let line = 1;
	for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
	return line;
}

function diffFor(path, base, replacements) {
	const out = [`--- ${path}`, `+++ ${path}`];
	for (const r of replacements) {
		const line = lineOf(base, r.start);
		const oldLines = r.oldText.split("\n");
		const newLines = r.newText.split("\n");
		out.push(`@@ -${line},${oldLines.length} +${line},${newLines.length} @@`);
		for (const l of oldLines) out.push(`-${l}`);
		for (const l of newLines) out.push(`+${l}`);
	}
	return out.join("\n");
}

/**
 * Applies replacements found in the LF-normalized text to the original text, so lines the edit
 * does not touch keep their own line endings. A replacement uses the line ending of the text it
 * replaces (or the file's usual one).
 */
function spliceIntoOriginal(original, replacements) {
	const toOriginal = [];
	for (let i = 0; i < original.length; i++) {
		toOriginal.push(i);
		if (original[i] === "\r" && original[i + 1] === "\n") i++;
	}
	toOriginal.push(original.length);
	const crlfCount = (original.match(/\r\n/g) ?? []).length;
	const lfCount = (original.match(/\n/g) ?? []).length - crlfCount;
	let out = original;
	for (let i = replacements.length - 1; i >= 0; i--) {
		const r = replacements[i];
		const start = toOriginal[r.start];
		const end = toOriginal[r.end];
		const replaced = original.slice(start, end);
		const useCrlf = replaced.includes("\r\n") || (!replaced.includes("\n") && crlfCount >= lfCount);
		out = out.slice(0, start) + (useCrlf ? r.newText.replace(/\n/g, "\r\n") : r.newText) + out.slice(end);
	}
	return out;
}

export function createEditToolDefinition(cwd, options) {
	const ops = options?.operations ?? defaultEditOperations;
	return mark(
		{
			name: "edit",
			label: "edit",
			description: "Edit one file by exact text replacement. Each edits[].oldText must match one unique place in the original file, and edits must not overlap; merge nearby changes into one edit.",
			promptSnippet: "Make exact text replacements in files, several disjoint ones per call",
			promptGuidelines: ["Use edit for targeted changes, one call per file.", "Each edits[].oldText must match the original file exactly and only once."],
			parameters: editSchema,
			prepareArguments: prepareEditArguments,
			async execute(_toolCallId, input, signal, _onUpdate, ctx) {
				const { path, edits } = prepareEditArguments(input) ?? {};
				if (!Array.isArray(edits) || edits.length === 0) throw new Error("Edit tool input is invalid: edits must hold at least one replacement.");
				const absolute = resolveToCwd(path, ctx?.cwd || cwd);
				return withFileMutationQueue(absolute, async () => {
					throwIfAborted(signal);
					try {
						await ops.access(absolute);
					} catch (error) {
						throw new Error(`Could not edit file: ${path}. ${error?.code ? `Error code: ${error.code}` : String(error)}.`);
					}
					const raw = Buffer.from(await ops.readFile(absolute)).toString("utf-8");
					throwIfAborted(signal);
					const bom = raw.startsWith("\ufeff") ? "\ufeff" : "";
					const withoutBom = bom ? raw.slice(1) : raw;
					const crlf = withoutBom.includes("\r\n");
					const base = withoutBom.replace(/\r\n/g, "\n");
					const replacements = [];
					edits.forEach((edit, i) => {
						const oldText = String(edit.oldText ?? "").replace(/\r\n/g, "\n");
						const newText = String(edit.newText ?? "").replace(/\r\n/g, "\n");
						const label = edits.length > 1 ? ` (edit ${i + 1})` : "";
						if (oldText.length === 0) throw new Error(`oldText is empty${label}.`);
						const first = base.indexOf(oldText);
						if (first === -1) throw new Error(`Could not find the exact text to replace in ${path}${label}. The oldText must match the file exactly, including whitespace.`);
						let count = 0;
						for (let at = first; at !== -1; at = base.indexOf(oldText, at + 1)) count++;
						if (count > 1) throw new Error(`Found ${count} occurrences of the text to replace in ${path}${label}. Add surrounding context so it matches only once.`);
						replacements.push({ start: first, end: first + oldText.length, oldText, newText });
					});
					replacements.sort((a, b) => a.start - b.start);
					for (let i = 1; i < replacements.length; i++) {
						if (replacements[i].start < replacements[i - 1].end) throw new Error(`Edits overlap in ${path}. Merge them into one edit.`);
					}
					let next = base;
					for (let i = replacements.length - 1; i >= 0; i--) {
						const r = replacements[i];
						next = next.slice(0, r.start) + r.newText + next.slice(r.end);
					}
					if (next === base) throw new Error(`No changes made to ${path}: the replacements equal the original text.`);
					const final = bom + (crlf ? spliceIntoOriginal(withoutBom, replacements) : next);
					await ops.writeFile(absolute, final);
					return {
						content: [{ type: "text", text: `Successfully replaced ${edits.length} block(s) in ${path}.` }],
						details: { diff: diffFor(path, base, replacements), firstChangedLine: lineOf(base, replacements[0].start) },
					};
				});
			},
		},
		!options?.operations,
	);
}

// --- bash / powershell -----------------------------------------------------------------------

const shellSchema = Type.Object({
	command: Type.String({ description: "The command to run" }),
	timeout: Type.Optional(Type.Number({ description: "Timeout in seconds (none by default)" })),
});

/** Collects command output; keeps the tail in memory and, past the byte limit, the whole in a temp file. */
class OutputCollector {
	constructor(prefix) {
		this.prefix = prefix;
		this.decoder = new StringDecoder("utf8");
		this.text = "";
		this.bytes = 0;
		this.file = undefined;
		this.path = undefined;
	}
	append(chunk) {
		const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
		this.bytes += buffer.length;
		if (this.bytes > DEFAULT_MAX_BYTES && !this.file) {
			const dir = mkdtempSync(join(tmpdir(), `${this.prefix}-`));
			this.path = join(dir, "output.log");
			this.file = createWriteStream(this.path);
			this.file.write(this.text);
		}
		this.file?.write(buffer);
		this.text += this.decoder.write(buffer);
		// Keep memory bounded: the tail is what the model sees.
		if (this.text.length > 8 * DEFAULT_MAX_BYTES) this.text = this.text.slice(-4 * DEFAULT_MAX_BYTES);
	}
	finish() {
		this.text += this.decoder.end();
		return new Promise((r) => (this.file ? this.file.end(r) : r()));
	}
	snapshot() {
		const truncation = truncateTail(this.text);
		return { truncation, content: truncation.content };
	}
}

function formatShellOutput(collector, emptyText) {
	const { truncation } = collector.snapshot();
	let text = truncation.content || emptyText;
	let details;
	if (truncation.truncated || collector.path) {
		details = { truncation, fullOutputPath: collector.path };
		const shown = truncation.truncated ? `Showing the last ${truncation.outputLines} lines (${formatSize(truncation.outputBytes)})` : "Output";
		text += `\n\n[${shown}. Full output: ${collector.path ?? "(not saved)"}]`;
	}
	return { text, details };
}

function sessionEnv(ctx) {
	const env = { ...getShellEnv() };
	for (const key of ["PI_SESSION_ID", "PI_SESSION_FILE", "PI_PROVIDER", "PI_MODEL", "PI_REASONING_LEVEL"]) delete env[key];
	if (!ctx) return env;
	try {
		const id = ctx.sessionManager?.getSessionId?.();
		if (id) env.PI_SESSION_ID = id;
		const file = ctx.sessionManager?.getSessionFile?.();
		if (file) env.PI_SESSION_FILE = file;
		if (ctx.model) {
			env.PI_PROVIDER = ctx.model.provider;
			env.PI_MODEL = ctx.model.id;
		}
		if (ctx.thinkingLevel) env.PI_REASONING_LEVEL = ctx.thinkingLevel;
	} catch {}
	return env;
}

function createShellToolDefinition(cwd, config, options) {
	const ops = options?.operations ?? config.defaultOperations(options);
	const exposeSessionEnvironment = options?.exposeSessionEnvironment ?? true;
	const pristine = !options?.operations && !options?.spawnHook && !options?.commandPrefix && !options?.shellPath;
	return mark(
		{
			name: config.name,
			label: config.name,
			description: `Run a ${config.shellName} command in the working directory and return its output (stdout and stderr together), cut to the last ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB; a cut output is saved whole to a temp file. timeout is in seconds.`,
			promptSnippet: config.promptSnippet,
			promptGuidelines: exposeSessionEnvironment ? ["PI_* environment variables name the current model and session."] : undefined,
			parameters: shellSchema,
			async execute(_toolCallId, params, signal, onUpdate, ctx) {
				const { command, timeout } = params ?? {};
				const full = options?.commandPrefix ? `${options.commandPrefix}\n${command}` : command;
				let spawnContext = { command: full, cwd: ctx?.cwd || cwd, env: exposeSessionEnvironment ? sessionEnv(ctx) : sessionEnv(undefined) };
				if (options?.spawnHook) spawnContext = options.spawnHook(spawnContext);
				const collector = new OutputCollector(`tandem-${config.name}`);
				let lastUpdate = 0;
				let pending;
				const emit = () => {
					pending = undefined;
					lastUpdate = Date.now();
					onUpdate?.({ content: [{ type: "text", text: collector.snapshot().content }], details: undefined });
				};
				onUpdate?.({ content: [], details: undefined });
				const onData = (chunk) => {
					collector.append(chunk);
					if (!onUpdate || pending) return;
					const wait = Math.max(0, 250 - (Date.now() - lastUpdate));
					pending = setTimeout(emit, wait);
				};
				let exitCode;
				try {
					({ exitCode } = await ops.exec(spawnContext.command, spawnContext.cwd, { onData, signal, timeout, env: spawnContext.env }));
				} catch (error) {
					clearTimeout(pending);
					await collector.finish();
					const { text } = formatShellOutput(collector, "");
					const sep2 = text ? `${text}\n\n` : "";
					if (error instanceof Error && error.message === "aborted") throw new Error(`${sep2}Command aborted`);
					if (error instanceof Error && error.message.startsWith("timeout:")) throw new Error(`${sep2}Command timed out after ${error.message.slice(8)} seconds`);
					throw error;
				}
				clearTimeout(pending);
				await collector.finish();
				const { text, details } = formatShellOutput(collector, "(no output)");
				if (exitCode === null || exitCode === undefined) throw new Error(`${text}\n\nCommand terminated without an exit code`);
				if (exitCode !== 0) return { content: [{ type: "text", text: `${text}\n\nCommand exited with code ${exitCode}` }], details, isError: true };
				return { content: [{ type: "text", text }], details };
			},
		},
		pristine,
	);
}

export function createBashToolDefinition(cwd, options) {
	return createShellToolDefinition(
		cwd,
		{ name: "bash", shellName: "bash", promptSnippet: "Run bash commands (ls, grep, find, etc.)", defaultOperations: (o) => createLocalBashOperations({ shellPath: o?.shellPath }) },
		options,
	);
}

export function createPowerShellToolDefinition(cwd, options) {
	return createShellToolDefinition(
		cwd,
		{ name: "powershell", shellName: "PowerShell", promptSnippet: "Run PowerShell commands", defaultOperations: (o) => createLocalPowerShellOperations({ shellPath: o?.shellPath }) },
		options,
	);
}

// --- ls --------------------------------------------------------------------------------------

const lsSchema = Type.Object({
	path: Type.Optional(Type.String({ description: "Directory to list (the working directory by default)" })),
	limit: Type.Optional(Type.Number({ description: "How many entries to return at most (500 by default)" })),
});

const defaultLsOperations = {
	exists: (path) => existsSync(path),
	stat: (path) => stat(path),
	readdir: (path) => readdir(path),
};

export function createLsToolDefinition(cwd, options) {
	const ops = options?.operations ?? defaultLsOperations;
	return mark(
		{
			name: "ls",
			label: "ls",
			description: `List a directory, sorted by name, with '/' after directories; dotfiles included. At most 500 entries (or limit) and ${DEFAULT_MAX_BYTES / 1024}KB.`,
			promptSnippet: "List directory contents",
			parameters: lsSchema,
			async execute(_toolCallId, params, signal, _onUpdate, ctx) {
				const { path, limit } = params ?? {};
				const dir = resolveToCwd(path || ".", ctx?.cwd || cwd);
				const max = limit ?? 500;
				if (!(await ops.exists(dir))) throw new Error(`Path not found: ${dir}`);
				if (!(await ops.stat(dir)).isDirectory()) throw new Error(`Not a directory: ${dir}`);
				const names = (await ops.readdir(dir)).map(String).sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
				const lines = [];
				for (const name of names) {
					throwIfAborted(signal);
					if (lines.length >= max) break;
					let suffix = "";
					try {
						if ((await ops.stat(join(dir, name))).isDirectory()) suffix = "/";
					} catch {
						continue;
					}
					lines.push(name + suffix);
				}
				if (lines.length === 0) return { content: [{ type: "text", text: "(empty directory)" }], details: undefined };
				const truncation = truncateHead(lines.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
				let text = truncation.content;
				const details = {};
				if (names.length > max) {
					text += `\n\n[${max} entries limit reached. Use limit=${max * 2} for more]`;
					details.entryLimitReached = max;
				}
				if (truncation.truncated) {
					text += `\n\n[${formatSize(DEFAULT_MAX_BYTES)} limit reached]`;
					details.truncation = truncation;
				}
				return { content: [{ type: "text", text }], details: Object.keys(details).length ? details : undefined };
			},
		},
		!options?.operations,
	);
}

// --- find and grep ---------------------------------------------------------------------------

/** A glob as a regular expression over '/'-separated relative paths. */
export function globToRegExp(glob) {
	let re = "";
	for (let i = 0; i < glob.length; i++) {
		const c = glob[i];
		if (c === "*") {
			if (glob[i + 1] === "*") {
				i++;
				if (glob[i + 1] === "/") {
					i++;
					re += "(?:.*/)?";
				} else re += ".*";
			} else re += "[^/]*";
		} else if (c === "?") re += "[^/]";
		else if (c === "{") {
			const close = glob.indexOf("}", i);
			if (close === -1) re += "\\{";
			else {
				re += `(?:${glob
					.slice(i + 1, close)
					.split(",")
					.map((part) => globToRegExp(part).source.slice(1, -1))
					.join("|")})`;
				i = close;
			}
		} else if (c === "[") {
			const close = glob.indexOf("]", i);
			if (close === -1) re += "\\[";
			else {
				re += glob.slice(i, close + 1).replace(/^\[!/, "[^");
				i = close;
			}
		} else re += c.replace(/[.+^$()|\\]/g, "\\$&");
	}
	return new RegExp(`^${re}$`);
}

function globMatcher(pattern) {
	const re = globToRegExp(pattern);
	return pattern.includes("/") ? (rel) => re.test(rel) : (rel) => re.test(rel.split("/").pop());
}

const SKIP_DIRS = new Set([".git", "node_modules"]);

async function walkFiles(root, signal, onFile) {
	const stack = [""];
	while (stack.length > 0) {
		throwIfAborted(signal);
		const rel = stack.pop();
		let entries;
		try {
			entries = await readdir(join(root, rel), { withFileTypes: true });
		} catch {
			continue;
		}
		for (const entry of entries) {
			const child = rel ? `${rel}/${entry.name}` : entry.name;
			if (entry.isDirectory()) {
				if (!SKIP_DIRS.has(entry.name)) stack.push(child);
			} else if (entry.isFile() || entry.isSymbolicLink()) {
				if ((await onFile(child)) === false) return;
			}
		}
	}
}

let rgAvailable;
function hasRipgrep() {
	if (rgAvailable === undefined) {
		rgAvailable = (process.env.PATH ?? "").split(process.platform === "win32" ? ";" : ":").some((dir) => dir && existsSync(join(dir, process.platform === "win32" ? "rg.exe" : "rg")));
	}
	return rgAvailable;
}

function runRipgrep(args, cwd, signal) {
	return new Promise((resolvePromise, reject) => {
		const child = spawn("rg", args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
		const out = [];
		let err = "";
		const onAbort = () => child.kill("SIGKILL");
		signal?.addEventListener("abort", onAbort, { once: true });
		child.stdout.on("data", (c) => out.push(c));
		child.stderr.on("data", (c) => (err += c));
		child.on("error", reject);
		child.on("close", (code) => {
			signal?.removeEventListener("abort", onAbort);
			if (signal?.aborted) reject(new Error("Operation aborted"));
			else if (code === 0 || code === 1) resolvePromise(Buffer.concat(out).toString("utf-8"));
			else reject(new Error(err.trim() || `rg exited with code ${code}`));
		});
	});
}

const findSchema = Type.Object({
	pattern: Type.String({ description: "Glob relative to the search directory, e.g. 'src/**/*.ts'; without '/' (e.g. '*.ts') it matches file names at any depth" }),
	path: Type.Optional(Type.String({ description: "Directory to search (the working directory by default)" })),
	limit: Type.Optional(Type.Number({ description: "How many results to return at most (1000 by default)" })),
});

export function createFindToolDefinition(cwd, options) {
	return mark(
		{
			name: "find",
			label: "find",
			description: `Find files by glob. Returns paths relative to the search directory, skipping what .gitignore ignores; at most 1000 results (or limit) and ${DEFAULT_MAX_BYTES / 1024}KB.`,
			promptSnippet: "Find files by glob pattern",
			parameters: findSchema,
			async execute(_toolCallId, params, signal, _onUpdate, ctx) {
				const { pattern, path, limit } = params ?? {};
				const root = resolveToCwd(path || ".", ctx?.cwd || cwd);
				const max = limit ?? 1000;
				if (options?.operations?.exists && !(await options.operations.exists(root))) throw new Error(`Path not found: ${root}`);
				if (!existsSync(root)) throw new Error(`Path not found: ${root}`);
				let files = [];
				if (hasRipgrep()) {
					const output = await runRipgrep(["--files", "--hidden", "--glob", "!.git", "--glob", pattern], root, signal);
					files = output.split("\n").filter(Boolean).map((f) => f.split(sep).join("/"));
				} else {
					const match = globMatcher(pattern);
					await walkFiles(root, signal, (rel) => {
						if (match(rel)) files.push(rel);
						return files.length <= max;
					});
				}
				files.sort();
				if (files.length === 0) return { content: [{ type: "text", text: "No files found matching pattern" }], details: undefined };
				const shown = files.slice(0, max);
				const truncation = truncateHead(shown.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
				let text = truncation.content;
				const details = {};
				if (files.length > max) {
					text += `\n\n[${max} results limit reached. Use limit=${max * 2} for more, or refine pattern]`;
					details.resultLimitReached = max;
				}
				if (truncation.truncated) {
					text += `\n\n[${formatSize(DEFAULT_MAX_BYTES)} limit reached]`;
					details.truncation = truncation;
				}
				return { content: [{ type: "text", text }], details: Object.keys(details).length ? details : undefined };
			},
		},
		!options?.operations,
	);
}

const grepSchema = Type.Object({
	pattern: Type.String({ description: "Regular expression (or literal text with literal: true) to search for" }),
	path: Type.Optional(Type.String({ description: "File or directory to search (the working directory by default)" })),
	glob: Type.Optional(Type.String({ description: "Only search files matching this glob, e.g. 'src/**/*.ts' or '*.ts'" })),
	ignoreCase: Type.Optional(Type.Boolean({ description: "Match case-insensitively (false by default)" })),
	literal: Type.Optional(Type.Boolean({ description: "Treat pattern as plain text (false by default)" })),
	context: Type.Optional(Type.Number({ description: "Lines of context before and after each match (0 by default)" })),
	limit: Type.Optional(Type.Number({ description: "How many matches to return at most (100 by default)" })),
});

export function createGrepToolDefinition(cwd, options) {
	return mark(
		{
			name: "grep",
			label: "grep",
			description: `Search file contents. Returns matching lines as path:line:text, skipping what .gitignore ignores; at most 100 matches (or limit) and ${DEFAULT_MAX_BYTES / 1024}KB, lines cut at ${GREP_MAX_LINE_LENGTH} characters.`,
			promptSnippet: "Search file contents for patterns",
			parameters: grepSchema,
			async execute(_toolCallId, params, signal, _onUpdate, ctx) {
				const { pattern, path, glob, ignoreCase, literal, context, limit } = params ?? {};
				const target = resolveToCwd(path || ".", ctx?.cwd || cwd);
				const max = limit ?? 100;
				if (!existsSync(target)) throw new Error(`Path not found: ${target}`);
				const isDir = (await stat(target)).isDirectory();
				const base = isDir ? target : dirname(target);
				const lines = [];
				let matches = 0;
				let limited = false;
				if (hasRipgrep()) {
					const args = ["-n", "--no-heading", "--color", "never", "--with-filename", "--hidden", "--glob", "!.git"];
					if (ignoreCase) args.push("-i");
					if (literal) args.push("-F");
					if (context > 0) args.push("-C", String(context));
					if (glob) args.push("--glob", glob);
					args.push("-e", pattern, "--", isDir ? "." : relative(base, target));
					const output = await runRipgrep(args, base, signal);
					for (const line of output.split("\n")) {
						if (!line) continue;
						if (line === "--") {
							lines.push(line);
							continue;
						}
						const isMatch = /^.+?:\d+:/.test(line);
						if (isMatch) {
							if (matches >= max) {
								limited = true;
								break;
							}
							matches++;
						}
						lines.push(truncateLine(line.replace(/^\.\//, "")).text);
					}
				} else {
					let re;
					try {
						re = new RegExp(literal ? pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : pattern, ignoreCase ? "i" : "");
					} catch (error) {
						throw new Error(`Invalid pattern: ${error.message}`);
					}
					const accept = glob ? globMatcher(glob) : () => true;
					const visit = async (rel) => {
						if (!accept(rel)) return true;
						let text;
						try {
							const buffer = await readFile(join(base, rel));
							if (buffer.includes(0)) return true;
							text = buffer.toString("utf-8");
						} catch {
							return true;
						}
						const fileLines = text.split("\n");
						for (let i = 0; i < fileLines.length; i++) {
							if (!re.test(fileLines[i])) continue;
							if (matches >= max) {
								limited = true;
								return false;
							}
							matches++;
							const c = Math.max(0, context ?? 0);
							for (let j = Math.max(0, i - c); j < i; j++) lines.push(truncateLine(`${rel}-${j + 1}-${fileLines[j]}`).text);
							lines.push(truncateLine(`${rel}:${i + 1}:${fileLines[i]}`).text);
							for (let j = i + 1; j <= Math.min(fileLines.length - 1, i + c); j++) lines.push(truncateLine(`${rel}-${j + 1}-${fileLines[j]}`).text);
						}
						return true;
					};
					if (isDir) await walkFiles(base, signal, visit);
					else await visit(relative(base, target));
				}
				if (matches === 0) return { content: [{ type: "text", text: "No matches found" }], details: undefined };
				const truncation = truncateHead(lines.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
				let text = truncation.content;
				const details = {};
				if (limited) {
					text += `\n\n[${max} matches limit reached. Use limit=${max * 2} for more, or refine pattern]`;
					details.matchLimitReached = max;
				}
				if (truncation.truncated) {
					text += `\n\n[${formatSize(DEFAULT_MAX_BYTES)} limit reached]`;
					details.truncation = truncation;
				}
				return { content: [{ type: "text", text }], details: Object.keys(details).length ? details : undefined };
			},
		},
		!options?.operations,
	);
}

// --- AgentTool forms -------------------------------------------------------------------------

export const createReadTool = (cwd, options) => wrapToolDefinition(createReadToolDefinition(cwd, options));
export const createWriteTool = (cwd, options) => wrapToolDefinition(createWriteToolDefinition(cwd, options));
export const createEditTool = (cwd, options) => wrapToolDefinition(createEditToolDefinition(cwd, options));
export const createBashTool = (cwd, options) => wrapToolDefinition(createBashToolDefinition(cwd, options));
export const createPowerShellTool = (cwd, options) => wrapToolDefinition(createPowerShellToolDefinition(cwd, options));
export const createLsTool = (cwd, options) => wrapToolDefinition(createLsToolDefinition(cwd, options));
export const createFindTool = (cwd, options) => wrapToolDefinition(createFindToolDefinition(cwd, options));
export const createGrepTool = (cwd, options) => wrapToolDefinition(createGrepToolDefinition(cwd, options));

export function createCodingTools(cwd, options) {
	return [createReadTool(cwd, options?.read), createBashTool(cwd, options?.bash), createEditTool(cwd, options?.edit), createWriteTool(cwd, options?.write)];
}

export function createReadOnlyTools(cwd, options) {
	return [createReadTool(cwd, options?.read), createGrepTool(cwd, options?.grep), createFindTool(cwd, options?.find), createLsTool(cwd, options?.ls)];
}

export { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES };
