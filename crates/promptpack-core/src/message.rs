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
}

impl Role {
    /// Every role, in the order above.
    pub const ALL: [Role; 4] = [Role::System, Role::User, Role::Assistant, Role::Tool];

    /// The role's name, as its block tag and the providers' APIs write it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// The role named `name`, as [`Role::as_str`] writes it.
    pub fn from_name(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.as_str() == name)
    }

    /// Whether a message of this role names what it answers (a tool's
    /// name): `{{#tool name}}`.
    pub const fn takes_name(self) -> bool {
        matches!(self, Role::Tool)
    }
}

/// One message of a conversation, as a render sends it and a history is
/// given: who speaks, what is said, and for a tool result the tool's name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Message {
    /// Who speaks it.
    pub role: Role,
    /// What is said.
    pub content: String,
    /// For a tool result, the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Message {
    /// A message of `role` saying `content`.
    pub fn new(role: Role, content: impl Into<String>) -> Message {
        Message {
            role,
            content: content.into(),
            name: None,
        }
    }

    /// The result `content` of a call to tool `name`.
    pub fn tool(name: impl Into<String>, content: impl Into<String>) -> Message {
        Message {
            role: Role::Tool,
            content: content.into(),
            name: Some(name.into()),
        }
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
