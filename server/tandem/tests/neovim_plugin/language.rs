//! The plugin's language intelligence with real language servers: ruff and basedpyright (from
//! `scripts/install-language-servers`) attached next to Tandem in Neovim, on the two-file Python
//! project of `neovim_plugin/python/`. `language.lua` runs the `tandem/diagnostics` and
//! `tandem/languageRequest` handlers as Neovim runs a server request's handler;
//! `code_actions.lua` asks for code actions on a line with diagnostics of both servers.
//!
//! Without the language servers these tests fail, saying what to run.

use std::path::PathBuf;

use serde_json::{json, Value};
use tandem_tests::mock_llm::MockLlm;

use super::{manifest_dir, run_scenario, run_scenario_in, strings, Outcome, MODEL};

fn language_servers() -> PathBuf {
    tandem_tests::langservers::bin().to_path_buf()
}

fn fixture_dir() -> PathBuf {
    manifest_dir().join("tests/neovim_plugin/python")
}

fn fixture_text(file: &str) -> String {
    std::fs::read_to_string(fixture_dir().join(file)).expect("fixture file")
}

/// Runs `scenario` in a copy of the Python project, with the language servers' folder in
/// `TANDEM_LANGSERVERS` and `env`.
async fn run(scenario: &str, env: &[(&str, &str)]) -> Outcome {
    let mock = MockLlm::start().await.expect("mock LLM");
    run_with(scenario, env, &mock).await
}

/// [`run`] with the model answering from `mock`.
pub(super) async fn run_with(scenario: &str, env: &[(&str, &str)], mock: &MockLlm) -> Outcome {
    let servers = language_servers();
    let servers = servers.display().to_string();
    let mut all = vec![("TANDEM_LANGSERVERS", servers.as_str())];
    all.extend_from_slice(env);
    run_scenario_in(scenario, mock, MODEL, &all, |project| {
        for entry in std::fs::read_dir(fixture_dir()).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), project.join(entry.file_name())).unwrap();
        }
    })
    .await
}

/// A column of `line` in the negotiated encoding, for byte index `byte`.
fn column(line: &str, byte: usize, encoding: &str) -> u64 {
    let before = &line[..byte];
    match encoding {
        "utf-8" => before.len() as u64,
        "utf-16" => before.encode_utf16().count() as u64,
        other => panic!("unexpected encoding {other}"),
    }
}

/// The text a one-line LSP range covers in `text`, read in `encoding`.
fn text_at(text: &str, range: &Value, encoding: &str) -> String {
    let line_no = range["start"]["line"].as_u64().expect("range") as usize;
    assert_eq!(range["end"]["line"], range["start"]["line"], "{range}");
    let line = text.lines().nth(line_no).unwrap_or("");
    let byte = |character: u64| {
        (0..=line.len())
            .filter(|b| line.is_char_boundary(*b))
            .find(|b| column(line, *b, encoding) >= character)
            .unwrap_or(line.len())
    };
    let start = byte(range["start"]["character"].as_u64().expect("start"));
    let end = byte(range["end"]["character"].as_u64().expect("end"));
    line[start..end].to_string()
}

fn uri_file(uri: &Value) -> String {
    uri.as_str()
        .and_then(|u| u.rsplit('/').next())
        .unwrap_or_default()
        .to_string()
}

/// The text of `file` as the scenario saw it: app.py from its buffer (the scenario appended a
/// line), the others from the fixture.
fn text_of(out: &Outcome, file: &str) -> String {
    if file == "app.py" {
        strings(&out.result["app_lines"]).join("\n")
    } else {
        fixture_text(file)
    }
}

fn sources(file: &Value) -> Vec<String> {
    let mut s: Vec<String> = file["diagnostics"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|d| d["source"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    s.sort();
    s.dedup();
    s
}

async fn language_requests_and_diagnostics(encoding: &str) {
    let env: &[(&str, &str)] = if encoding == "utf-16" {
        &[("TANDEM_ENCODING", "utf-16")]
    } else {
        &[]
    };
    let out = run("language", env).await;
    let r = &out.result;
    let ctx = &out.context;
    assert_eq!(r["offset_encoding"], encoding, "Tandem's encoding\n{ctx}");
    let tandem_caps = &r["client_capabilities"]["tandem"];
    assert_eq!(tandem_caps["diagnostics"], true, "{ctx}");
    assert_eq!(tandem_caps["languageRequests"], true, "{ctx}");

    // Tandem's own diagnostics do not count.
    assert_eq!(
        r["tandem_generation"]["before"], r["tandem_generation"]["after"],
        "{ctx}"
    );

    // Now: app.py with both servers' diagnostics, nothing of Tandem's; the document that is not
    // loaded and the missing one with generation 0 and nothing.
    let now = &r["now"];
    assert_eq!(
        now["yielded"], false,
        "answered at once without `after`\n{ctx}"
    );
    let files = now["result"]["files"].as_array().expect("files");
    assert_eq!(files.len(), 3, "{ctx}");
    let app = &files[0];
    assert_eq!(uri_file(&app["uri"]), "app.py", "{ctx}");
    assert_eq!(app["analyzed"], true, "{ctx}");
    assert!(app["generation"].as_u64().unwrap_or(0) > 0, "{ctx}");
    assert_eq!(sources(app), ["Ruff", "basedpyright"], "{ctx}");
    let all = app["diagnostics"].as_array().unwrap();
    assert!(
        !all.iter().any(|d| d["message"] == "from Tandem itself"),
        "Tandem's own diagnostic was reported\n{ctx}"
    );
    // The type error on `"été"`, after `naïve`: its columns in Tandem's encoding.
    let app_text = fixture_text("app.py");
    let line0 = app_text.lines().next().unwrap();
    let assignment = all
        .iter()
        .find(|d| d["code"] == "reportAssignmentType")
        .unwrap_or_else(|| panic!("no reportAssignmentType\n{ctx}"));
    assert_eq!(assignment["severity"], 1, "{ctx}");
    assert_eq!(
        assignment["range"]["start"]["character"],
        column(line0, line0.find("\"été\"").unwrap(), encoding),
        "{ctx}"
    );
    assert_eq!(
        text_at(&app_text, &assignment["range"], encoding),
        "\"été\""
    );
    let unused = all
        .iter()
        .find(|d| d["code"] == "F401")
        .unwrap_or_else(|| panic!("no F401 from ruff\n{ctx}"));
    assert_eq!(text_at(&app_text, &unused["range"], encoding), "os");
    for (i, name) in [(1, "models.py"), (2, "missing.py")] {
        assert_eq!(uri_file(&files[i]["uri"]), name, "{ctx}");
        assert_eq!(files[i]["generation"], 0, "{ctx}");
        assert_eq!(files[i]["diagnostics"], serde_json::json!([]), "{ctx}");
        assert!(files[i].get("analyzed").is_none(), "{ctx}");
    }
    assert_eq!(now["result"]["settled"], true, "{ctx}");
    // Without `uris`: every document with diagnostics, which is app.py.
    let everything = r["everything"]["result"]["files"]
        .as_array()
        .expect("files");
    let names: Vec<String> = everything.iter().map(|f| uri_file(&f["uri"])).collect();
    assert_eq!(names, ["app.py"], "{ctx}");

    // After an edit: answered later, once the generation went up and things settled, with the
    // new error of both servers.
    let after = &r["after_edit"];
    assert_eq!(after["yielded"], true, "{ctx}");
    assert_eq!(after["result"]["settled"], true, "{ctx}");
    let file = &after["result"]["files"][0];
    assert!(
        file["generation"].as_u64().unwrap_or(0) > r["generation_before_edit"].as_u64().unwrap(),
        "{ctx}"
    );
    let new_error: Vec<&Value> = file["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| {
            d["message"]
                .as_str()
                .unwrap_or("")
                .contains("undefined_thing")
        })
        .collect();
    let new_sources: Vec<&str> = new_error
        .iter()
        .map(|d| d["source"].as_str().unwrap_or(""))
        .collect();
    assert!(
        new_sources.contains(&"Ruff") && new_sources.contains(&"basedpyright"),
        "{new_sources:?}\n{ctx}"
    );
    // Nothing changes: not settled, after waitMs (700 ms).
    let idle = &r["no_change"];
    assert_eq!(idle["result"]["settled"], false, "{ctx}");
    let ms = idle["ms"].as_f64().unwrap();
    assert!(
        (690.0..5000.0).contains(&ms),
        "answered after {ms} ms\n{ctx}"
    );
    // No language server on notes.txt: not analyzed, answered without waiting for waitMs.
    let notes = &r["not_analyzed"];
    assert_eq!(notes["result"]["settled"], true, "{ctx}");
    assert_eq!(notes["result"]["files"][0]["analyzed"], false, "{ctx}");
    assert!(notes["ms"].as_f64().unwrap() < 5000.0, "{ctx}");

    // tandem/languageRequest: `total` on line 4, after non-ASCII text.
    let models = fixture_text("models.py");
    let line3 = app_text.lines().nth(3).unwrap();
    assert_eq!(
        r["at"]["character"],
        column(line3, line3.find("total").unwrap(), encoding),
        "{ctx}"
    );
    let definition = &r["definition"]["result"];
    assert_eq!(definition["servers"], 1, "basedpyright only\n{ctx}");
    let targets = definition["result"].as_array().expect("locations");
    assert_eq!(targets.len(), 1, "{ctx}");
    let target = &targets[0];
    let (uri, range) = match target.get("targetUri") {
        Some(uri) => (uri, &target["targetSelectionRange"]),
        None => (&target["uri"], &target["range"]),
    };
    assert_eq!(uri_file(uri), "models.py", "{ctx}");
    assert_eq!(range["start"]["line"], 0, "{ctx}");
    assert_eq!(text_at(&models, range, encoding), "total", "{ctx}");

    let references = r["references"]["result"]["result"]
        .as_array()
        .expect("references");
    let mut places: Vec<(String, u64)> = Vec::new();
    for loc in references {
        let file = uri_file(&loc["uri"]);
        assert_eq!(
            text_at(&text_of(&out, &file), &loc["range"], encoding),
            "total",
            "{loc}\n{ctx}"
        );
        places.push((file, loc["range"]["start"]["line"].as_u64().unwrap()));
    }
    places.sort();
    assert_eq!(
        places,
        [
            ("app.py".to_string(), 1),
            ("app.py".to_string(), 3),
            ("models.py".to_string(), 0)
        ],
        "{ctx}"
    );

    let hover = &r["hover"]["result"];
    assert_eq!(
        hover["servers"], 2,
        "ruff and basedpyright both hover\n{ctx}"
    );
    assert_eq!(hover["result"]["contents"]["kind"], "markdown", "{ctx}");
    let value = hover["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(
        value.contains("total") && value.contains("42"),
        "{value}\n{ctx}"
    );
    assert_eq!(
        text_at(&app_text, &hover["result"]["range"], encoding),
        "total",
        "{ctx}"
    );

    let rename = &r["rename"]["result"];
    assert_eq!(rename["servers"], 1, "{ctx}");
    let edit = &rename["result"];
    let mut edits: Vec<(String, Value)> = Vec::new();
    if let Some(changes) = edit["changes"].as_object() {
        for (uri, list) in changes {
            for e in list.as_array().unwrap() {
                edits.push((uri_file(&Value::from(uri.as_str())), e.clone()));
            }
        }
    }
    for change in edit["documentChanges"].as_array().into_iter().flatten() {
        for e in change["edits"].as_array().into_iter().flatten() {
            edits.push((uri_file(&change["textDocument"]["uri"]), e.clone()));
        }
    }
    assert_eq!(edits.len(), 3, "{edit}\n{ctx}");
    for (file, e) in &edits {
        assert_eq!(e["newText"], "grand_total", "{ctx}");
        assert_eq!(
            text_at(&text_of(&out, file), &e["range"], encoding),
            "total",
            "{file}: {e}\n{ctx}"
        );
    }

    let symbols = &r["document_symbols"]["result"];
    assert_eq!(symbols["servers"], 1, "{ctx}");
    let zoe = symbols["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "zoë")
        .unwrap_or_else(|| panic!("no symbol zoë\n{ctx}"));
    let zoe_range = zoe
        .get("selectionRange")
        .unwrap_or(&zoe["location"]["range"]);
    assert_eq!(text_at(&app_text, zoe_range, encoding), "zoë", "{ctx}");
    let naive = symbols["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "naïve")
        .unwrap_or_else(|| panic!("no symbol naïve\n{ctx}"));
    let naive_range = naive
        .get("selectionRange")
        .unwrap_or(&naive["location"]["range"]);
    assert_eq!(text_at(&app_text, naive_range, encoding), "naïve", "{ctx}");

    let workspace = &r["workspace_symbols"]["result"];
    assert!(workspace["servers"].as_u64().unwrap_or(0) >= 1, "{ctx}");
    let user = workspace["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "User" && uri_file(&s["location"]["uri"]) == "models.py")
        .unwrap_or_else(|| panic!("no User in models.py\n{ctx}"));
    assert_eq!(
        text_at(&models, &user["location"]["range"], encoding),
        "User",
        "{ctx}"
    );

    // Nobody to ask: a document not loaded, a file no server looks at; an unknown method.
    for key in ["not_loaded", "no_server"] {
        assert_eq!(r[key]["result"]["servers"], 0, "{key}\n{ctx}");
        assert_eq!(r[key]["result"]["result"], Value::Null, "{key}\n{ctx}");
    }
    assert_eq!(r["unknown_method"]["error"]["code"], -32601, "{ctx}");
}

/// `tandem/diagnostics` and `tandem/languageRequest` answered through ruff and basedpyright,
/// positions in UTF-8 (what Tandem negotiates with Neovim).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn language_intelligence_comes_from_the_editors_language_servers_in_utf8() {
    language_requests_and_diagnostics("utf-8").await;
}

/// The same with Tandem on UTF-16 (the plugin offers it only that): every position is
/// converted between Tandem's encoding, Neovim's bytes and each server's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn language_intelligence_converts_positions_when_tandem_speaks_utf16() {
    language_requests_and_diagnostics("utf-16").await;
}

/// "Ask Tandem to fix" for every diagnostic on the cursor's line, the cursor outside all of
/// them, inside one, or inside one that spans the others; the code action request carries every
/// diagnostic of the line, from both servers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fix_actions_cover_every_diagnostic_on_the_line_from_every_server() {
    let out = run("code_actions", &[]).await;
    let r = &out.result;
    let ctx = &out.context;
    let line_messages: Vec<String> = r["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| d["message"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(line_messages.len() >= 3, "{ctx}");
    for case in ["outside", "inside", "on_import"] {
        let c = &r[case];
        let titles = strings(&c["titles"]);
        let fixes: Vec<&String> = titles
            .iter()
            .filter(|t| t.starts_with("Ask Tandem to fix: "))
            .collect();
        // One fix per diagnostic of the line, none twice.
        assert_eq!(
            fixes.len(),
            line_messages.len(),
            "{case}: {titles:#?}\n{ctx}"
        );
        for message in &line_messages {
            let first: String = message
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(40)
                .collect();
            assert!(
                fixes.iter().any(|t| t.contains(&first)),
                "{case}: no fix for {message:?} in {titles:#?}\n{ctx}"
            );
        }
        // The request at the cursor carried every diagnostic of the line, from both servers.
        let requests = c["requests"].as_array().expect("requests");
        let at_cursor = &requests[0];
        assert_eq!(
            at_cursor["range"]["start"], at_cursor["range"]["end"],
            "{case}: the request at the cursor\n{ctx}"
        );
        let sent = at_cursor["context"]["diagnostics"].as_array().unwrap();
        assert_eq!(sent.len(), line_messages.len(), "{case}\n{ctx}");
        let mut sent_sources: Vec<&str> = sent
            .iter()
            .map(|d| d["source"].as_str().unwrap_or(""))
            .collect();
        sent_sources.sort();
        sent_sources.dedup();
        assert_eq!(sent_sources, ["Ruff", "basedpyright"], "{case}\n{ctx}");
        assert!(
            sent.iter().all(|d| d["range"]["start"]["line"] == 0),
            "{case}\n{ctx}"
        );
    }
}

#[test]
fn text_at_reads_ranges_in_either_encoding() {
    let text = "a\ncafé = \"crème\"; total = 42\n";
    let range = |s: u64, e: u64| serde_json::json!({"start": {"line": 1, "character": s}, "end": {"line": 1, "character": e}});
    assert_eq!(text_at(text, &range(18, 23), "utf-8"), "total");
    assert_eq!(text_at(text, &range(16, 21), "utf-16"), "total");
    assert_eq!(column("café = ", "café = ".len(), "utf-16"), 7);
}

/// Answers of different shapes merged, a server that never answers, every server failing
/// (`language_merge.lua`, with in-process stand-in servers that speak UTF-16 and echo the
/// position they were asked about).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn language_answers_of_every_shape_merge_and_a_silent_server_times_out() {
    let mock = MockLlm::start().await.expect("mock LLM");
    let out = run_scenario("language_merge", &mock).await;
    let r = &out.result;
    let ctx = &out.context;
    assert_eq!(r["offset_encoding"], "utf-8", "{ctx}");
    assert_eq!(r["encodings"], json!(["utf-16", "utf-16"]), "{ctx}");
    // "é👋 = target": `target` at byte 9, UTF-16 unit 6.
    assert_eq!(r["position"], json!({"line": 0, "character": 9}), "{ctx}");
    let one_char =
        json!({"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 10}});

    // A LocationLink and a Location: all Locations, each echoed position back in UTF-8.
    let definition = &r["definition"]["result"];
    assert_eq!(definition["servers"], 2, "{ctx}");
    let locations = definition["result"].as_array().expect("locations");
    assert_eq!(locations.len(), 2, "{ctx}");
    for loc in locations {
        assert!(loc.get("targetUri").is_none(), "{loc}\n{ctx}");
        assert_eq!(loc["range"], one_char, "{ctx}");
    }

    // Hovers joined into one markdown text; the silent server left out after the timeout.
    let hover = &r["hover"];
    assert_eq!(hover["result"]["servers"], 3, "{ctx}");
    assert_eq!(
        hover["result"]["result"]["contents"],
        json!({"kind": "markdown",
               "value": "plain words\n\n```python\ntarget: int\n```\n\n**target**"}),
        "{ctx}"
    );
    let ms = hover["ms"].as_f64().unwrap();
    assert!(
        (390.0..5000.0).contains(&ms),
        "answered after {ms} ms\n{ctx}"
    );

    // A DocumentSymbol tree next to a SymbolInformation: flattened to SymbolInformation.
    let symbols = r["symbols"]["result"]["result"]
        .as_array()
        .expect("symbols");
    let names: Vec<(&str, Option<&str>)> = symbols
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["containerName"].as_str()))
        .collect();
    assert_eq!(
        names,
        [("outer", None), ("inner", Some("outer")), ("info", None)],
        "{ctx}"
    );
    // "outer" starts at UTF-16 unit 3 (after "é👋"): byte 6.
    assert_eq!(
        symbols[0]["location"]["range"]["start"]["character"], 6,
        "{ctx}"
    );
    assert_eq!(
        symbols[2]["location"]["range"]["start"]["character"], 6,
        "{ctx}"
    );

    // Every server failed: an error that names each.
    let error = &r["references"]["error"];
    assert_eq!(error["code"], -32803, "{ctx}");
    let message = error["message"].as_str().unwrap_or("");
    assert!(
        message.contains("links: links cannot find references")
            && message.contains("locations: locations cannot find references"),
        "{message}\n{ctx}"
    );
}
