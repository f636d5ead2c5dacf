// A small markdown renderer for the chat: the subset models write (headings, paragraphs,
// emphasis, inline code, fenced code, lists, quotes, links, rules, simple tables). It returns an
// HTML string in which every piece of the source is escaped, so a message can never inject
// markup or script; link targets are limited to http(s), mailto and file URLs.
//
// It runs once per finished text block (never per token), in linear time over the text.

export function escapeHtml(text: string): string {
    return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

const SAFE_LINK = /^(https?:|mailto:|file:)/i;

/** Renders inline markdown of one paragraph or list item. */
export function renderInline(text: string): string {
    let out = "";
    let i = 0;
    while (i < text.length) {
        const c = text[i]!;
        if (c === "`") {
            const span = codeSpanAt(text, i);
            if (span.html !== null) {
                out += span.html;
                i = span.end;
                continue;
            }
            out += escapeHtml(text.slice(i, span.end));
            i = span.end;
            continue;
        }
        if (c === "\\" && i + 1 < text.length && /[\\`*_{}\[\]()#+\-.!|>~]/.test(text[i + 1]!)) {
            out += escapeHtml(text[i + 1]!);
            i += 2;
            continue;
        }
        if ((c === "*" || c === "_") && text[i + 1] === c) {
            const end = text.indexOf(c + c, i + 2);
            if (end > i + 2) {
                out += `<strong>${renderInline(text.slice(i + 2, end))}</strong>`;
                i = end + 2;
                continue;
            }
        }
        if (c === "*" || (c === "_" && (i === 0 || /\W/.test(text[i - 1]!)))) {
            const end = findClosing(text, c, i + 1);
            if (end > i + 1 && text[i + 1] !== " ") {
                out += `<em>${renderInline(text.slice(i + 1, end))}</em>`;
                i = end + 1;
                continue;
            }
        }
        if (c === "~" && text[i + 1] === "~") {
            const end = text.indexOf("~~", i + 2);
            if (end > i + 2) {
                out += `<del>${renderInline(text.slice(i + 2, end))}</del>`;
                i = end + 2;
                continue;
            }
        }
        if (c === "[") {
            const link = /^\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/.exec(text.slice(i));
            if (link) {
                const href = link[2]!;
                const label = renderInline(link[1]!);
                out += SAFE_LINK.test(href) ? `<a href="${escapeHtml(href)}" title="${escapeHtml(href)}">${label}</a>` : label;
                i += link[0].length;
                continue;
            }
        }
        if (c === "h" && (text.startsWith("http://", i) || text.startsWith("https://", i)) && (i === 0 || /[\s(]/.test(text[i - 1]!))) {
            const url = /^https?:\/\/[^\s<>)]+[^\s<>).,;:!?'"]/.exec(text.slice(i));
            if (url) {
                out += `<a href="${escapeHtml(url[0])}">${escapeHtml(url[0])}</a>`;
                i += url[0].length;
                continue;
            }
        }
        // Plain text up to the next character that may start markup.
        let j = i + 1;
        while (j < text.length && !"`\\*_~[h".includes(text[j]!)) j++;
        out += escapeHtml(text.slice(i, j));
        i = j;
    }
    return out;
}

/**
 * The code span opening with the run of backticks at `start`: it ends at the next run of the same
 * number of backticks. `html` is null when nothing closes it; `end` is then just past the run.
 */
function codeSpanAt(text: string, start: number): { html: string | null; end: number } {
    let ticks = 1;
    while (text[start + ticks] === "`") ticks++;
    const fence = "`".repeat(ticks);
    const end = text.indexOf(fence, start + ticks);
    if (end < 0) return { html: null, end: start + ticks };
    const body = text.slice(start + ticks, end);
    return { html: `<code>${escapeHtml(body.trim() || body)}</code>`, end: end + ticks };
}

/**
 * Renders a one-line title (a tool call's "Run `cargo test`"): escaped text whose code spans
 * become <code>, and nothing else (a path's `_` or a glob's `*` is not emphasis). A code span left
 * open — a title cut short inside its command — runs to the end, so no backtick shows.
 */
export function renderCodeSpans(text: string): string {
    let out = "";
    let i = 0;
    while (i < text.length) {
        const tick = text.indexOf("`", i);
        if (tick < 0) {
            out += escapeHtml(text.slice(i));
            break;
        }
        out += escapeHtml(text.slice(i, tick));
        const span = codeSpanAt(text, tick);
        if (span.html === null) {
            const rest = text.slice(span.end).trim();
            if (rest) out += `<code>${escapeHtml(rest)}</code>`;
            break;
        }
        out += span.html;
        i = span.end;
    }
    return out;
}

function findClosing(text: string, marker: string, from: number): number {
    for (let k = from; k < text.length; k++) {
        if (text[k] === "`") {
            const end = text.indexOf("`", k + 1);
            if (end < 0) return -1;
            k = end;
            continue;
        }
        if (text[k] === marker && text[k - 1] !== " " && text[k + 1] !== marker) return k;
    }
    return -1;
}

interface ListFrame {
    ordered: boolean;
    indent: number;
}

/** Renders a whole markdown document to HTML. */
export function renderMarkdown(source: string): string {
    const lines = source.replace(/\r\n?/g, "\n").split("\n");
    const out: string[] = [];
    let paragraph: string[] = [];
    const lists: ListFrame[] = [];
    let inItem = false;

    const flushParagraph = () => {
        if (paragraph.length === 0) return;
        const html = paragraph.map((l) => renderInline(l.trim())).join("<br>");
        out.push(inItem ? html : `<p>${html}</p>`);
        paragraph = [];
    };
    const closeLists = (toDepth: number) => {
        while (lists.length > toDepth) {
            const list = lists.pop()!;
            out.push(`</li></${list.ordered ? "ol" : "ul"}>`);
        }
        inItem = lists.length > 0;
    };

    let i = 0;
    while (i < lines.length) {
        const line = lines[i]!;
        const fence = /^(\s*)(```+|~~~+)\s*([\w+#.-]*)/.exec(line);
        if (fence) {
            flushParagraph();
            if (fence[1]!.length < 2) closeLists(0);
            const marker = fence[2]!;
            const body: string[] = [];
            i++;
            while (i < lines.length && !lines[i]!.trimStart().startsWith(marker)) body.push(lines[i++]!);
            i++; // the closing fence (or the end)
            const lang = fence[3] ? ` data-lang="${escapeHtml(fence[3])}"` : "";
            out.push(`<pre${lang}><code>${escapeHtml(body.join("\n"))}</code></pre>`);
            continue;
        }
        if (line.trim() === "") {
            flushParagraph();
            // A blank line ends a list unless the next line continues it.
            const next = lines[i + 1] ?? "";
            if (lists.length > 0 && !/^\s*([-*+]|\d+[.)])\s/.test(next) && !/^\s{2,}\S/.test(next)) closeLists(0);
            i++;
            continue;
        }
        const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
        if (heading) {
            flushParagraph();
            closeLists(0);
            const level = heading[1]!.length;
            out.push(`<h${level}>${renderInline(heading[2]!)}</h${level}>`);
            i++;
            continue;
        }
        if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
            flushParagraph();
            closeLists(0);
            out.push("<hr>");
            i++;
            continue;
        }
        if (/^\s{0,3}>/.test(line)) {
            flushParagraph();
            closeLists(0);
            const quoted: string[] = [];
            while (i < lines.length && /^\s{0,3}>/.test(lines[i]!)) quoted.push(lines[i++]!.replace(/^\s{0,3}>\s?/, ""));
            out.push(`<blockquote>${renderMarkdown(quoted.join("\n"))}</blockquote>`);
            continue;
        }
        if (isTableStart(lines, i)) {
            flushParagraph();
            closeLists(0);
            const rows: string[][] = [];
            rows.push(splitRow(lines[i]!));
            i += 2; // the header and the --- row
            while (i < lines.length && lines[i]!.includes("|") && lines[i]!.trim() !== "") rows.push(splitRow(lines[i++]!));
            const [head, ...body] = rows;
            const cells = (row: string[], tag: string) => row.map((c) => `<${tag}>${renderInline(c)}</${tag}>`).join("");
            out.push(
                `<table><thead><tr>${cells(head!, "th")}</tr></thead><tbody>${body.map((r) => `<tr>${cells(r, "td")}</tr>`).join("")}</tbody></table>`,
            );
            continue;
        }
        const item = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(line);
        if (item) {
            flushParagraph();
            const indent = item[1]!.length;
            const ordered = /\d/.test(item[2]!);
            while (lists.length > 0 && indent < lists[lists.length - 1]!.indent) closeLists(lists.length - 1);
            const top = lists[lists.length - 1];
            if (!top || indent > top.indent) {
                const start = ordered && parseInt(item[2]!, 10) !== 1 ? ` start="${parseInt(item[2]!, 10)}"` : "";
                out.push(ordered ? `<ol${start}><li>` : "<ul><li>");
                lists.push({ ordered, indent });
            } else if (top.ordered !== ordered) {
                closeLists(lists.length - 1);
                out.push(ordered ? "<ol><li>" : "<ul><li>");
                lists.push({ ordered, indent });
            } else {
                out.push("</li><li>");
            }
            inItem = true;
            paragraph.push(item[3]!);
            i++;
            continue;
        }
        if (lists.length > 0 && !/^\s/.test(line) && paragraph.length === 0) closeLists(0);
        paragraph.push(line);
        i++;
    }
    flushParagraph();
    closeLists(0);
    return out.join("");
}

function splitRow(line: string): string[] {
    let row = line.trim();
    if (row.startsWith("|")) row = row.slice(1);
    if (row.endsWith("|")) row = row.slice(0, -1);
    return row.split("|").map((c) => c.trim());
}

function isTableStart(lines: string[], i: number): boolean {
    const head = lines[i]!;
    const rule = lines[i + 1];
    return head.includes("|") && rule !== undefined && /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(rule);
}

/**
 * Where a streaming answer can be cut so that the text before the cut renders as it will when
 * complete: after a blank line outside a fenced code block. The state remembers how far it
 * scanned, so each call looks only at the complete lines added since the last one (linear over
 * the whole stream).
 */
export interface StreamSplit {
    /** Index up to which complete lines were scanned. */
    scanned: number;
    /** The fence (```, ~~~) of the code block the scan is inside, or null. */
    fence: string | null;
    /** The latest safe cut found (0: none yet). */
    safe: number;
}

export function newStreamSplit(): StreamSplit {
    return { scanned: 0, fence: null, safe: 0 };
}

export function advanceStreamSplit(state: StreamSplit, text: string): number {
    let pos = state.scanned;
    for (;;) {
        const newline = text.indexOf("\n", pos);
        if (newline < 0) break;
        const line = text.slice(pos, newline);
        const fence = /^\s*(```+|~~~+)/.exec(line);
        if (fence) {
            if (state.fence === null) state.fence = fence[1]!;
            else if (line.trimStart().startsWith(state.fence)) state.fence = null;
        } else if (state.fence === null && line.trim() === "") {
            state.safe = newline + 1;
        }
        pos = newline + 1;
    }
    state.scanned = pos;
    return state.safe;
}
