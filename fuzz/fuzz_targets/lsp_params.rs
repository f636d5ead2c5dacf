//! LSP message decoding past JSON-RPC framing: every `tandem/*` request's params, the
//! `tandem/event` notification, the configuration parser and `workspace/executeCommand`
//! arguments, as the server's handlers read them.
//!
//! Input: a selector byte, then JSON text (the params). Selectors 0–10 are the requests in
//! `methods::REQUESTS` order, parsed with `errors::parse_params` (what the server's handlers
//! call); 11 `tandem/event`; 12 `initializationOptions` (`TandemConfig` and the server's
//! `ServerConfig`); 13 `workspace/didChangeConfiguration` params; 14 `workspace/executeCommand`
//! params. Checks: no panic; a parse error is -32602 and names its method; whatever parses
//! serializes and parses back to the same JSON; the configuration read back from its own
//! serialization has no warnings and is the same. `tandem/prompt` params that parse also go
//! through the server's editor context (`PendingContext`: read, then rendered) on an open
//! document holding the prompt's text.
#![no_main]

use std::path::Path;
use std::sync::Mutex;

use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tandem::lsp::actions::DiagnosticMemory;
use tandem::lsp::config::ServerConfig;
use tandem::lsp::documents::DocumentStore;
use tandem::lsp::position::PositionEncoding;
use tandem::lsp::prompt_context::PendingContext;
use tandem_protocol::commands::Command;
use tandem_protocol::config::{ModelRef, TandemConfig};
use tandem_protocol::errors::parse_params;
use tandem_protocol::events::EventNotification;
use tandem_protocol::requests::*;
use tandem_protocol::Request;

fn check<R: Request>(params: &Value) -> Option<R> {
    match parse_params::<R>(params.clone()) {
        Ok(parsed) => {
            let json = serde_json::to_value(&parsed).expect("serializes");
            let again: R = parse_params(json.clone()).expect("its own JSON parses");
            assert_eq!(
                serde_json::to_value(&again).expect("serializes"),
                json,
                "{}",
                R::METHOD
            );
            Some(parsed)
        }
        Err(e) => {
            assert_eq!(e.code, -32602, "{e}");
            assert!(e.message.contains(R::METHOD), "{e}");
            None
        }
    }
}

fn roundtrip<T: Serialize + DeserializeOwned>(value: &Value) {
    if let Ok(parsed) = serde_json::from_value::<T>(value.clone()) {
        let json = serde_json::to_value(&parsed).expect("serializes");
        let again: T = serde_json::from_value(json.clone()).expect("its own JSON parses");
        assert_eq!(serde_json::to_value(&again).expect("serializes"), json);
    }
}

fn config(value: &Value) {
    let parsed = TandemConfig::from_initialization_options(value);
    let json = serde_json::to_value(&parsed.config).expect("serializes");
    let again = TandemConfig::parse(&json, "again");
    assert!(again.warnings.is_empty(), "{json}: {:?}", again.warnings);
    assert_eq!(again.config, parsed.config);
    if let Some(model) = &parsed.config.model {
        assert_eq!(ModelRef::parse(&model.to_string()).as_ref(), Some(model));
    }
    let server = ServerConfig::default();
    let _ = server.apply_initialization_options(Some(value));
    let _ = server.apply_settings(value);
    let _ = server.get();
}

fn prompt(p: &PromptParams) {
    let Some(ctx) = &p.context else {
        return;
    };
    // Only the open document: a URI the store does not hold would be read from disk.
    let mut ctx = ctx.clone();
    let _ = tandem::uri::to_path(&ctx.uri);
    let (uri, language) = if p.text.len() % 2 == 0 {
        ("file:///fuzz/src/lib.rs", "rust")
    } else {
        ("file:///fuzz/app.py", "python")
    };
    ctx.uri = uri.to_string();
    let mut store = DocumentStore::new(PositionEncoding::Utf16);
    store.open(uri, language, 1, &p.text);
    let docs = Mutex::new(store);
    let memory = DiagnosticMemory::default();
    let diagnostics = PendingContext::diagnostics_of(&ctx, &memory);
    if let Ok(pending) = PendingContext::read(&docs, &ctx, Path::new("/fuzz"), diagnostics) {
        let _ = pending.render();
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, json)) = data.split_first() else {
        return;
    };
    let Ok(value) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    match selector % 15 {
        0 => {
            if let Some(p) = check::<PromptParams>(&value) {
                prompt(&p);
            }
        }
        1 => drop(check::<AbortParams>(&value)),
        2 => drop(check::<SessionsNewParams>(&value)),
        3 => drop(check::<SessionsListParams>(&value)),
        4 => drop(check::<SessionsOpenParams>(&value)),
        5 => drop(check::<SessionsForkParams>(&value)),
        6 => drop(check::<StateParams>(&value)),
        7 => drop(check::<ModelsListParams>(&value)),
        8 => drop(check::<ModelsSetParams>(&value)),
        9 => drop(check::<ThinkingSetParams>(&value)),
        10 => drop(check::<CompactParams>(&value)),
        11 => roundtrip::<EventNotification>(&value),
        12 => config(&value),
        13 => {
            let settings = value.get("settings").unwrap_or(&value);
            if let Some(parsed) = TandemConfig::from_settings(settings) {
                let json = serde_json::to_value(&parsed.config).expect("serializes");
                assert_eq!(TandemConfig::parse(&json, "again").config, parsed.config);
            }
            let _ = ServerConfig::default().apply_settings(settings);
        }
        _ => {
            let command = value.get("command").and_then(Value::as_str).unwrap_or("");
            let arguments = match value.get("arguments") {
                Some(Value::Array(a)) => a.clone(),
                _ => Vec::new(),
            };
            match Command::parse(command, &arguments) {
                Ok(c) => {
                    let again =
                        Command::parse(c.name(), &c.arguments()).expect("its own arguments parse");
                    assert_eq!(again.arguments(), c.arguments());
                    let _ = c.title();
                    let _ = c.code_action_kind();
                }
                Err(e) => assert_eq!(e.code, -32602, "{e}"),
            }
        }
    }
});
