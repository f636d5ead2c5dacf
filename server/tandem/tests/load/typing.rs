//! An editor's buffer and a typist: deterministic pseudo-random edits (characters, including
//! accented letters, a check mark and an emoji that takes two UTF-16 units; new lines;
//! backspaces; a paste that replaces a range) as LSP incremental changes in UTF-16 positions,
//! applied to the client's own copy as they are sent.

use serde_json::{json, Value};

/// A Rust file with non-ASCII text, where the typing happens.
pub const START: &str = "// héllo wörld ✓ — load test 😀\nfn main() {\n    let total = 1;\n    println!(\"{total}\");\n}\n\nfn helper(x: u32) -> u32 {\n    x + 1\n}\n";

const ALPHABET: &[char] = &[
    'a', 'b', 'c', 'x', 'y', 'z', ' ', '_', '(', ')', ';', 'é', '✓', '😀', '{', '}', '1',
];

/// The client's copy of the document, one string per line (without the line breaks).
pub struct Buffer {
    lines: Vec<String>,
    seed: u64,
}

impl Buffer {
    pub fn new(text: &str, seed: u64) -> Buffer {
        Buffer {
            lines: text.split('\n').map(str::to_string).collect(),
            seed,
        }
    }

    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    fn next(&mut self, n: usize) -> usize {
        // xorshift64*: the same sequence every run.
        self.seed ^= self.seed >> 12;
        self.seed ^= self.seed << 25;
        self.seed ^= self.seed >> 27;
        (self.seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }

    /// A random character boundary of `line`: (char index, UTF-16 column).
    fn boundary(&mut self, line: usize) -> (usize, usize) {
        let chars = self.lines[line].chars().count();
        let at = self.next(chars + 1);
        (at, utf16(&self.lines[line], at))
    }

    /// Replaces chars `from..to` of `line` with `text` (no line breaks in the removed part).
    fn splice(&mut self, line: usize, from: usize, to: usize, text: &str) {
        let s = &self.lines[line];
        let a = byte(s, from);
        let b = byte(s, to);
        let new = format!("{}{}{}", &s[..a], text, &s[b..]);
        let mut parts: Vec<String> = new.split('\n').map(str::to_string).collect();
        let first = parts.remove(0);
        self.lines[line] = first;
        for (i, p) in parts.into_iter().enumerate() {
            self.lines.insert(line + 1 + i, p);
        }
    }

    /// One random edit, applied here; the LSP content change for it.
    pub fn edit(&mut self) -> Value {
        let line = self.next(self.lines.len());
        let kind = self.next(20);
        let (at, col) = self.boundary(line);
        let pos = json!({"line": line, "character": col});
        match kind {
            // Backspace: join with the previous line, or remove one character.
            0..=2 => {
                if at == 0 && line > 0 {
                    let prev = line - 1;
                    let prev_len = utf16(&self.lines[prev], self.lines[prev].chars().count());
                    let rest = self.lines.remove(line);
                    self.lines[prev].push_str(&rest);
                    json!({"range": {"start": {"line": prev, "character": prev_len}, "end": pos},
                        "text": ""})
                } else if at > 0 {
                    let from = utf16(&self.lines[line], at - 1);
                    self.splice(line, at - 1, at, "");
                    json!({"range": {"start": {"line": line, "character": from}, "end": pos},
                        "text": ""})
                } else {
                    self.insert(line, at, pos, "q")
                }
            }
            3 => self.insert(line, at, pos, "\n    "),
            // A paste over a few characters.
            4 => {
                let chars = self.lines[line].chars().count();
                let to = (at + self.next(4)).min(chars);
                let end = utf16(&self.lines[line], to);
                self.splice(line, at, to, "pasted😀\nline");
                json!({"range": {"start": pos, "end": {"line": line, "character": end}},
                    "text": "pasted😀\nline"})
            }
            _ => {
                let c = ALPHABET[self.next(ALPHABET.len())].to_string();
                self.insert(line, at, pos, &c)
            }
        }
    }

    fn insert(&mut self, line: usize, at: usize, pos: Value, text: &str) -> Value {
        self.splice(line, at, at, text);
        json!({"range": {"start": pos.clone(), "end": pos}, "text": text})
    }
}

/// The UTF-16 length of the first `chars` characters of `s`.
fn utf16(s: &str, chars: usize) -> usize {
    s.chars().take(chars).map(char::len_utf16).sum()
}

/// The byte offset of char index `chars` in `s`.
fn byte(s: &str, chars: usize) -> usize {
    s.char_indices().nth(chars).map_or(s.len(), |(i, _)| i)
}
