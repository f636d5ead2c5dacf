//! What the client can set: authentication (pi's key configuration), the session's mode and its
//! configuration options (mode, model, thinking level).

use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    AuthenticateRequest, AuthenticateResponse, ConfigOptionUpdate, CurrentModeUpdate,
    SessionConfigOptionValue, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::Error;
use tandem_ai::registry::AgentDir;

use super::errors::{internal, invalid_params, setup_error};
use super::modes::{self, Mode, MODEL_OPTION, MODE_OPTION, THINKING_OPTION};
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

    /// `session/set_config_option`: the mode, the model (one with a usable key) or the thinking
    /// level (clamped to what the model can do).
    pub(super) async fn set_config_option(
        &self,
        request: SetSessionConfigOptionRequest,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        let session = self.get(&request.session_id.0)?;
        let SessionConfigOptionValue::ValueId { value } = &request.value else {
            return Err(invalid_params(format!(
                "option `{}` takes one of its listed values, not a boolean",
                request.config_id.0
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
                // What the model can do: `off` without reasoning, `high` for an unsupported
                // `xhigh`.
                let model = session.session.agent().with_state(|s| s.model.clone());
                session
                    .session
                    .set_thinking_level(model.effective_thinking(level))
                    .map_err(|e| internal(format!("could not set the thinking level: {e}")))?;
            }
            other => {
                return Err(invalid_params(format!(
                    "unknown option `{other}`; the options are {MODE_OPTION}, {MODEL_OPTION} and \
                     {THINKING_OPTION}"
                )))
            }
        }
        Ok(SetSessionConfigOptionResponse::new(
            session.config_options(),
        ))
    }
}
