//! A rendered prompt, whichever way it was rendered: by the generated code,
//! a `Library` or a live catalog version.

use crate::exchange::Exchange;
use crate::provenance::Provenance;
use promptpack_core::message::{Message, Role};
use std::fmt;

/// A rendered prompt: what to send to the model, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Prompt<Id = String> {
    /// Which prompt this is.
    pub id: Id,
    /// The rendered `system.md`.
    pub system: String,
    /// The rendered `user.md`, when the prompt has one.
    pub user: Option<String>,
    /// For a conversation (`messages.md`), the messages after the system
    /// message, in order, the history among them; empty for a prompt of
    /// `system.md` and `user.md`. [`Prompt::messages`] gives every message,
    /// the system message first, for either shape.
    pub messages: Vec<Message>,
    /// Stable content hash of the resolved template (snippets included), for
    /// logging and provenance. The same template gives the same hash in the
    /// generated code, a `Library` and the CLI, and it displays as
    /// `promptpack list` shows it (16 hex digits), so a log line can be
    /// matched against `list`.
    pub hash: PromptHash,
    /// Where the text came from, as one field for a log line or a trace
    /// span: it displays as `embedded` (generated code), `loaded` (a
    /// `Library`, or the dev hot reload) or `catalog agent-system v3
    /// label=production sha256:…` (a live catalog version).
    pub provenance: Provenance,
    /// What the request sends besides the messages: the tools and the
    /// response format the prompt's front matter declares (empty when it
    /// declares neither), as the adapters of the LLM crates put them in a
    /// request.
    pub exchange: Exchange,
}

impl<Id> Prompt<Id> {
    /// Every message to send, in order: the system message (`system.md`)
    /// first, then `user.md`'s text as the user message for a prompt of
    /// two files, or a conversation's messages.
    ///
    /// ```
    /// use promptpack::{Config, Library, Role, SourceFile, TemplateSource};
    /// let library = Library::from_sources(
    ///     vec![TemplateSource {
    ///         id: "ask".into(),
    ///         system: SourceFile::new("templates/ask/system.md", "Answer briefly."),
    ///         user: None,
    ///         messages: Some(SourceFile::new(
    ///             "templates/ask/messages.md",
    ///             "{{#user}}\nWhat is {{thing}}?\n{{/user}}\n",
    ///         )),
    ///     }],
    ///     vec![],
    ///     &Config::default(),
    /// )?;
    /// let prompt = library.build_prompt("ask", &serde_json::json!({"thing": "Rust"}))?;
    /// let sent: Vec<(Role, &str)> = prompt.messages().map(|m| (m.role, m.content)).collect();
    /// assert_eq!(sent, [(Role::System, "Answer briefly."), (Role::User, "What is Rust?")]);
    /// # Ok::<(), promptpack::Error>(())
    /// ```
    pub fn messages(&self) -> impl Iterator<Item = MessageRef<'_>> {
        let system = MessageRef {
            role: Role::System,
            content: &self.system,
            name: None,
            id: None,
        };
        std::iter::once(system).chain(self.after_system())
    }

    /// [`Prompt::messages`] after the system message: what a crate that
    /// takes the system message apart (genai's `system`) sends as its
    /// messages. An iterator of known length, as `messages()` is, so that
    /// a `collect` writes into a list of the right size.
    pub(crate) fn after_system(&self) -> impl Iterator<Item = MessageRef<'_>> {
        let user = self.user.as_deref().map(|content| MessageRef {
            role: Role::User,
            content,
            name: None,
            id: None,
        });
        user.into_iter()
            .chain(self.messages.iter().map(MessageRef::from))
    }
}

/// One message of a rendered prompt, borrowed from it
/// ([`Prompt::messages`]). It serializes as a chat API's message does,
/// `{"role": "user", "content": "…"}` (and `"name"` for a tool result), so
/// a request body is one `serde_json::json!` away:
///
/// ```
/// use promptpack::{Config, Library, SourceFile, TemplateSource};
/// let library = Library::from_sources(
///     vec![TemplateSource {
///         id: "ask".into(),
///         system: SourceFile::new("templates/ask/system.md", "Answer briefly."),
///         user: Some(SourceFile::new("templates/ask/user.md", "What is {{thing}}?")),
///         messages: None,
///     }],
///     vec![],
///     &Config::default(),
/// )?;
/// let prompt = library.build_prompt("ask", &serde_json::json!({"thing": "Rust"}))?;
/// let messages: Vec<_> = prompt.messages().collect();
/// let body = serde_json::json!({"model": "some-model", "messages": messages});
/// assert_eq!(
///     body["messages"],
///     serde_json::json!([
///         {"role": "system", "content": "Answer briefly."},
///         {"role": "user", "content": "What is Rust?"}
///     ])
/// );
/// # Ok::<(), promptpack::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct MessageRef<'a> {
    /// Who speaks it.
    pub role: Role,
    /// What is said.
    pub content: &'a str,
    /// For a call or a tool result, the tool's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'a str>,
    /// For a call or a tool result, the call's id, when the message has
    /// one (a history's, as the model gave it; a prompt's example calls
    /// have none, and the adapters number them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a str>,
}

impl<'a> From<&'a Message> for MessageRef<'a> {
    fn from(message: &'a Message) -> MessageRef<'a> {
        MessageRef {
            role: message.role,
            content: &message.content,
            name: message.name.as_deref(),
            id: message.id.as_deref(),
        }
    }
}

/// The content hash of a resolved template: what [`Prompt::hash`] holds.
/// It displays (and debugs) as 16 lowercase hex digits, as `promptpack
/// list` and `promptpack render --json` show it.
///
/// ```
/// use promptpack::PromptHash;
/// assert_eq!(PromptHash::from(0xbeef).to_string(), "000000000000beef");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct PromptHash(u64);

impl PromptHash {
    /// The hash `value`, as the generated code holds it.
    pub const fn new(value: u64) -> PromptHash {
        PromptHash(value)
    }

    /// The hash as a number.
    pub fn value(self) -> u64 {
        self.0
    }
}

impl From<u64> for PromptHash {
    fn from(value: u64) -> PromptHash {
        PromptHash(value)
    }
}

impl fmt::Display for PromptHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl fmt::Debug for PromptHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
