//! Arguments of a `/template args` command and their substitution into the template, with pi's
//! rules (a small bash-like language; pi's tests pin the edge cases reproduced below).
//!
//! Splitting: spaces and tabs separate arguments; `"` or `'` quote (the quotes are dropped, no
//! escapes); empty arguments vanish, so `""` gives nothing.
//!
//! Placeholders: `$1`, `$2`, … (1-based; missing ones and `$0` become empty), `$@` and
//! `$ARGUMENTS` (all arguments joined by spaces), `${@:N}` (arguments from the N-th on) and
//! `${@:N:L}` (L arguments from the N-th; N = 0 counts as 1). Anything else after `$` stays.
//!
//! The template is scanned once, left to right, so an argument that itself looks like a
//! placeholder is never expanded again. (pi substitutes in several passes and would expand,
//! say, a `$@` inside a `$1` value; its tests and comments state the single-substitution intent
//! this follows.)

/// Splits a command's argument text like pi's `parseCommandArgs`.
pub fn parse_command_args(text: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == ' ' || c == '\t' => {
                if !current.is_empty() {
                    args.push(std::mem::take(&mut current));
                }
            }
            None => current.push(c),
        }
    }
    if !current.is_empty() {
        args.push(current);
    }
    args
}

/// Fills the placeholders of `template` with `args`.
pub fn substitute_args(template: &str, args: &[String]) -> String {
    let all = args.join(" ");
    let mut out = String::with_capacity(template.len() + all.len());
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (replacement, used) = placeholder(after, args, &all);
        match replacement {
            Some(text) => {
                out.push_str(&text);
                rest = &after[used..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The expansion of the placeholder at the start of `after` (the text following a `$`) and
/// how many bytes of `after` it spans; `None` when no placeholder starts there.
fn placeholder(after: &str, args: &[String], all: &str) -> (Option<String>, usize) {
    let digits = leading_digits(after);
    if !digits.is_empty() {
        let value = index(digits)
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| args.get(i))
            .cloned()
            .unwrap_or_default();
        return (Some(value), digits.len());
    }
    if let Some(body) = after.strip_prefix("{@:") {
        if let Some((value, used)) = slice(body, args) {
            return (Some(value), 3 + used);
        }
    }
    if after.starts_with("ARGUMENTS") {
        return (Some(all.to_string()), "ARGUMENTS".len());
    }
    if after.starts_with('@') {
        return (Some(all.to_string()), 1);
    }
    (None, 0)
}

/// `N}` or `N:L}` at the start of `body`: the selected arguments and the bytes used.
fn slice(body: &str, args: &[String]) -> Option<(String, usize)> {
    let start_digits = leading_digits(body);
    if start_digits.is_empty() {
        return None;
    }
    let mut used = start_digits.len();
    let mut length = None;
    if let Some(tail) = body[used..].strip_prefix(':') {
        let length_digits = leading_digits(tail);
        if length_digits.is_empty() {
            return None;
        }
        used += 1 + length_digits.len();
        length = Some(index(length_digits).unwrap_or(usize::MAX));
    }
    if !body[used..].starts_with('}') {
        return None;
    }
    used += 1;
    let start = index(start_digits).unwrap_or(usize::MAX).saturating_sub(1);
    let end = match length {
        Some(l) => start.saturating_add(l),
        None => usize::MAX,
    };
    let selected: Vec<&str> = args
        .iter()
        .take(end)
        .skip(start)
        .map(String::as_str)
        .collect();
    Some((selected.join(" "), used))
}

fn leading_digits(text: &str) -> &str {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    &text[..end]
}

/// A digit string as a number; `None` when too large (then nothing is selected).
fn index(digits: &str) -> Option<usize> {
    digits.parse().ok()
}

#[cfg(test)]
#[path = "template_args_tests.rs"]
mod tests;
