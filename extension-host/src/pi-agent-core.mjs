// Tandem's stand-in for `@earendil-works/pi-agent-core` (and `@mariozechner/pi-agent-core`).
// Extensions import its types (removed before loading); its agent loop is pi's, not Tandem's, so
// the run-time exports exist and throw when used.

import { unsupportedClasses, unsupportedFunctions } from "./unsupported.mjs";

export const DEFAULT_AGENT_IDENTITY = { name: "tandem", version: "1.6.0" };

export const { Agent } = unsupportedClasses("@earendil-works/pi-agent-core", ["Agent"]);

export const { agentLoop, agentLoopContinue, runAgentLoop, runAgentLoopContinue, runToolCall, setDefaultStreamFn, streamProxy } = unsupportedFunctions(
	"@earendil-works/pi-agent-core",
	["agentLoop", "agentLoopContinue", "runAgentLoop", "runAgentLoopContinue", "runToolCall", "setDefaultStreamFn", "streamProxy"],
);
