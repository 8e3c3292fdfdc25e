//! What the catalog holds and returns: prompts, versions, snippet
//! revisions, labels and the audit history.

use promptpack_core::ErrorCode;
use promptpack_core::contract::Contract;
use promptpack_core::{Error, Settings, SourceFile, Sources, TemplateSource};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A moment, as milliseconds since the Unix epoch (what the stores keep).
/// Displays and serializes as RFC 3339 (`2026-12-02T01:37:23.123Z`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// Now, by this machine's clock.
    pub fn now() -> Timestamp {
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Timestamp(i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let millis = u64::try_from(self.0).unwrap_or(0);
        let at = UNIX_EPOCH + Duration::from_millis(millis);
        write!(f, "{}", humantime::format_rfc3339_millis(at))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The RFC 3339 time it serializes as, to the millisecond: what a relay's
/// follower reads a version's time from.
impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let at = humantime::parse_rfc3339_weak(&text).map_err(serde::de::Error::custom)?;
        let millis = at
            .duration_since(UNIX_EPOCH)
            .map_err(serde::de::Error::custom)?
            .as_millis();
        Ok(Timestamp(
            i64::try_from(millis).map_err(serde::de::Error::custom)?,
        ))
    }
}

/// The syntax a version is written in: its token delimiters and whether
/// standalone block lines disappear (`promptpack.toml`'s `[delimiters]` and
/// `standalone_tags`). A version renders under the syntax it was published
/// with, whatever the tree's configuration says later.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Syntax {
    /// The opening delimiter, `{{` by default.
    pub open: String,
    /// The closing delimiter, `}}` by default.
    pub close: String,
    /// Whether a line holding only a block tag disappears with its newline.
    pub standalone_tags: bool,
}

impl Default for Syntax {
    fn default() -> Syntax {
        Syntax::of(&Settings::default())
    }
}

impl Syntax {
    /// The syntax of `settings`.
    pub fn of(settings: &Settings) -> Syntax {
        Syntax {
            open: settings.delimiters.open().to_string(),
            close: settings.delimiters.close().to_string(),
            standalone_tags: settings.standalone_tags,
        }
    }

    /// The language settings to read a version with.
    ///
    /// # Errors
    /// `invalid_config` for delimiters the language refuses.
    pub fn settings(&self) -> Result<Settings, Error> {
        Ok(self.config()?.settings().clone())
    }

    /// A configuration with these settings and no folders: what a tool
    /// compiles a version or a draft with (`promptpack_build`'s check, a
    /// `Library`), so that the syntax becomes settings in one place.
    ///
    /// # Errors
    /// `invalid_config` for delimiters the language refuses.
    pub fn config(&self) -> Result<promptpack_load::Config, Error> {
        Ok(promptpack_load::Config::new(".")
            .with_delimiters(&self.open, &self.close)?
            .with_standalone_tags(self.standalone_tags))
    }
}

/// Which version of a prompt to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// The newest version (the `latest` label, kept automatically).
    Latest,
    /// Version N.
    Version(u32),
    /// The version a label points at.
    Label(String),
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selector::Latest => f.write_str("latest"),
            Selector::Version(n) => write!(f, "version {n}"),
            Selector::Label(label) => write!(f, "label `{label}`"),
        }
    }
}

/// A prompt of the catalog, addressed by its id (the template folder name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptEntry {
    /// The id: `agent-system`.
    pub id: String,
    /// A human name; the id unless set at `create`.
    pub name: String,
    /// What it is for: from `create`, or the front matter's `description`
    /// of its latest version.
    pub description: String,
    /// Soft-deleted: its rows stay for the audit, and it does not resolve.
    pub deleted: bool,
    /// Its newest version number; 0 before the first publish.
    pub latest_version: u32,
    /// When it was created.
    pub created_at: Timestamp,
}

/// A snippet revision a version renders with.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Pin {
    /// The snippet's name.
    pub snippet: String,
    /// Its revision.
    pub revision: u32,
}

/// One version of a prompt. Never changes after it is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Version {
    /// The prompt's id.
    pub prompt_id: String,
    /// Its number: 1, 2, … with no gaps.
    pub version: u32,
    /// `system.md`, verbatim (front matter included).
    pub system: String,
    /// `user.md`, verbatim, when the prompt has one.
    pub user: Option<String>,
    /// `messages.md`, verbatim, when the prompt is a conversation (never
    /// beside `user.md`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<String>,
    /// The front matter of both parts, merged, as JSON (`{}` when none).
    pub front_matter: serde_json::Value,
    /// The syntax it is written in.
    pub syntax: Syntax,
    /// Every snippet it includes, directly or not, at the revision it
    /// renders with.
    pub pins: Vec<Pin>,
    /// The text its system part renders: snippets spliced in, front matter
    /// and trimming applied, tokens in canonical form.
    pub resolved_system: String,
    /// The same for the user part.
    pub resolved_user: Option<String>,
    /// The conversation it sends after the system message, as the text of
    /// a `messages.md` in canonical form (each message as its role block,
    /// snippets of turns spliced in, branches and the history in place),
    /// when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_messages: Option<String>,
    /// SHA-256 of the resolved text, lowercase hex: see
    /// [`content_hash`](crate::content_hash) (a conversation hashes its
    /// system text, two NUL bytes and its resolved conversation).
    pub content_hash: String,
    /// Who published it.
    pub author: String,
    /// Why.
    pub message: String,
    /// When.
    pub created_at: Timestamp,
}

impl Version {
    /// The version's resolved text as sources of their own: no snippets,
    /// nothing pinned, and it renders what the files with their pinned
    /// snippets render ([`Catalog::sources`](crate::Catalog::sources)).
    pub fn resolved_sources(&self) -> Sources {
        Sources {
            templates: vec![TemplateSource {
                id: self.prompt_id.clone(),
                system: literal("system.md", &self.resolved_system),
                user: self
                    .resolved_user
                    .as_deref()
                    .map(|user| literal("user.md", user)),
                // Read as it is: its front matter, when it has one, is the
                // history's declaration that the resolved text carries.
                messages: self
                    .resolved_messages
                    .as_deref()
                    .map(|messages| SourceFile::new("messages.md", messages)),
            }],
            ..Sources::default()
        }
    }
}

/// A resolved text as a file that renders it as it is: a text whose first
/// lines look like a front matter block (a template whose body began with
/// `---` after a blank line) would lose them to front matter when read as
/// a file, so it gets a blank first line, which the render's trim removes.
fn literal(path: &str, text: &str) -> SourceFile {
    let file = SourceFile::new(path, text);
    if file.front_matter().is_some() {
        SourceFile::new(path, format!("\n{text}"))
    } else {
        file
    }
}

/// A version without its texts: a line of a prompt's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VersionSummary {
    /// Its number.
    pub version: u32,
    /// SHA-256 of its resolved text.
    pub content_hash: String,
    /// Who published it.
    pub author: String,
    /// Why.
    pub message: String,
    /// When.
    pub created_at: Timestamp,
}

/// One revision of a snippet. Never changes after it is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnippetRevision {
    /// The snippet's name (`snippets/<name>.md`).
    pub name: String,
    /// Its number: 1, 2, … with no gaps.
    pub revision: u32,
    /// The file, verbatim.
    pub text: String,
    /// SHA-256 of the text, lowercase hex.
    pub content_hash: String,
    /// Who published it.
    pub author: String,
    /// Why.
    pub message: String,
    /// When.
    pub created_at: Timestamp,
}

/// One arm of a label: a version and its weight. A split label has two or
/// more; a service picks one per caller in proportion to the weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Arm {
    /// The version.
    pub version: u32,
    /// Its weight, relative to the other arms' (90 and 10, or 9 and 1).
    pub weight: u32,
}

/// An entry of a prompt's audit history: a label moved or split, the
/// prompt created, deleted or restored. (Versions are their own record.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditEntry {
    /// Its place in the catalog's history: later entries have larger ones.
    pub seq: i64,
    /// `create`, `label`, `split`, `delete` or `restore`.
    pub action: String,
    /// The label moved, for `label`.
    pub label: Option<String>,
    /// Where the label pointed before; `None` when it is new.
    pub from_version: Option<u32>,
    /// Where it points now (a split label: its heaviest arm).
    pub to_version: Option<u32>,
    /// The arms a `split` set; empty otherwise.
    pub arms: Vec<Arm>,
    /// Who did it.
    pub author: String,
    /// When.
    pub created_at: Timestamp,
}

/// A prompt's history: its versions, newest first, its labels and every
/// move of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct History {
    /// The prompt.
    pub prompt: PromptEntry,
    /// Every version, newest first.
    pub versions: Vec<VersionSummary>,
    /// Every label and the version it points at, by name (`latest` too).
    pub labels: Vec<(String, u32)>,
    /// The audit history, oldest first.
    pub audit: Vec<AuditEntry>,
}

/// A line of [`Catalog::list`](crate::Catalog::list) and
/// [`Catalog::search`](crate::Catalog::search): a live prompt, its current
/// version and its labels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listed {
    /// The prompt.
    pub prompt: PromptEntry,
    /// Its latest version, `None` before the first publish.
    pub current: Option<VersionSummary>,
    /// Every label it has but `latest` (which is `current`), by name, each
    /// with its arms, heaviest first: one arm of weight 1 unless the label
    /// is split.
    pub labels: Vec<(String, Vec<Arm>)>,
}

/// What [`Catalog::search`](crate::Catalog::search) lists: a page of live
/// prompts by id, only those that contain `text` when given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListQuery<'a> {
    /// At most this many prompts, 1 to [`MAX_PAGE`](crate::MAX_PAGE).
    pub limit: u32,
    /// The previous page's [`Page::next_cursor`]; `None` for the first page.
    pub cursor: Option<&'a str>,
    /// Only prompts whose id, name or description contains this, in any
    /// case (ASCII letters on both stores; PostgreSQL also folds other
    /// letters as its collation does). `%` and `_` are themselves, not
    /// wildcards.
    pub text: Option<&'a str>,
}

/// A page of [`Catalog::list`](crate::Catalog::list) or
/// [`Catalog::search`](crate::Catalog::search).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Page {
    /// The prompts of this page, by id.
    pub prompts: Vec<Listed>,
    /// Give it to the next call for the page after this one; `None` on the
    /// last page.
    pub next_cursor: Option<String>,
}

/// The text of a new version: `system.md` and the optional `user.md`, or
/// `messages.md` for a conversation, verbatim, and why it is published.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Draft {
    /// `system.md`.
    pub system: String,
    /// `user.md`, when there is one.
    pub user: Option<String>,
    /// `messages.md`, when the prompt is a conversation (a draft with both
    /// this and `user` is refused: `invalid_message`).
    pub messages: Option<String>,
    /// The commit message of the version.
    pub message: String,
    /// The syntax it is written in (the tree's `promptpack.toml`).
    pub syntax: Syntax,
}

/// What [`Catalog::import`](crate::Catalog::import) did with each prompt
/// and snippet of the tree.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ImportReport {
    /// Every prompt of the tree: its id and the version it is at now, and
    /// whether that version is new (`false`: the tree matched it already).
    pub prompts: Vec<Imported>,
    /// Every snippet of the tree, the same way.
    pub snippets: Vec<Imported>,
}

/// One prompt or snippet of an import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Imported {
    /// Its id or name.
    pub name: String,
    /// The version or revision it is at after the import.
    pub version: u32,
    /// Whether the import wrote it.
    pub written: bool,
}

/// A console user's role: viewers read; editors publish, move and split
/// labels; admins also move protected labels, delete and restore. Ordered
/// by what each may do: `Viewer < Editor < Admin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads prompts, versions, labels, history and builds.
    Viewer,
    /// Also publishes, and moves and splits labels.
    Editor,
    /// Also moves protected labels, deletes and restores prompts.
    Admin,
}

impl Role {
    /// Every role, from the least to the most allowed.
    pub const ALL: [Role; 3] = [Role::Viewer, Role::Editor, Role::Admin];

    /// Its name as the catalog stores it: `viewer`, `editor` or `admin`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Editor => "editor",
            Role::Admin => "admin",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = Error;

    /// `viewer`, `editor` or `admin`, in any case.
    fn from_str(text: &str) -> Result<Role, Error> {
        Role::ALL
            .into_iter()
            .find(|role| role.as_str().eq_ignore_ascii_case(text))
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidRequest,
                    format!(
                        "`{}` is not a role: use `viewer`, `editor` or `admin`",
                        promptpack_core::diagnostics::escape_controls(text)
                    ),
                )
            })
    }
}

/// A user of the web console. The catalog keeps the SHA-256 of the user's
/// token ([`token_hash`]), never the token, and never returns even that.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct User {
    /// The name the user signs as, and what the console records as the
    /// author of the user's writes.
    pub name: String,
    /// What the user may do.
    pub role: Role,
    /// Who added the user (the adding catalog's author).
    pub created_by: String,
    /// When.
    pub created_at: Timestamp,
}

/// One change to the console's users, as the catalog's append-only user
/// audit keeps it ([`Catalog::user_history`](crate::Catalog::user_history)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct UserChange {
    /// The user added or removed.
    pub user: String,
    /// `add` or `remove`.
    pub action: UserAction,
    /// The user's role then (for a removal: the role taken away).
    pub role: Role,
    /// Who made the change (that catalog's author).
    pub author: String,
    /// When.
    pub at: Timestamp,
}

/// A console user's browser session, as the catalog keeps it
/// ([`Catalog::sessions`](crate::Catalog::sessions)): whose, when it began
/// and when it ends. Its id is never kept, only the id's SHA-256, and
/// neither is returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ConsoleSession {
    /// The user signed in.
    pub user: String,
    /// When the user signed in.
    pub created_at: Timestamp,
    /// When the session stops signing anyone in.
    pub expires_at: Timestamp,
}

/// What happened to a console user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum UserAction {
    /// Added, with a role and a token.
    Add,
    /// Removed: the token signs in no more.
    Remove,
}

impl UserAction {
    /// As the audit stores it: `add` or `remove`.
    pub fn as_str(self) -> &'static str {
        match self {
            UserAction::Add => "add",
            UserAction::Remove => "remove",
        }
    }
}

impl fmt::Display for UserAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the catalog stores instead of a console user's token: its SHA-256,
/// as 64 lowercase hex digits. A console hashes the bearer token it is
/// shown and looks the user up by the hash
/// ([`Catalog::user_by_token_hash`](crate::Catalog::user_by_token_hash)).
pub fn token_hash(token: &str) -> String {
    crate::hash::text_hash(token)
}

/// What a live handle registers in the catalog: the process it runs in,
/// the label it follows and the contract of the binary (its prompts' vars
/// structs), so that a console shows which binaries serve which label and
/// what each can render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildRegistration {
    /// The process: `agent-service#1234` by default (the executable's file
    /// name and the pid), or what the service names itself. 1 to 200
    /// bytes, no control characters.
    pub process: String,
    /// The label it follows.
    pub label: String,
    /// The contract of the binary.
    pub contract: Contract,
}

/// A build as the catalog holds it: [`Catalog::builds`](crate::Catalog::builds).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegisteredBuild {
    /// The process it runs in.
    pub process: String,
    /// The label it follows.
    pub label: String,
    /// SHA-256 of the contract's canonical JSON ([`contract_hash`]): equal
    /// hashes, equal contracts.
    pub contract_hash: String,
    /// The contract of the binary.
    pub contract: Contract,
    /// When this process first registered with this contract.
    pub first_seen: Timestamp,
    /// When it last said it runs.
    pub last_seen: Timestamp,
}

/// A contract's canonical JSON: compact, prompts sorted by id (the
/// contract's map is sorted), fields in declaration order. What a
/// registered build stores and its hash is taken of.
pub(crate) fn canonical_contract(contract: &Contract) -> String {
    // Strings, numbers and maps with string keys only: serializing cannot
    // fail.
    serde_json::to_string(contract).unwrap_or_default()
}

/// The hash that names a contract: SHA-256 of its canonical JSON (compact,
/// prompts by id), as lowercase hex. Two binaries with equal hashes have
/// vars structs of the same fields, kinds and choice values.
pub fn contract_hash(contract: &Contract) -> String {
    crate::hash::text_hash(&canonical_contract(contract))
}
