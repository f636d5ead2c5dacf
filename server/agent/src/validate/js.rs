//! JavaScript's formatting rules (key order, number printing, regex classes), so error texts
//! match what pi prints.

use serde_json::{Map, Number, Value};

/// JavaScript's `Number(string)`; `None` where it gives `NaN`.
pub(super) fn to_number(s: &str) -> Option<f64> {
    let t = s.trim_matches(|c: char| c == '\u{feff}' || (c.is_whitespace() && c != '\u{85}'));
    if t.is_empty() {
        return Some(0.0);
    }
    let radix = match t.get(..2).map(str::to_ascii_lowercase).as_deref() {
        Some("0x") => 16,
        Some("0o") => 8,
        Some("0b") => 2,
        _ => 10,
    };
    if radix != 10 {
        let digits = &t[2..];
        let value = digits.chars().try_fold(0f64, |acc, c| {
            Some(acc * f64::from(radix) + f64::from(c.to_digit(radix)?))
        });
        return value.filter(|_| !digits.is_empty());
    }
    // "Infinity" is a number in JS but has no JSON form, so it is left NaN (a type error) here.
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let mantissa_ok = mantissa.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && mantissa.bytes().filter(|b| *b == b'.').count() <= 1
        && mantissa.bytes().any(|b| b.is_ascii_digit());
    let exponent_ok = exponent
        .map(|e| e.strip_prefix(['+', '-']).unwrap_or(e))
        .is_none_or(|e| !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit()));
    if mantissa_ok && exponent_ok {
        t.parse().ok()
    } else {
        None
    }
}

/// fast-deep-equal as AJV uses it for `const` and `enum`: numbers by value, keys in any order.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// An object's keys in JavaScript order: array-index keys ascending, then the rest as inserted.
pub(super) fn keys(map: &Map<String, Value>) -> Vec<&String> {
    let index = |k: &str| {
        let canonical = k == "0"
            || (!k.starts_with('0') && !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()));
        k.parse::<u32>().ok().filter(|i| canonical && *i < u32::MAX)
    };
    let mut indexed: Vec<(u32, &String)> =
        map.keys().filter_map(|k| Some((index(k)?, k))).collect();
    indexed.sort_unstable();
    indexed
        .into_iter()
        .map(|(_, k)| k)
        .chain(map.keys().filter(|k| index(k).is_none()))
        .collect()
}

/// `JSON.stringify(value, null, 2)` at the given indentation.
pub(super) fn stringify(value: &Value, indent: usize) -> String {
    let pad = " ".repeat(indent + 2);
    let close = " ".repeat(indent);
    match value {
        Value::Number(n) => number_text(n),
        Value::Array(items) if !items.is_empty() => {
            let inner: Vec<String> = items
                .iter()
                .map(|v| format!("{pad}{}", stringify(v, indent + 2)))
                .collect();
            format!("[\n{}\n{close}]", inner.join(",\n"))
        }
        Value::Object(map) if !map.is_empty() => {
            let inner: Vec<String> = keys(map)
                .into_iter()
                .map(|k| {
                    format!(
                        "{pad}{}: {}",
                        Value::from(k.as_str()),
                        stringify(&map[k.as_str()], indent + 2)
                    )
                })
                .collect();
            format!("{{\n{}\n{close}}}", inner.join(",\n"))
        }
        other => other.to_string(), // null, booleans, strings, `[]` and `{}` print as in JS
    }
}

/// A JSON number as JavaScript's `String(number)` prints it.
pub(super) fn number_text(n: &Number) -> String {
    n.as_f64().map_or_else(|| n.to_string(), number)
}

/// JavaScript's Number-to-String for finite numbers: shortest round-trip digits, exponent form
/// outside 1e-7..1e21.
pub(super) fn number(x: f64) -> String {
    if x == 0.0 {
        return "0".to_owned(); // also -0, as JS prints it
    }
    let scientific = format!("{:e}", x.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits = mantissa.replace('.', "");
    let (k, n) = (
        digits.len() as i32,
        exponent.parse::<i32>().unwrap_or(0) + 1,
    );
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat(-n as usize))
    } else {
        let fraction = if k > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        format!(
            "{}{fraction}e{}{}",
            &digits[..1],
            if n > 0 { "+" } else { "-" },
            (n - 1).abs()
        )
    };
    if x < 0.0 {
        format!("-{body}")
    } else {
        body
    }
}

/// Rewrites the JS `u`-mode escapes whose meaning differs in the regex crate: `\d`, `\w`, `\b` are
/// ASCII-only in JS, and `[`, `&`, `~` are literal inside a JS class but special in a Rust one.
pub(super) fn regex_source(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('d') => out.push_str("[0-9]"),
                Some('D') => out.push_str("[^0-9]"),
                Some('w') => out.push_str("[0-9A-Za-z_]"),
                Some('W') => out.push_str("[^0-9A-Za-z_]"),
                Some('b') if in_class => out.push_str("\\x08"),
                Some('b') => out.push_str("(?-u:\\b)"),
                Some('B') => out.push_str("(?-u:\\B)"),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                out.push(c);
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            '[' | '&' | '~' if in_class => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}
