//! Flags extensions register (`pi.registerFlag`): `--plan` or `--preset=fast` on the command
//! line. Tandem does not know them before the extensions load, so every long flag that is not
//! one of its own is set aside here, before the command line is parsed, and handed to the
//! extensions (`initialize`'s `flags`); one that no loaded extension registered is then an
//! error, as an unknown option is ([`unregistered`]).
//!
//! A flag's value is given as `--name=value`; a bare `--name` is `true` (a following word is
//! never taken as its value: it is a message, as it would be for a boolean flag).

use std::ffi::OsString;

use serde_json::Value;

/// Splits `args` into what clap parses and the extension flags, in order. `known` are the long
/// flag names (without `--`) of Tandem's own command line; nothing after `--` is a flag.
pub fn split(args: Vec<OsString>, known: &[String]) -> (Vec<OsString>, Vec<(String, Value)>) {
    let mut kept = Vec::with_capacity(args.len());
    let mut flags = Vec::new();
    let mut after_separator = false;
    for arg in args {
        after_separator |= arg == "--";
        let flag = arg
            .to_str()
            .filter(|_| !after_separator)
            .and_then(|a| a.strip_prefix("--"))
            .filter(|a| !a.is_empty())
            .map(|a| match a.split_once('=') {
                Some((name, value)) => (name.to_string(), Value::String(value.to_string())),
                None => (a.to_string(), Value::Bool(true)),
            })
            .filter(|(name, _)| !known.iter().any(|k| k == name) && valid_name(name));
        match flag {
            Some(flag) => flags.push(flag),
            None => kept.push(arg),
        }
    }
    (kept, flags)
}

/// A name an extension could register: letters, digits, `-` and `_`, starting with a letter.
fn valid_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The flags of `given` that no extension registered (`registered`), each as the user's
/// error message, with the nearest of Tandem's own flags when one is close (a typo).
pub fn unregistered(
    given: &[(String, Value)],
    registered: &[String],
    known: &[String],
) -> Vec<String> {
    given
        .iter()
        .filter(|(name, _)| !registered.iter().any(|r| r == name))
        .map(|(name, _)| {
            let near = known
                .iter()
                .chain(registered)
                .map(|k| (strsim::jaro_winkler(name, k), k))
                .filter(|(score, _)| *score > 0.8)
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, k)| format!(" (did you mean --{k}?)"))
                .unwrap_or_default();
            format!("unknown option --{name}{near}: neither Tandem nor a loaded extension has it")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn unknown_long_flags_are_set_aside_with_their_values() {
        let known = vec!["model".to_string(), "print".to_string()];
        let (kept, flags) = split(
            os(&[
                "tandem",
                "--model",
                "x",
                "--plan",
                "--preset=fast",
                "-p",
                "hi",
                "--",
                "--late",
            ]),
            &known,
        );
        assert_eq!(
            kept,
            os(&["tandem", "--model", "x", "-p", "hi", "--", "--late"])
        );
        assert_eq!(
            flags,
            [
                ("plan".to_string(), Value::Bool(true)),
                ("preset".to_string(), Value::String("fast".into()))
            ]
        );
    }

    #[test]
    fn a_flag_no_extension_registered_is_an_error_with_a_suggestion() {
        let known = vec!["model".to_string()];
        let given = vec![
            ("modle".to_string(), Value::Bool(true)),
            ("plan".to_string(), Value::Bool(true)),
        ];
        let errors = unregistered(&given, &["plan".to_string()], &known);
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].contains("--modle") && errors[0].contains("did you mean --model"),
            "{errors:?}"
        );
    }
}
