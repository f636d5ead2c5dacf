use super::*;

struct Dirs {
    _tmp: tempfile::TempDir,
    agent: PathBuf,
    project: PathBuf,
}

fn dirs(protected: bool) -> Dirs {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = canonical(tmp.path());
    let agent = root.join("agent");
    let project = root.join("project");
    std::fs::create_dir_all(&agent).expect("mkdir");
    std::fs::create_dir_all(project.join(".pi")).expect("mkdir");
    if protected {
        std::fs::write(project.join(".pi/settings.json"), "{}").expect("write");
    }
    Dirs {
        _tmp: tmp,
        agent,
        project,
    }
}

fn decide_with(
    d: &Dirs,
    command_line: Option<bool>,
    default: DefaultProjectTrust,
) -> TrustDecision {
    let inputs = TrustInputs {
        dir: &d.project,
        agent_dir: &d.agent,
        command_line,
        default,
        home: None,
    };
    let mut warnings = Vec::new();
    let decision = decide(&inputs, &mut |w| warnings.push(w));
    assert!(warnings.is_empty(), "{warnings:?}");
    decision
}

#[test]
fn a_folder_without_protected_resources_needs_no_decision() {
    let d = dirs(false);
    assert_eq!(
        decide_with(&d, None, DefaultProjectTrust::Never),
        TrustDecision::decided(true, TrustSource::NothingProtected)
    );
}

#[test]
fn the_command_line_wins_over_a_saved_decision() {
    let d = dirs(true);
    TrustStore::new(&d.agent)
        .save(&d.project, true)
        .expect("save");
    assert_eq!(
        decide_with(&d, Some(false), DefaultProjectTrust::Always),
        TrustDecision::decided(false, TrustSource::CommandLine)
    );
    assert_eq!(
        decide_with(&d, Some(true), DefaultProjectTrust::Never),
        TrustDecision::decided(true, TrustSource::CommandLine)
    );
}

#[test]
fn a_saved_decision_wins_over_the_default() {
    let d = dirs(true);
    TrustStore::new(&d.agent)
        .save(d.project.parent().expect("parent"), false)
        .expect("save");
    assert_eq!(
        decide_with(&d, None, DefaultProjectTrust::Always),
        TrustDecision::decided(
            false,
            TrustSource::Saved(d.project.parent().expect("parent").to_path_buf())
        )
    );
}

#[test]
fn the_default_decides_the_rest_and_ask_names_the_resources() {
    let d = dirs(true);
    assert_eq!(
        decide_with(&d, None, DefaultProjectTrust::Always),
        TrustDecision::decided(true, TrustSource::Default(DefaultProjectTrust::Always))
    );
    assert_eq!(
        decide_with(&d, None, DefaultProjectTrust::Never),
        TrustDecision::decided(false, TrustSource::Default(DefaultProjectTrust::Never))
    );
    let TrustDecision::Ask(resources) = decide_with(&d, None, DefaultProjectTrust::Ask) else {
        panic!("expected a question");
    };
    assert_eq!(resources.found, vec![d.project.join(".pi/settings.json")]);
    assert_eq!(
        TrustDecision::Ask(resources).or_untrusted(),
        (false, TrustSource::NoAnswer)
    );
}

#[test]
fn a_broken_trust_file_is_reported_and_trusts_nothing() {
    let d = dirs(true);
    std::fs::write(
        d.agent.join(TRUST_FILE),
        format!("{{\"{}\": 1}}", d.project.display()),
    )
    .expect("write");
    let inputs = TrustInputs {
        dir: &d.project,
        agent_dir: &d.agent,
        command_line: None,
        default: DefaultProjectTrust::Ask,
        home: None,
    };
    let mut warnings = Vec::new();
    let decision = decide(&inputs, &mut |w| warnings.push(w));
    assert!(matches!(decision, TrustDecision::Ask(_)), "{decision:?}");
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("trust.json"), "{warnings:?}");
}

#[test]
fn the_untrusted_note_says_what_was_left_out_and_how_to_trust() {
    let d = dirs(true);
    let note = untrusted_note(&d.project, &ProtectedResources::find(&d.project, None));
    assert!(note.contains("is not trusted"), "{note}");
    assert!(
        note.contains("project settings (.pi/settings.json)"),
        "{note}"
    );
    assert!(note.contains("--approve"), "{note}");
}
