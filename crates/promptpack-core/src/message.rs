//! The roles of a conversation's messages, as `messages.md` writes them.

/// Who speaks a message of a conversation.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Role {
    /// Instructions to the model: `system.md`, or a `{{#system}}` block.
    System,
    /// The person (or the program) asking: `{{#user}}`.
    User,
    /// The model's answer, shown as an example: `{{#assistant}}`.
    Assistant,
    /// The result of a call to a tool, shown as an example:
    /// `{{#tool name}}`.
    Tool,
    /// The model calling a tool, shown as an example (`{{#call name}}`,
    /// its arguments as JSON) or kept in a history. Chat APIs have no role
    /// of this name: the adapters send it as the assistant's tool call,
    /// and a `Tool` result after it as that call's answer.
    Call,
}

impl Role {
    /// Every role, in the order above.
    pub const ALL: [Role; 5] = [
        Role::System,
        Role::User,
        Role::Assistant,
        Role::Tool,
        Role::Call,
    ];

    /// The role's name, as its block tag writes it (and the providers'
    /// APIs, but for `call`, which they send as an assistant's message).
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Call => "call",
        }
    }

    /// The role named `name`, as [`Role::as_str`] writes it.
    pub fn from_name(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.as_str() == name)
    }

    /// Whether a message of this role names a tool: the one it calls
    /// (`{{#call name}}`) or the one whose result it is (`{{#tool name}}`).
    pub const fn takes_name(self) -> bool {
        matches!(self, Role::Tool | Role::Call)
    }
}

/// One message of a conversation, as a render sends it and a history is
/// given: who speaks, what is said, and for a tool's call or result the
/// tool's name and the call's id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Message {
    /// Who speaks it.
    pub role: Role,
    /// What is said; for a call, its arguments as JSON text.
    pub content: String,
    /// For a call or a tool result, the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// For a call, its id; for a tool result, the id of the call it
    /// answers. A history of an agent's own calls keeps the ids the model
    /// gave; a prompt's example calls and results have none, and the
    /// adapters pair each result with the call of its tool before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl Message {
    /// A message of `role` saying `content`.
    pub fn new(role: Role, content: impl Into<String>) -> Message {
        Message {
            role,
            content: content.into(),
            name: None,
            id: None,
        }
    }

    /// The result `content` of a call to tool `name`.
    pub fn tool(name: impl Into<String>, content: impl Into<String>) -> Message {
        Message {
            role: Role::Tool,
            content: content.into(),
            name: Some(name.into()),
            id: None,
        }
    }

    /// A call of tool `name` with `arguments` (JSON text): the model's
    /// call, for a history.
    ///
    /// ```
    /// use promptpack_core::message::{Message, Role};
    /// let history = [
    ///     Message::call("order_status", r#"{"order": "1234"}"#).with_id("call_7"),
    ///     Message::tool("order_status", r#"{"status": "delivered"}"#).with_id("call_7"),
    /// ];
    /// assert_eq!(history[0].role, Role::Call);
    /// assert_eq!(history[1].id.as_deref(), Some("call_7"));
    /// ```
    pub fn call(name: impl Into<String>, arguments: impl Into<String>) -> Message {
        Message {
            role: Role::Call,
            content: arguments.into(),
            name: Some(name.into()),
            id: None,
        }
    }

    /// The message's heading, as the CLI, the snapshots and the console
    /// write it over its text: its role, the tool a call or a result
    /// names, and the call's id when it has one.
    ///
    /// ```
    /// use promptpack_core::message::{Message, Role};
    /// assert_eq!(Message::new(Role::User, "Hi").label(), "user");
    /// assert_eq!(Message::tool("lookup", "{}").label(), "tool lookup");
    /// assert_eq!(Message::call("lookup", "{}").with_id("call_1").label(), "call lookup (id call_1)");
    /// ```
    pub fn label(&self) -> String {
        let mut label = self.role.as_str().to_string();
        if let Some(name) = &self.name {
            label.push(' ');
            label.push_str(name);
        }
        if let Some(id) = &self.id {
            label.push_str(" (id ");
            label.push_str(id);
            label.push(')');
        }
        label
    }

    /// This message with the call id `id`: the id the model gave its call,
    /// on the call and on the result that answers it.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Message {
        self.id = Some(id.into());
        self
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_role_reads_back_from_its_name() {
        for role in Role::ALL {
            assert_eq!(Role::from_name(role.as_str()), Some(role));
        }
        assert_eq!(Role::from_name("User"), None);
        assert_eq!(Role::from_name("human"), None);
    }
}
