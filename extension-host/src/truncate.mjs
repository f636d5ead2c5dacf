// Output truncation with pi's limits: 2000 lines or 50 KiB, whichever comes first. Truncation
// keeps whole lines (except a tail truncation whose last line alone is over the byte limit).

export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_BYTES = 50 * 1024;
export const GREP_MAX_LINE_LENGTH = 500;

const byteLength = (text) => Buffer.byteLength(text, "utf-8");

function toLines(content) {
	if (content.length === 0) return [];
	const lines = content.split("\n");
	if (content.endsWith("\n")) lines.pop();
	return lines;
}

export function formatSize(bytes) {
	if (bytes < 1024) return `${bytes}B`;
	if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
	return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

function untouched(content, totalLines, totalBytes, maxLines, maxBytes) {
	return {
		content,
		truncated: false,
		truncatedBy: null,
		totalLines,
		totalBytes,
		outputLines: totalLines,
		outputBytes: totalBytes,
		lastLinePartial: false,
		firstLineExceedsLimit: false,
		maxLines,
		maxBytes,
	};
}

/** Keeps the first lines that fit (file reads, search results). */
export function truncateHead(content, options = {}) {
	const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
	const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
	const text = String(content ?? "");
	const totalBytes = byteLength(text);
	const lines = toLines(text);
	const totalLines = lines.length;
	if (totalLines <= maxLines && totalBytes <= maxBytes) return untouched(text, totalLines, totalBytes, maxLines, maxBytes);
	if (byteLength(lines[0] ?? "") > maxBytes) {
		return {
			...untouched("", totalLines, totalBytes, maxLines, maxBytes),
			truncated: true,
			truncatedBy: "bytes",
			outputLines: 0,
			outputBytes: 0,
			firstLineExceedsLimit: true,
		};
	}
	const kept = [];
	let bytes = 0;
	let by = "lines";
	for (const line of lines) {
		if (kept.length >= maxLines) {
			by = "lines";
			break;
		}
		const size = byteLength(line) + (kept.length > 0 ? 1 : 0);
		if (bytes + size > maxBytes) {
			by = "bytes";
			break;
		}
		kept.push(line);
		bytes += size;
	}
	const out = kept.join("\n");
	return {
		...untouched(out, totalLines, totalBytes, maxLines, maxBytes),
		truncated: true,
		truncatedBy: by,
		outputLines: kept.length,
		outputBytes: byteLength(out),
	};
}

function tailBytes(line, maxBytes) {
	const buffer = Buffer.from(line, "utf-8");
	if (buffer.length <= maxBytes) return line;
	let start = buffer.length - maxBytes;
	while (start < buffer.length && (buffer[start] & 0xc0) === 0x80) start++;
	return buffer.subarray(start).toString("utf-8");
}

/** Keeps the last lines that fit (logs, command output). */
export function truncateTail(content, options = {}) {
	const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
	const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
	const text = String(content ?? "");
	const totalBytes = byteLength(text);
	const lines = toLines(text);
	const totalLines = lines.length;
	if (totalLines <= maxLines && totalBytes <= maxBytes) return untouched(text, totalLines, totalBytes, maxLines, maxBytes);
	const kept = [];
	let bytes = 0;
	let by = "lines";
	let partial = false;
	for (let i = lines.length - 1; i >= 0; i--) {
		if (kept.length >= maxLines) {
			by = "lines";
			break;
		}
		const size = byteLength(lines[i]) + (kept.length > 0 ? 1 : 0);
		if (bytes + size > maxBytes) {
			by = "bytes";
			if (kept.length === 0) {
				const piece = tailBytes(lines[i], maxBytes);
				kept.unshift(piece);
				bytes = byteLength(piece);
				partial = true;
			}
			break;
		}
		kept.unshift(lines[i]);
		bytes += size;
	}
	const out = kept.join("\n");
	return {
		...untouched(out, totalLines, totalBytes, maxLines, maxBytes),
		truncated: true,
		truncatedBy: by,
		outputLines: kept.length,
		outputBytes: byteLength(out),
		lastLinePartial: partial,
	};
}

/** Cuts one line to `maxChars` UTF-16 units (never inside a surrogate pair), marking the cut. */
export function truncateLine(line, maxChars = GREP_MAX_LINE_LENGTH) {
	const text = String(line ?? "");
	if (text.length <= maxChars) return { text, wasTruncated: false };
	let end = Math.max(0, maxChars);
	const code = text.charCodeAt(end - 1);
	if (code >= 0xd800 && code <= 0xdbff) end--;
	return { text: `${text.slice(0, end)}... [truncated]`, wasTruncated: true };
}
