// The chat's markdown renderer: the common constructs, and nothing unescaped gets through.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { advanceStreamSplit, escapeHtml, newStreamSplit, renderInline, renderMarkdown } from "../../out/shared/markdown.mjs";
import { diffStats, parseUnifiedDiff } from "../../out/shared/diff.mjs";

describe("markdown", () => {
    it("renders headings, paragraphs and emphasis", () => {
        assert.equal(renderMarkdown("# Title\n\nSome **bold** and *italic* and `code`."),
            "<h1>Title</h1><p>Some <strong>bold</strong> and <em>italic</em> and <code>code</code>.</p>");
    });

    it("renders fenced code verbatim and escaped", () => {
        assert.equal(renderMarkdown("```rust\nlet a = b < c && **d**;\n```"),
            '<pre data-lang="rust"><code>let a = b &lt; c &amp;&amp; **d**;</code></pre>');
    });

    it("renders nested and ordered lists", () => {
        assert.equal(renderMarkdown("- a\n- b\n  - c\n\n1. one\n2. two"),
            "<ul><li>a</li><li>b<ul><li>c</li></ul></li></ul><ol><li>one</li><li>two</li></ol>");
    });

    it("renders quotes, rules and tables", () => {
        assert.equal(renderMarkdown("> quoted *text*"), "<blockquote><p>quoted <em>text</em></p></blockquote>");
        assert.equal(renderMarkdown("---"), "<hr>");
        assert.equal(renderMarkdown("| a | b |\n|---|---|\n| 1 | `2` |"),
            "<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td><code>2</code></td></tr></tbody></table>");
    });

    it("escapes HTML everywhere and only links safe URLs", () => {
        const html = renderMarkdown('<script>alert(1)</script> [x](javascript:alert(1)) [ok](https://example.com/?a=1&b="2")');
        assert.ok(!html.includes("<script"));
        assert.ok(!html.includes("javascript:"));
        assert.match(html, /&lt;script&gt;/);
        assert.match(html, /<a href="https:\/\/example.com\/\?a=1&amp;b=&quot;2&quot;"/);
        assert.equal(escapeHtml(`<a href='x'>&`), "&lt;a href=&#39;x&#39;&gt;&amp;");
    });

    it("leaves unmatched markers as text", () => {
        assert.equal(renderInline("a * b and `open"), "a * b and `open");
        assert.equal(renderInline("snake_case_name"), "snake_case_name");
    });

    it("is linear enough for a 100 KB answer", () => {
        const text = "Some **bold** text with `code` and a [link](https://x.y).\n\n".repeat(1800);
        const html = renderMarkdown(text);
        assert.equal(html.split("<p>").length - 1, 1800);
    });
});

describe("streaming cuts", () => {
    it("cuts after blank lines outside code fences only", () => {
        const text = "# A\n\npara\n\n```\ncode\n\nmore\n```\n\ntail";
        const safe = advanceStreamSplit(newStreamSplit(), text);
        assert.equal(text.slice(safe), "tail");
        const inside = "p\n\n```\nx\n\ny";
        assert.equal(advanceStreamSplit(newStreamSplit(), inside), 3);
    });

    it("gives the same cut fed piece by piece as all at once", () => {
        const text = "# Title\n\nSome text.\n\n- a\n- b\n\n~~~\nfenced\n\n~~~\n\nend of it\n\nrest";
        const whole = advanceStreamSplit(newStreamSplit(), text);
        const state = newStreamSplit();
        let last = 0;
        for (let i = 1; i <= text.length; i++) {
            const cut = advanceStreamSplit(state, text.slice(0, i));
            assert.ok(cut >= last, "cuts only move forward");
            last = cut;
        }
        assert.equal(last, whole);
        assert.equal(text.slice(whole), "rest");
    });
});

describe("diff", () => {
    it("classifies unified diff lines", () => {
        const diff = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-old\n+new\n same\n\\ No newline at end of file\n";
        assert.deepEqual(parseUnifiedDiff(diff).map((l) => l.kind), ["file", "file", "hunk", "del", "add", "context", "meta"]);
        assert.deepEqual(diffStats(diff), { added: 1, removed: 1 });
    });
});
