//! What the client can set: authentication (pi's key configuration), the session's mode and its
//! configuration options (mode, model, thinking level, automatic compaction).

use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    AuthenticateRequest, AuthenticateResponse, ConfigOptionUpdate, CurrentModeUpdate,
    SessionConfigOptionValue, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::Error;
use tandem_ai::registry::AgentDir;

use super::errors::{internal, invalid_params, setup_error};
use super::modes::{
    self, Mode, AUTO_COMPACT_OPTION, MODEL_OPTION, MODE_OPTION, OFF, ON, THINKING_OPTION,
};
use super::{AcpAgent, AUTH_METHOD};
use crate::host::setup::{decide_trust, prepare, switch_model, SessionRequest, SetupError};
use crate::host::Origin;

impl AcpAgent {
    /// `authenticate`: whether a session could start now, checked the way `session/new` checks
    /// it (the host's setup of an in-memory session in the agent's directory), so the answer
    /// names the same missing key or broken file.
    pub(super) async fn authenticate(
        &self,
        request: AuthenticateRequest,
    ) -> Result<AuthenticateResponse, Error> {
        if request.method_id.0.as_ref() != AUTH_METHOD {
            return Err(invalid_params(format!(
                "unknown authentication method `{}`; Tandem offers `{AUTH_METHOD}`",
                request.method_id.0
            )));
        }
        let options = self.options.clone();
        tokio::task::spawn_blocking(move || -> Result<(), Error> {
            let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
            let agent_dir = AgentDir::from_env()
                .map_err(|e| setup_error(SetupError::AgentDir(e.to_string())))?;
            let trust = decide_trust(&agent_dir, &cwd, options.approve, &mut |_| {});
            prepare(SessionRequest {
                agent_dir,
                cwd,
                options: &options,
                origin: Origin::InMemory,
                trust,
                trust_problems: Vec::new(),
                model: None,
            })
            .map_err(setup_error)?;
            Ok(())
        })
        .await
        .unwrap_or_else(|e| Err(internal(format!("the key check failed: {e}"))))
        .map(|()| AuthenticateResponse::new())
    }

    /// `session/set_mode`.
    pub(super) fn set_mode(
        &self,
        request: SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, Error> {
        let session = self.get(&request.session_id.0)?;
        let mode = Mode::from_id(&request.mode_id.0).ok_or_else(|| {
            invalid_params(format!(
                "unknown mode `{}`; the modes are {}",
                request.mode_id.0,
                Mode::ALL.map(Mode::id).join(", ")
            ))
        })?;
        session.workspace.set_mode(mode);
        session.notify(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
            mode.id(),
        )));
        session.notify(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
            session.config_options(),
        )));
        Ok(SetSessionModeResponse::new())
    }

    /// `session/set_config_option`: the mode, the model (one with a usable key; the thinking
    /// level follows what it can do), the thinking level (one the model has) or automatic
    /// compaction (on or off).
    pub(super) async fn set_config_option(
        &self,
        request: SetSessionConfigOptionRequest,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        let session = self.get(&request.session_id.0)?;
        let id = request.config_id.0.as_ref();
        if id == AUTO_COMPACT_OPTION {
            let on = match &request.value {
                SessionConfigOptionValue::ValueId { value } => modes::switch_from_id(&value.0),
                other => other.as_bool(),
            };
            let Some(on) = on else {
                return Err(invalid_params(format!(
                    "option `{AUTO_COMPACT_OPTION}` is on or off: send the value `{ON}` or \
                     `{OFF}` (or a boolean, for a client that declared boolean options)"
                )));
            };
            session.session.set_auto_compaction(on);
            return Ok(SetSessionConfigOptionResponse::new(
                session.config_options(),
            ));
        }
        if ![MODE_OPTION, MODEL_OPTION, THINKING_OPTION].contains(&id) {
            return Err(unknown_option(id));
        }
        let SessionConfigOptionValue::ValueId { value } = &request.value else {
            return Err(invalid_params(format!(
                "option `{id}` takes one of its listed values, not a boolean"
            )));
        };
        let value = value.0.to_string();
        match request.config_id.0.as_ref() {
            MODE_OPTION => {
                let mode = Mode::from_id(&value)
                    .ok_or_else(|| invalid_params(format!("unknown mode `{value}`")))?;
                session.workspace.set_mode(mode);
                session.notify(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                    mode.id(),
                )));
            }
            MODEL_OPTION => {
                let (registry, agent) = (session.registry.clone(), session.session.clone());
                tokio::task::spawn_blocking(move || {
                    let model = registry
                        .all()
                        .iter()
                        .find(|&m| modes::model_value(m) == value)
                        .cloned()
                        .ok_or_else(|| {
                            invalid_params(format!(
                                "unknown model `{value}`; pick one of the option's values"
                            ))
                        })?;
                    switch_model(&agent, &registry, model).map_err(setup_error)
                })
                .await
                .map_err(|e| internal(format!("choosing the model failed: {e}")))??;
            }
            THINKING_OPTION => {
                let level = modes::thinking_from_id(&value)
                    .ok_or_else(|| invalid_params(format!("unknown thinking level `{value}`")))?;
                // Only a level the option offers: the ones the current model has.
                let model = session.session.agent().with_state(|s| s.model.clone());
                let levels = modes::thinking_levels(&model);
                if !levels.contains(&level) {
                    return Err(invalid_params(format!(
                        "model `{}` has no thinking level `{value}`; its levels are {}",
                        modes::model_value(&model),
                        levels
                            .iter()
                            .map(|l| l.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
                session
                    .session
                    .set_thinking_level(level)
                    .map_err(|e| internal(format!("could not set the thinking level: {e}")))?;
            }
            other => return Err(unknown_option(other)),
        }
        Ok(SetSessionConfigOptionResponse::new(
            session.config_options(),
        ))
    }
}

fn unknown_option(id: &str) -> Error {
    invalid_params(format!(
        "unknown option `{id}`; the options are {MODE_OPTION}, {MODEL_OPTION}, {THINKING_OPTION} \
         and {AUTO_COMPACT_OPTION}"
    ))
}
