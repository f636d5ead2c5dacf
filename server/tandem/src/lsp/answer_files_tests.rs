use std::time::{Duration, SystemTime};

use super::*;

fn session() -> SessionId {
    SessionId::from("0197e3a3-1d2e-7f30-8b4c-5d6e7f809102")
}

#[test]
fn the_directory_is_xdg_cache_home_when_absolute_else_home_dot_cache() {
    let dir = |xdg: Option<&str>, home: Option<&str>| {
        answers_dir(xdg.map(OsString::from), home.map(OsString::from))
    };
    assert_eq!(
        dir(Some("/c"), Some("/h")),
        Some(PathBuf::from("/c/tandem/answers"))
    );
    // A relative XDG_CACHE_HOME is invalid (XDG Base Directory spec): ignored.
    assert_eq!(
        dir(Some("rel"), Some("/h")),
        Some(PathBuf::from("/h/.cache/tandem/answers"))
    );
    assert_eq!(
        dir(None, Some("/h")),
        Some(PathBuf::from("/h/.cache/tandem/answers"))
    );
    assert_eq!(dir(None, Some("")), None);
    assert_eq!(dir(None, None), None);
}

#[test]
fn an_answer_is_saved_whole_read_only_and_numbered_per_session() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("cache/tandem/answers");
    let files = AnswerFiles::new(Some(dir.clone()));
    let text = "# `main`\n\nIt prints a greeting.\n\n- line one\n- line two";
    let first = files.save(&session(), text).unwrap();
    assert_eq!(first, dir.join("0197e3a3-1d2e-7f30-8b4c-5d6e7f809102-1.md"));
    assert_eq!(fs::read_to_string(&first).unwrap(), text);
    let second = files.save(&session(), "again").unwrap();
    assert_eq!(
        second,
        dir.join("0197e3a3-1d2e-7f30-8b4c-5d6e7f809102-2.md")
    );
    let other = files.save(&SessionId::from("../x y"), "other").unwrap();
    assert_eq!(other, dir.join("___x_y-1.md"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&first), 0o400);
        assert_eq!(mode(&dir), 0o700);
    }
    assert!(fs::metadata(&first).unwrap().permissions().readonly());
}

#[test]
fn a_taken_name_is_never_overwritten_nor_followed() {
    let temp = tempfile::tempdir().unwrap();
    let files = AnswerFiles::new(Some(temp.path().to_path_buf()));
    fs::write(temp.path().join("s-1.md"), "older").unwrap();
    let path = files.save(&SessionId::from("s"), "new").unwrap();
    assert_eq!(path, temp.path().join("s-2.md"));
    assert_eq!(
        fs::read_to_string(temp.path().join("s-1.md")).unwrap(),
        "older"
    );
    let e = write_read_only(&temp.path().join("s-1.md"), "x").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
    // A dangling symlink is a taken name too: its target is not created.
    #[cfg(unix)]
    {
        let link = temp.path().join("s-3.md");
        std::os::unix::fs::symlink(temp.path().join("elsewhere"), &link).unwrap();
        let e = write_read_only(&link, "x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert!(!temp.path().join("elsewhere").exists());
    }
}

#[test]
fn only_the_newest_answers_are_kept() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().to_path_buf();
    let files = AnswerFiles::new(Some(dir.clone())).keeping(3);
    let start = SystemTime::now() - Duration::from_secs(3600);
    for n in 1..=4 {
        let path = files
            .save(&SessionId::from("s"), &format!("answer {n}"))
            .unwrap();
        // Distinct times, oldest first, whatever the file system's clock resolution.
        let file = fs::File::options().read(true).open(&path).unwrap();
        file.set_modified(start + Duration::from_secs(n)).unwrap();
    }
    // The fifth write leaves the three newest: 3, 4 and itself.
    files.save(&SessionId::from("s"), "answer 5").unwrap();
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["s-3.md", "s-4.md", "s-5.md"]);
}

#[test]
fn answers_written_in_the_same_clock_tick_are_ordered_by_number() {
    let temp = tempfile::tempdir().unwrap();
    let files = AnswerFiles::new(Some(temp.path().to_path_buf())).keeping(2);
    let same = SystemTime::now() - Duration::from_secs(60);
    for n in [9, 10] {
        let path = temp.path().join(format!("s-{n}.md"));
        fs::write(&path, "x").unwrap();
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(same)
            .unwrap();
    }
    files.save(&SessionId::from("s"), "eleven").unwrap();
    assert!(!temp.path().join("s-9.md").exists());
    assert!(temp.path().join("s-10.md").exists());
    assert!(temp.path().join("s-11.md").exists());
}

#[test]
fn failures_name_what_failed() {
    let none = AnswerFiles::new(None);
    let e = none.save(&session(), "x").unwrap_err();
    assert!(matches!(e, AnswerFileError::NoCacheDir), "{e}");
    let temp = tempfile::tempdir().unwrap();
    // The cache "directory" is a file.
    let blocked = temp.path().join("cache");
    fs::write(&blocked, "").unwrap();
    let files = AnswerFiles::new(answers_dir(Some(blocked.clone().into()), None));
    let e = files.save(&session(), "x").unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, AnswerFileError::CreateDir { .. }), "{text}");
    assert!(
        text.contains(&blocked.join("tandem/answers").display().to_string()),
        "{text}"
    );
}

#[cfg(unix)]
#[test]
fn answers_are_not_written_through_a_linked_directory_nor_where_others_can_swap_it() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let temp = tempfile::tempdir().unwrap();
    let elsewhere = temp.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    // `answers` is a link: refused, nothing lands at its target.
    let linked = temp.path().join("linked/tandem");
    fs::create_dir_all(&linked).unwrap();
    symlink(&elsewhere, linked.join("answers")).unwrap();
    let e = AnswerFiles::new(Some(linked.join("answers")))
        .save(&session(), "x")
        .unwrap_err();
    assert!(matches!(e, AnswerFileError::UnsafeDir { .. }), "{e}");
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
    // `tandem` is writable by others (a shared cache): refused.
    let shared = temp.path().join("shared/tandem");
    fs::create_dir_all(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o777)).unwrap();
    let e = AnswerFiles::new(Some(shared.join("answers")))
        .save(&session(), "x")
        .unwrap_err();
    assert!(matches!(e, AnswerFileError::UnsafeDir { .. }), "{e}");
    assert!(e.to_string().contains(&shared.display().to_string()), "{e}");
    assert!(e.to_string().contains("XDG_CACHE_HOME"), "{e}");
}

#[cfg(unix)]
#[test]
fn an_answers_directory_others_can_open_is_made_private() {
    use std::os::unix::fs::PermissionsExt;
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("tandem/answers");
    fs::create_dir_all(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    AnswerFiles::new(Some(dir.clone()))
        .save(&session(), "x")
        .unwrap();
    let mode = fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}
