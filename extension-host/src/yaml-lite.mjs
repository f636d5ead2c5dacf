// A small YAML reader for front matter: mappings and lists by indentation, plain, quoted and block
// (`|`, `>`) scalars, flow lists `[a, b]` and flow maps `{a: 1}`, numbers, booleans and null.
// It covers what front matter of skills, prompts and agent files uses, not all of YAML.

function stripComment(line) {
	let quote = null;
	for (let i = 0; i < line.length; i++) {
		const c = line[i];
		if (quote) {
			if (c === quote && line[i - 1] !== "\\") quote = null;
		} else if (c === '"' || c === "'") quote = c;
		else if (c === "#" && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i);
	}
	return line;
}

function splitFlow(text) {
	const parts = [];
	let depth = 0;
	let quote = null;
	let current = "";
	for (const c of text) {
		if (quote) {
			current += c;
			if (c === quote) quote = null;
			continue;
		}
		if (c === '"' || c === "'") quote = c;
		if (c === "[" || c === "{") depth++;
		if (c === "]" || c === "}") depth--;
		if (c === "," && depth === 0) {
			parts.push(current.trim());
			current = "";
			continue;
		}
		current += c;
	}
	if (current.trim() !== "") parts.push(current.trim());
	return parts;
}

export function parseScalar(raw) {
	const text = raw.trim();
	if (text === "" || text === "~" || text === "null" || text === "Null" || text === "NULL") return null;
	if (text === "true" || text === "True" || text === "TRUE") return true;
	if (text === "false" || text === "False" || text === "FALSE") return false;
	if (text.startsWith('"') && text.endsWith('"') && text.length >= 2) {
		try {
			return JSON.parse(text);
		} catch {
			return text.slice(1, -1);
		}
	}
	if (text.startsWith("'") && text.endsWith("'") && text.length >= 2) return text.slice(1, -1).replace(/''/g, "'");
	if (text.startsWith("[") && text.endsWith("]")) return splitFlow(text.slice(1, -1)).map(parseScalar);
	if (text.startsWith("{") && text.endsWith("}")) {
		const result = {};
		for (const part of splitFlow(text.slice(1, -1))) {
			const colon = part.indexOf(":");
			if (colon === -1) result[part] = null;
			else result[parseScalar(part.slice(0, colon))] = parseScalar(part.slice(colon + 1));
		}
		return result;
	}
	if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return Number(text);
	if (/^0x[0-9a-fA-F]+$/.test(text)) return Number.parseInt(text, 16);
	return text;
}

function keyValue(text) {
	const m = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^:]+?)\s*:(?:\s+(.*)|$)/.exec(text);
	if (!m) return null;
	return { key: String(parseScalar(m[1])), rest: m[2] ?? "" };
}

export function parseYaml(source) {
	const lines = String(source ?? "")
		.replace(/\r\n?/g, "\n")
		.split("\n")
		.map((raw) => ({ raw, indent: raw.length - raw.trimStart().length, text: stripComment(raw).trimEnd() }));
	let index = 0;

	const skipBlank = () => {
		while (index < lines.length && lines[index].text.trim() === "") index++;
	};

	const blockScalar = (style, parentIndent) => {
		const collected = [];
		let blockIndent;
		while (index < lines.length) {
			const line = lines[index];
			if (line.raw.trim() === "") {
				collected.push("");
				index++;
				continue;
			}
			if (line.indent <= parentIndent) break;
			blockIndent ??= line.indent;
			collected.push(line.raw.slice(blockIndent));
			index++;
		}
		while (collected.length > 0 && collected[collected.length - 1] === "") collected.pop();
		const keep = style.startsWith("|") ? collected.join("\n") : collected.join(" ").replace(/ {2,}/g, " ");
		return style.endsWith("-") ? keep : `${keep}\n`;
	};

	const value = (rest, indent) => {
		const trimmed = rest.trim();
		if (/^[|>][-+]?$/.test(trimmed)) return blockScalar(trimmed, indent);
		if (trimmed !== "") return parseScalar(trimmed);
		skipBlank();
		if (index < lines.length && lines[index].indent > indent) return node(lines[index].indent);
		if (index < lines.length && lines[index].indent === indent && lines[index].text.trim().startsWith("- ")) return node(indent);
		return null;
	};

	const node = (indent) => {
		skipBlank();
		if (index >= lines.length) return null;
		const isList = lines[index].text.trim() === "-" || lines[index].text.trim().startsWith("- ");
		if (isList) {
			const list = [];
			while (index < lines.length) {
				skipBlank();
				if (index >= lines.length) break;
				const line = lines[index];
				const t = line.text.trim();
				if (line.indent !== indent || !(t === "-" || t.startsWith("- "))) break;
				const itemText = t === "-" ? "" : t.slice(2);
				index++;
				const kv = keyValue(itemText);
				if (kv && !itemText.startsWith('"') && !itemText.startsWith("'")) {
					// A mapping that starts on the dash line.
					const item = { [kv.key]: value(kv.rest, indent + 2) };
					skipBlank();
					while (index < lines.length && lines[index].indent > indent) {
						const more = keyValue(lines[index].text.trim());
						const moreIndent = lines[index].indent;
						index++;
						if (more) item[more.key] = value(more.rest, moreIndent);
						skipBlank();
					}
					list.push(item);
				} else {
					list.push(value(itemText, indent));
				}
			}
			return list;
		}
		const map = {};
		while (index < lines.length) {
			skipBlank();
			if (index >= lines.length) break;
			const line = lines[index];
			if (line.indent !== indent) break;
			const kv = keyValue(line.text.trim());
			index++;
			if (!kv) continue;
			map[kv.key] = value(kv.rest, indent);
		}
		return map;
	};

	skipBlank();
	if (index >= lines.length) return null;
	const first = lines[index];
	if (!keyValue(first.text.trim()) && !first.text.trim().startsWith("-")) return parseScalar(first.text);
	return node(first.indent);
}

/** pi's `parseFrontmatter`: `{ frontmatter, body }` of a document that may start with `---`. */
export function parseFrontmatter(content) {
	const normalized = String(content ?? "")
		.replace(/^\ufeff/, "")
		.replace(/\r\n?/g, "\n");
	if (!normalized.startsWith("---")) return { frontmatter: {}, body: normalized };
	const end = normalized.indexOf("\n---", 3);
	if (end === -1) return { frontmatter: {}, body: normalized };
	const yaml = normalized.slice(4, end);
	const parsed = parseYaml(yaml);
	return { frontmatter: parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : {}, body: normalized.slice(end + 4).trim() };
}

export function stripFrontmatter(content) {
	return parseFrontmatter(content).body;
}
