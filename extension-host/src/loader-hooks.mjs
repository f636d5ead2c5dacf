// Module hooks that let Node load pi extensions as pi's own loader (jiti) does:
//
// - pi's packages (`@earendil-works/pi-coding-agent`, `pi-ai`, `pi-tui`, `pi-agent-core`, `typebox`
//   and their legacy `@mariozechner/*` and `@sinclair/typebox` names) resolve to the host's modules
//   in this directory, whatever the extension has installed;
// - `.ts`, `.mts` and `.cts` files load with their types removed (`module.stripTypeScriptTypes`),
//   inside `node_modules` too, where Node's own type stripping refuses to work;
// - relative imports resolve as TypeScript projects expect: `./utils.js` finds `./utils.ts`,
//   `./utils` finds `./utils.ts`, `./dir` finds `./dir/index.ts`;
// - imports that only name types (`import { ExtensionAPI } from ...` without `type`) are removed,
//   as TypeScript does, since Node's type stripping keeps them;
// - ES modules written in TypeScript may use `require`, `__dirname` and `__filename`, as jiti allows.
//
// The same `resolve` and `load` serve `module.registerHooks()` (synchronous, Node >= 22.15) and
// `module.register()` (asynchronous, on a loader thread): both only return what `next*` returns.

import { readFileSync, realpathSync, statSync } from "node:fs";
import * as nodeModule from "node:module";
import { dirname, extname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const own = (file) => pathToFileURL(join(HERE, file)).href;

const PACKAGES = [
	["pi-coding-agent", "pi-coding-agent.mjs"],
	["pi-ai", "pi-ai.mjs"],
	["pi-tui", "pi-tui.mjs"],
	["pi-agent-core", "pi-agent-core.mjs"],
];
const TYPEBOX = {
	typebox: "typebox.mjs",
	"typebox/compile": "typebox-compile.mjs",
	"typebox/compiler": "typebox-compile.mjs",
	"typebox/value": "typebox-value.mjs",
};

/** The URL of the host's own module for a pi package specifier, or undefined. */
export function hostModuleFor(specifier) {
	let spec = specifier;
	if (spec === "@sinclair/typebox" || spec.startsWith("@sinclair/typebox/")) spec = spec.slice("@sinclair/".length);
	if (TYPEBOX[spec]) return own(TYPEBOX[spec]);
	if (spec.startsWith("typebox/")) return own("typebox.mjs");
	for (const scope of ["@earendil-works/", "@mariozechner/"]) {
		if (!spec.startsWith(scope)) continue;
		const rest = spec.slice(scope.length);
		for (const [name, file] of PACKAGES) {
			if (rest === name || rest.startsWith(`${name}/`)) return own(file);
		}
	}
	return undefined;
}

const TS_FILE = /\.(?:ts|mts|cts)$/;

function isFile(path) {
	try {
		return statSync(path).isFile();
	} catch {
		return false;
	}
}

function isDirectory(path) {
	try {
		return statSync(path).isDirectory();
	} catch {
		return false;
	}
}

const TS_FIRST = [".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs", ".json"];
const JS_FIRST = [".js", ".mjs", ".cjs", ".json", ".ts", ".mts", ".cts"];
const SWAPS = { ".js": [".ts", ".tsx"], ".mjs": [".mts"], ".cjs": [".cts"], ".jsx": [".tsx"] };

/** Finds the file a relative import means, with TypeScript's extension rules. */
function findFile(base, tsFirst) {
	if (isFile(base)) return base;
	const ext = extname(base);
	for (const swap of SWAPS[ext] ?? []) {
		const candidate = base.slice(0, -ext.length) + swap;
		if (isFile(candidate)) return candidate;
	}
	const order = tsFirst ? TS_FIRST : JS_FIRST;
	for (const e of order) if (isFile(base + e)) return base + e;
	if (isDirectory(base)) {
		try {
			const pkg = JSON.parse(readFileSync(join(base, "package.json"), "utf8"));
			const main = typeof pkg.main === "string" ? findFile(join(base, pkg.main), tsFirst) : undefined;
			if (main) return main;
		} catch {}
		for (const e of order) if (isFile(join(base, `index${e}`))) return join(base, `index${e}`);
	}
	return undefined;
}

function isPathSpecifier(specifier) {
	return specifier.startsWith("./") || specifier.startsWith("../") || specifier === "." || specifier === ".." || specifier.startsWith("/") || specifier.startsWith("file:");
}

function isEsmImport(context) {
	const conditions = context?.conditions ?? [];
	return conditions.includes("import") && !conditions.includes("require") && context?.importAttributes?.type !== "json";
}

export function resolve(specifier, context, nextResolve) {
	const hosted = hostModuleFor(specifier);
	if (hosted) return { url: hosted, format: "module", shortCircuit: true };
	const parent = context?.parentURL;
	if (parent?.startsWith("file:") && isPathSpecifier(specifier) && !/[?#]/.test(specifier)) {
		const parentPath = fileURLToPath(parent);
		const base = specifier.startsWith("file:") ? fileURLToPath(specifier) : specifier.startsWith("/") ? specifier : join(dirname(parentPath), specifier);
		const found = findFile(base, TS_FILE.test(parentPath));
		if (found) {
			let real = found;
			try {
				real = realpathSync(found);
			} catch {}
			const url = pathToFileURL(real).href;
			// JSON imported without `with { type: "json" }` (jiti allows it) loads as a module.
			if (real.endsWith(".json") && isEsmImport(context)) return { url, format: "module", shortCircuit: true };
			return { url, shortCircuit: true };
		}
	}
	return nextResolve(specifier, context);
}

// --- TypeScript ------------------------------------------------------------------------------

/** The import declarations of `code`: `{ start, end, clause, source, attributes, quote }`. */
function findImports(code) {
	const found = [];
	const head = /^[ \t]*import(?=[\s{*])/gm;
	let m;
	while ((m = head.exec(code))) {
		const start = m.index + m[0].length - "import".length;
		const tail = /^\s*((?:[\w$]+\s*,\s*)?(?:\{[^}]*\}|\*\s*as\s+[\w$]+|[\w$]+))\s*from\s*(["'])([^"'\n]*)\2(\s*(?:with|assert)\s*\{[^}]*\})?[ \t]*;?/.exec(code.slice(start + "import".length));
		if (!tail) continue;
		found.push({ start, end: start + "import".length + tail[0].length, clause: tail[1], quote: tail[2], source: tail[3], attributes: tail[4] ?? "" });
	}
	return found;
}

/** `{ defaultName, namespace, named: [{ text, local }] }` of an import clause. */
function parseClause(clause) {
	const result = { defaultName: undefined, namespace: undefined, named: undefined };
	let rest = clause.trim();
	const def = /^([\w$]+)\s*(?:,\s*|$)/.exec(rest);
	if (def && !rest.startsWith("{") && !rest.startsWith("*")) {
		result.defaultName = def[1];
		rest = rest.slice(def[0].length).trim();
	}
	const ns = /^\*\s*as\s+([\w$]+)$/.exec(rest);
	if (ns) result.namespace = ns[1];
	else if (rest.startsWith("{")) {
		result.named = rest
			.slice(1, -1)
			.split(",")
			.map((part) => part.trim())
			.filter(Boolean)
			.map((text) => {
				const alias = /\s+as\s+([\w$]+)$/.exec(text);
				return { text, local: alias ? alias[1] : text };
			});
	}
	return result;
}

/**
 * Removes the import bindings `code` never uses, as TypeScript does (type stripping leaves
 * `import { SomeType } from "x"` in place when `type` was not written, and the module may not
 * export that name at run time). A binding counts as used when its name appears anywhere outside
 * import declarations, so this only ever removes names that cannot be values. A declaration left
 * with no binding is removed entirely (TypeScript does not keep it for its side effects either).
 */
export function elideUnusedImports(code) {
	const imports = findImports(code);
	if (imports.length === 0) return code;
	let rest = "";
	let last = 0;
	for (const imp of imports) {
		rest += `${code.slice(last, imp.start)} `;
		last = imp.end;
	}
	rest += code.slice(last);
	const used = (name) => new RegExp(`(?<![\\w$])${name.replace(/\$/g, "\\$")}(?![\\w$])`).test(rest);
	let out = "";
	last = 0;
	for (const imp of imports) {
		const clause = parseClause(imp.clause);
		const keepDefault = clause.defaultName && used(clause.defaultName);
		const keepNamespace = clause.namespace && used(clause.namespace);
		const keptNamed = clause.named?.filter((n) => used(n.local));
		const allKept = (!clause.defaultName || keepDefault) && (!clause.namespace || keepNamespace) && (!clause.named || keptNamed.length === clause.named.length) && (clause.named?.length ?? 1) > 0;
		out += code.slice(last, imp.start);
		const original = code.slice(imp.start, imp.end);
		let replacement;
		if (allKept) replacement = original;
		else {
			const parts = [];
			if (keepDefault) parts.push(clause.defaultName);
			if (keepNamespace) parts.push(`* as ${clause.namespace}`);
			if (keptNamed && keptNamed.length > 0) parts.push(`{ ${keptNamed.map((n) => n.text).join(", ")} }`);
			replacement = parts.length === 0 ? "" : `import ${parts.join(", ")} from ${imp.quote}${imp.source}${imp.quote}${imp.attributes};`;
			// Keep line numbers: the replacement has as many line breaks as the original.
			const breaks = (original.match(/\n/g) ?? []).length;
			replacement += "\n".repeat(breaks);
		}
		out += replacement;
		last = imp.end;
	}
	return out + code.slice(last);
}

function declares(code, name) {
	return new RegExp(`(?:\\b(?:const|let|var|function|class)\\s+|import\\s+[^;]*?\\b)${name}\\b`).test(code);
}

function uses(code, name) {
	return new RegExp(`(?<![\\w$.])${name}(?![\\w$])`).test(code);
}

/** Adds `require`, `__filename` and `__dirname` to an ES module that uses them without declaring them. */
export function addCommonJsGlobals(code) {
	const lines = [];
	if (uses(code, "require") && !declares(code, "require")) {
		lines.push('import { createRequire as __tandemCreateRequire } from "node:module"; const require = __tandemCreateRequire(import.meta.url);');
	}
	if (uses(code, "__filename") && !declares(code, "__filename")) lines.push("const __filename = import.meta.filename;");
	if (uses(code, "__dirname") && !declares(code, "__dirname")) lines.push("const __dirname = import.meta.dirname;");
	if (lines.length === 0) return code;
	// Put everything on the first line so line numbers in stack traces stay right.
	const prefix = `${lines.join(" ")} `;
	if (code.startsWith("#!")) {
		const eol = code.indexOf("\n");
		return eol === -1 ? code : `${code.slice(0, eol + 1)}${prefix}${code.slice(eol + 1)}`;
	}
	return prefix + code;
}

function looksLikeEsm(code) {
	return /^[ \t]*(?:import[\s{*'"]|export[\s{*])/m.test(code) || /\bimport\.meta\b/.test(code);
}

function looksLikeCommonJs(code) {
	return /(?:^|[^.\w$])require\s*\(/m.test(code) || /\bmodule\.exports\b/.test(code) || /(?:^|[^.\w$])exports\.[\w$]+\s*=/m.test(code);
}

/** Where a stripping error happened, from the `<file>:<line>` header Node puts in its stack. */
function strippingError(error, path) {
	const lines = String(error?.stack ?? "").split("\n");
	const header = /:(\d+)$/.exec(lines[0] ?? "");
	const caret = lines.findIndex((line, i) => i > 0 && /^[ \t]*\^+[ \t]*$/.test(line));
	const where = header ? `${path}:${header[1]}` : path;
	const snippet = header && caret > 1 ? `\n${lines[caret - 1]}\n${lines[caret]}` : "";
	const wrapped = new SyntaxError(`${where}: ${error?.message ?? error}${snippet}`);
	wrapped.code = error?.code;
	return wrapped;
}

/** The JavaScript and module format of a TypeScript file. */
export function compileTypeScript(source, path, url) {
	const strip = nodeModule.stripTypeScriptTypes;
	if (typeof strip !== "function") throw new Error("This Node.js cannot strip TypeScript types (module.stripTypeScriptTypes needs Node.js 22.13+ or 23.2+)");
	let code;
	try {
		code = strip(source, { mode: "strip", sourceUrl: url });
	} catch (error) {
		if (error?.code !== "ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX") throw strippingError(error, path);
		// Enums, namespaces, parameter properties, `import x = require()`: these need code generated.
		try {
			code = strip(source, { mode: "transform", sourceMap: true, sourceUrl: url });
		} catch (inner) {
			throw strippingError(inner, path);
		}
	}
	let format;
	if (path.endsWith(".mts")) format = "module";
	else if (path.endsWith(".cts")) format = "commonjs";
	else format = looksLikeEsm(code) || !looksLikeCommonJs(code) ? "module" : "commonjs";
	code = elideUnusedImports(code);
	if (format === "module") code = addCommonJsGlobals(code);
	return { code, format };
}

export function load(url, context, nextLoad) {
	if (url.startsWith("file:")) {
		const path = fileURLToPath(url);
		if (TS_FILE.test(path)) {
			const { code, format } = compileTypeScript(readFileSync(path, "utf8"), path, url);
			return { format, source: code, shortCircuit: true };
		}
		// JSON imported without `with { type: "json" }`, which jiti allows: give it as a module.
		if (path.endsWith(".json") && (context?.format === "module" || (context?.format === undefined && isEsmImport(context)))) {
			return { format: "module", source: `export default ${readFileSync(path, "utf8")};`, shortCircuit: true };
		}
	}
	return nextLoad(url, context);
}
