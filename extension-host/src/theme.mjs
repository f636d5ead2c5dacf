// The theme extensions get (`ctx.ui.theme`, the `theme` argument of renderers): it styles nothing.
// Tandem draws its own UI, and strings an extension sends (status, widgets) are shown as text.

export class Theme {
	constructor(name = "tandem-plain", appearance = "dark") {
		this.name = name;
		this.appearance = appearance;
		this.colors = {};
		this.sourcePath = undefined;
	}
	fg(_color, text) {
		return String(text ?? "");
	}
	bg(_color, text) {
		return String(text ?? "");
	}
	bold(text) {
		return String(text ?? "");
	}
	italic(text) {
		return String(text ?? "");
	}
	underline(text) {
		return String(text ?? "");
	}
	strikethrough(text) {
		return String(text ?? "");
	}
	inverse(text) {
		return String(text ?? "");
	}
	dim(text) {
		return String(text ?? "");
	}
	style(text) {
		return String(text ?? "");
	}
	getFgAnsi() {
		return "";
	}
	getBgAnsi() {
		return "";
	}
	getColor() {
		return undefined;
	}
	getColorMode() {
		return "none";
	}
	getThinkingBorderColor() {
		return (text) => String(text ?? "");
	}
	getBashModeBorderColor() {
		return (text) => String(text ?? "");
	}
}

export const plainTheme = new Theme();

const identity = (text) => String(text ?? "");

export function getMarkdownTheme() {
	return {
		heading: identity,
		link: identity,
		linkUrl: identity,
		code: identity,
		codeBlock: identity,
		codeBlockBorder: identity,
		quote: identity,
		quoteBorder: identity,
		hr: identity,
		listBullet: identity,
		bold: identity,
		italic: identity,
		strikethrough: identity,
		underline: identity,
		highlightCode: (code) => String(code ?? "").split("\n"),
	};
}

export function getSelectListTheme() {
	return { selectedPrefix: identity, selectedText: identity, description: identity, scrollInfo: identity, noMatch: identity };
}

export function getSettingsListTheme() {
	return { label: identity, value: identity, description: identity, cursor: "> ", hint: identity };
}

export function getEditorTheme() {
	return { borderColor: identity, selectList: getSelectListTheme() };
}

export function initTheme() {}

const LANGUAGES = {
	ts: "typescript",
	tsx: "typescript",
	mts: "typescript",
	cts: "typescript",
	js: "javascript",
	jsx: "javascript",
	mjs: "javascript",
	cjs: "javascript",
	py: "python",
	rs: "rust",
	go: "go",
	rb: "ruby",
	java: "java",
	kt: "kotlin",
	c: "c",
	h: "c",
	cpp: "cpp",
	cc: "cpp",
	hpp: "cpp",
	cs: "csharp",
	swift: "swift",
	php: "php",
	sh: "bash",
	bash: "bash",
	zsh: "bash",
	json: "json",
	yaml: "yaml",
	yml: "yaml",
	toml: "toml",
	md: "markdown",
	html: "html",
	css: "css",
	scss: "scss",
	sql: "sql",
	lua: "lua",
	zig: "zig",
};

export function getLanguageFromPath(path) {
	const ext = String(path ?? "").split(".").pop()?.toLowerCase();
	return ext ? LANGUAGES[ext] : undefined;
}

/** No highlighting: the code's lines, unstyled. */
export function highlightCode(code) {
	return String(code ?? "").split("\n");
}
