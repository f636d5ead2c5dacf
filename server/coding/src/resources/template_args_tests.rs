//! pi's own cases for argument splitting and substitution, plus the single-pass guarantee.

use super::*;

fn sub(template: &str, args: &[&str]) -> String {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    substitute_args(template, &args)
}

#[test]
fn all_arguments() {
    assert_eq!(sub("Test: $ARGUMENTS", &["a", "b", "c"]), "Test: a b c");
    assert_eq!(sub("Test: $@", &["a", "b", "c"]), "Test: a b c");
    assert_eq!(
        sub("$@ and $ARGUMENTS", &["x", "y", "z"]),
        "x y z and x y z"
    );
    assert_eq!(sub("$ARGUMENTS and $ARGUMENTS", &["a", "b"]), "a b and a b");
    assert_eq!(sub("Test: $ARGUMENTS", &[]), "Test: ");
    assert_eq!(sub("Test: $@", &[]), "Test: ");
    assert_eq!(sub("pre$ARGUMENTS", &["a", "b"]), "prea b");
    assert_eq!(sub("pre$@", &["a", "b"]), "prea b");
    assert_eq!(sub("$ARGUMENTS", &["a", "", "c"]), "a  c");
    assert_eq!(
        sub("$ARGUMENTS", &["  leading  ", "trailing  "]),
        "  leading   trailing  "
    );
    assert_eq!(
        sub("$ARGUMENTS", &["日本語", "🎉", "café"]),
        "日本語 🎉 café"
    );
    assert_eq!(
        sub("Prefix $ARGUMENTS suffix", &["ARGUMENTS"]),
        "Prefix ARGUMENTS suffix"
    );
}

#[test]
fn positional_arguments() {
    assert_eq!(
        sub("$1: $ARGUMENTS", &["prefix", "a", "b"]),
        "prefix: prefix a b"
    );
    assert_eq!(sub("$1 $2 $3 $4 $5", &["a", "b"]), "a b   ");
    assert_eq!(sub("Test: $1", &[]), "Test: ");
    assert_eq!(sub("$1$2", &["a", "b"]), "ab");
    assert_eq!(sub("$0", &["a", "b"]), "");
    assert_eq!(sub("$1.5", &["a"]), "a.5");
    assert_eq!(
        sub("$1 $2", &["line1\nline2", "tab\tthere"]),
        "line1\nline2 tab\tthere"
    );
    let many: Vec<String> = (0..15).map(|i| format!("val{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    assert_eq!(sub("$10 $12 $15", &many), "val9 val11 val14");
    assert_eq!(sub("Price: \\$100", &[]), "Price: \\");
    assert_eq!(sub("$99999999999999999999999", &["a"]), "");
}

#[test]
fn slices() {
    let abcd = ["a", "b", "c", "d"];
    assert_eq!(sub("${@:2}", &abcd), "b c d");
    assert_eq!(sub("${@:1}", &["a", "b", "c"]), "a b c");
    assert_eq!(sub("${@:3}", &abcd), "c d");
    assert_eq!(sub("${@:2:2}", &abcd), "b c");
    assert_eq!(sub("${@:1:1}", &["a", "b", "c"]), "a");
    assert_eq!(sub("${@:2:3}", &["a", "b", "c", "d", "e"]), "b c d");
    assert_eq!(sub("${@:99}", &["a", "b"]), "");
    assert_eq!(sub("${@:10:5}", &["a", "b"]), "");
    assert_eq!(sub("${@:2:0}", &["a", "b", "c"]), "");
    assert_eq!(sub("${@:2:99}", &["a", "b", "c"]), "b c");
    assert_eq!(sub("${@:0}", &["a", "b", "c"]), "a b c");
    assert_eq!(sub("${@:2}", &[]), "");
    assert_eq!(sub("${@:2} vs $@", &["a", "b", "c"]), "b c vs a b c");
    assert_eq!(
        sub("$1: ${@:2}", &["cmd", "arg1", "arg2"]),
        "cmd: arg1 arg2"
    );
    assert_eq!(
        sub("prefix${@:2}suffix", &["a", "b", "c"]),
        "prefixb csuffix"
    );
    assert_eq!(
        sub(
            "Run $1 on ${@:2:2}, then process $@",
            &["eslint", "f1", "f2", "f3"]
        ),
        "Run eslint on f1 f2, then process eslint f1 f2 f3"
    );
    assert_eq!(sub("${@:99999999999999999999999}", &["a"]), "");
    assert_eq!(sub("${@:1:99999999999999999999999}", &["a", "b"]), "a b");
}

#[test]
fn non_placeholders_stay() {
    assert_eq!(sub("$A $$ $ $ARGS", &["a"]), "$A $$ $ $ARGS");
    assert_eq!(
        sub("$arguments $Arguments $ARGUMENTS", &["a", "b"]),
        "$arguments $Arguments a b"
    );
    assert_eq!(
        sub("${@:} ${@:x} ${@:2 ${@:1:} ${@", &["a", "b"]),
        "${@:} ${@:x} ${@:2 ${@:1:} ${@"
    );
    assert_eq!(sub("end $", &[]), "end $");
    assert_eq!(sub("Just plain text", &["a"]), "Just plain text");
}

#[test]
fn argument_values_are_never_expanded_again() {
    assert_eq!(sub("$ARGUMENTS", &["$1", "$ARGUMENTS"]), "$1 $ARGUMENTS");
    assert_eq!(sub("$@", &["$100", "$1"]), "$100 $1");
    assert_eq!(sub("${@:1}", &["${@:2}", "test"]), "${@:2} test");
    assert_eq!(sub("${@:2}", &["a", "${@:3}", "c"]), "${@:3} c");
    // pi's multi-pass substitution would expand these; one pass does not.
    assert_eq!(sub("$1 $2", &["$@", "x"]), "$@ x");
    assert_eq!(sub("$1", &["${@:1}"]), "${@:1}");
}

#[test]
fn argument_splitting() {
    let p = |s: &str| parse_command_args(s);
    assert_eq!(p("a b c"), ["a", "b", "c"]);
    assert_eq!(p("\"first arg\" second"), ["first arg", "second"]);
    assert_eq!(p("'first arg' second"), ["first arg", "second"]);
    assert_eq!(
        p("\"double\" 'single' \"double again\""),
        ["double", "single", "double again"]
    );
    assert!(p("").is_empty());
    assert_eq!(p("a  b   c"), ["a", "b", "c"]);
    assert_eq!(p("a\tb\tc"), ["a", "b", "c"]);
    assert_eq!(p("\"\" \" \""), [" "]);
    assert_eq!(p("$100 @user #tag"), ["$100", "@user", "#tag"]);
    assert_eq!(p("\"line1\nline2\" second"), ["line1\nline2", "second"]);
    assert_eq!(p("\"quoted \\\"text\\\"\""), ["quoted \\text\\"]);
    assert_eq!(p("   a b c   "), ["a", "b", "c"]);
    // An apostrophe opens a quote that runs to the next one.
    assert_eq!(p("it's \"a 'b' c\""), ["its \"a b c\""]);
    assert_eq!(p("a\"b c\"d"), ["ab cd"]);
}

#[test]
fn splitting_and_substitution_together() {
    let args = parse_command_args("Button \"onClick handler\" \"disabled support\"");
    assert_eq!(
        substitute_args("Create a React component named $1 with features: $ARGUMENTS", &args),
        "Create a React component named Button with features: Button onClick handler disabled support"
    );
}
