// State shared between the protocol side of the host (host.mjs) and the modules extensions
// import (pi-coding-agent.mjs, pi-ai.mjs): the agent directory from `initialize` and the state
// mirror Tandem keeps current.

export const hostState = {
	/** `initialize.agentDir`, when Tandem sent one. */
	agentDir: undefined,
	/** The mirror of Tandem's state (see EXTENSIONS.md "State mirror"). */
	mirror: {
		cwd: process.cwd(),
		mode: "print",
		hasUI: false,
		isProjectTrusted: false,
		model: null,
		models: [],
		thinkingLevel: "off",
		activeTools: [],
		allTools: [],
		commands: [],
		session: { id: "", file: null, name: undefined, leafId: null, header: undefined },
		entries: [],
		labels: {},
		isIdle: true,
		hasPendingMessages: false,
		systemPrompt: "",
		contextUsage: null,
		settings: {},
	},
};
