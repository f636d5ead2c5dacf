// Installs the module hooks of loader-hooks.mjs, after checking that this Node.js can run them.

import * as nodeModule from "node:module";
import { fileURLToPath } from "node:url";

const [major, minor] = process.versions.node.split(".").map(Number);

/** Why this Node.js cannot run pi extensions, or undefined when it can. */
export function runtimeProblem() {
	const found = `this is Node.js ${process.versions.node}`;
	if (major < 22 || (major === 22 && minor < 6)) {
		return `Tandem's extension host needs Node.js 22.13 or newer (23.2+ on the 23 line); ${found}. Install a current Node.js (24 LTS) and put it on PATH.`;
	}
	if (typeof nodeModule.stripTypeScriptTypes !== "function") {
		return `Tandem's extension host needs Node.js 22.13 or newer (23.2+ on the 23 line) to load TypeScript extensions (module.stripTypeScriptTypes); ${found}. Install a current Node.js (24 LTS) and put it on PATH.`;
	}
	if (typeof nodeModule.registerHooks !== "function" && typeof nodeModule.register !== "function") {
		return `Tandem's extension host needs module hooks (module.registerHooks or module.register); ${found}.`;
	}
	return undefined;
}

let installed;

/** Installs the hooks once; returns which API was used ("registerHooks" or "register"). */
export async function installLoader() {
	if (installed) return installed;
	// Type stripping is marked experimental; its one-time warning is noise in Tandem's log.
	const emitWarning = process.emitWarning;
	process.emitWarning = function (warning, ...rest) {
		const text = typeof warning === "string" ? warning : warning?.message;
		const type = typeof rest[0] === "string" ? rest[0] : rest[0]?.type;
		if ((type === "ExperimentalWarning" || warning?.name === "ExperimentalWarning") && /stripTypeScriptTypes|Type Stripping|type stripping/i.test(text ?? "")) return;
		return emitWarning.call(process, warning, ...rest);
	};
	// TANDEM_EXTENSION_HOST_HOOKS=register forces the asynchronous hooks of Node 22.13/22.14 (for tests).
	const forceRegister = process.env.TANDEM_EXTENSION_HOST_HOOKS === "register" && typeof nodeModule.register === "function";
	if (typeof nodeModule.registerHooks === "function" && !forceRegister) {
		const hooks = await import("./loader-hooks.mjs");
		nodeModule.registerHooks({ resolve: hooks.resolve, load: hooks.load });
		installed = "registerHooks";
	} else {
		nodeModule.register("./loader-hooks.mjs", import.meta.url);
		// Asynchronous hooks do not see require(); map pi's package names for CommonJS here.
		const { hostModuleFor } = await import("./loader-hooks.mjs");
		const Module = nodeModule.default ?? nodeModule.Module;
		const resolveFilename = Module._resolveFilename;
		Module._resolveFilename = function (request, ...rest) {
			const hosted = typeof request === "string" ? hostModuleFor(request) : undefined;
			return hosted ? fileURLToPath(hosted) : resolveFilename.call(this, request, ...rest);
		};
		installed = "register";
	}
	return installed;
}
