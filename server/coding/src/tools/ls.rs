//! The `ls` tool: one directory's entries, sorted case-insensitively, dotfiles included, `/`
//! after directories, at most `limit` entries (500) and 50 KB, with pi's notices and errors.
//!
//! Like pi, entries are stat'ed through symlinks: a link to a directory shows as `name/`, a
//! dangling link (or anything that cannot be stat'ed) is left out. The listing comes from disk,
//! plus the documents open in the editor that were never saved (see `buffers.rs`): such a
//! document shows as a file, or as the folder holding it when that folder does not exist yet.
//!
//! The order is pi's: lower-cased names compared with JavaScript's `localeCompare`, which is
//! ICU's root collation (whitespace, then punctuation and symbols in ICU's order, then digits,
//! then letters, accents only breaking ties), and ties in `readdir`'s byte order. No collation
//! crate is among the dependencies and a filename needs little of ICU, so the key below is
//! written by hand: tables for whitespace, punctuation and currency, NFKD folding, accents and
//! letter variants as a second level, compatibility forms as a third, other scripts by code
//! point. It matched Node's order on thousands of random names of ASCII, accented Latin and
//! common symbols; rare third-level ties (`¹` against `１`) may differ.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Map, Value};
use tandem_agent::{AgentTool, BoxFuture, ToolError, ToolInvocation, ToolOutput};
use tokio_util::sync::CancellationToken;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

use super::aborted;
use super::args::{parse, LsArgs};
use super::buffers::Buffers;
use super::truncate::{format_size, truncate_head, DEFAULT_MAX_BYTES, NO_LINE_LIMIT};
use crate::env::ToolEnv;
use crate::paths::Access;

/// Entries listed when the call gives no limit.
const DEFAULT_LIMIT: usize = 500;
const DESCRIPTION: &str = "List a directory. Entries are sorted alphabetically (ignoring case), \
directories end with '/', and dotfiles are included. At most 500 entries (change with limit) \
or 50KB are returned, whichever comes first.";

/// The `ls` tool.
pub struct LsTool {
    env: Arc<ToolEnv>,
    schema: Value,
}

impl LsTool {
    /// The tool over `env`.
    pub fn new(env: Arc<ToolEnv>) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory to list (default: the working directory)"},
                "limit": {"type": "number", "description": "Most entries to return (default: 500)"},
            },
        });
        LsTool { env, schema }
    }

    async fn run(&self, call: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let LsArgs { path, limit } = parse("ls", call.args.clone())?;
        let path = path.filter(|p| !p.is_empty());
        let path = path.as_deref().unwrap_or(".");
        // Unlike pi (which answers "(empty directory)" for limit 0), list at least one entry.
        let limit = match limit {
            Some(l) if l >= 1.0 => l.ceil() as usize,
            Some(_) => 1,
            None => DEFAULT_LIMIT,
        };
        if call.cancel.is_cancelled() {
            return Err(aborted());
        }
        let dir = self
            .env
            .resolve(&call.call_id, path, Access::Read)
            .await?
            .absolute;
        let cancel = call.cancel.clone();
        let buffers = Buffers::of(&self.env);
        let listing = tokio::task::spawn_blocking(move || {
            let unsaved = buffers.new_under(&dir);
            list(&dir, &unsaved, limit, &cancel)
        })
        .await
        .map_err(|e| ToolError::new(format!("Listing the directory failed: {e}")))??;
        Ok(render(&listing, limit))
    }
}

impl AgentTool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(&self, call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(self.run(call))
    }
}

/// The entries to show.
#[derive(Debug, PartialEq, Eq)]
struct Listing {
    /// Names in order, directories with a `/` suffix.
    entries: Vec<String>,
    /// More entries were left out because of the limit.
    limit_reached: bool,
}

/// Reads, sorts and stats the entries of `dir` (blocking), with the entries that `unsaved`
/// (open documents under `dir` not on disk) add.
fn list(
    dir: &Path,
    unsaved: &[PathBuf],
    limit: usize,
    cancel: &CancellationToken,
) -> Result<Listing, ToolError> {
    let shown = dir.display();
    let on_disk = match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => true,
        // A folder that only unsaved documents hold so far.
        Err(_) if unsaved.iter().any(|p| p != dir) => false,
        Ok(_) => return Err(ToolError::new(format!("Not a directory: {shown}"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::new(format!("Path not found: {shown}")))
        }
        Err(e) => return Err(ToolError::new(format!("Cannot access {shown}: {e}"))),
    };
    let cannot_read =
        |e: std::io::Error| ToolError::new(format!("Cannot read directory: {shown}: {e}"));
    // (shown name, raw name, whether an unsaved document makes it a folder (`Some(true)`) or a
    // file (`Some(false)`); `None` for what is on disk).
    let mut names: Vec<(String, OsString, Option<bool>)> = Vec::new();
    let on_disk = if on_disk {
        std::fs::read_dir(dir).map_err(cannot_read)?.collect()
    } else {
        Vec::new()
    };
    for entry in on_disk {
        if cancel.is_cancelled() {
            return Err(aborted());
        }
        let raw = entry.map_err(cannot_read)?.file_name();
        names.push((raw.to_string_lossy().into_owned(), raw, None));
    }
    for path in unsaved {
        let mut parts = path
            .strip_prefix(dir)
            .into_iter()
            .flat_map(Path::components);
        let Some(first) = parts.next() else {
            continue;
        };
        let raw = first.as_os_str().to_os_string();
        if !names.iter().any(|(_, seen, _)| *seen == raw) {
            let is_dir = parts.next().is_some();
            names.push((raw.to_string_lossy().into_owned(), raw, Some(is_dir)));
        }
    }
    names.sort_by_cached_key(|(name, raw, _)| {
        (collation_key(name), raw.as_encoded_bytes().to_vec())
    });
    let mut entries = Vec::new();
    let mut limit_reached = false;
    for (name, raw, unsaved) in names {
        if entries.len() >= limit {
            limit_reached = true;
            break;
        }
        if cancel.is_cancelled() {
            return Err(aborted());
        }
        if let Some(is_dir) = unsaved {
            entries.push(if is_dir { format!("{name}/") } else { name });
            continue;
        }
        let full: PathBuf = dir.join(raw);
        match std::fs::metadata(&full) {
            Ok(meta) if meta.is_dir() => entries.push(format!("{name}/")),
            Ok(_) => entries.push(name),
            Err(_) => continue,
        }
    }
    Ok(Listing {
        entries,
        limit_reached,
    })
}

/// The result text and details, with pi's notices.
fn render(listing: &Listing, limit: usize) -> ToolOutput {
    if listing.entries.is_empty() {
        return ToolOutput::text("(empty directory)");
    }
    let t = truncate_head(&listing.entries.join("\n"), usize::MAX, DEFAULT_MAX_BYTES);
    let mut notices = Vec::new();
    let mut details = Map::new();
    if listing.limit_reached {
        notices.push(format!(
            "{limit} entries limit reached. Use limit={} for more",
            limit.saturating_mul(2)
        ));
        details.insert("entryLimitReached".into(), json!(limit));
    }
    if t.truncated() {
        notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
        details.insert(
            "truncation".into(),
            t.details(NO_LINE_LIMIT, DEFAULT_MAX_BYTES),
        );
    }
    let mut text = t.content.clone();
    if !notices.is_empty() {
        text.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    let output = ToolOutput::text(text);
    if details.is_empty() {
        output
    } else {
        output.with_details(Value::Object(details))
    }
}

/// First-level groups of the collation, in ICU's order.
const SPACE: u32 = 1;
const PUNCTUATION: u32 = 2;
const OTHER_SYMBOL: u32 = 3;
const CURRENCY: u32 = 4;
const DIGIT: u32 = 5;
const LETTER: u32 = 6;
const OTHER_LETTER: u32 = 7;

/// Whitespace, then punctuation and symbols (ASCII and common others), then currency signs,
/// each in ICU root order (printed by Node); other symbols go between the last two. Characters
/// sharing an entry differ only at the second level (`'` and `’`).
const SPACE_ORDER: [&str; 6] = ["\t", "\n", "\u{b}", "\u{c}", "\r", " "];
#[rustfmt::skip]
const PUNCTUATION_ORDER: [&str; 89] = [
    "_", "-", "‐‑", "‒", "–", "—", "―", "〜", "・", ",", "、", ";", ":", "!", "¡", "?", "¿", ".",
    "。", "·", "'‘’‚‛", "‹", "›", "\"“”„‟", "«", "»", "(", ")", "[", "]", "{", "}", "「", "」",
    "『", "』", "【", "】", "§", "¶", "@", "*", "/", "\\", "&", "#", "%", "‰", "†", "‡", "•", "′",
    "″", "※", "`", "´", "^", "¯", "¨", "¸", "°", "©", "®", "←", "→", "↑", "↓", "+", "±", "÷",
    "×", "<", "=", ">", "¬", "|", "¦", "~", "■", "□", "▪", "◆", "◇", "○", "●", "★", "☆", "♥",
    "✓",
];
const CURRENCY_ORDER: [&str; 6] = ["¤", "¢", "$", "£", "¥", "€"];
/// First code points of decimal digit runs outside ASCII (Arabic-Indic, extended, Devanagari,
/// Bengali); their digits weigh like ASCII ones.
const DIGIT_RUNS: [u32; 4] = [0x0660, 0x06F0, 0x0966, 0x09E6];
/// Stand-ins for the second-level weight of letters with a stroke (ø, đ, ł) and of other
/// letter variants (ð, ı), which have no decomposition.
const STROKE: u32 = 0x0335;
const VARIANT: u32 = 0x10FFFF;
/// Accents (combining marks) in ICU's second-level order; unlisted marks come after.
const ACCENTS: [u32; 18] = [
    0x301, 0x300, 0x306, 0x302, 0x30C, 0x30A, 0x308, 0x30B, 0x303, 0x307, 0x327, STROKE, 0x328,
    0x304, 0x309, 0x323, 0x325, VARIANT,
];

fn accent_rank(mark: u32) -> u32 {
    ACCENTS
        .iter()
        .position(|&m| m == mark)
        .map_or(32 + mark, |i| i as u32 + 1)
}

/// Latin letters that sort as other letters with a second-level difference on the last one.
fn special_letter(c: char) -> Option<(&'static str, u32)> {
    Some(match c {
        'ß' => ("ss", VARIANT),
        'æ' => ("ae", VARIANT),
        'œ' => ("oe", VARIANT),
        'ø' => ("o", STROKE),
        'đ' => ("d", STROKE),
        'ł' => ("l", STROKE),
        'ħ' => ("h", STROKE),
        'ŧ' => ("t", STROKE),
        'ð' => ("d", VARIANT),
        'ı' => ("i", VARIANT),
        _ => return None,
    })
}

/// A character's first- and second-level weights, when a table gives them (before any
/// decomposition: NFKD would turn `¨` into a space and a mark).
fn listed(c: char) -> Option<(u32, u32)> {
    if c.is_ascii_alphanumeric() {
        return None;
    }
    let find = |order: &[&str]| {
        order.iter().enumerate().find_map(|(i, entry)| {
            entry
                .chars()
                .position(|e| e == c)
                .map(|j| (i as u32, j as u32))
        })
    };
    let (group, (value, variant)) = if let Some(at) = find(&SPACE_ORDER) {
        (SPACE, at)
    } else if let Some(at) = find(&PUNCTUATION_ORDER) {
        (PUNCTUATION, at)
    } else if let Some(at) = find(&CURRENCY_ORDER) {
        (CURRENCY, at)
    } else {
        return None;
    };
    Some((group << 21 | value, variant))
}

/// A character's first-level weight and whether it is a third-level variant of another;
/// `None` for characters the collation ignores.
fn weigh(c: char) -> Option<(u32, bool)> {
    let cp = c as u32;
    if let Some((weight, _)) = listed(c) {
        return Some((weight, false));
    }
    let (group, value, variant) = if c.is_whitespace() {
        (SPACE, 16 + cp, false)
    } else if c.is_control() || matches!(cp, 0xAD | 0x200B..=0x200F | 0x2060..=0x2064 | 0xFEFF) {
        return None;
    } else if c.is_ascii_digit() {
        (DIGIT, cp - '0' as u32, false)
    } else if let Some(run) = DIGIT_RUNS.iter().find(|&&r| (r..r + 10).contains(&cp)) {
        (DIGIT, cp - run, true)
    } else if c.is_ascii_lowercase() {
        (LETTER, cp - 'a' as u32, false)
    } else if c.is_alphabetic() {
        (OTHER_LETTER, cp, false)
    } else if c.is_numeric() {
        (DIGIT, 16 + cp, false)
    } else {
        (OTHER_SYMBOL, cp, false)
    };
    Some((group << 21 | value, variant))
}

/// A sort key for `name` as pi compares names: first-level weights (base characters), then
/// second-level (accents), then third-level (compatibility forms such as ligatures or ß).
fn collation_key(name: &str) -> [Vec<u32>; 3] {
    let [mut first, mut second, mut third]: [Vec<u32>; 3] = Default::default();
    for c in name.to_lowercase().chars() {
        if let Some((weight, variant)) = listed(c) {
            first.push(weight);
            second.push(variant);
            third.push(0);
            continue;
        }
        let compat = !c.nfd().eq(c.nfkd());
        for d in c.nfkd().flat_map(char::to_lowercase) {
            if is_combining_mark(d) {
                if let Some(last) = second.last_mut() {
                    *last = (*last).max(accent_rank(d as u32));
                }
            } else if let Some((base, accent)) = special_letter(d) {
                let last = base.len() - 1;
                for (i, b) in base.chars().enumerate() {
                    first.push(LETTER << 21 | (b as u32 - 'a' as u32));
                    second.push(if i == last { accent_rank(accent) } else { 0 });
                    third.push(u32::from(compat));
                }
            } else if let Some((weight, variant)) = weigh(d) {
                first.push(weight);
                second.push(0);
                third.push(u32::from(compat || variant));
            }
        }
    }
    [first, second, third]
}

#[cfg(test)]
#[path = "ls_tests.rs"]
mod tests;
