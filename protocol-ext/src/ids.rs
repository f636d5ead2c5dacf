//! Identifier newtypes, so a session id is never confused with a tool-call id or a path.
//!
//! Both serialize as plain JSON strings.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A live session of the server (the id of its session file's header).
///
/// Every `tandem/event` names its session, and every request that acts on a session takes one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionId(pub String);

/// A tool call's id, as the model (or the provider layer) assigned it.
///
/// Ties together `toolcall_*` (the model writing the call) and `tool_*` (the tool running).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolCallId(pub String);

macro_rules! string_id {
    ($name:ident) => {
        impl $name {
            /// The id as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                $name(s)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                $name(s.to_string())
            }
        }
    };
}

string_id!(SessionId);
string_id!(ToolCallId);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_are_plain_strings_on_the_wire() {
        let id = SessionId::from("s-1");
        assert_eq!(serde_json::to_value(&id).unwrap(), json!("s-1"));
        assert_eq!(
            serde_json::from_value::<ToolCallId>(json!("call_7")).unwrap(),
            ToolCallId::from("call_7")
        );
        assert_eq!(id.to_string(), "s-1");
        assert_eq!(id.as_str(), "s-1");
    }
}
