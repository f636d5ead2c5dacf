use std::io::Cursor;

use super::*;

const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn stdin_is_read_only_when_piped_and_trimmed() {
    let mut piped = Cursor::new(b"\n  fn main() {}\n\n".to_vec());
    assert_eq!(
        read_piped_stdin(&mut piped, false).expect("reads"),
        Some("fn main() {}".to_string())
    );
    let mut untouched = Cursor::new(b"ignored".to_vec());
    assert_eq!(read_piped_stdin(&mut untouched, true).expect("ok"), None);
    assert_eq!(untouched.position(), 0);
    let mut blank = Cursor::new(b" \n\t".to_vec());
    assert_eq!(read_piped_stdin(&mut blank, false).expect("ok"), None);
    let mut bad = Cursor::new(vec![0xEF, 0xBB, 0xBF, b'h', 0xFF, b'i']);
    assert_eq!(
        read_piped_stdin(&mut bad, false).expect("ok"),
        Some("h\u{FFFD}i".to_string())
    );
}

#[test]
fn text_files_are_wrapped_images_attached_and_empty_files_skipped() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("notes.md"), "line one\nline two").expect("write");
    std::fs::write(dir.path().join("shot.png"), PNG).expect("write");
    std::fs::write(dir.path().join("empty.txt"), "").expect("write");
    let parts = read_file_args(
        &strings(&["notes.md", "./sub/../shot.png", "empty.txt"]),
        dir.path(),
    )
    .expect("reads");
    let root = dir.path().display();
    assert_eq!(
        parts.text,
        format!(
            "<file name=\"{root}/notes.md\">\nline one\nline two\n</file>\n\
             <file name=\"{root}/shot.png\"></file>\n"
        )
    );
    assert_eq!(
        parts.images,
        vec![ImageContent {
            data: "iVBORw0KGgoAAAAN".into(),
            mime_type: "image/png".into(),
        }]
    );
}

#[test]
fn image_types_are_found_by_their_first_bytes() {
    assert_eq!(image_mime(PNG), Some("image/png"));
    assert_eq!(image_mime(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
    assert_eq!(image_mime(b"GIF89a...."), Some("image/gif"));
    assert_eq!(image_mime(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
    assert_eq!(image_mime(b"RIFF\0\0\0\0WAVEfmt "), None);
    assert_eq!(image_mime(b"plain text"), None);
}

#[test]
fn missing_and_unreadable_files_are_errors_naming_the_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let err = read_file_args(&strings(&["nope.txt"]), dir.path()).expect_err("missing");
    assert_eq!(
        err.to_string(),
        format!("File not found: {}/nope.txt", dir.path().display())
    );
    std::fs::create_dir(dir.path().join("folder")).expect("mkdir");
    let err = read_file_args(&strings(&["folder"]), dir.path()).expect_err("a directory");
    let text = err.to_string();
    assert!(
        text.starts_with(&format!(
            "Could not read file {}/folder: ",
            dir.path().display()
        )),
        "{text}"
    );
}

#[test]
fn prompts_combine_stdin_files_and_the_first_message_like_pi() {
    let files = FileParts {
        text: "<file name=\"/a\">\nA\n</file>\n".into(),
        images: vec![],
    };
    let prompts = assemble(
        Some("piped".into()),
        files,
        &strings(&["first", "second", "third"]),
    );
    let initial = prompts.initial.expect("an initial prompt");
    // A blank line after stdin (pi joins with nothing: "pipedfirst"); the rest as pi.
    assert_eq!(
        initial.text,
        "piped\n\n<file name=\"/a\">\nA\n</file>\nfirst"
    );
    let stdin_then_message = assemble(
        Some("a log".into()),
        FileParts::default(),
        &strings(&["explain"]),
    );
    assert_eq!(
        stdin_then_message.initial.map(|p| p.text),
        Some("a log\n\nexplain".to_string())
    );
    assert_eq!(prompts.rest, strings(&["second", "third"]));

    let only_stdin = assemble(Some("x".into()), FileParts::default(), &[]);
    assert_eq!(only_stdin.initial.map(|p| p.text), Some("x".to_string()));
    assert_eq!(
        assemble(None, FileParts::default(), &[]),
        Prompts::default()
    );
    let only_messages = assemble(None, FileParts::default(), &strings(&["a", "b"]));
    assert_eq!(only_messages.initial.map(|p| p.text), Some("a".to_string()));
    assert_eq!(only_messages.rest, strings(&["b"]));
}

#[test]
fn the_initial_user_message_is_text_then_images() {
    let prompt = InitialPrompt {
        text: "look".into(),
        images: vec![ImageContent {
            data: "AAAA".into(),
            mime_type: "image/png".into(),
        }],
    };
    let message = prompt.to_user_message();
    let value = serde_json::to_value(&message.content).expect("serializes");
    assert_eq!(
        value,
        serde_json::json!([
            {"type": "text", "text": "look"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"}
        ])
    );
}

#[test]
fn build_prompts_reads_files_relative_to_cwd() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("a.txt"), "A").expect("write");
    let prompts = build_prompts(
        &strings(&["a.txt"]),
        &strings(&["explain"]),
        None,
        dir.path(),
    )
    .expect("ok");
    assert_eq!(
        prompts.initial.map(|p| p.text),
        Some(format!(
            "<file name=\"{}/a.txt\">\nA\n</file>\nexplain",
            dir.path().display()
        ))
    );
    assert!(file_arg_path("/abs/x", dir.path()).starts_with("/abs"));
}
