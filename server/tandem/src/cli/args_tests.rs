use super::*;
use clap::error::ErrorKind;

fn parse(args: &[&str]) -> Result<Parsed, clap::Error> {
    parse_args(std::iter::once("tandem").chain(args.iter().copied()))
}

fn command(args: &[&str]) -> Command {
    match parse(args) {
        Ok(parsed) => parsed.command,
        Err(err) => panic!("{args:?} should parse: {err}"),
    }
}

fn run(args: &[&str]) -> RunArgs {
    match command(args) {
        Command::Print(run) | Command::Json(run) => run,
        Command::Lsp(options, _) | Command::Acp(options, _) => RunArgs {
            options,
            ..RunArgs::default()
        },
        Command::Demo { run, .. } => run,
        other => panic!("{args:?}: expected a run, got {other:?}"),
    }
}

fn error(args: &[&str]) -> String {
    match parse(args) {
        Ok(parsed) => panic!("{args:?} should fail, got {parsed:?}"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn messages_and_file_arguments_keep_their_order() {
    let r = run(&["-p", "first", "@src/main.rs", "second", "@~/notes.md"]);
    assert_eq!(r.messages, vec!["first", "second"]);
    assert_eq!(r.file_args, vec!["src/main.rs", "~/notes.md"]);
    assert_eq!(
        command(&["just a message"]),
        Command::Print(RunArgs {
            messages: vec!["just a message".into()],
            ..RunArgs::default()
        })
    );
}

#[test]
fn print_and_mode_choose_the_command() {
    assert!(matches!(command(&["-p", "hi"]), Command::Print(_)));
    assert!(matches!(command(&["--print", "hi"]), Command::Print(_)));
    assert!(matches!(
        command(&["--mode", "text", "hi"]),
        Command::Print(_)
    ));
    assert!(matches!(
        command(&["--mode", "json", "hi"]),
        Command::Json(_)
    ));
    // pi checks json before print.
    assert!(matches!(
        command(&["-p", "--mode", "json", "hi"]),
        Command::Json(_)
    ));
    assert!(matches!(command(&[]), Command::Print(_)));
}

#[test]
fn bad_modes_name_the_valid_ones() {
    let text = error(&["--mode", "yaml"]);
    assert!(
        text.contains("Invalid mode \"yaml\". Valid values: text, json, rpc"),
        "{text}"
    );
}

#[test]
fn rpc_mode_takes_the_session_options_and_refuses_file_arguments() {
    let parsed = parse(&[
        "--mode",
        "rpc",
        "--model",
        "mock/m",
        "--no-session",
        "--name",
        "n",
    ])
    .expect("parses");
    let Command::Rpc(run) = parsed.command else {
        panic!("not RPC mode: {:?}", parsed.command)
    };
    assert_eq!(run.options.model.as_deref(), Some("mock/m"));
    assert_eq!(run.session, SessionChoice::InMemory);
    assert_eq!(run.name.as_deref(), Some("n"));
    let text = error(&["--mode", "rpc", "@notes.md"]);
    assert!(
        text.contains("@file arguments are not supported in RPC mode"),
        "{text}"
    );
    let parsed = parse(&["--mode", "rpc", "hello"]).expect("parses");
    assert!(matches!(parsed.command, Command::Rpc(_)));
    assert!(
        parsed.warnings[0].contains("ignored in RPC mode"),
        "{:?}",
        parsed.warnings
    );
    let text = error(&["--mode", "rpc", "demo"]);
    assert!(text.contains("--mode rpc"), "{text}");
}

#[test]
fn model_options() {
    let r = run(&[
        "--provider",
        "openai",
        "--model",
        "gpt-4o:high",
        "--thinking",
        "low",
        "--api-key",
        "sk-1",
    ]);
    assert_eq!(r.options.provider.as_deref(), Some("openai"));
    assert_eq!(r.options.model.as_deref(), Some("gpt-4o:high"));
    assert_eq!(r.options.thinking, Some(ThinkingLevel::Low));
    assert_eq!(r.options.api_key.as_deref(), Some("sk-1"));
}

#[test]
fn every_thinking_level_parses_and_a_bad_one_lists_them() {
    for level in ThinkingLevel::ALL {
        assert_eq!(
            run(&["--thinking", level.as_str()]).options.thinking,
            Some(level)
        );
    }
    let text = error(&["--thinking", "maximum"]);
    assert!(
        text.contains(
            "Invalid thinking level \"maximum\". Valid values: off, minimal, low, medium, high, \
             xhigh, max"
        ),
        "{text}"
    );
}

#[test]
fn tools() {
    assert_eq!(run(&[]).options.tools, ToolSelection::Default);
    assert_eq!(
        run(&["--tools", "read, grep,,ls"]).options.tools,
        ToolSelection::Only(vec!["read".into(), "grep".into(), "ls".into()])
    );
    assert_eq!(
        run(&["-t", "bash"]).options.tools,
        ToolSelection::Only(vec!["bash".into()])
    );
    assert_eq!(
        run(&["--no-tools"]).options.tools,
        ToolSelection::Only(vec![])
    );
    assert_eq!(run(&["-nt"]).options.tools, ToolSelection::Only(vec![]));
    assert_eq!(
        run(&["--no-tools", "--tools", "read"]).options.tools,
        ToolSelection::Only(vec!["read".into()])
    );
    let parsed = parse(&["--tools", "read,fly"]).expect("parses");
    assert_eq!(
        parsed.warnings,
        vec![
            "Unknown tool \"fly\". Valid tools: read, bash, edit, write, grep, find, ls, \
             diagnostics, definition, references, symbols, hover, rename"
        ]
    );
    let Command::Print(r) = parsed.command else {
        panic!("print")
    };
    assert_eq!(r.options.tools, ToolSelection::Only(vec!["read".into()]));
}

#[test]
fn session_choices_follow_pi_precedence() {
    assert_eq!(run(&[]).session, SessionChoice::New);
    assert_eq!(run(&["-c"]).session, SessionChoice::Continue);
    assert_eq!(run(&["--continue"]).session, SessionChoice::Continue);
    assert_eq!(
        run(&["--session", "a.jsonl"]).session,
        SessionChoice::Open("a.jsonl".into())
    );
    assert_eq!(
        run(&["--fork", "0195"]).session,
        SessionChoice::Fork("0195".into())
    );
    assert_eq!(run(&["--no-session"]).session, SessionChoice::InMemory);
    // As in pi, --session wins over --continue and --no-session over both.
    assert_eq!(
        run(&["-c", "--session", "x"]).session,
        SessionChoice::Open("x".into())
    );
    assert_eq!(
        run(&["-c", "--session", "x", "--no-session"]).session,
        SessionChoice::InMemory
    );
    let r = run(&["--session-dir", "/tmp/s"]);
    assert_eq!(r.options.session_dir, Some(PathBuf::from("/tmp/s")));
}

#[test]
fn fork_conflicts_are_listed_together() {
    let text = error(&["--fork", "a", "--session", "b", "-c"]);
    assert!(
        text.contains("--fork cannot be combined with --session, --continue"),
        "{text}"
    );
    let text = error(&["--fork", "a", "--no-session"]);
    assert!(
        text.contains("--fork cannot be combined with --no-session"),
        "{text}"
    );
    let err = parse(&["--fork", "a", "-c"]).expect_err("conflict");
    assert_eq!(err.kind(), ErrorKind::ArgumentConflict);
}

#[test]
fn prompt_and_context_options() {
    let r = run(&[
        "--system-prompt",
        "Be brief.",
        "--append-system-prompt",
        "One.",
        "--append-system-prompt",
        "Two.",
        "--no-context-files",
    ]);
    assert_eq!(r.options.system_prompt.as_deref(), Some("Be brief."));
    assert_eq!(r.options.append_system_prompt, vec!["One.", "Two."]);
    assert!(r.options.no_context_files);
    assert!(run(&["-nc"]).options.no_context_files);
    // A repeated single-value option keeps the last value, as pi does.
    assert_eq!(
        run(&["--model", "a", "--model", "b"])
            .options
            .model
            .as_deref(),
        Some("b")
    );
}

#[test]
fn list_models_with_and_without_search() {
    assert_eq!(
        command(&["--list-models"]),
        Command::ListModels { search: None }
    );
    assert_eq!(
        command(&["--list-models", "sonnet"]),
        Command::ListModels {
            search: Some("sonnet".into())
        }
    );
    assert_eq!(
        command(&["--list-models", "-p"]),
        Command::ListModels { search: None }
    );
}

#[test]
fn servers_refuse_what_only_a_run_can_use_and_trust_refuses_every_run_option() {
    for server in ["lsp", "acp"] {
        let e = error(&[server, "hello"]);
        assert!(e.contains("unexpected argument 'hello'"), "{server}: {e}");
        for flag in [
            &["--continue"][..],
            &["--session", "x"],
            &["--fork", "x"],
            &["--no-session"],
        ] {
            // Before the subcommand: refused by name.
            let mut args = flag.to_vec();
            args.push(server);
            let e = error(&args);
            assert!(
                e.contains(&format!(
                    "{} cannot be used with `tandem {server}`",
                    flag[0]
                )),
                "{args:?}: {e}"
            );
            // After it: not one of its flags.
            let mut args = vec![server];
            args.extend_from_slice(flag);
            let e = error(&args);
            assert!(
                e.contains(&format!("unexpected argument '{}'", flag[0])),
                "{args:?}: {e}"
            );
        }
    }
    let e = error(&["--model", "x", "--no-context-files", "trust"]);
    assert!(
        e.contains("--model, --no-context-files cannot be used with `tandem trust`"),
        "{e}"
    );
}

#[test]
fn subcommands_take_the_shared_options_before_or_after() {
    let editor = SessionOptions {
        tools: ToolSelection::Editor,
        ..SessionOptions::default()
    };
    assert_eq!(command(&["lsp"]), Command::Lsp(editor.clone(), None));
    // vscode-languageclient appends --stdio for its stdio transport.
    assert_eq!(
        command(&["lsp", "--stdio"]),
        Command::Lsp(editor.clone(), None)
    );
    assert_eq!(command(&["acp"]), Command::Acp(editor.clone(), None));
    // `tandem acp --name` names the sessions the client creates; the language server has none.
    let named = SessionOptions {
        new_session_name: Some("Fix the parser".into()),
        ..editor.clone()
    };
    assert_eq!(
        command(&["acp", "--name", " Fix the parser "]),
        Command::Acp(named, None)
    );
    assert!(error(&["--name", "x", "lsp"]).contains("--name cannot be used with `tandem lsp`"));
    assert!(error(&["--session", "x", "acp"]).contains("--session cannot be used"));
    assert!(error(&["acp", "--name", " "]).contains("--name needs a name"));
    // The editor front doors take --tools and --no-tools as the CLI does.
    let only = |names: &[&str]| ToolSelection::Only(names.iter().map(|n| n.to_string()).collect());
    for (sub, build) in [
        (
            "lsp",
            Command::Lsp as fn(SessionOptions, Option<u64>) -> Command,
        ),
        ("acp", Command::Acp),
    ] {
        assert_eq!(
            command(&[sub, "--tools", "read,grep"]),
            build(
                SessionOptions {
                    tools: only(&["read", "grep"]),
                    ..SessionOptions::default()
                },
                None
            )
        );
        assert_eq!(
            command(&[sub, "--no-tools"]),
            build(
                SessionOptions {
                    tools: only(&[]),
                    ..SessionOptions::default()
                },
                None
            )
        );
    }
    assert_eq!(
        run(&["--model", "gpt-5", "lsp"]).options.model.as_deref(),
        Some("gpt-5")
    );
    assert_eq!(
        run(&["acp", "--model", "gpt-5", "--approve"])
            .options
            .approve,
        Some(true)
    );
    assert_eq!(
        command(&["demo"]),
        Command::Demo {
            real: false,
            mode: OutputMode::Text,
            run: RunArgs::default()
        }
    );
    assert!(matches!(
        command(&["--mode", "json", "demo", "--real"]),
        Command::Demo {
            real: true,
            mode: OutputMode::Json,
            ..
        }
    ));
    // `help` is a message, not a subcommand.
    assert_eq!(run(&["-p", "help"]).messages, vec!["help"]);
    // A subcommand's name after a message is just another message.
    assert_eq!(run(&["-p", "hello", "lsp"]).messages, vec!["hello", "lsp"]);
}

#[test]
fn protocol_subcommands_refuse_print_options() {
    let text = error(&["-p", "lsp"]);
    assert!(text.contains("cannot be used with `tandem lsp`"), "{text}");
    let text = error(&["--list-models", "x", "acp"]);
    assert!(
        text.contains("--list-models cannot be used with `tandem acp`"),
        "{text}"
    );
    let text = error(&["acp", "--list-models"]);
    assert!(text.contains("--list-models"), "{text}");
    let text = error(&["acp", "extra"]);
    assert!(text.contains("extra"), "{text}");
}

#[test]
fn unknown_flags_are_usage_errors_and_help_is_not() {
    // An unknown short flag is clap's; an unknown long one may be an extension's, checked
    // once the extensions loaded (`extension_flags`).
    let err = parse(&["-Z"]).expect_err("unknown flag");
    assert_eq!(err.kind(), ErrorKind::UnknownArgument);
    assert_eq!(crate::cli::clap_exit_code(&err), 1);
    let parsed = parse(&["--frobnicate=1", "-p", "hi"]).expect("an extension's flag, maybe");
    let Command::Print(run) = parsed.command else {
        panic!("{:?}", parsed.command)
    };
    assert_eq!(
        run.options.extension_flags,
        [("frobnicate".to_string(), serde_json::json!("1"))]
    );
    let err = parse(&["--frobnicate", "trust"]).expect_err("trust takes none");
    assert!(
        err.to_string().contains("unknown option --frobnicate"),
        "{err}"
    );
    let err = parse(&["--help"]).expect_err("help is reported as an error kind");
    assert_eq!(err.kind(), ErrorKind::DisplayHelp);
    assert_eq!(crate::cli::clap_exit_code(&err), 0);
    for flag in ["--version", "-v", "-V"] {
        let err = parse(&[flag]).expect_err("version");
        assert_eq!(err.kind(), ErrorKind::DisplayVersion, "{flag}");
        assert_eq!(
            err.to_string(),
            format!("tandem {}\n", env!("CARGO_PKG_VERSION"))
        );
    }
}

#[test]
fn the_pi_short_aliases_are_not_rewritten_after_a_separator() {
    assert_eq!(run(&["-p", "--", "-nt"]).messages, vec!["-nt"]);
}

#[test]
fn help_names_the_pi_flags() {
    let help = help_text();
    for flag in [
        "--print",
        "--mode",
        "--provider",
        "--model",
        "--thinking",
        "--api-key",
        "--tools",
        "--no-tools",
        "--continue",
        "--session",
        "--fork",
        "--no-session",
        "--session-dir",
        "--system-prompt",
        "--append-system-prompt",
        "--no-context-files",
        "--list-models",
        "lsp",
        "acp",
        "demo",
    ] {
        assert!(help.contains(flag), "help lacks {flag}:\n{help}");
    }
}

#[test]
fn undo_takes_a_session_and_a_turn_and_continues_by_default() {
    assert_eq!(
        command(&["undo"]),
        Command::Undo {
            session: SessionChoice::Continue,
            session_dir: None,
            back_to: None,
        }
    );
    assert_eq!(
        command(&["undo", "--session", "0195", "--back-to", "a1b2c3d4"]),
        Command::Undo {
            session: SessionChoice::Open("0195".into()),
            session_dir: None,
            back_to: Some("a1b2c3d4".into()),
        }
    );
    assert!(error(&["undo", "-c", "--session", "x"]).contains("cannot be used with"));
    assert!(error(&["--session", "x", "undo"]).contains("tandem undo --session"));
}

#[test]
fn a_session_id_and_a_name_as_pi_takes_them() {
    let r = run(&[
        "--session-id",
        "my-run.1",
        "-n",
        "Release notes",
        "-p",
        "hi",
    ]);
    assert_eq!(r.session, SessionChoice::WithId("my-run.1".into()));
    assert_eq!(r.name.as_deref(), Some("Release notes"));
    assert_eq!(run(&["--name", "x"]).session, SessionChoice::New);
    for bad in ["-lead", "trail_", "sp ace", "", "é"] {
        let text = error(&[&format!("--session-id={bad}")]);
        assert!(
            text.contains("an id holds letters, digits"),
            "{bad}: {text}"
        );
    }
    let text = error(&["--session-id", "a", "-c", "--session", "b"]);
    assert!(
        text.contains("--session-id cannot be combined with --session, --continue"),
        "{text}"
    );
    assert!(error(&["--session-id", "a", "--fork", "b"])
        .contains("--session-id cannot be combined with --fork"));
    assert!(error(&["--name", "  "]).contains("--name needs a name"));
    // Accepted as pi's, with nothing to change here.
    assert_eq!(run(&["--verbose", "--offline"]).session, SessionChoice::New);
    // Protocol servers refuse them by name, like the other session flags.
    assert!(error(&["lsp", "--session-id", "a"]).contains("--session-id"));
}

#[test]
fn resume_names_its_session_or_asks_for_the_picker() {
    assert_eq!(
        run(&["-r", "0195", "-p", "hi"]).session,
        SessionChoice::Open("0195".into())
    );
    assert_eq!(
        run(&["--resume=a.jsonl"]).session,
        SessionChoice::Open("a.jsonl".into())
    );
    // Without a session: the picker (the interactive mode's; print mode refuses it when it
    // looks the session up).
    assert_eq!(run(&["-r"]).session, SessionChoice::Pick);
    assert_eq!(run(&["--resume"]).session, SessionChoice::Pick);
    assert!(error(&["-r", "a", "-c"]).contains("cannot be combined"));
    assert!(error(&["-r", "a", "--session-id", "b"]).contains("--resume"));
}

#[test]
fn export_takes_a_session_and_an_optional_output() {
    assert_eq!(
        command(&["--export", "s.jsonl"]),
        Command::Export {
            input: "s.jsonl".into(),
            output: None
        }
    );
    assert_eq!(
        command(&["--export", "s.jsonl", "out.html"]),
        Command::Export {
            input: "s.jsonl".into(),
            output: Some("out.html".into())
        }
    );
}
