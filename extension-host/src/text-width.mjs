// Terminal text measuring for the pi-tui stand-in: visible width (ANSI sequences count zero, wide
// East Asian characters and emoji count two), truncation and word wrapping that keep ANSI styling.

const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][\s\S]*?(?:\x07|\x1b\\)|\x1b_[\s\S]*?(?:\x07|\x1b\\)|\x1bP[\s\S]*?\x1b\\|\x1b[@-Z\\-_]/y;

let segmenter;
function graphemes(text) {
	segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
	return Array.from(segmenter.segment(text), (s) => s.segment);
}

const WIDE = [
	[0x1100, 0x115f],
	[0x231a, 0x231b],
	[0x2329, 0x232a],
	[0x23e9, 0x23ec],
	[0x23f0, 0x23f0],
	[0x23f3, 0x23f3],
	[0x25fd, 0x25fe],
	[0x2614, 0x2615],
	[0x2648, 0x2653],
	[0x267f, 0x267f],
	[0x2693, 0x2693],
	[0x26a1, 0x26a1],
	[0x26aa, 0x26ab],
	[0x26bd, 0x26be],
	[0x26c4, 0x26c5],
	[0x26ce, 0x26ce],
	[0x26d4, 0x26d4],
	[0x26ea, 0x26ea],
	[0x26f2, 0x26f3],
	[0x26f5, 0x26f5],
	[0x26fa, 0x26fa],
	[0x26fd, 0x26fd],
	[0x2705, 0x2705],
	[0x270a, 0x270b],
	[0x2728, 0x2728],
	[0x274c, 0x274c],
	[0x274e, 0x274e],
	[0x2753, 0x2755],
	[0x2757, 0x2757],
	[0x2795, 0x2797],
	[0x27b0, 0x27b0],
	[0x27bf, 0x27bf],
	[0x2b1b, 0x2b1c],
	[0x2b50, 0x2b50],
	[0x2b55, 0x2b55],
	[0x2e80, 0x303e],
	[0x3041, 0x33ff],
	[0x3400, 0x4dbf],
	[0x4e00, 0x9fff],
	[0xa000, 0xa4cf],
	[0xa960, 0xa97f],
	[0xac00, 0xd7a3],
	[0xf900, 0xfaff],
	[0xfe10, 0xfe19],
	[0xfe30, 0xfe6f],
	[0xff00, 0xff60],
	[0xffe0, 0xffe6],
	[0x16fe0, 0x18cff],
	[0x1b000, 0x1b2ff],
	[0x1f004, 0x1f004],
	[0x1f0cf, 0x1f0cf],
	[0x1f18e, 0x1f18e],
	[0x1f191, 0x1f19a],
	[0x1f200, 0x1f251],
	[0x1f300, 0x1f64f],
	[0x1f680, 0x1f6ff],
	[0x1f7e0, 0x1f7eb],
	[0x1f90c, 0x1f9ff],
	[0x1fa70, 0x1faff],
	[0x20000, 0x2fffd],
	[0x30000, 0x3fffd],
];

function isWide(cp) {
	let lo = 0;
	let hi = WIDE.length - 1;
	while (lo <= hi) {
		const mid = (lo + hi) >> 1;
		if (cp < WIDE[mid][0]) hi = mid - 1;
		else if (cp > WIDE[mid][1]) lo = mid + 1;
		else return true;
	}
	return false;
}

const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}\u200b-\u200f\ufe00-\ufe0f]+$/u;
const PICTOGRAPHIC = /\p{Extended_Pictographic}/u;

function graphemeWidth(g) {
	const cp = g.codePointAt(0);
	if (cp === undefined) return 0;
	if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
	if (ZERO_WIDTH.test(g)) return 0;
	if (g.includes("\ufe0f") && PICTOGRAPHIC.test(g)) return 2;
	if (isWide(cp)) return 2;
	if (cp >= 0x1f000 && PICTOGRAPHIC.test(g)) return 2;
	return 1;
}

/** Splits `text` into ANSI escape sequences (width 0) and graphemes. */
export function tokenize(text) {
	const tokens = [];
	let plain = "";
	let i = 0;
	const flush = () => {
		if (!plain) return;
		for (const g of graphemes(plain)) tokens.push({ text: g, width: graphemeWidth(g), ansi: false });
		plain = "";
	};
	while (i < text.length) {
		if (text.charCodeAt(i) === 0x1b) {
			ANSI.lastIndex = i;
			const match = ANSI.exec(text);
			if (match) {
				flush();
				tokens.push({ text: match[0], width: 0, ansi: true });
				i += match[0].length;
				continue;
			}
		}
		plain += text[i];
		i++;
	}
	flush();
	return tokens;
}

export function stripTerminalSequences(text) {
	return tokenize(String(text ?? ""))
		.filter((t) => !t.ansi)
		.map((t) => t.text)
		.join("");
}

export function visibleWidth(text) {
	const s = String(text ?? "");
	// Fast path for plain ASCII.
	if (/^[\x20-\x7e]*$/.test(s)) return s.length;
	let width = 0;
	for (const token of tokenize(s)) width += token.width;
	return width;
}

export function truncateToWidth(text, maxWidth, ellipsis = "...", pad = false) {
	const s = String(text ?? "");
	const limit = Math.max(0, Math.floor(maxWidth));
	const width = visibleWidth(s);
	if (width <= limit) return pad ? s + " ".repeat(limit - width) : s;
	const ellipsisWidth = visibleWidth(ellipsis);
	if (ellipsisWidth >= limit) {
		return truncateToWidth(ellipsis, limit, "", pad);
	}
	const target = limit - ellipsisWidth;
	let used = 0;
	let out = "";
	let sawAnsi = false;
	for (const token of tokenize(s)) {
		if (token.ansi) {
			sawAnsi = true;
			out += token.text;
			continue;
		}
		if (used + token.width > target) break;
		out += token.text;
		used += token.width;
	}
	out += (sawAnsi ? "\x1b[0m" : "") + ellipsis;
	used += ellipsisWidth;
	return pad && used < limit ? out + " ".repeat(limit - used) : out;
}

/** Columns `start` to `start + length` of `text` (by visible width), keeping ANSI sequences. */
export function sliceByColumn(text, start, length = Number.POSITIVE_INFINITY) {
	let column = 0;
	let out = "";
	for (const token of tokenize(String(text ?? ""))) {
		if (token.ansi) {
			out += token.text;
			continue;
		}
		if (column >= start && column + token.width <= start + length) out += token.text;
		column += token.width;
	}
	return out;
}

const SGR = /^\x1b\[[0-9;:]*m$/;

/** Word-wraps `text` to `width` columns; styling active at a break is carried to the next line. */
export function wrapTextWithAnsi(text, width) {
	const limit = Math.max(1, Math.floor(width));
	const result = [];
	let active = [];
	for (const sourceLine of String(text ?? "").split("\n")) {
		const tokens = tokenize(sourceLine);
		// Group graphemes into words and runs of spaces.
		const words = [];
		let current = null;
		for (const token of tokens) {
			const kind = token.ansi ? "ansi" : token.text === " " ? "space" : "word";
			if (kind === "ansi") {
				if (current) current.tokens.push(token);
				else words.push((current = { kind: "word", tokens: [token], width: 0 }));
				continue;
			}
			if (!current || current.kind !== kind) {
				current = { kind, tokens: [], width: 0 };
				words.push(current);
			}
			current.tokens.push(token);
			current.width += token.width;
		}
		let line = active.join("");
		let lineWidth = 0;
		const pushLine = () => {
			result.push(active.length > 0 ? `${line}\x1b[0m` : line);
			line = active.join("");
			lineWidth = 0;
		};
		const track = (token) => {
			if (!SGR.test(token.text)) return;
			if (token.text === "\x1b[0m" || token.text === "\x1b[m") active = [];
			else active.push(token.text);
		};
		for (const word of words) {
			if (word.kind === "space") {
				if (lineWidth === 0 && result.length > 0 && line === active.join("")) continue;
				if (lineWidth + word.width > limit) {
					pushLine();
					continue;
				}
				for (const t of word.tokens) line += t.text;
				lineWidth += word.width;
				continue;
			}
			if (lineWidth + word.width > limit && lineWidth > 0) pushLine();
			for (const token of word.tokens) {
				if (token.ansi) {
					line += token.text;
					track(token);
					continue;
				}
				if (lineWidth + token.width > limit) pushLine();
				line += token.text;
				lineWidth += token.width;
			}
		}
		result.push(active.length > 0 ? `${line}\x1b[0m` : line);
	}
	return result.map((l) => l.replace(/ +$/, (m) => (l.trim() === "" ? m : "")));
}

export function replaceControlCharacters(text) {
	return String(text ?? "").replace(/[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]/g, (c) => `^${String.fromCharCode(c.charCodeAt(0) + 64)}`);
}
