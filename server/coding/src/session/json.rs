//! JSON lines written the way JavaScript's `JSON.stringify` writes them.
//!
//! A session file is shared with pi, so a line Tandem writes should read byte for byte like the
//! line pi would write for the same object. serde_json already agrees with `JSON.stringify` on
//! string escaping (the short escapes, `\u00xx` in lowercase for other control characters,
//! nothing else escaped) and on integers. It disagrees on floats: Rust prints `0.0` and `1e-7`
//! where JavaScript prints `0` and `1e-7`, and `1e21` where JavaScript prints `1e+21`. Costs in
//! [`tandem_ai::Usage`] are `f64`, so without this formatter every assistant line would differ
//! from pi's. [`JsFormatter`] prints floats by ECMAScript's `Number::toString` rules.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};

/// serde_json's compact formatter with JavaScript's number formatting for floats.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsFormatter;

impl Formatter for JsFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(js_number(value).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        CompactFormatter.write_f32(writer, value)
    }
}

/// Serializes `value` as one compact JSON line (no trailing newline) with JavaScript's number
/// formatting.
pub fn to_js_line<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_json::Error> {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, JsFormatter);
    value.serialize(&mut ser)?;
    // serde_json only ever writes valid UTF-8.
    String::from_utf8(out).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

/// A finite float as JavaScript prints it (`NaN` and infinities, which JSON cannot hold, as
/// `null`, like `JSON.stringify`).
pub fn js_number(value: f64) -> String {
    if !value.is_finite() {
        return "null".to_string();
    }
    if value == 0.0 {
        return "0".to_string(); // also -0, which JavaScript prints as 0
    }
    // Rust's `{:e}` gives the shortest digits that round-trip, as JavaScript requires.
    let sci = format!("{:e}", value.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if value < 0.0 { "-" } else { "" };
    format!("{sign}{}", place_point(&digits, exponent + 1))
}

/// ECMAScript's layout for significant `digits` whose decimal point sits after `n` of them.
fn place_point(digits: &str, n: i32) -> String {
    let k = digits.len() as i32;
    if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        let (int, frac) = digits.split_at(n as usize);
        format!("{int}.{frac}")
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let sign = if e < 0 { '-' } else { '+' };
        let (first, rest) = digits.split_at(1);
        if rest.is_empty() {
            format!("{first}e{sign}{}", e.abs())
        } else {
            format!("{first}.{rest}e{sign}{}", e.abs())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_like_javascript() {
        let cases = [
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (120.0, "120"),
            (0.5, "0.5"),
            (0.000123, "0.000123"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (123456.789, "123456.789"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (-2.25, "-2.25"),
            (0.1 + 0.2, "0.30000000000000004"),
            (f64::NAN, "null"),
        ];
        for (value, text) in cases {
            assert_eq!(js_number(value), text, "{value}");
        }
    }

    #[test]
    fn lines_keep_integers_and_escape_like_json_stringify() {
        let value = json!({"cost": 0.0, "n": 7, "s": "a\"b\\c\n\u{1}\u{7f}é/"});
        assert_eq!(
            to_js_line(&value).expect("serializes"),
            "{\"cost\":0,\"n\":7,\"s\":\"a\\\"b\\\\c\\n\\u0001\u{7f}é/\"}"
        );
    }
}
