//! pi's fuzzy normalization of text, with a map from the normalized text back to the original
//! bytes.
//!
//! Models often retype a line with straight quotes where the file has curly ones, drop trailing
//! spaces, or write `-` for an en dash. pi forgives that by comparing both sides after a
//! normalization (NFKC, trailing whitespace per line, smart quotes, Unicode dashes, special
//! spaces) — and then writes the *normalized* file back, silently rewriting every other line too.
//! Tandem keeps a map from the normalized text back to the original ([`Normalized`]), so a fuzzy
//! match replaces only the bytes it covers and the rest of the file stays byte for byte; that is
//! also what an editor needs to apply the change as a minimal edit.
//!
//! The map is built by hand: `unicode-normalization` does the NFKC but does not say where each
//! output byte came from. So the text is cut into units NFKC cannot merge across, each unit is
//! normalized on its own, and a segment records which original bytes it stands for.

use std::ops::Range;

use unicode_normalization::char::{canonical_combining_class, compose, decompose_compatible};
use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};

/// One stretch of the normalized text and the original bytes it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Segment {
    orig_start: usize,
    orig_end: usize,
    norm_start: usize,
    norm_end: usize,
    /// The normalized bytes equal the original ones, so every offset inside maps exactly.
    /// Otherwise only the two ends do (an NFKC change, a substitution, trimmed whitespace).
    copied: bool,
}

/// A normalized range mapped back to the original text. When the match began or ended inside
/// a changed piece, the range covers the whole piece and `prefix` / `suffix` hold the normalized
/// text of the unmatched part, to be put back around the replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mapped {
    /// The original byte range.
    pub range: Range<usize>,
    /// Goes before the replacement.
    pub prefix: String,
    /// Goes after the replacement.
    pub suffix: String,
}

/// Text after pi's fuzzy normalization, with the way back to the original.
#[derive(Debug, Clone)]
pub(crate) struct Normalized {
    text: String,
    segments: Vec<Segment>,
    orig_len: usize,
}

impl Normalized {
    /// Normalizes `original`: NFKC, trailing whitespace removed from every line, smart quotes,
    /// Unicode dashes and special spaces replaced by their ASCII forms.
    pub(crate) fn new(original: &str) -> Self {
        let mut builder = Builder {
            src: original,
            out: Normalized {
                text: String::with_capacity(original.len()),
                segments: Vec::new(),
                orig_len: original.len(),
            },
            pending: Vec::new(),
        };
        builder.run();
        builder.out
    }

    /// The normalized text.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// The normalized text, without the map.
    pub(crate) fn into_string(self) -> String {
        self.text
    }

    /// Maps a range of the normalized text back to the original. Whitespace the normalization
    /// dropped at either end of the range stays outside it.
    pub(crate) fn to_original(&self, range: Range<usize>) -> Mapped {
        let segs = &self.segments;
        if range.is_empty() {
            return self.insertion_point(range.start);
        }
        let (start, prefix) = match segs.get(segs.partition_point(|s| s.norm_end <= range.start)) {
            Some(s) if s.copied => (s.orig_start + (range.start - s.norm_start), ""),
            Some(s) => (s.orig_start, &self.text[s.norm_start..range.start]),
            None => (self.orig_len, ""),
        };
        let last = segs.partition_point(|s| s.norm_start < range.end);
        let (end, suffix) = match last.checked_sub(1).map(|i| &segs[i]) {
            Some(s) if s.copied => (s.orig_start + (range.end - s.norm_start), ""),
            Some(s) => (s.orig_end, &self.text[range.end..s.norm_end]),
            None => (0, ""),
        };
        Mapped {
            range: start..end.max(start),
            prefix: prefix.to_string(),
            suffix: suffix.to_string(),
        }
    }
}

impl Normalized {
    /// Maps an empty range: right after the text before it.
    fn insertion_point(&self, at: usize) -> Mapped {
        let segs = &self.segments;
        let before = segs.partition_point(|s| s.norm_start < at).checked_sub(1);
        let (range, prefix, suffix) = match before.map(|i| &segs[i]) {
            None => (0..0, "", ""),
            Some(s) if s.copied => {
                let p = s.orig_start + (at - s.norm_start);
                (p..p, "", "")
            }
            Some(s) if at == s.norm_end => (s.orig_end..s.orig_end, "", ""),
            Some(s) => (
                s.orig_start..s.orig_end,
                &self.text[s.norm_start..at],
                &self.text[at..s.norm_end],
            ),
        };
        Mapped {
            range,
            prefix: prefix.to_string(),
            suffix: suffix.to_string(),
        }
    }
}

/// Builds a [`Normalized`] in one pass. Whitespace is held back until the line shows whether it
/// is trailing (dropped) or not (kept).
struct Builder<'a> {
    src: &'a str,
    out: Normalized,
    /// Blank pieces since the last visible character of the line: original range and
    /// normalized text (`None` when unchanged).
    pending: Vec<(Range<usize>, Option<String>)>,
}

impl Builder<'_> {
    fn run(&mut self) {
        let bytes = self.src.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            let end = ascii_run(bytes, at);
            if end == at {
                let end = piece_end(self.src, at);
                self.piece(at..end);
                at = end;
                continue;
            }
            // Blanks inside the run stay; blanks at its end wait for what follows.
            let visible = end
                - bytes[at..end]
                    .iter()
                    .rev()
                    .take_while(|b| is_ascii_blank(**b))
                    .count();
            if visible > at {
                self.flush();
                self.copy(at..visible);
            }
            if end > visible {
                self.hold(visible..end, None);
            }
            at = end;
        }
        self.drop_pending();
    }

    /// One normalization unit: a character with the marks that combine with it.
    fn piece(&mut self, orig: Range<usize>) {
        let chunk = &self.src[orig.clone()];
        if chunk == "\n" {
            self.drop_pending();
            self.copy(orig);
            return;
        }
        let normalized = normalize_piece(chunk);
        let shown = normalized.as_deref().unwrap_or(chunk);
        if shown.chars().all(is_trim_whitespace) {
            self.hold(orig, normalized);
            return;
        }
        self.flush();
        match normalized {
            None => self.copy(orig),
            Some(text) => self.replace(orig, &text),
        }
    }

    fn hold(&mut self, orig: Range<usize>, normalized: Option<String>) {
        if normalized.is_none() {
            if let Some((last, None)) = self.pending.last_mut() {
                if last.end == orig.start {
                    last.end = orig.end;
                    return;
                }
            }
        }
        self.pending.push((orig, normalized));
    }

    /// The held whitespace is not trailing: keep it.
    fn flush(&mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        for (orig, normalized) in pending.drain(..) {
            match normalized {
                None => self.copy(orig),
                Some(text) => self.replace(orig, &text),
            }
        }
        self.pending = pending;
    }

    /// The held whitespace ends a line: drop it.
    fn drop_pending(&mut self) {
        if let (Some(first), Some(last)) = (self.pending.first(), self.pending.last()) {
            let at = self.out.text.len();
            self.out.segments.push(Segment {
                orig_start: first.0.start,
                orig_end: last.0.end,
                norm_start: at,
                norm_end: at,
                copied: false,
            });
        }
        self.pending.clear();
    }

    fn copy(&mut self, orig: Range<usize>) {
        let norm_start = self.out.text.len();
        self.out.text.push_str(&self.src[orig.clone()]);
        let norm_end = self.out.text.len();
        if let Some(last) = self.out.segments.last_mut() {
            if last.copied && last.orig_end == orig.start && last.norm_end == norm_start {
                last.orig_end = orig.end;
                last.norm_end = norm_end;
                return;
            }
        }
        self.out.segments.push(Segment {
            orig_start: orig.start,
            orig_end: orig.end,
            norm_start,
            norm_end,
            copied: true,
        });
    }

    fn replace(&mut self, orig: Range<usize>, text: &str) {
        let norm_start = self.out.text.len();
        self.out.text.push_str(text);
        self.out.segments.push(Segment {
            orig_start: orig.start,
            orig_end: orig.end,
            norm_start,
            norm_end: self.out.text.len(),
            copied: false,
        });
    }
}

/// The end of the run of ASCII characters other than newline starting at `start`, stopping
/// before one that a following non-ASCII character might combine with. Normalization leaves
/// such a run as it is, except for blanks at the end of a line.
fn ascii_run(bytes: &[u8], start: usize) -> usize {
    let mut at = start;
    while at < bytes.len() && bytes[at].is_ascii() && bytes[at] != b'\n' {
        if bytes.get(at + 1).is_some_and(|next| !next.is_ascii()) {
            break;
        }
        at += 1;
    }
    at
}

/// The end of the normalization unit starting at `start`: the character plus every following
/// character NFKC could merge into it (combining marks, Hangul jamo and the like). A newline
/// always stands alone, since lines are trimmed separately.
fn piece_end(src: &str, start: usize) -> usize {
    let mut chars = src[start..].chars();
    let Some(first) = chars.next() else {
        return start;
    };
    let mut end = start + first.len_utf8();
    if first == '\n' {
        return end;
    }
    // What the piece composes to so far, to see whether the next character joins it.
    let mut composed = std::iter::once(first).nfkc().last().unwrap_or(first);
    for c in chars {
        if c == '\n' {
            break;
        }
        // Judge by what NFKC sees: the first character of the compatibility decomposition
        // (a halfwidth voiced mark, for one, decomposes to a combining mark).
        let lead = decomposition_lead(c);
        match compose(composed, lead) {
            Some(joined) => composed = joined,
            None if canonical_combining_class(lead) != 0 => {}
            None => break,
        }
        end += c.len_utf8();
    }
    end
}

/// The first character of `c`'s compatibility decomposition (`c` itself when it has none).
fn decomposition_lead(c: char) -> char {
    let mut lead = None;
    decompose_compatible(c, |d| {
        lead.get_or_insert(d);
    });
    lead.unwrap_or(c)
}

/// NFKC plus pi's substitutions; `None` when the piece does not change.
fn normalize_piece(chunk: &str) -> Option<String> {
    let stable = is_nfkc_quick(chunk.chars()) == IsNormalized::Yes
        && chunk.chars().all(|c| substitute(c) == c);
    if stable {
        return None;
    }
    let normalized: String = chunk.nfkc().map(substitute).collect();
    (normalized != chunk).then_some(normalized)
}

/// Smart quotes, Unicode dashes and special spaces to their ASCII forms.
fn substitute(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        c => c,
    }
}

/// What JavaScript's `trimEnd` removes (newlines aside: lines are split on them first).
fn is_trim_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\u{B}' | '\u{C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

fn is_ascii_blank(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | 0x0B | 0x0C)
}
