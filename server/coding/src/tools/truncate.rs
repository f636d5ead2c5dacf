//! Output limits shared by the tools (pi's rules): at most 2000 lines or 50 KB, whichever comes
//! first. Reads and listings keep the head; command output keeps the tail.

/// Line limit.
pub const DEFAULT_MAX_LINES: usize = 2000;
/// Byte limit (50 KB).
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
/// Longest grep match line, in characters.
pub const GREP_MAX_LINE_LENGTH: usize = 500;
/// pi's "no line limit" for listings cut by bytes only (JavaScript's `MAX_SAFE_INTEGER`).
pub const NO_LINE_LIMIT: usize = 9_007_199_254_740_991;

/// Which limit cut the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TruncatedBy {
    /// The line limit.
    Lines,
    /// The byte limit.
    Bytes,
}

/// What was kept and what was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    /// The kept text.
    pub content: String,
    /// `None` when nothing was cut.
    pub truncated_by: Option<TruncatedBy>,
    /// Lines in the input (`split('\n')` count).
    pub total_lines: usize,
    /// Bytes in the input.
    pub total_bytes: usize,
    /// Lines kept.
    pub output_lines: usize,
    /// Bytes kept.
    pub output_bytes: usize,
    /// The single kept line is the cut end of a longer line (tail only).
    pub last_line_partial: bool,
    /// The first line alone exceeds the byte limit (head only; nothing is kept).
    pub first_line_exceeds_limit: bool,
}

impl Truncation {
    /// pi's `details.truncation` object (its `TruncationResult`), key for key, for the limits
    /// that were applied.
    pub fn details(&self, max_lines: usize, max_bytes: usize) -> serde_json::Value {
        serde_json::json!({
            "content": self.content,
            "truncated": self.truncated(),
            "truncatedBy": match self.truncated_by {
                Some(TruncatedBy::Lines) => serde_json::json!("lines"),
                Some(TruncatedBy::Bytes) => serde_json::json!("bytes"),
                None => serde_json::Value::Null,
            },
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": max_lines,
            "maxBytes": max_bytes,
        })
    }

    /// True when something was cut.
    pub fn truncated(&self) -> bool {
        self.truncated_by.is_some()
    }

    fn whole(content: &str, total_lines: usize) -> Self {
        Truncation {
            content: content.to_string(),
            truncated_by: None,
            total_lines,
            total_bytes: content.len(),
            output_lines: total_lines,
            output_bytes: content.len(),
            last_line_partial: false,
            first_line_exceeds_limit: false,
        }
    }
}

/// `12B`, `3.4KB`, `1.2MB`, as pi formats sizes.
pub fn format_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1}MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// Keeps the first lines within the limits (never a partial line).
pub fn truncate_head(content: &str, max_lines: usize, max_bytes: usize) -> Truncation {
    let total_lines = content.split('\n').count();
    if total_lines <= max_lines && content.len() <= max_bytes {
        return Truncation::whole(content, total_lines);
    }
    let first = content.split('\n').next().unwrap_or("");
    if first.len() > max_bytes {
        return Truncation {
            content: String::new(),
            truncated_by: Some(TruncatedBy::Bytes),
            total_lines,
            total_bytes: content.len(),
            output_lines: 0,
            output_bytes: 0,
            last_line_partial: false,
            first_line_exceeds_limit: true,
        };
    }
    let mut end = 0usize;
    let mut lines = 0usize;
    let mut by = TruncatedBy::Lines;
    for (i, line) in content.split('\n').enumerate() {
        if i >= max_lines {
            break;
        }
        let add = line.len() + usize::from(i > 0);
        if end + add > max_bytes {
            by = TruncatedBy::Bytes;
            break;
        }
        end += add;
        lines += 1;
    }
    if lines >= max_lines && end <= max_bytes {
        by = TruncatedBy::Lines;
    }
    let kept = &content[..end];
    Truncation {
        content: kept.to_string(),
        truncated_by: Some(by),
        total_lines,
        total_bytes: content.len(),
        output_lines: lines,
        output_bytes: kept.len(),
        last_line_partial: false,
        first_line_exceeds_limit: false,
    }
}

/// Keeps the last lines within the limits; a single overlong last line keeps its end.
pub fn truncate_tail(content: &str, max_lines: usize, max_bytes: usize) -> Truncation {
    let total_lines = content.split('\n').count();
    if total_lines <= max_lines && content.len() <= max_bytes {
        return Truncation::whole(content, total_lines);
    }
    let mut start = content.len();
    let mut lines = 0usize;
    let mut by = TruncatedBy::Lines;
    let mut partial: Option<String> = None;
    for line in content.rsplit('\n') {
        if lines >= max_lines {
            break;
        }
        let add = line.len() + usize::from(lines > 0);
        let used = content.len() - start;
        if used + add > max_bytes {
            by = TruncatedBy::Bytes;
            if lines == 0 {
                partial = Some(tail_bytes(line, max_bytes).to_string());
            }
            break;
        }
        start -= add;
        lines += 1;
    }
    let (kept, lines, last_line_partial) = match partial {
        Some(p) => (p, 1, true),
        None => (content[start..].to_string(), lines, false),
    };
    if lines >= max_lines && kept.len() <= max_bytes {
        by = TruncatedBy::Lines;
    }
    Truncation {
        output_bytes: kept.len(),
        content: kept,
        truncated_by: Some(by),
        total_lines,
        total_bytes: content.len(),
        output_lines: lines,
        last_line_partial,
        first_line_exceeds_limit: false,
    }
}

/// The last `max_bytes` bytes of `s`, starting on a character boundary.
fn tail_bytes(s: &str, max_bytes: usize) -> &str {
    if s.len() <= max_bytes {
        return s;
    }
    let mut start = s.len() - max_bytes;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// Cuts a line to `max_chars` characters, marking the cut with `... [truncated]`.
pub fn truncate_line(line: &str, max_chars: usize) -> (String, bool) {
    match line.char_indices().nth(max_chars) {
        None => (line.to_string(), false),
        Some((end, _)) => (format!("{}... [truncated]", &line[..end]), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_stops_at_whichever_limit_comes_first() {
        let text = (1..=10)
            .map(|i| format!("line{i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let t = truncate_head(&text, 3, 1000);
        assert_eq!(t.content, "line1\nline2\nline3");
        assert_eq!(
            (t.truncated_by, t.total_lines, t.output_lines),
            (Some(TruncatedBy::Lines), 10, 3)
        );
        let t = truncate_head(&text, 100, 12);
        assert_eq!(t.content, "line1\nline2");
        assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
        let t = truncate_head(&"x".repeat(20), 100, 10);
        assert!(t.first_line_exceeds_limit);
        assert_eq!(t.content, "");
        assert!(!truncate_head("a\nb", 2, 10).truncated());
    }

    #[test]
    fn tail_keeps_the_end_and_cuts_an_overlong_last_line_on_a_char_boundary() {
        let text = (1..=10)
            .map(|i| format!("line{i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let t = truncate_tail(&text, 2, 1000);
        assert_eq!(t.content, "line9\nline10");
        assert_eq!(t.output_lines, 2);
        let t = truncate_tail("short\néééééé", 100, 5);
        assert!(t.last_line_partial);
        assert_eq!(t.content, "éé");
        assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
    }

    #[test]
    fn sizes_and_lines_format_like_pi() {
        assert_eq!(format_size(512), "512B");
        assert_eq!(format_size(51200), "50.0KB");
        assert_eq!(format_size(3 * 1024 * 1024 + 1), "3.0MB");
        assert_eq!(
            truncate_line("abcdef", 3),
            ("abc... [truncated]".to_string(), true)
        );
        assert_eq!(truncate_line("abc", 3), ("abc".to_string(), false));
    }
}
