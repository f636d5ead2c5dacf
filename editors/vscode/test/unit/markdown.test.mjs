// The chat's markdown renderer: the common constructs, and nothing unescaped gets through.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { advanceStreamSplit, escapeHtml, newStreamSplit, renderCodeSpans, renderInline, renderMarkdown } from "../../out/shared/markdown.mjs";
import { countLineChanges, numberDiffLines } from "../../out/shared/diff.mjs";

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

describe("tool titles", () => {
    it("renders a title's backticks as code, never as raw backticks", () => {
        assert.equal(renderCodeSpans("Run `./check.sh`"), "Run <code>./check.sh</code>");
        assert.equal(renderCodeSpans("Read `src/a.ts`"), "Read <code>src/a.ts</code>");
        assert.equal(renderCodeSpans("Search for `fn main` in ."), "Search for <code>fn main</code> in .");
        assert.equal(renderCodeSpans("Read src/greet.py"), "Read src/greet.py");
    });

    it("escapes the title and the code, and reads no other markdown", () => {
        assert.equal(renderCodeSpans("Run `a < b && echo \"x\"`"), "Run <code>a &lt; b &amp;&amp; echo &quot;x&quot;</code>");
        assert.equal(renderCodeSpans("<img src=x onerror=alert(1)>"), "&lt;img src=x onerror=alert(1)&gt;");
        assert.equal(renderCodeSpans("Read src/__init__.py"), "Read src/__init__.py");
        assert.equal(renderCodeSpans("Find *.rs in [src](x)"), "Find *.rs in [src](x)");
    });

    it("runs a code span left open to the end (a title cut short inside its command)", () => {
        assert.equal(renderCodeSpans("Run `cargo test --workspace…"), "Run <code>cargo test --workspace…</code>");
        assert.equal(renderCodeSpans("Run ``echo `date` ``"), "Run <code>echo `date`</code>");
        assert.equal(renderCodeSpans("odd `"), "odd ");
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
        assert.deepEqual(numberDiffLines(diff).map((l) => l.kind), ["file", "file", "hunk", "del", "add", "context", "meta"]);
    });
    it("counts a review's changed lines between two texts", () => {
        assert.deepEqual(countLineChanges("a\nb\nc\n", "a\nB\nc\n"), { added: 1, removed: 1 });
        assert.deepEqual(countLineChanges("", "one\ntwo"), { added: 2, removed: 0 });
        assert.deepEqual(countLineChanges("same", "same"), { added: 0, removed: 0 });
    });
});
