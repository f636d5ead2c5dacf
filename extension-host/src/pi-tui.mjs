// Tandem's stand-in for `@earendil-works/pi-tui`.
//
// Tandem does not draw pi-tui components, but extensions build them in renderers and custom
// screens, and modules that import them must load. The plain components here render to string
// lines (`render(width)`), handle a few keys, and never touch the terminal. Everything that needs a
// real terminal exists and throws or does nothing, as documented per export.

import { replaceControlCharacters, sliceByColumn, stripTerminalSequences, truncateToWidth, visibleWidth, wrapTextWithAnsi } from "./text-width.mjs";

export { replaceControlCharacters, sliceByColumn, stripTerminalSequences, truncateToWidth, visibleWidth, wrapTextWithAnsi };

export const CURSOR_MARKER = "\x1b_pi:c\x07";
export const FAKE_CURSOR_START = "\x1b_pi:fc\x07";
export const FAKE_CURSOR_END = "\x1b_pi:/fc\x07";

export function renderFakeCursor(text) {
	return `${FAKE_CURSOR_START}${text}${FAKE_CURSOR_END}`;
}

export function isFocusable(component) {
	return !!component && typeof component === "object" && "focused" in component;
}

export function isViewportTUI(tui) {
	return !!tui && typeof tui.getViewport === "function";
}

function padLine(line, width) {
	const w = visibleWidth(line);
	return w < width ? line + " ".repeat(width - w) : truncateToWidth(line, width, "");
}

// --- components ------------------------------------------------------------------------------

/** Multi-line text, word-wrapped to the width, with horizontal and vertical padding. */
export class Text {
	constructor(text = "", paddingX = 1, paddingY = 1, customBgFn) {
		this.text = text;
		this.paddingX = paddingX;
		this.paddingY = paddingY;
		this.customBgFn = customBgFn;
	}
	setText(text) {
		this.text = text;
	}
	setCustomBgFn(fn) {
		this.customBgFn = fn;
	}
	setPaddingX(paddingX) {
		this.paddingX = paddingX;
	}
	invalidate() {}
	render(width) {
		if (!this.text || this.text.trim() === "") return [];
		const inner = Math.max(1, width - this.paddingX * 2);
		const pad = " ".repeat(this.paddingX);
		const blank = " ".repeat(Math.max(0, width));
		const lines = [];
		for (let i = 0; i < this.paddingY; i++) lines.push(blank);
		for (const line of wrapTextWithAnsi(String(this.text).replace(/\t/g, "   "), inner)) lines.push(padLine(pad + line + pad, width));
		for (let i = 0; i < this.paddingY; i++) lines.push(blank);
		return this.customBgFn ? lines.map((l) => this.customBgFn(l)) : lines;
	}
}

/** One line of text cut to the width. */
export class TruncatedText {
	constructor(text = "", paddingX = 0, paddingY = 0) {
		this.text = text;
		this.paddingX = paddingX;
		this.paddingY = paddingY;
	}
	setText(text) {
		this.text = text;
	}
	invalidate() {}
	render(width) {
		const pad = " ".repeat(this.paddingX);
		const inner = Math.max(1, width - this.paddingX * 2);
		const firstLine = String(this.text ?? "").split("\n")[0];
		const lines = [];
		for (let i = 0; i < this.paddingY; i++) lines.push("");
		lines.push(pad + truncateToWidth(firstLine, inner) + pad);
		for (let i = 0; i < this.paddingY; i++) lines.push("");
		return lines;
	}
}

export class Container {
	constructor() {
		this.children = [];
	}
	addChild(component) {
		this.children.push(component);
	}
	removeChild(component) {
		const index = this.children.indexOf(component);
		if (index !== -1) this.children.splice(index, 1);
	}
	clear() {
		this.children = [];
	}
	invalidate() {
		for (const child of this.children) child.invalidate?.();
	}
	handleInput(data) {
		for (const child of this.children) {
			if (child.focused && typeof child.handleInput === "function") {
				child.handleInput(data);
				return;
			}
		}
	}
	render(width) {
		const lines = [];
		for (const child of this.children) lines.push(...(child.render?.(width) ?? []));
		return lines;
	}
}

/** A container that pads its children and paints a background over every line. */
export class Box extends Container {
	constructor(paddingX = 1, paddingY = 1, bgFn) {
		super();
		this.paddingX = paddingX;
		this.paddingY = paddingY;
		this.bgFn = bgFn;
	}
	setBgFn(bgFn) {
		this.bgFn = bgFn;
	}
	setPaddingX(paddingX) {
		this.paddingX = paddingX;
	}
	handleMouse() {
		return undefined;
	}
	render(width) {
		const inner = Math.max(1, width - this.paddingX * 2);
		const pad = " ".repeat(this.paddingX);
		const blank = " ".repeat(Math.max(0, width));
		const lines = [];
		for (let i = 0; i < this.paddingY; i++) lines.push(blank);
		for (const line of super.render(inner)) lines.push(padLine(pad + line + pad, width));
		for (let i = 0; i < this.paddingY; i++) lines.push(blank);
		return this.bgFn ? lines.map((l) => this.bgFn(l)) : lines;
	}
}

export class Spacer {
	constructor(lines = 1) {
		this.lines = lines;
	}
	setLines(lines) {
		this.lines = lines;
	}
	invalidate() {}
	render() {
		return Array.from({ length: Math.max(0, this.lines) }, () => "");
	}
}

/** Markdown shown as wrapped plain text (pi's renderer styles it; Tandem does not draw it). */
export class Markdown {
	constructor(text = "", paddingX = 1, paddingY = 1, theme, defaultTextStyle) {
		this.text = text;
		this.paddingX = paddingX;
		this.paddingY = paddingY;
		this.theme = theme;
		this.defaultTextStyle = defaultTextStyle;
	}
	setText(text) {
		this.text = text;
	}
	invalidate() {}
	render(width) {
		return new Text(this.text, this.paddingX, this.paddingY).render(width);
	}
}

export class Image {
	constructor(base64Data, mimeType, theme, options) {
		this.base64Data = base64Data;
		this.mimeType = mimeType;
		this.theme = theme;
		this.options = options;
	}
	invalidate() {}
	render(width) {
		return [truncateToWidth(`[image ${this.mimeType ?? ""}]`, width)];
	}
}

export class HStack extends Container {
	constructor(options) {
		super();
		this.options = options;
	}
	render(width) {
		const count = Math.max(1, this.children.length);
		const columnWidth = Math.max(1, Math.floor(width / count));
		const columns = this.children.map((c) => c.render?.(columnWidth) ?? []);
		const height = Math.max(0, ...columns.map((c) => c.length));
		const lines = [];
		for (let row = 0; row < height; row++) lines.push(columns.map((c) => padLine(c[row] ?? "", columnWidth)).join(""));
		return lines;
	}
}

export class VStack extends Container {
	constructor(options) {
		super();
		this.options = options;
	}
}

export class ScrollView extends Container {
	constructor(child, options) {
		super();
		if (child) this.addChild(child);
		this.options = options;
		this.offset = 0;
	}
	scrollTo(offset) {
		this.offset = Math.max(0, typeof offset === "number" ? offset : 0);
	}
	scrollBy(delta) {
		this.scrollTo(this.offset + delta);
	}
	render(width) {
		const lines = super.render(width);
		const height = this.options?.height;
		return typeof height === "number" ? lines.slice(this.offset, this.offset + height) : lines.slice(this.offset);
	}
}

export class MouseRegion extends Container {
	constructor(child, handler) {
		super();
		if (child) this.addChild(child);
		this.handler = handler;
	}
	handleMouse(event) {
		return this.handler?.(event);
	}
}

/** A one-line text input. */
export class Input {
	constructor() {
		this.value = "";
		this.cursor = 0;
		this.focused = false;
		this.onSubmit = undefined;
		this.onEscape = undefined;
		this.onChange = undefined;
	}
	getValue() {
		return this.value;
	}
	setValue(value) {
		this.value = String(value ?? "");
		this.cursor = this.value.length;
	}
	invalidate() {}
	handleInput(data) {
		if (matchesKey(data, "enter")) {
			this.onSubmit?.(this.value);
			return;
		}
		if (matchesKey(data, "escape")) {
			this.onEscape?.();
			return;
		}
		if (matchesKey(data, "backspace")) {
			if (this.cursor > 0) {
				this.value = this.value.slice(0, this.cursor - 1) + this.value.slice(this.cursor);
				this.cursor--;
				this.onChange?.(this.value);
			}
			return;
		}
		if (matchesKey(data, "left")) {
			this.cursor = Math.max(0, this.cursor - 1);
			return;
		}
		if (matchesKey(data, "right")) {
			this.cursor = Math.min(this.value.length, this.cursor + 1);
			return;
		}
		const printable = decodePrintableKey(data);
		if (printable !== undefined) {
			this.value = this.value.slice(0, this.cursor) + printable + this.value.slice(this.cursor);
			this.cursor += printable.length;
			this.onChange?.(this.value);
		}
	}
	render(width) {
		return [truncateToWidth(`> ${this.value}`, width)];
	}
}

/** A multi-line editor with the basics: typing, backspace, newlines, submit on Enter. */
export class Editor {
	constructor(tui, theme, options = {}) {
		this.tui = tui;
		this.theme = theme;
		this.options = options;
		this.lines = [""];
		this.focused = false;
		this.disableSubmit = false;
		this.onSubmit = undefined;
		this.onChange = undefined;
		this.borderColor = undefined;
	}
	getText() {
		return this.lines.join("\n");
	}
	getExpandedText() {
		return this.getText();
	}
	getLines() {
		return [...this.lines];
	}
	getCursor() {
		const line = this.lines.length - 1;
		return { line, col: this.lines[line].length };
	}
	setText(text) {
		this.lines = String(text ?? "").split("\n");
		this.onChange?.(this.getText());
	}
	insertTextAtCursor(text) {
		this.setText(this.getText() + text);
	}
	addToHistory() {}
	isShowingAutocomplete() {
		return false;
	}
	setAutocompleteProvider() {}
	setPaddingX() {}
	setAutocompleteMaxVisible() {}
	invalidate() {}
	handleInput(data) {
		const last = this.lines.length - 1;
		if (matchesKey(data, "enter")) {
			if (!this.disableSubmit) {
				const text = this.getText();
				this.onSubmit?.(text);
			}
			return;
		}
		if (matchesKey(data, "shift+enter") || data === "\n") {
			this.lines.push("");
			this.onChange?.(this.getText());
			return;
		}
		if (matchesKey(data, "backspace")) {
			if (this.lines[last].length > 0) this.lines[last] = this.lines[last].slice(0, -1);
			else if (last > 0) this.lines.pop();
			this.onChange?.(this.getText());
			return;
		}
		const printable = decodePrintableKey(data);
		if (printable !== undefined) {
			this.lines[last] += printable;
			this.onChange?.(this.getText());
		}
	}
	render(width) {
		const border = "─".repeat(Math.max(0, width));
		return [border, ...this.lines.map((l) => truncateToWidth(l, width)), border];
	}
}

/** A list to pick from with up/down, Enter and Escape. */
export class SelectList {
	constructor(items = [], maxVisible = 10, theme, layout) {
		this.items = items;
		this.filtered = items;
		this.maxVisible = maxVisible;
		this.theme = theme;
		this.layout = layout;
		this.selectedIndex = 0;
		this.onSelect = undefined;
		this.onCancel = undefined;
		this.onSelectionChange = undefined;
	}
	setFilter(filter) {
		const f = String(filter ?? "").toLowerCase();
		this.filtered = this.items.filter((item) => `${item.label ?? item.value}`.toLowerCase().includes(f));
		this.selectedIndex = 0;
	}
	setSelectedIndex(index) {
		this.selectedIndex = Math.max(0, Math.min(index, this.filtered.length - 1));
	}
	getSelectedItem() {
		return this.filtered[this.selectedIndex] ?? null;
	}
	invalidate() {}
	handleInput(data) {
		if (matchesKey(data, "up")) {
			this.setSelectedIndex(this.selectedIndex - 1);
			this.onSelectionChange?.(this.getSelectedItem());
		} else if (matchesKey(data, "down")) {
			this.setSelectedIndex(this.selectedIndex + 1);
			this.onSelectionChange?.(this.getSelectedItem());
		} else if (matchesKey(data, "enter")) {
			const item = this.getSelectedItem();
			if (item) this.onSelect?.(item);
		} else if (matchesKey(data, "escape")) {
			this.onCancel?.();
		}
	}
	render(width) {
		if (this.filtered.length === 0) return [truncateToWidth("  No matches", width)];
		const start = Math.max(0, Math.min(this.selectedIndex - Math.floor(this.maxVisible / 2), this.filtered.length - this.maxVisible));
		return this.filtered.slice(start, start + this.maxVisible).map((item, i) => {
			const selected = start + i === this.selectedIndex;
			const text = `${selected ? "> " : "  "}${item.label ?? item.value}${item.description ? `  ${item.description}` : ""}`;
			return truncateToWidth(text, width);
		});
	}
}

/** A list of settings whose values cycle with Enter/Space. */
export class SettingsList {
	constructor(items = [], maxVisible = 10, theme, onChange, onCancel, options) {
		this.items = items;
		this.maxVisible = maxVisible;
		this.theme = theme;
		this.onChange = onChange;
		this.onCancel = onCancel;
		this.options = options;
		this.selectedIndex = 0;
	}
	updateValue(id, value) {
		const item = this.items.find((i) => i.id === id);
		if (item) item.currentValue = value;
	}
	invalidate() {}
	handleInput(data) {
		if (matchesKey(data, "up")) this.selectedIndex = Math.max(0, this.selectedIndex - 1);
		else if (matchesKey(data, "down")) this.selectedIndex = Math.min(this.items.length - 1, this.selectedIndex + 1);
		else if (matchesKey(data, "escape")) this.onCancel?.();
		else if (matchesKey(data, "enter") || matchesKey(data, "space")) {
			const item = this.items[this.selectedIndex];
			if (item?.values?.length) {
				const next = item.values[(item.values.indexOf(item.currentValue) + 1) % item.values.length];
				item.currentValue = next;
				this.onChange?.(item.id, next);
			}
		}
	}
	render(width) {
		return this.items.slice(0, this.maxVisible).map((item, i) => truncateToWidth(`${i === this.selectedIndex ? "> " : "  "}${item.label}: ${item.currentValue ?? ""}`, width));
	}
}

/** A spinner line. It does not animate: nothing draws it. */
export class Loader {
	constructor(tui, spinnerColorFn, messageColorFn, message = "Loading...", options) {
		this.tui = tui;
		this.spinnerColorFn = spinnerColorFn;
		this.messageColorFn = messageColorFn;
		this.message = message;
		this.options = options;
		this.running = false;
	}
	start() {
		this.running = true;
	}
	stop() {
		this.running = false;
	}
	setMessage(message) {
		this.message = message;
	}
	setIndicator() {}
	invalidate() {}
	render(width) {
		return [truncateToWidth(`… ${this.message}`, width)];
	}
}

export class CancellableLoader extends Loader {
	constructor(...args) {
		super(...args);
		this.abortController = new AbortController();
		this.onAbort = undefined;
	}
	get signal() {
		return this.abortController.signal;
	}
	get aborted() {
		return this.abortController.signal.aborted;
	}
	handleInput(data) {
		if (matchesKey(data, "escape")) {
			this.abortController.abort();
			this.onAbort?.();
		}
	}
	dispose() {
		this.stop();
	}
}

// --- keys --------------------------------------------------------------------------------------

const SPECIAL = [
	"escape",
	"esc",
	"enter",
	"return",
	"tab",
	"space",
	"backspace",
	"delete",
	"insert",
	"clear",
	"home",
	"end",
	"pageUp",
	"pageDown",
	"up",
	"down",
	"left",
	"right",
	...Array.from({ length: 12 }, (_, i) => `f${i + 1}`),
];
const SYMBOL_NAMES = {
	backtick: "`",
	hyphen: "-",
	equals: "=",
	leftbracket: "[",
	rightbracket: "]",
	backslash: "\\",
	semicolon: ";",
	quote: "'",
	comma: ",",
	period: ".",
	slash: "/",
	exclamation: "!",
	at: "@",
	hash: "#",
	dollar: "$",
	percent: "%",
	caret: "^",
	ampersand: "&",
	asterisk: "*",
	leftparen: "(",
	rightparen: ")",
	underscore: "_",
	plus: "+",
	pipe: "|",
	tilde: "~",
	leftbrace: "{",
	rightbrace: "}",
	colon: ":",
	lessthan: "<",
	greaterthan: ">",
	question: "?",
};

const keyHelper = {};
for (const name of SPECIAL) keyHelper[name] = name;
for (const [name, symbol] of Object.entries(SYMBOL_NAMES)) keyHelper[name] = symbol;
const combos = {
	ctrl: ["ctrl"],
	shift: ["shift"],
	alt: ["alt"],
	super: ["super"],
	ctrlShift: ["ctrl", "shift"],
	shiftCtrl: ["shift", "ctrl"],
	ctrlAlt: ["ctrl", "alt"],
	altCtrl: ["alt", "ctrl"],
	shiftAlt: ["shift", "alt"],
	altShift: ["alt", "shift"],
	ctrlSuper: ["ctrl", "super"],
	superCtrl: ["super", "ctrl"],
	shiftSuper: ["shift", "super"],
	superShift: ["super", "shift"],
	altSuper: ["alt", "super"],
	superAlt: ["super", "alt"],
	ctrlShiftAlt: ["ctrl", "shift", "alt"],
	ctrlShiftSuper: ["ctrl", "shift", "super"],
};
for (const [name, mods] of Object.entries(combos)) keyHelper[name] = (key) => `${mods.join("+")}+${key}`;
export const Key = Object.freeze(keyHelper);

const CSI_FINAL = { A: "up", B: "down", C: "right", D: "left", H: "home", F: "end", P: "f1", Q: "f2", R: "f3", S: "f4" };
const TILDE = { 1: "home", 2: "insert", 3: "delete", 4: "end", 5: "pageUp", 6: "pageDown", 7: "home", 8: "end", 11: "f1", 12: "f2", 13: "f3", 14: "f4", 15: "f5", 17: "f6", 18: "f7", 19: "f8", 20: "f9", 21: "f10", 23: "f11", 24: "f12" };
const KITTY_SPECIAL = { 27: "escape", 13: "enter", 9: "tab", 32: "space", 127: "backspace", 57399: "0" };

function modsFromParam(param) {
	const value = Number(param ?? 1) - 1;
	const mods = [];
	if (value & 4) mods.push("ctrl");
	if (value & 1) mods.push("shift");
	if (value & 2) mods.push("alt");
	if (value & 8) mods.push("super");
	return mods;
}

/** The key id of raw terminal input (`"ctrl+c"`, `"up"`, `"a"`), or undefined. */
export function parseKey(data) {
	if (typeof data !== "string" || data.length === 0) return undefined;
	const join = (mods, key) => [...mods, key].join("+");
	let m = /^\x1b\[(\d+)(?::\d+)*(?:;(\d+)(?::(\d+))?)?u$/.exec(data);
	if (m) {
		const code = Number(m[1]);
		const mods = modsFromParam(m[2]);
		const key = KITTY_SPECIAL[code] ?? String.fromCodePoint(code).toLowerCase();
		return join(mods, key);
	}
	m = /^\x1b\[(?:1;(\d+)(?::\d+)?)?([A-DHFPQRS])$/.exec(data) ?? /^\x1bO([A-DHFPQRS])$/.exec(data);
	if (m) {
		const final = m[2] ?? m[1];
		return join(m[2] ? modsFromParam(m[1]) : [], CSI_FINAL[final]);
	}
	m = /^\x1b\[(\d+)(?:;(\d+))?~$/.exec(data);
	if (m && TILDE[m[1]]) return join(modsFromParam(m[2]), TILDE[m[1]]);
	if (data === "\x1b[Z") return "shift+tab";
	if (data === "\x1b") return "escape";
	if (data === "\r" || data === "\n") return "enter";
	if (data === "\t") return "tab";
	if (data === " ") return "space";
	if (data === "\x7f" || data === "\b") return "backspace";
	if (data.length === 2 && data[0] === "\x1b") {
		const inner = parseKey(data[1]);
		return inner ? `alt+${inner}` : undefined;
	}
	if (data.length === 1) {
		const code = data.charCodeAt(0);
		if (code >= 1 && code <= 26) return `ctrl+${String.fromCharCode(code + 96)}`;
		if (code >= 65 && code <= 90) return `shift+${data.toLowerCase()}`;
		if (code >= 32) return data;
	}
	if ([...data].length === 1) return data;
	return undefined;
}

function normalizeKeyId(keyId) {
	const parts = String(keyId).toLowerCase().split("+");
	const key = parts.pop();
	const aliases = { esc: "escape", return: "enter", pageup: "pageup", pagedown: "pagedown" };
	const mods = [...new Set(parts)].sort();
	return [...mods, aliases[key] ?? key].join("+");
}

export function matchesKey(data, keyId) {
	const parsed = parseKey(data);
	if (!parsed) return false;
	if (Array.isArray(keyId)) return keyId.some((k) => matchesKey(data, k));
	return normalizeKeyId(parsed) === normalizeKeyId(keyId);
}

export function isKeyRelease(data) {
	return typeof data === "string" && /^\x1b\[[\d;:]*:3[u~A-Z]$/.test(data);
}

export function isKeyRepeat(data) {
	return typeof data === "string" && /^\x1b\[[\d;:]*:2[u~A-Z]$/.test(data);
}

let kittyActive = false;
export function setKittyProtocolActive(active) {
	kittyActive = !!active;
}
export function isKittyProtocolActive() {
	return kittyActive;
}

export function decodeKittyPrintable(data) {
	const m = /^\x1b\[(\d+)(?::\d+)*(?:;(\d+))?u$/.exec(data ?? "");
	if (!m) return undefined;
	const mods = Number(m[2] ?? 1) - 1;
	if (mods & ~1) return undefined;
	const code = Number(m[1]);
	return code >= 32 && code !== 127 ? String.fromCodePoint(code) : undefined;
}

export function decodePrintableKey(data) {
	if (typeof data !== "string" || data.length === 0) return undefined;
	const kitty = decodeKittyPrintable(data);
	if (kitty !== undefined) return kitty;
	if (data.charCodeAt(0) === 0x1b) return undefined;
	return /^[^\x00-\x1f\x7f]+$/.test(data) ? data : undefined;
}

// --- keybindings -----------------------------------------------------------------------------

export const TUI_KEYBINDINGS = {
	"tui.select.up": { defaultKeys: ["up"], description: "Move up" },
	"tui.select.down": { defaultKeys: ["down"], description: "Move down" },
	"tui.select.pageUp": { defaultKeys: ["pageUp"], description: "Page up" },
	"tui.select.pageDown": { defaultKeys: ["pageDown"], description: "Page down" },
	"tui.select.confirm": { defaultKeys: ["enter"], description: "Confirm" },
	"tui.select.cancel": { defaultKeys: ["escape", "ctrl+c"], description: "Cancel" },
	"tui.input.submit": { defaultKeys: ["enter"], description: "Submit" },
	"tui.input.tab": { defaultKeys: ["tab"], description: "Tab" },
	"tui.input.copy": { defaultKeys: ["ctrl+c"], description: "Copy" },
	"tui.input.newLine": { defaultKeys: ["shift+enter"], description: "New line" },
	"tui.editor.cursorUp": { defaultKeys: ["up"], description: "Cursor up" },
	"tui.editor.cursorDown": { defaultKeys: ["down"], description: "Cursor down" },
	"tui.editor.cursorLeft": { defaultKeys: ["left"], description: "Cursor left" },
	"tui.editor.cursorRight": { defaultKeys: ["right"], description: "Cursor right" },
	"tui.editor.deleteToLineEnd": { defaultKeys: ["ctrl+k"], description: "Delete to line end" },
};

export class KeybindingsManager {
	constructor(definitions = TUI_KEYBINDINGS, userBindings = {}) {
		this.definitions = { ...definitions };
		this.userBindings = { ...userBindings };
	}
	getKeys(id) {
		const user = this.userBindings[id];
		if (user !== undefined) return Array.isArray(user) ? user : [user];
		return this.definitions[id]?.defaultKeys ?? [];
	}
	matches(data, id) {
		return this.getKeys(id).some((key) => matchesKey(data, key));
	}
	getDefinition(id) {
		return this.definitions[id];
	}
	getConflicts() {
		return [];
	}
	getResolvedBindings() {
		const resolved = {};
		for (const id of Object.keys(this.definitions)) resolved[id] = this.getKeys(id);
		return resolved;
	}
	setUserBindings(bindings) {
		this.userBindings = { ...bindings };
	}
}

let keybindings = new KeybindingsManager();
export function getKeybindings() {
	return keybindings;
}
export function setKeybindings(manager) {
	keybindings = manager;
}

export function getSelectPageIndex(index, pageSize) {
	return Math.floor(index / Math.max(1, pageSize));
}

// --- fuzzy matching --------------------------------------------------------------------------

export function fuzzyMatch(query, text) {
	const q = String(query ?? "").toLowerCase();
	const t = String(text ?? "").toLowerCase();
	if (q.length === 0) return { matches: true, score: 0 };
	let ti = 0;
	let score = 0;
	let last = -1;
	for (const ch of q) {
		const found = t.indexOf(ch, ti);
		if (found === -1) return { matches: false, score: 0 };
		score += found === last + 1 ? 2 : 1;
		if (found === 0) score += 2;
		last = found;
		ti = found + 1;
	}
	if (t.includes(q)) score += q.length * 2;
	return { matches: true, score };
}

export function fuzzyFilter(items, query, getText = (item) => String(item)) {
	if (!query) return [...items];
	return items
		.map((item) => ({ item, match: fuzzyMatch(query, getText(item)) }))
		.filter((x) => x.match.matches)
		.sort((a, b) => b.match.score - a.match.score)
		.map((x) => x.item);
}

// --- colors and styling (plain: no terminal to style for) -------------------------------------

export function styleText(text) {
	return String(text ?? "");
}
export const styleTextWithAnsi = styleText;
export const foregroundAnsi = () => "";
export const backgroundAnsi = () => "";
export const parseColor = (value) => value;
export const rgbColor = (r, g, b) => ({ r, g, b });
export const indexedColor = (index) => ({ index });
export const oklchColor = (l, c, h) => ({ l, c, h });
export const okhslColor = (h, s, l) => ({ h, s, l });
export const mixColors = (a) => a;
export const colorToHex = () => "#000000";
export const colorToRgb = () => ({ r: 0, g: 0, b: 0 });
export const colorToOklch = () => ({ l: 0, c: 0, h: 0 });
export const colorToOkhsl = () => ({ h: 0, s: 0, l: 0 });
export const oklabToOkhslLightness = (l) => l;
export const hyperlink = (text) => String(text ?? "");
export const getOsc8LinkAtColumn = () => undefined;
export const compositeTuiLine = (base) => base;
export const formatProgramStatus = (status) => String(status?.message ?? status ?? "");
export const getTerminalColorMode = () => "none";
export const parseTerminalColorSchemeReport = () => undefined;
export const isAppleTerminalSession = () => false;

// --- terminal images (no terminal) -------------------------------------------------------------

export const getCapabilities = () => ({ images: null, trueColor: false, hyperlinks: false });
export const detectCapabilities = getCapabilities;
export const setCapabilities = () => {};
export const setCapabilityOverrides = () => {};
export const resetCapabilitiesCache = () => {};
export const getCellDimensions = () => ({ widthPx: 8, heightPx: 16 });
export const setCellDimensions = () => {};
export const calculateImageRows = () => 1;
export const renderImage = () => undefined;
export const imageFallback = (mimeType) => `[image ${mimeType ?? ""}]`;
export const encodeKitty = () => "";
export const encodeITerm2 = () => "";
export const deleteKittyImage = () => "";
export const deleteAllKittyImages = () => "";
let nextImageId = 1;
export const allocateImageId = () => nextImageId++;
export const getImageDimensions = () => null;
export const getPngDimensions = () => null;
export const getJpegDimensions = () => null;
export const getGifDimensions = () => null;
export const getWebpDimensions = () => null;
export const setImageTranscoder = () => {};
export const renderLatex = (latex) => String(latex ?? "");
export const getNativeClipboard = () => undefined;

// --- things that need a terminal ---------------------------------------------------------------

function terminalOnly(name) {
	return class {
		constructor() {
			throw new Error(`${name} needs a terminal; Tandem's extension host has none (pi-tui components are not drawn)`);
		}
	};
}
export const ProcessTerminal = terminalOnly("ProcessTerminal");
export const TuiAltScreen = terminalOnly("TuiAltScreen");
export const TuiMainScreen = terminalOnly("TuiMainScreen");
export const StdinBuffer = terminalOnly("StdinBuffer");

export class CombinedAutocompleteProvider {
	constructor(commands = [], basePath = process.cwd()) {
		this.commands = commands;
		this.basePath = basePath;
	}
	async getSuggestions() {
		return null;
	}
	applyCompletion(lines, cursorLine, cursorCol) {
		return { lines, cursorLine, cursorCol };
	}
	shouldTriggerFileCompletion() {
		return false;
	}
}

/** `marked`'s Markdown lexer is not bundled; this minimal stand-in splits text into paragraphs. */
export class Marked {
	lexer(markdown) {
		return String(markdown ?? "")
			.split(/\n{2,}/)
			.map((text) => ({ type: "paragraph", raw: text, text, tokens: [] }));
	}
	parse(markdown) {
		return String(markdown ?? "");
	}
	use() {
		return this;
	}
}
