// Tandem's stand-in for `@earendil-works/pi-ai` and its subpaths (`/compat`, `/models`, `/oauth`,
// `/providers/all`), and the legacy `@mariozechner/pi-ai`. Like pi's extension view of pi-ai it
// also exports TypeBox's `Type`.
//
// Model calls belong to Tandem: the streaming and completion functions exist and throw. The
// model catalog helpers read the models Tandem listed in its state mirror.

import { randomBytes } from "node:crypto";
import { hostState } from "./host-state.mjs";
import { Type } from "./typebox.mjs";
import { NotSupportedError, unsupportedFunctions } from "./unsupported.mjs";

export { Type };

export const PI_AI_VERSION = "1.6.0";
export const AI_TELEMETRY_SCHEMA = {};
export const PI_ATTRIBUTION = {};
export const CACHE_WARMING_IDLE_CONTINUATION_PROBABILITY = 0.5;
export const CACHE_WARMING_MAX_AGE_MS = 55 * 60 * 1000;
export const CACHE_WARMING_MAX_IDLE_AGE_MS = 15 * 60 * 1000;
export const CACHE_WARMING_MINIMUM_EXPECTED_SAVINGS = 0;
export const DEFAULT_MAX_AGENT_RETRY_DELAY_MS = 60_000;
export const ANTHROPIC_API_KEY_ENV = "ANTHROPIC_API_KEY";
export const ANTHROPIC_AUTH_TOKEN_ENV = "ANTHROPIC_AUTH_TOKEN";
export const ANTHROPIC_OAUTH_TOKEN_ENV = "ANTHROPIC_OAUTH_TOKEN";
export const ANTHROPIC_FEDERATION_RULE_ID_ENV = "ANTHROPIC_FEDERATION_RULE_ID";
export const ANTHROPIC_IDENTITY_TOKEN_FILE_ENV = "ANTHROPIC_IDENTITY_TOKEN_FILE";
export const ANTHROPIC_ORGANIZATION_ID_ENV = "ANTHROPIC_ORGANIZATION_ID";
export const ANTHROPIC_SERVICE_ACCOUNT_ID_ENV = "ANTHROPIC_SERVICE_ACCOUNT_ID";
export const ANTHROPIC_WORKSPACE_ID_ENV = "ANTHROPIC_WORKSPACE_ID";

/** A string enum as a plain `{ type: "string", enum }` schema, which every provider accepts. */
export function StringEnum(values, options) {
	const schema = { type: "string", enum: [...values] };
	if (options?.description) schema.description = options.description;
	if (options?.default !== undefined) schema.default = options.default;
	return schema;
}

/** An RFC 9562 version 7 UUID: 48 bits of Unix milliseconds, then random bits. */
export function uuidv7() {
	const bytes = randomBytes(16);
	const now = BigInt(Date.now());
	for (let i = 0; i < 6; i++) bytes[i] = Number((now >> BigInt(8 * (5 - i))) & 0xffn);
	bytes[6] = (bytes[6] & 0x0f) | 0x70;
	bytes[8] = (bytes[8] & 0x3f) | 0x80;
	const hex = bytes.toString("hex");
	return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// --- event streams ---------------------------------------------------------------------------

/** An async-iterable stream of events with a final result (what custom providers return). */
export class EventStream {
	constructor(isComplete = () => false, extractResult = () => undefined) {
		this.isComplete = isComplete;
		this.extractResult = extractResult;
		this.buffer = [];
		this.readers = [];
		this.finished = false;
		this.finalResult = new Promise((resolve) => {
			this.settle = resolve;
		});
	}
	push(event) {
		if (this.finished) return;
		if (this.isComplete(event)) {
			this.finished = true;
			this.settle(this.extractResult(event));
		}
		const reader = this.readers.shift();
		if (reader) reader({ value: event, done: false });
		else this.buffer.push(event);
	}
	end(result) {
		this.finished = true;
		if (result !== undefined) this.settle(result);
		for (const reader of this.readers.splice(0)) reader({ value: undefined, done: true });
	}
	[Symbol.asyncIterator]() {
		return {
			next: () => {
				if (this.buffer.length > 0) return Promise.resolve({ value: this.buffer.shift(), done: false });
				if (this.finished) return Promise.resolve({ value: undefined, done: true });
				return new Promise((resolve) => this.readers.push(resolve));
			},
			return: () => Promise.resolve({ value: undefined, done: true }),
		};
	}
	result() {
		return this.finalResult;
	}
}

export class AssistantMessageEventStream extends EventStream {
	constructor() {
		super(
			(event) => event?.type === "done" || event?.type === "error",
			(event) => (event?.type === "done" ? event.message : event?.error),
		);
	}
}

export function createAssistantMessageEventStream() {
	return new AssistantMessageEventStream();
}

// --- JSON repair for streamed tool arguments -------------------------------------------------

/** Closes what a cut-off JSON text left open (strings, arrays, objects) so it parses. */
export function repairJson(text) {
	let out = "";
	const stack = [];
	let inString = false;
	let escaped = false;
	for (const c of String(text ?? "")) {
		out += c;
		if (inString) {
			if (escaped) escaped = false;
			else if (c === "\\") escaped = true;
			else if (c === '"') inString = false;
			continue;
		}
		if (c === '"') inString = true;
		else if (c === "{") stack.push("}");
		else if (c === "[") stack.push("]");
		else if (c === "}" || c === "]") stack.pop();
	}
	if (escaped) out = out.slice(0, -1);
	if (inString) out += '"';
	out = out.replace(/[,:]\s*$/, "").replace(/,\s*"[^"]*"\s*$/, "");
	return out + stack.reverse().join("");
}

export function parseJsonWithRepair(text) {
	try {
		return JSON.parse(text);
	} catch {
		try {
			return JSON.parse(repairJson(text));
		} catch {
			return undefined;
		}
	}
}

export function parseStreamingJson(text) {
	if (!text || !String(text).trim()) return {};
	return parseJsonWithRepair(text) ?? {};
}

export const parseToolCallArguments = (text) => parseStreamingJson(text);

export class StreamingJsonParser {
	constructor() {
		this.text = "";
	}
	push(delta) {
		this.text += delta;
		return this.value();
	}
	value() {
		return parseStreamingJson(this.text);
	}
}

/** Accumulates streamed tool-call argument text and parses it as it grows. */
export class ToolCallArgumentsStream {
	constructor() {
		this.text = "";
	}
	push(delta) {
		this.text += delta ?? "";
		return parseStreamingJson(this.text);
	}
	append(delta) {
		return this.push(delta);
	}
	get value() {
		return parseStreamingJson(this.text);
	}
	finish() {
		return parseStreamingJson(this.text);
	}
}

// --- transcripts -----------------------------------------------------------------------------

export function contentText(content) {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.filter((b) => b?.type === "text")
		.map((b) => b.text)
		.join("");
}

export function getSystemMessageText(message) {
	if (!message) return "";
	if (typeof message.content === "string") return message.content;
	const text = contentText(message.content);
	if (text) return text;
	if (message.sections && typeof message.sections === "object") return Object.values(message.sections).join("\n\n");
	return "";
}

export function getCurrentSystemMessage(messages) {
	for (let i = (messages?.length ?? 0) - 1; i >= 0; i--) if (messages[i]?.role === "system") return messages[i];
	return undefined;
}

export const getInitialSystemMessage = (messages) => (messages?.[0]?.role === "system" ? messages[0] : undefined);
export const withoutInitialSystemMessage = (messages) => (messages?.[0]?.role === "system" ? messages.slice(1) : (messages ?? []));
export const getCurrentSystemPrompt = (messages) => getSystemMessageText(getCurrentSystemMessage(messages));
export const getCurrentTools = (messages) => getCurrentSystemMessage(messages)?.tools ?? [];
export const getDeclaredTools = getCurrentTools;
export const collapseSystemMessages = (messages) => messages ?? [];
export const createInitialSystemMessage = (content, tools = []) => ({ role: "system", content, tools, timestamp: Date.now() });
export const normalizeContext = (context) => context;
export const resolveTranscript = (messages) => messages ?? [];
export const resolveTranscriptTools = (messages) => getCurrentTools(messages);
export const getToolStateChanges = () => [];
export const hasNonAdditiveToolChanges = () => false;
export const hasToolRedefinitions = () => false;
export const declarationsEqual = (a, b) => JSON.stringify(a) === JSON.stringify(b);
export const toToolDeclaration = (tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters });
export const renderSystemMessageUpdate = (message) => getSystemMessageText(message);

// --- models (from Tandem's state mirror) ------------------------------------------------------

const models = () => hostState.mirror.models ?? [];

export function getModel(provider, id) {
	return models().find((m) => m.provider === provider && m.id === id);
}
export function getModels(provider) {
	return provider === undefined ? [...models()] : models().filter((m) => m.provider === provider);
}
export function getProviders() {
	return [...new Set(models().map((m) => m.provider))];
}
export const getAllBuiltinModels = () => getModels();
export const getBuiltinModel = getModel;
export const getBuiltinModels = getModels;
export const getBuiltinProviders = getProviders;
export const builtinModels = () => getModels();
export const builtinProviders = () => getProviders();
export const getBuiltinModelDataGeneratedAt = () => undefined;
export const getBuiltinImageModels = () => [];
export const getBuiltinImageModel = () => undefined;
export const getBuiltinClassifierModels = () => [];
export const getBuiltinClassifierModel = () => undefined;
export const getImageModels = () => [];
export const getImageModel = () => undefined;
export const getImageProviders = () => [];

export function modelsAreEqual(a, b) {
	return !!a && !!b && a.provider === b.provider && a.id === b.id;
}

export function calculateCost(model, usage) {
	const cost = model?.cost ?? {};
	const perToken = (price, tokens) => ((price ?? 0) / 1_000_000) * (tokens ?? 0);
	const result = {
		input: perToken(cost.input, usage?.input),
		output: perToken(cost.output, usage?.output),
		cacheRead: perToken(cost.cacheRead, usage?.cacheRead),
		cacheWrite: perToken(cost.cacheWrite, usage?.cacheWrite),
	};
	result.total = result.input + result.output + result.cacheRead + result.cacheWrite;
	if (usage && typeof usage === "object") usage.cost = result;
	return result;
}

const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"];
export function getSupportedThinkingLevels(model) {
	return model?.reasoning ? [...LEVELS] : ["off"];
}
export function clampThinkingLevel(model, level) {
	return getSupportedThinkingLevels(model).includes(level) ? level : model?.reasoning ? "high" : "off";
}
export const getModelType = (model) => model?.type ?? "chat";
export const isModelType = (model, type) => getModelType(model) === type;
export const hasApi = (model, api) => model?.api === api;

export class ModelsError extends Error {}

export function createModels(list = []) {
	return { getAll: () => [...list], find: (provider, id) => list.find((m) => m.provider === provider && m.id === id) };
}

/** A provider description, as `pi.registerProvider()` accepts it (Tandem does not act on it yet). */
export function createProvider(config) {
	return { ...config };
}

const apiDescriptor = (api) => (options) => ({ api, ...(options ?? {}) });
export const anthropicMessagesApi = apiDescriptor("anthropic-messages");
export const openAICompletionsApi = apiDescriptor("openai-completions");
export const openAIResponsesApi = apiDescriptor("openai-responses");
export const openAICodexResponsesApi = apiDescriptor("openai-codex-responses");
export const azureOpenAIResponsesApi = apiDescriptor("azure-openai-responses");
export const googleGenerativeAIApi = apiDescriptor("google-generative-ai");
export const googleVertexApi = apiDescriptor("google-vertex");
export const mistralConversationsApi = apiDescriptor("mistral-conversations");
export const bedrockConverseStreamApi = apiDescriptor("bedrock-converse-stream");
export const piMessagesApi = apiDescriptor("pi-messages");
export const lazyApi = (loader) => loader;
export const lazyStream = (loader) => loader;
export const lazyOAuth = (loader) => loader;

const apiProviders = new Map();
export function registerApiProvider(provider, sourceId) {
	apiProviders.set(provider?.api ?? provider?.id, { provider, sourceId });
}
export const getApiProvider = (api) => apiProviders.get(api)?.provider;
export const getApiProviders = () => [...apiProviders.values()].map((e) => e.provider);
export function unregisterApiProviders(sourceId) {
	for (const [key, entry] of apiProviders) if (entry.sourceId === sourceId) apiProviders.delete(key);
}
export const resetApiProviders = () => apiProviders.clear();
export const registerBuiltInApiProviders = () => {};
export const registerBuiltInImagesApiProviders = () => {};
export const registerImagesApiProvider = () => {};
export const getImagesApiProvider = () => undefined;

export function getEnvApiKey(provider) {
	const name = `${String(provider ?? "")
		.toUpperCase()
		.replace(/[^A-Z0-9]/g, "_")}_API_KEY`;
	return process.env[name];
}
export const findEnvKeys = (provider) => (getEnvApiKey(provider) ? [`${String(provider).toUpperCase()}_API_KEY`] : []);
export const envApiKeyAuth = (envName) => ({ resolve: async () => (process.env[envName] ? { auth: { apiKey: process.env[envName] }, source: envName } : undefined) });
export const defaultProviderAuthContext = () => ({});

export class InMemoryCredentialStore {
	constructor() {
		this.entries = new Map();
	}
	get(key) {
		return this.entries.get(key);
	}
	set(key, value) {
		this.entries.set(key, value);
	}
	delete(key) {
		this.entries.delete(key);
	}
}
export class InMemoryModelsStore extends InMemoryCredentialStore {}

// --- errors, retries, identity -----------------------------------------------------------------

export function formatThrownValue(value) {
	return value instanceof Error ? value.message : typeof value === "string" ? value : JSON.stringify(value);
}
export const extractDiagnosticError = (value) => formatThrownValue(value);
export const createAssistantMessageDiagnostic = (error) => ({ message: formatThrownValue(error) });
export const appendAssistantMessageDiagnostic = (message) => message;
const OVERFLOW = [/context length/i, /context window/i, /too many tokens/i, /prompt is too long/i, /maximum context/i, /exceeds the context/i];
export const getOverflowPatterns = () => [...OVERFLOW];
export const isContextOverflow = (message) => OVERFLOW.some((re) => re.test(String(message?.errorMessage ?? message ?? "")));
export const isRecoverableLength = () => false;
export const isRetryableAssistantError = (message) => /rate limit|overloaded|timeout|temporarily|5\d\d/i.test(String(message?.errorMessage ?? ""));
export const retryDelayMs = (attempt) => Math.min(DEFAULT_MAX_AGENT_RETRY_DELAY_MS, 1000 * 2 ** Math.max(0, attempt));
export const retryAssistantCall = async (fn) => fn();
export const getClientVersion = () => PI_AI_VERSION;
export const formatUserAgent = () => `tandem-extension-host/${PI_AI_VERSION}`;
export const getIdentityHeaders = () => ({});
export const getAttributionHeaders = () => ({});
export const getOpenCodeSessionHeaders = () => ({});
export const mergeClientIdentity = (a, b) => ({ ...(a ?? {}), ...(b ?? {}) });
export const withClientIdentity = (options) => options;
export const getPromptCacheTtlMs = () => 5 * 60 * 1000;
export const evaluateCacheWarming = () => ({ action: "stop" });
export const getCacheWarmingDelayMs = () => undefined;
export const getCacheWarmingRequestOptions = () => ({});
export const isCacheWarmingReplayable = () => false;
const cleanups = new Set();
export function registerSessionResourceCleanup(fn) {
	cleanups.add(fn);
	return () => cleanups.delete(fn);
}
export async function cleanupSessionResources() {
	for (const fn of cleanups) await fn();
	cleanups.clear();
}
export function validateToolArguments(tool, args) {
	return args;
}
export function validateToolCall(tools, toolCall) {
	return toolCall?.arguments;
}

// --- model calls: Tandem's, not the host's -------------------------------------------------------

function modelCall(name) {
	return () => {
		throw new NotSupportedError(`${name}() (model calls from extensions)`);
	};
}
export const stream = modelCall("stream");
export const streamSimple = modelCall("streamSimple");
export const complete = modelCall("complete");
export const completeSimple = modelCall("completeSimple");
export const generateImages = modelCall("generateImages");
export const generateImagesOpenRouter = modelCall("generateImagesOpenRouter");

export const {
	streamAnthropic,
	streamAzureOpenAIResponses,
	streamGoogle,
	streamGoogleVertex,
	streamMistral,
	streamOpenAICodexResponses,
	streamOpenAICompletions,
	streamOpenAIResponses,
	streamSimpleAnthropic,
	streamSimpleAzureOpenAIResponses,
	streamSimpleGoogle,
	streamSimpleGoogleVertex,
	streamSimpleMistral,
	streamSimpleOpenAICodexResponses,
	streamSimpleOpenAICompletions,
	streamSimpleOpenAIResponses,
	createFauxCore,
	fauxAssistantMessage,
	fauxProvider,
	fauxText,
	fauxThinking,
	fauxToolCall,
	registerFauxProvider,
	radiusProvider,
	setBedrockProviderLoader,
	setBedrockProviderModule,
} = unsupportedFunctions("@earendil-works/pi-ai", [
	"streamAnthropic",
	"streamAzureOpenAIResponses",
	"streamGoogle",
	"streamGoogleVertex",
	"streamMistral",
	"streamOpenAICodexResponses",
	"streamOpenAICompletions",
	"streamOpenAIResponses",
	"streamSimpleAnthropic",
	"streamSimpleAzureOpenAIResponses",
	"streamSimpleGoogle",
	"streamSimpleGoogleVertex",
	"streamSimpleMistral",
	"streamSimpleOpenAICodexResponses",
	"streamSimpleOpenAICompletions",
	"streamSimpleOpenAIResponses",
	"createFauxCore",
	"fauxAssistantMessage",
	"fauxProvider",
	"fauxText",
	"fauxThinking",
	"fauxToolCall",
	"registerFauxProvider",
	"radiusProvider",
	"setBedrockProviderLoader",
	"setBedrockProviderModule",
]);
