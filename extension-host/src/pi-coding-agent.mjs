// Tandem's stand-in for `@earendil-works/pi-coding-agent` (and `@mariozechner/pi-coding-agent`):
// the helpers extensions import. Types are not needed at run time (Tandem removes type-only
// imports). Exports that need pi's own agent, sessions or terminal exist and throw when used.

import { spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { hostState } from "./host-state.mjs";
import { CancellableLoader, Container, Editor, truncateToWidth } from "./pi-tui.mjs";
import { unsupportedClasses, unsupportedFunctions } from "./unsupported.mjs";

export {
	createBashTool,
	createBashToolDefinition,
	createCodingTools,
	createEditTool,
	createEditToolDefinition,
	createFindTool,
	createFindToolDefinition,
	createGrepTool,
	createGrepToolDefinition,
	createLsTool,
	createLsToolDefinition,
	createPowerShellTool,
	createPowerShellToolDefinition,
	createReadOnlyTools,
	createReadTool,
	createReadToolDefinition,
	createWriteTool,
	createWriteToolDefinition,
	detectSupportedImageMimeTypeFromFile,
} from "./builtin-tools.mjs";
export { createLocalBashOperations, createLocalPowerShellOperations, getPowerShellConfig, getShellConfig } from "./exec.mjs";
export { withFileMutationQueue } from "./file-queue.mjs";
export { getLanguageFromPath, getMarkdownTheme, getSelectListTheme, getSettingsListTheme, highlightCode, initTheme, Theme } from "./theme.mjs";
export { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, truncateHead, truncateLine, truncateTail } from "./truncate.mjs";
export { parseFrontmatter, stripFrontmatter } from "./yaml-lite.mjs";

const SRC_DIR = dirname(fileURLToPath(import.meta.url));

// --- configuration ---------------------------------------------------------------------------

export const CONFIG_DIR_NAME = ".pi";
/** The pi version whose extension API this host provides. */
export const VERSION = "1.6.0";
export const CURRENT_SESSION_VERSION = 3;
export const VIRTUAL_MODEL_STATE_ENTRY = "pi.virtual-model-state";
export const DEFAULT_COMPACTION_SETTINGS = { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 };

function expandHome(path) {
	if (path === "~") return homedir();
	if (path.startsWith("~/")) return join(homedir(), path.slice(2));
	return path;
}

/** The agent directory: Tandem's (from `initialize`), else `PI_CODING_AGENT_DIR`, else `~/.pi/agent`. */
export function getAgentDir() {
	if (hostState.agentDir) return hostState.agentDir;
	const fromEnv = process.env.PI_CODING_AGENT_DIR;
	if (fromEnv) return resolve(expandHome(fromEnv));
	return join(homedir(), CONFIG_DIR_NAME, "agent");
}

export const getPackageDir = () => SRC_DIR;
export const getDocsPath = () => join(SRC_DIR, "docs");
export const getExamplesPath = () => join(SRC_DIR, "examples");
export const getReadmePath = () => join(SRC_DIR, "README.md");

// --- tool helpers ----------------------------------------------------------------------------

/** Returns the tool unchanged (it only keeps TypeScript's parameter inference). */
export function defineTool(tool) {
	return tool;
}

export const isToolCallEventType = (toolName, event) => event?.toolName === toolName;
export const isBashToolResult = (event) => event?.toolName === "bash";
export const isPowerShellToolResult = (event) => event?.toolName === "powershell";
export const isReadToolResult = (event) => event?.toolName === "read";
export const isEditToolResult = (event) => event?.toolName === "edit";
export const isWriteToolResult = (event) => event?.toolName === "write";
export const isGrepToolResult = (event) => event?.toolName === "grep";
export const isFindToolResult = (event) => event?.toolName === "find";
export const isLsToolResult = (event) => event?.toolName === "ls";

function lineNumber(value) {
	if (typeof value === "string" && value.trim() !== "") value = Number(value);
	return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** `":12"` or `":12-20"` for a read call's offset/limit, `""` when there is neither (or either is malformed). */
export function formatReadLineRange(offset, limit) {
	if (offset == null && limit == null) return "";
	const start = offset == null ? 1 : lineNumber(offset);
	if (start === undefined) return "";
	if (limit == null) return `:${start}`;
	const count = lineNumber(limit);
	if (count === undefined) return "";
	const end = start + count - 1;
	return `:${start}${end ? `-${end}` : ""}`;
}

export function createSyntheticSourceInfo(path, options = {}) {
	return { path, source: options.source ?? "local", scope: options.scope ?? "temporary", origin: options.origin ?? "top-level", baseDir: options.baseDir };
}

// --- event bus -------------------------------------------------------------------------------

export function createEventBus() {
	const emitter = new EventEmitter();
	emitter.setMaxListeners(0);
	return {
		emit(channel, data) {
			emitter.emit(channel, data);
		},
		on(channel, handler) {
			const safe = async (data) => {
				try {
					await handler(data);
				} catch (error) {
					console.error(`Event handler error (${channel}):`, error);
				}
			};
			emitter.on(channel, safe);
			return () => emitter.off(channel, safe);
		},
		clear() {
			emitter.removeAllListeners();
		},
	};
}

// --- messages --------------------------------------------------------------------------------

function textOf(content) {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.map((block) => {
			if (block?.type === "text") return block.text;
			if (block?.type === "image") return "[image]";
			return "";
		})
		.filter(Boolean)
		.join("\n");
}

/** Session messages as an LLM sees them: custom, bash and summary messages become user messages. */
export function convertToLlm(messages) {
	const result = [];
	for (const m of messages ?? []) {
		switch (m?.role) {
			case "user":
			case "assistant":
			case "toolResult":
			case "system":
				result.push(m);
				break;
			case "custom":
				result.push({ role: "user", content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content, timestamp: m.timestamp });
				break;
			case "bashExecution":
				if (m.excludeFromContext) break;
				result.push({
					role: "user",
					content: [{ type: "text", text: `Ran \`${m.command}\`\n\`\`\`\n${m.output ?? ""}\n\`\`\`${m.exitCode !== undefined && m.exitCode !== 0 ? `\nExit code: ${m.exitCode}` : ""}` }],
					timestamp: m.timestamp,
				});
				break;
			case "branchSummary":
				result.push({ role: "user", content: [{ type: "text", text: `Summary of a branch this conversation left:\n<summary>\n${m.summary}\n</summary>` }], timestamp: m.timestamp });
				break;
			case "compactionSummary":
				result.push({ role: "user", content: [{ type: "text", text: `The conversation before this point was compacted into this summary:\n<summary>\n${m.summary}\n</summary>` }], timestamp: m.timestamp });
				break;
			default:
				break;
		}
	}
	return result;
}

/** A conversation as plain text, for summarization prompts. */
export function serializeConversation(messages) {
	const parts = [];
	for (const m of messages ?? []) {
		if (m?.role === "user") {
			const text = textOf(m.content);
			if (text) parts.push(`[User]: ${text}`);
		} else if (m?.role === "assistant") {
			for (const block of m.content ?? []) {
				if (block.type === "text" && block.text) parts.push(`[Assistant]: ${block.text}`);
				else if (block.type === "thinking" && block.thinking) parts.push(`[Assistant thinking]: ${block.thinking}`);
				else if (block.type === "toolCall") parts.push(`[Assistant tool call]: ${block.name}(${JSON.stringify(block.arguments ?? {})})`);
			}
		} else if (m?.role === "toolResult") {
			const text = textOf(m.content);
			if (text) parts.push(`[Tool result${m.isError ? " (error)" : ""}]: ${text}`);
		}
	}
	return parts.join("\n\n");
}

export function estimateTokens(message) {
	let chars = 0;
	const content = message?.content;
	if (typeof content === "string") chars = content.length;
	else if (Array.isArray(content)) {
		for (const block of content) {
			if (block.type === "text") chars += block.text?.length ?? 0;
			else if (block.type === "thinking") chars += block.thinking?.length ?? 0;
			else if (block.type === "toolCall") chars += JSON.stringify(block.arguments ?? {}).length + (block.name?.length ?? 0);
			else if (block.type === "image") chars += 4800;
		}
	}
	if (typeof message?.summary === "string") chars += message.summary.length;
	return Math.ceil(chars / 4);
}

export function calculateContextTokens(usage) {
	if (!usage) return 0;
	return usage.totalTokens || (usage.input ?? 0) + (usage.output ?? 0) + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0);
}

export function getLastAssistantUsage(entries) {
	for (let i = (entries?.length ?? 0) - 1; i >= 0; i--) {
		const message = entries[i]?.type === "message" ? entries[i].message : entries[i];
		if (message?.role === "assistant" && message.usage && message.stopReason !== "aborted" && message.stopReason !== "error") return message.usage;
	}
	return undefined;
}

export function shouldCompact(contextTokens, contextWindow, settings = DEFAULT_COMPACTION_SETTINGS) {
	if (!settings.enabled) return false;
	return contextTokens > contextWindow - settings.reserveTokens;
}

export function parseSessionEntries(content) {
	const entries = [];
	for (const line of String(content ?? "").split("\n")) {
		if (!line.trim()) continue;
		try {
			entries.push(JSON.parse(line));
		} catch {}
	}
	return entries;
}

export function getLatestCompactionEntry(entries) {
	for (let i = (entries?.length ?? 0) - 1; i >= 0; i--) if (entries[i]?.type === "compaction") return entries[i];
	return undefined;
}

export function migrateSessionEntries(entries) {
	return entries;
}

/** Line diff of two texts in unified form (whole-file hunk; enough for display). */
export function generateDiffString(oldContent, newContent) {
	const a = String(oldContent ?? "").split("\n");
	const b = String(newContent ?? "").split("\n");
	let start = 0;
	while (start < a.length && start < b.length && a[start] === b[start]) start++;
	let endA = a.length - 1;
	let endB = b.length - 1;
	while (endA >= start && endB >= start && a[endA] === b[endB]) {
		endA--;
		endB--;
	}
	const out = [];
	for (let i = start; i <= endA; i++) out.push(`-${i + 1} ${a[i]}`);
	for (let i = start; i <= endB; i++) out.push(`+${i + 1} ${b[i]}`);
	return { diff: out.join("\n"), firstChangedLine: start < Math.max(a.length, b.length) ? start + 1 : undefined };
}

export function generateUnifiedPatch(path, oldContent, newContent) {
	const { diff } = generateDiffString(oldContent, newContent);
	return `--- ${path}\n+++ ${path}\n${diff}`;
}

export function renderDiff(diffText) {
	return String(diffText ?? "");
}

export function truncateToVisualLines(text, maxLines, width) {
	const lines = String(text ?? "").split("\n");
	const visual = lines.map((l) => truncateToWidth(l, width ?? 80));
	return { visualLines: visual.slice(-maxLines), skippedCount: Math.max(0, visual.length - maxLines) };
}

// --- keys ------------------------------------------------------------------------------------

const APP_KEYS = {
	"app.interrupt": "escape",
	"app.clear": "ctrl+c",
	"app.exit": "ctrl+d",
	"app.suspend": "ctrl+z",
	"app.thinking.cycle": "shift+tab",
	"app.model.cycleForward": "ctrl+p",
	"app.model.cycleBackward": "shift+ctrl+p",
	"app.model.select": "ctrl+l",
	"app.tools.expand": "ctrl+o",
	"app.thinking.toggle": "ctrl+t",
	"app.editor.external": "ctrl+g",
	"app.message.followUp": "alt+enter",
	"app.session.rename": "ctrl+r",
	"tui.select.confirm": "enter",
	"tui.select.cancel": "escape",
	"tui.input.submit": "enter",
	"tui.input.tab": "tab",
};

export function keyText(keybinding) {
	return APP_KEYS[keybinding] ?? "";
}

export function keyHint(keybinding, description) {
	const key = keyText(keybinding);
	return key ? `${key} ${description}` : description;
}

export function rawKeyHint(key, description) {
	return `${key} ${description}`;
}

// --- components --------------------------------------------------------------------------------

/** pi's editor base for extensions; Tandem never shows it (setEditorComponent is not drawn). */
export class CustomEditor extends Editor {
	constructor(tui, theme, keybindings, options = {}) {
		super(tui, theme, options);
		this.keybindings = keybindings;
		this.actionHandlers = new Map();
		this.onEscape = undefined;
		this.onCtrlD = undefined;
		this.onPasteImage = undefined;
		this.onExtensionShortcut = undefined;
	}
	onAction(action, handler) {
		this.actionHandlers.set(action, handler);
	}
	handleInput(data) {
		const kb = this.keybindings;
		if (kb?.matches?.(data, "app.interrupt") && this.onEscape) return this.onEscape();
		if (kb?.matches?.(data, "app.exit") && this.getText().length === 0 && this.onCtrlD) return this.onCtrlD();
		for (const [action, handler] of this.actionHandlers) {
			if (kb?.matches?.(data, action)) return handler();
		}
		super.handleInput(data);
	}
}

/** A horizontal rule across the width. */
export class DynamicBorder {
	constructor(color = (s) => s) {
		this.color = color;
	}
	invalidate() {}
	render(width) {
		return [this.color("─".repeat(Math.max(1, width)))];
	}
}

/** A cancellable loader in a border (pi's; never drawn by Tandem). */
export class BorderedLoader extends CancellableLoader {
	constructor(tui, theme, message = "Loading...", options) {
		super(tui, (s) => s, (s) => s, message, options);
		this.theme = theme;
	}
	render(width) {
		const border = "─".repeat(Math.max(1, width));
		return [border, ...super.render(width), border];
	}
}

class SilentComponent extends Container {
	constructor(...args) {
		super();
		this.args = args;
	}
}

export class ExtensionSelectorComponent extends SilentComponent {}
export class ExtensionInputComponent extends SilentComponent {}
export class ExtensionEditorComponent extends SilentComponent {}
export class CustomMessageComponent extends SilentComponent {}
export class AssistantMessageComponent extends SilentComponent {}
export class UserMessageComponent extends SilentComponent {}
export class ToolExecutionComponent extends SilentComponent {}
export class BashExecutionComponent extends SilentComponent {}
export class BranchSummaryMessageComponent extends SilentComponent {}
export class CompactionSummaryMessageComponent extends SilentComponent {}
export class SkillInvocationMessageComponent extends SilentComponent {}
export class FooterComponent extends SilentComponent {}
export class ArminComponent extends SilentComponent {}
export class ModelSelectorComponent extends SilentComponent {}
export class OAuthSelectorComponent extends SilentComponent {}
export class LoginDialogComponent extends SilentComponent {}
export class SessionSelectorComponent extends SilentComponent {}
export class SettingsSelectorComponent extends SilentComponent {}
export class ShowImagesSelectorComponent extends SilentComponent {}
export class ThemeSelectorComponent extends SilentComponent {}
export class ThinkingSelectorComponent extends SilentComponent {}
export class TreeSelectorComponent extends SilentComponent {}
export class UserMessageSelectorComponent extends SilentComponent {}

// --- miscellaneous -----------------------------------------------------------------------------

export async function copyToClipboard(text) {
	const candidates =
		process.platform === "darwin"
			? [["pbcopy", []]]
			: process.platform === "win32"
				? [["clip", []]]
				: [
						["wl-copy", []],
						["xclip", ["-selection", "clipboard"]],
						["xsel", ["--clipboard", "--input"]],
					];
	for (const [command, args] of candidates) {
		const ok = await new Promise((done) => {
			const child = spawn(command, args, { stdio: ["pipe", "ignore", "ignore"] });
			child.on("error", () => done(false));
			child.on("close", (code) => done(code === 0));
			child.stdin.end(String(text ?? ""));
		});
		if (ok) return;
	}
	throw new Error("No clipboard command found (pbcopy, wl-copy, xclip or xsel)");
}

export const hasTrustRequiringProjectResources = () => false;
export const loadProjectContextFiles = () => [];
export const formatSkillsForPrompt = () => "";
export const loadSkills = () => ({ skills: [], diagnostics: [] });
export const loadSkillsFromDir = () => ({ skills: [], diagnostics: [] });
export const formatDimensionNote = () => undefined;
export const parseSkillBlock = () => null;

/** Extension factories of pi's built-in extensions: Tandem has its own MCP and tool search. */
export const createCodemodeExtension = () => () => {};
export const createMcpExtension = () => () => {};
export const createToolSearchExtension = () => () => {};

/** Session listing is Tandem's: extensions cannot switch sessions through this host yet. */
export class SessionManager {
	constructor() {
		throw new Error("SessionManager is not available in Tandem's extension host; use ctx.sessionManager");
	}
	static async list() {
		return [];
	}
	static async listAll() {
		return [];
	}
}

export const {
	AgentSession,
	AgentSessionRuntime,
	CredentialSynchronizationError,
	DefaultPackageManager,
	DefaultResourceLoader,
	ExtensionRunner,
	InteractiveMode,
	ModelRegistry,
	ModelRuntime,
	ProjectTrustStore,
	RpcClient,
	SettingsManager,
} = unsupportedClasses("@earendil-works/pi-coding-agent", [
	"AgentSession",
	"AgentSessionRuntime",
	"CredentialSynchronizationError",
	"DefaultPackageManager",
	"DefaultResourceLoader",
	"ExtensionRunner",
	"InteractiveMode",
	"ModelRegistry",
	"ModelRuntime",
	"ProjectTrustStore",
	"RpcClient",
	"SettingsManager",
]);

export const {
	buildContextEntries,
	buildSessionContext,
	buildSessionProjection,
	collectEntriesForBranchSummary,
	compact,
	convertToPng,
	createAgentSession,
	createAgentSessionFromServices,
	createAgentSessionRuntime,
	createAgentSessionServices,
	createExtensionRuntime,
	discoverAndLoadExtensions,
	findCutPoint,
	findTurnStartIndex,
	generateBranchSummary,
	generateSummary,
	generateSummaryWithUsage,
	main,
	parseArgs,
	prepareBranchEntries,
	readStoredCredential,
	resizeImage,
	resolveCliModel,
	resolveModelScopeWithDiagnostics,
	runPrintMode,
	runRpcMode,
	sessionEntryToContextMessages,
	wrapRegisteredTool,
	wrapRegisteredTools,
} = unsupportedFunctions("@earendil-works/pi-coding-agent", [
	"buildContextEntries",
	"buildSessionContext",
	"buildSessionProjection",
	"collectEntriesForBranchSummary",
	"compact",
	"convertToPng",
	"createAgentSession",
	"createAgentSessionFromServices",
	"createAgentSessionRuntime",
	"createAgentSessionServices",
	"createExtensionRuntime",
	"discoverAndLoadExtensions",
	"findCutPoint",
	"findTurnStartIndex",
	"generateBranchSummary",
	"generateSummary",
	"generateSummaryWithUsage",
	"main",
	"parseArgs",
	"prepareBranchEntries",
	"readStoredCredential",
	"resizeImage",
	"resolveCliModel",
	"resolveModelScopeWithDiagnostics",
	"runPrintMode",
	"runRpcMode",
	"sessionEntryToContextMessages",
	"wrapRegisteredTool",
	"wrapRegisteredTools",
]);
