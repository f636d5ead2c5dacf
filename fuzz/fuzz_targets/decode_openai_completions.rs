//! The OpenAI Chat Completions event decoder (`tandem_ai::providers::openai_completions::decode`) fed SSE events.
//!
//! Input: one byte picking the model, then one event per line (`name<TAB>data` or `data`;
//! see `tandem_fuzz::events_from_lines`). Checks: no panic; the stream keeps its contract
//! (start first, exactly one terminal event, last); the terminal event agrees with the
//! decoder's result.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tandem_ai::providers::openai_completions;
use tandem_ai::{Api, Model};
use tandem_fuzz::model;

fn models() -> &'static [Model] {
    static MODELS: OnceLock<Vec<Model>> = OnceLock::new();
    MODELS.get_or_init(|| {
        vec![
            model(Api::OpenAiCompletions, "openai", "gpt-4.1-mini"),
            model(Api::OpenAiCompletions, "openrouter", "deepseek/deepseek-r1"),
            model(Api::OpenAiCompletions, "zai", "glm-4.6"),
            model(Api::OpenAiCompletions, "deepseek", "deepseek-reasoner"),
        ]
    })
}

fuzz_target!(|data: &[u8]| {
    tandem_fuzz::fuzz_decoder(data, models(), async |source, writer, model| {
        openai_completions::decode(source, writer, model).await
    });
});
