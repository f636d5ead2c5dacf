use super::*;
use crate::workspace::apply_edits;

fn request(old: &str, new: &str) -> EditRequest {
    EditRequest {
        old_text: old.into(),
        new_text: new.into(),
    }
}

/// Locates and applies `edits` to `content`.
fn apply(content: &str, edits: &[(&str, &str)]) -> Result<String, String> {
    let requests: Vec<_> = edits.iter().map(|(o, n)| request(o, n)).collect();
    let located = locate_edits(content, &requests, "f.txt")?;
    Ok(apply_edits(content, &located))
}

#[test]
fn normalizes_like_pi() {
    let cases = [
        ("line one   \nline two\t\n", "line one\nline two\n"),
        ("\u{2018}a\u{2019} \u{201C}b\u{201D}", "'a' \"b\""),
        ("1\u{2013}5 a\u{2014}b \u{2212}1 \u{2010}", "1-5 a-b -1 -"),
        ("a\u{00A0}b\u{2007}c\u{3000}d\u{202F}e", "a b c d e"),
        ("ＡＢＣ１２３", "ABC123"),
        ("cafe\u{0301}", "caf\u{e9}"),
        ("你好，世界（x）", "你好,世界(x)"),
        ("x \u{00A0}\u{3000}\ny", "x\ny"),
        ("   \n", "\n"),
        ("end   ", "end"),
        ("\u{1100}\u{1161}", "\u{AC00}"),
        ("ﬁle", "file"),
        // Compositions across pieces, checked against JavaScript's String.normalize.
        ("\u{ff76}\u{ff9e}", "\u{30ac}"),
        ("A\u{ff9f}\u{30a}", "\u{c5}\u{309a}"),
        ("\u{301}\u{ff9f}", "\u{309a}\u{301}"),
        ("\u{ac00}\u{11a8}", "\u{ac01}"),
        ("\u{ffa1}\u{1161}", "\u{ac00}"),
        ("\u{b47}\u{b3e}", "\u{b4b}"),
        ("e\u{323}\u{344}", "\u{1eb9}\u{308}\u{301}"),
        ("x\u{2028} \u{feff}\ny", "x\ny"),
        ("\u{fb01}\u{308}", "f\u{ef}"),
    ];
    for (input, expected) in cases {
        assert_eq!(Normalized::new(input).as_str(), expected, "input {input:?}");
    }
}

#[test]
fn maps_normalized_ranges_back_exactly() {
    let original = "a  \n\u{201C}q\u{201D} b\u{00A0}c\nend";
    let normalized = Normalized::new(original);
    assert_eq!(normalized.as_str(), "a\n\"q\" b c\nend");
    let norm = normalized.as_str();
    // Every character boundary of a copied stretch maps to the same text.
    let at = norm.find("end").unwrap_or_default();
    let mapped = normalized.to_original(at..at + 3);
    assert_eq!(&original[mapped.range.clone()], "end");
    assert_eq!((mapped.prefix.as_str(), mapped.suffix.as_str()), ("", ""));
    // A range over substituted characters maps to the original characters.
    let at = norm.find("\"q\" b c").unwrap_or_default();
    let mapped = normalized.to_original(at..at + "\"q\" b c".len());
    assert_eq!(
        &original[mapped.range.clone()],
        "\u{201C}q\u{201D} b\u{00A0}c"
    );
    // Trimmed whitespace at the end of a range stays outside it; inside, it is covered.
    let mapped = normalized.to_original(0..1);
    assert_eq!(&original[mapped.range.clone()], "a");
    let mapped = normalized.to_original(0..2);
    assert_eq!(&original[mapped.range.clone()], "a  \n");
}

#[test]
fn a_match_inside_a_changed_piece_keeps_the_rest_of_it() {
    // "ﬁ" normalizes to "fi"; a match starting at its "i" covers the whole ligature and puts
    // the unmatched "f" back as a prefix.
    let original = "ﬁx";
    let normalized = Normalized::new(original);
    let mapped = normalized.to_original(1..3);
    assert_eq!(mapped.range, 0..original.len());
    assert_eq!((mapped.prefix.as_str(), mapped.suffix.as_str()), ("f", ""));
    assert_eq!(apply("ﬁx\n", &[("ix", "IX")]).as_deref(), Ok("fIX\n"));
}

#[test]
fn exact_single_and_multiple_edits() {
    assert_eq!(
        apply(
            "hello world\nsecond line\n",
            &[("hello world", "hello there")]
        )
        .as_deref(),
        Ok("hello there\nsecond line\n")
    );
    assert_eq!(
        apply("a\nb\nc\nd\n", &[("d", "D"), ("a", "A"), ("c\n", "")]).as_deref(),
        Ok("A\nb\nD\n")
    );
}

#[test]
fn fuzzy_matches_touch_only_the_matched_bytes() {
    let content = "keep   \nconsole.log(\u{2018}hi\u{2019});\nalso keep\t\n";
    assert_eq!(
        apply(content, &[("console.log('hi');", "console.log('bye');")]).as_deref(),
        Ok("keep   \nconsole.log('bye');\nalso keep\t\n")
    );
    // pi's own fixture: trailing spaces inside the match go, the rest stays.
    assert_eq!(
        apply(
            "line one   \nline two  \nline three\n",
            &[("line one\nline two\n", "replaced\n")]
        )
        .as_deref(),
        Ok("replaced\nline three\n")
    );
}

#[test]
fn one_fuzzy_edit_moves_every_edit_to_normalized_text() {
    let content = "a \u{2014} b\nplain\n";
    assert_eq!(
        apply(content, &[("plain", "PLAIN"), ("a - b", "a + b")]).as_deref(),
        Ok("a + b\nPLAIN\n")
    );
}

#[test]
fn errors_have_pi_texts() {
    let single = |content: &str, old: &str, new: &str| apply(content, &[(old, new)]);
    assert_eq!(
        single("abc", "zzz", "y"),
        Err("Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines.".into())
    );
    assert_eq!(
        single("foo foo foo", "foo", "bar"),
        Err("Found 3 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique.".into())
    );
    // Counted on normalized text, even when the exact text occurs once.
    assert_eq!(
        single("hello world   \nhello world\n", "hello world", "x"),
        Err("Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique.".into())
    );
    assert_eq!(
        single("abc", "", "x"),
        Err("oldText must not be empty in f.txt.".into())
    );
    assert_eq!(
        single("abc", "b", "b"),
        Err("No changes made to f.txt. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.".into())
    );
}

#[test]
fn multi_edit_errors_name_the_edit() {
    assert_eq!(
        apply("a b c", &[("a", "x"), ("zzz", "y")]),
        Err("Could not find edits[1] in f.txt. The oldText must match exactly including all whitespace and newlines.".into())
    );
    assert_eq!(
        apply("a b b", &[("a", "x"), ("b", "y")]),
        Err("Found 2 occurrences of edits[1] in f.txt. Each oldText must be unique. Please provide more context to make it unique.".into())
    );
    assert_eq!(
        apply("a b", &[("a", "x"), ("", "y")]),
        Err("edits[1].oldText must not be empty in f.txt.".into())
    );
    assert_eq!(
        apply("one two three", &[("two three", "2 3"), ("one two", "1 2")]),
        Err("edits[1] and edits[0] overlap in f.txt. Merge them into one edit or target disjoint regions.".into())
    );
    assert_eq!(
        apply("a b", &[("a", "a"), ("b", "b")]),
        Err("No changes made to f.txt. The replacements produced identical content.".into())
    );
}

#[test]
fn line_endings_in_edit_texts_are_normalized() {
    assert_eq!(
        apply("a\nb\nc\n", &[("a\r\nb\r\n", "x\r\n")]).as_deref(),
        Ok("x\nc\n")
    );
}

/// Replacing any range of the normalized text through the map gives what pi's replacement in
/// normalized space gives, up to normalization and the whitespace kept at the edges.
#[test]
fn mapped_replacements_agree_with_normalized_space() {
    let alphabet = [
        "a", "e", " ", "\t", "\n", "\u{301}", "\u{a0}", "\u{2019}", "\u{201c}", "\u{2014}",
        "\u{3000}", "\u{ff21}", "\u{ff0c}", "\u{1100}", "\u{1161}", "\u{11a8}", "\u{fb01}",
        "\u{a8}", "\u{feff}", "\u{ff76}", "\u{ff9e}", "\u{344}", "\u{ac00}", "\u{2474}", "你",
    ];
    let mut seed: u64 = 7;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n
    };
    let squeeze = |t: &str| -> String {
        let normalized = Normalized::new(t);
        normalized
            .as_str()
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '\u{feff}')
            .collect()
    };
    for _ in 0..5000 {
        let input: String = (0..1 + next(12))
            .map(|_| alphabet[next(alphabet.len())])
            .collect();
        let normalized = Normalized::new(&input);
        let text = normalized.as_str();
        let bounds: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([text.len()])
            .collect();
        let (a, b) = (bounds[next(bounds.len())], bounds[next(bounds.len())]);
        let (a, b) = (a.min(b), a.max(b));
        let mapped = normalized.to_original(a..b);
        let (start, end) = (mapped.range.start, mapped.range.end);
        assert!(input.is_char_boundary(start) && input.is_char_boundary(end));
        let ours = format!(
            "{}{}XYZ{}{}",
            &input[..start],
            mapped.prefix,
            mapped.suffix,
            &input[end..]
        );
        let pis = format!("{}XYZ{}", &text[..a], &text[b..]);
        assert_eq!(
            squeeze(&ours),
            squeeze(&pis),
            "{input:?} {a}..{b} -> {mapped:?}"
        );
    }
}
