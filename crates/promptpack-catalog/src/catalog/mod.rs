//! [`Catalog`]: every operation of the catalog, each one transaction of
//! the store.

mod console;
pub use console::check_process_name;
pub(crate) mod follow;
pub(crate) mod migrate;
pub(crate) mod rows;
pub(crate) mod sessions;
mod snippet_uses;
pub use snippet_uses::SnippetUse;
pub(crate) mod verify;

use crate::compile::{
    Compiled, Files, SnippetText, check_record, check_snippet, compile_draft, sources,
};
use crate::diff::unified_diff;
use crate::hash::text_hash;
use crate::judge::{Verdict, judge_fetched};
use crate::model::{
    Arm, AuditEntry, Draft, History, ListQuery, Listed, Page, Pin, PromptEntry, Selector,
    SnippetRevision, Version,
};
use crate::store::{Mode, Store, Tx};
use crate::timeouts::Timeouts;
use promptpack_core::contract::{Contract, PromptContract};
use promptpack_core::syntax::is_snippet_name;
use promptpack_core::{Diagnostic, Error, ErrorCode, Settings, Sources};
use std::collections::HashMap;

/// What [`Catalog::change_marker`] reads: equal marks, no change between.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChangeMarker {
    audit: i64,
    versions: i64,
}

/// What [`Catalog::publish_with_warnings`] did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Published {
    /// The version published, or the newest one when the draft was it
    /// already (nothing written).
    pub version: Version,
    /// Whether the prompt was created for it.
    pub created: bool,
    /// What the compile that checked the draft warns of
    /// (`unhandled_choice`).
    pub warnings: Vec<Diagnostic>,
}

/// How many prompts [`Catalog::list`] gives at most per page.
pub const MAX_PAGE: u32 = 1000;

/// What a connection to a catalog is for, and so how
/// [`Catalog::connect_with`] connects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Access {
    /// Creates the catalog when missing (a SQLite file and its folder), or
    /// brings its schema up to date: `promptpack catalog init`.
    Create,
    /// Reads and writes a catalog that exists, bringing an older schema up
    /// to date; a store without one is refused, so that a mistyped URL
    /// creates nothing.
    Write,
    /// Reads only: a SQLite file is opened read-only, a PostgreSQL
    /// transaction is `READ ONLY`, the schema must be this promptpack's
    /// already, and reads never wait for a writer.
    Read,
    /// Reads as [`Access::Read`] to [`verify`](Catalog::verify), where an
    /// edited migration is a finding to list rather than a refusal.
    Verify,
}

/// A connection to a catalog: SQLite (`sqlite:PATH`, the default) or
/// PostgreSQL (`postgres://…`). Every method is one transaction: it reads
/// one snapshot, or writes all it changes or nothing.
pub struct Catalog {
    store: Store,
    settings: Settings,
    author: String,
    before_commit: Option<Box<dyn FnMut() + Send>>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("store", &self.store.kind())
            .field("author", &self.author)
            .finish_non_exhaustive()
    }
}

impl Catalog {
    /// Connects to the catalog at `url` and brings its schema up to date,
    /// creating it when new: what `promptpack catalog init` does. A SQLite
    /// file and its folder are created when missing; a SQLite file that
    /// holds another application's tables is refused, untouched.
    /// [`Catalog::connect_with`] with [`Access::Create`] and
    /// [`Timeouts::DEFAULT`].
    ///
    /// # Errors
    /// `unavailable` when the store cannot be reached; `not_configured` when
    /// the file is not a database, holds another application's tables, or
    /// its schema is newer than this promptpack knows; `invalid_request` for
    /// a URL that names no store.
    pub fn open(url: &str) -> Result<Catalog, Error> {
        Catalog::connect_with(url, Access::Create, &Timeouts::DEFAULT)
    }

    /// Connects to the catalog at `url` to read it, changing nothing: a
    /// SQLite file is opened read-only (so a catalog on a read-only disk
    /// reads), a PostgreSQL transaction is `READ ONLY`; `not_configured`
    /// unless it holds this promptpack's schema already. Reads never take
    /// or wait for the write lock. For readers, such as a service that
    /// follows a label; a method that writes fails on such a connection.
    /// [`Catalog::connect_with`] with [`Access::Read`] and
    /// [`Timeouts::DEFAULT`].
    ///
    /// # Errors
    /// As [`Catalog::open`]; `not_configured` also when the schema was
    /// never applied, or is older.
    pub fn connect(url: &str) -> Result<Catalog, Error> {
        Catalog::connect_with(url, Access::Read, &Timeouts::DEFAULT)
    }

    /// Connects to the catalog at `url` for what `access` says, waiting for
    /// the store at most as `timeouts` say: the one constructor the others
    /// call.
    ///
    /// # Errors
    /// As [`Catalog::open`] and [`Catalog::connect`]; `unavailable` when a
    /// wait runs past its bound; `not_configured` when `access` needs a
    /// catalog there and there is none, or (except for [`Access::Verify`])
    /// its schema is not this promptpack's.
    pub fn connect_with(url: &str, access: Access, timeouts: &Timeouts) -> Result<Catalog, Error> {
        let mode = match access {
            Access::Create => Mode::Create,
            Access::Write => Mode::Write,
            Access::Read | Access::Verify => Mode::Read,
        };
        let mut catalog = Catalog {
            store: Store::connect(url, mode, timeouts)?,
            settings: Settings::default(),
            author: default_author(),
            before_commit: None,
        };
        match access {
            Access::Create => {
                migrate::migrate(&mut catalog.store)?;
            }
            Access::Write => catalog.migrate_existing()?,
            Access::Read => {
                migrate::check_schema(&mut catalog.store)?;
            }
            // A recorded migration checksum that differs is for `verify`
            // to list with the rest, not to refuse.
            Access::Verify => {}
        }
        Ok(catalog)
    }

    /// For [`Access::Write`]: refuses a store without a catalog, so that a
    /// mistyped URL creates nothing, and brings an older schema up to date.
    fn migrate_existing(&mut self) -> Result<(), Error> {
        if !migrate::has_schema(&mut self.store)? {
            return Err(Error::new(
                ErrorCode::NotConfigured,
                format!(
                    "{} holds no promptpack catalog: `promptpack catalog init` creates one",
                    self.store.shown()
                ),
            ));
        }
        // Anything short of current (or a read that failed) goes the way
        // that migrates, and reports what is wrong.
        if !migrate::is_current(&mut self.store).unwrap_or(false) {
            migrate::migrate(&mut self.store)?;
        }
        Ok(())
    }

    /// Applies the schema's migrations that the database lacks (what
    /// [`Catalog::open`] does already); the schema version after.
    ///
    /// # Errors
    /// As [`Catalog::open`].
    pub fn init(&mut self) -> Result<i64, Error> {
        migrate::migrate(&mut self.store)
    }

    /// The same catalog, recording `author` on what it writes (by default
    /// `$PROMPTPACK_AUTHOR`, else `$USER`, else `unknown`).
    pub fn with_author(mut self, author: impl Into<String>) -> Catalog {
        self.author = author.into();
        self
    }

    /// The same catalog, checking snippets in the syntax of `settings`
    /// (the tree's `promptpack.toml`) instead of the default one. Prompt
    /// versions carry their own ([`Draft::syntax`]).
    pub fn with_settings(mut self, settings: Settings) -> Catalog {
        self.settings = settings;
        self
    }

    /// Who the writes are recorded as.
    pub fn author(&self) -> &str {
        &self.author
    }

    /// Which store this is: `sqlite` or `postgres`.
    pub fn store_kind(&self) -> &'static str {
        self.store.kind()
    }

    /// Runs `hook` inside every publish's write transaction, after all its
    /// writes and before the commit. For fault tests: a publisher killed
    /// there must leave nothing behind. Only with the `test-hooks` feature,
    /// which this crate's tests turn on: not API.
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn before_commit(&mut self, hook: Box<dyn FnMut() + Send>) {
        self.before_commit = Some(hook);
    }

    /// Adds prompt `id` (a template folder name: letters, digits, `_` and
    /// `-`) with no version yet. `name` defaults to the id.
    ///
    /// # Errors
    /// `invalid_request` for an id that is not one; `already_exists` when
    /// the catalog has it, deleted or not.
    pub fn create(
        &mut self,
        id: &str,
        name: Option<&str>,
        description: Option<&str>,
    ) -> Result<PromptEntry, Error> {
        check_name("prompt id", id)?;
        let (name, description) = (name.unwrap_or(id), description.unwrap_or(""));
        check_record(&self.author, &format!("{name}{description}"))?;
        let author = self.author.clone();
        self.store.write(
            &mut |tx| match rows::insert_prompt(tx, id, name, description, &author)? {
                Some(prompt) => Ok(prompt),
                None => Err(rows::prompt_exists(tx, id)?),
            },
        )
    }

    /// Publishes `draft` as the next version of prompt `id`: checked inside
    /// the write transaction with the build's own pipeline, in the draft's
    /// syntax, against the newest revision of every snippet (which the
    /// version pins) and, when given, the program's `contract`.
    ///
    /// # Errors
    /// Every parse, resolve and front matter error of the draft, with its
    /// code and location in `templates/<id>/…`; `contract_violation` for a
    /// variable the program does not supply or types otherwise;
    /// `not_found` for a missing or deleted prompt. Nothing is written.
    ///
    /// A draft that is the newest version already (the same files and
    /// syntax, rendering with the same snippet revisions) writes nothing:
    /// that version is returned, as [`Catalog::import`] and
    /// [`Catalog::publish_snippet`] do.
    pub fn publish(
        &mut self,
        id: &str,
        draft: &Draft,
        contract: Option<&Contract>,
    ) -> Result<Version, Error> {
        self.publish_version(id, draft, contract, false)
            .map(|published| published.version)
    }

    /// [`Catalog::publish`], creating prompt `id` first when the catalog
    /// does not have it, in the same transaction: a refused draft leaves no
    /// empty prompt behind. Also says whether the prompt is new.
    ///
    /// # Errors
    /// As [`Catalog::publish`]; `invalid_request` for an id that is not
    /// one; `not_found` for a deleted prompt.
    pub fn publish_or_create(
        &mut self,
        id: &str,
        draft: &Draft,
        contract: Option<&Contract>,
    ) -> Result<(Version, bool), Error> {
        self.publish_with_warnings(id, draft, contract)
            .map(|published| (published.version, published.created))
    }

    /// [`Catalog::publish_or_create`], with what the compile that checked
    /// the draft warns of: each value a declared choice takes (`kind:
    /// choice`, `values: […]`) that no branch compares with
    /// (`unhandled_choice`, naming the branch it renders instead), as
    /// `promptpack check` and the build warn of it.
    ///
    /// # Errors
    /// As [`Catalog::publish_or_create`].
    pub fn publish_with_warnings(
        &mut self,
        id: &str,
        draft: &Draft,
        contract: Option<&Contract>,
    ) -> Result<Published, Error> {
        check_name("prompt id", id)?;
        self.publish_version(id, draft, contract, true)
    }

    fn publish_version(
        &mut self,
        id: &str,
        draft: &Draft,
        contract: Option<&Contract>,
        create: bool,
    ) -> Result<Published, Error> {
        check_record(&self.author, &draft.message)?;
        let Catalog {
            store,
            author,
            before_commit,
            ..
        } = self;
        store.write(&mut |tx| {
            let created = create && rows::insert_prompt(tx, id, id, "", author)?.is_some();
            let prompt = rows::live_prompt(tx, id, true)?;
            let snippets = rows::current_snippets(tx)?;
            let compiled = compile_draft(id, draft, &snippets, contract)?;
            let version = match rows::version(tx, id, prompt.latest_version)? {
                Some(newest) if unchanged(&newest, draft, &compiled) => newest,
                _ => insert_version(tx, id, draft, &compiled, author, before_commit)?,
            };
            Ok(Published {
                version,
                created,
                warnings: compiled.warnings,
            })
        })
    }

    /// Publishes `text` as the next revision of snippet `name` (its first
    /// when new), checked in the catalog's syntax
    /// ([`Catalog::with_settings`]). No published prompt version changes:
    /// each keeps the revision it pins until [`Catalog::upgrade`] mints a
    /// new one. When `text` is the newest revision's text already, nothing
    /// is written and that revision is returned (a second one would only
    /// make `upgrade` mint versions that render the same).
    ///
    /// # Errors
    /// `invalid_request` for a name that is not one; every parse error of
    /// the text, and `snippet_not_found` for a snippet it includes that the
    /// catalog lacks, located in `snippets/<name>.md`.
    pub fn publish_snippet(
        &mut self,
        name: &str,
        text: &str,
        message: &str,
    ) -> Result<SnippetRevision, Error> {
        check_name("snippet name", name)?;
        check_record(&self.author, message)?;
        let Catalog {
            store,
            settings,
            author,
            ..
        } = self;
        let hash = text_hash(text);
        store.write(&mut |tx| {
            rows::lock_snippet(tx, name)?;
            if let Some(newest) = rows::snippet_revision(tx, name, None)?
                && newest.text == text
            {
                return Ok(newest);
            }
            let others = rows::current_snippets(tx)?;
            check_snippet(name, text, &others, settings)?;
            rows::insert_snippet_revision(tx, name, text, &hash, author, message)
        })
    }

    /// A version of prompt `id`: its newest, number N, or the one a label
    /// points at.
    ///
    /// # Errors
    /// `not_found` when the prompt is missing or deleted, or has no such
    /// version or label.
    pub fn get(&mut self, id: &str, selector: &Selector) -> Result<Version, Error> {
        self.store.read(&mut |tx| select(tx, id, selector))
    }

    /// Prompt `id`, deleted or not, without its versions.
    ///
    /// # Errors
    /// `not_found` when the catalog has no such prompt.
    pub fn prompt(&mut self, id: &str) -> Result<PromptEntry, Error> {
        self.store
            .read(&mut |tx| rows::prompt(tx, id, false)?.ok_or_else(|| rows::no_prompt(id)))
    }

    /// Revision `revision` of snippet `name`, or its newest when `None`.
    ///
    /// # Errors
    /// `not_found` when there is no such snippet or revision.
    pub fn snippet(&mut self, name: &str, revision: Option<u32>) -> Result<SnippetRevision, Error> {
        self.store.read(&mut |tx| {
            rows::snippet_revision(tx, name, revision)?.ok_or_else(|| {
                let which = revision.map_or(String::new(), |r| format!(" revision {r}"));
                Error::new(
                    ErrorCode::NotFound,
                    format!("the catalog has no snippet `{name}`{which}"),
                )
            })
        })
    }

    /// The live prompts, their current versions and labels, by id: at most
    /// `limit` (1 to [`MAX_PAGE`]) after `cursor` (the previous page's
    /// [`Page::next_cursor`]; `None` for the first page). [`Catalog::search`]
    /// with no text.
    ///
    /// # Errors
    /// `invalid_request` for a limit out of range.
    pub fn list(&mut self, limit: u32, cursor: Option<&str>) -> Result<Page, Error> {
        self.search(&ListQuery {
            limit,
            cursor,
            text: None,
        })
    }

    /// A page of the live prompts, by id, with their current versions and
    /// labels (split arms included), in one read transaction: at most
    /// `query.limit` after `query.cursor`, only those whose id, name or
    /// description contains `query.text` in any case when given. A page's
    /// cursor goes with the same text: the next page is of the same search.
    ///
    /// # Errors
    /// `invalid_request` for a limit out of range (1 to [`MAX_PAGE`]), or a
    /// text holding a NUL byte.
    pub fn search(&mut self, query: &ListQuery<'_>) -> Result<Page, Error> {
        let limit = query.limit;
        if limit == 0 || limit > MAX_PAGE {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!("a page holds 1 to {MAX_PAGE} prompts, not {limit}"),
            ));
        }
        if query.text.is_some_and(|text| text.contains('\0')) {
            // PostgreSQL's text refuses it, SQLite's would find nothing:
            // refused alike.
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "the text to search for holds a NUL byte",
            ));
        }
        let cursor = query.cursor.unwrap_or("");
        let pattern = query.text.map(rows::contains_pattern);
        let mut found = self.store.read(&mut |tx| {
            rows::live_prompts(tx, cursor, i64::from(limit) + 1, pattern.as_deref())
        })?;
        let more = found.len() > limit as usize;
        found.truncate(limit as usize);
        let next_cursor = more
            .then(|| found.last().map(|(p, _, _)| p.id.clone()))
            .flatten();
        let prompts = found
            .into_iter()
            .map(|(prompt, current, labels)| Listed {
                prompt,
                current,
                labels,
            })
            .collect();
        Ok(Page {
            prompts,
            next_cursor,
        })
    }

    /// The newest revision of every snippet, by name: what a new version
    /// would pin.
    ///
    /// # Errors
    /// `damaged` for a revision whose text does not match its hash;
    /// `unavailable` when the store cannot be read.
    pub fn snippets(&mut self) -> Result<Vec<SnippetRevision>, Error> {
        self.store
            .read(&mut |tx| rows::newest_snippet_revisions(tx))
    }

    /// Prompt `id`'s versions, labels and audit history. Deleted prompts
    /// have one too: the audit outlives them.
    ///
    /// # Errors
    /// `not_found` when the catalog never had the prompt.
    pub fn history(&mut self, id: &str) -> Result<History, Error> {
        self.store.read(&mut |tx| {
            let prompt = rows::prompt(tx, id, false)?.ok_or_else(|| rows::no_prompt(id))?;
            let mut labels = vec![("latest".to_string(), prompt.latest_version)];
            labels.extend(rows::labels(tx, id)?);
            Ok(History {
                versions: rows::versions(tx, id)?,
                audit: rows::audit_history(tx, id)?,
                labels,
                prompt,
            })
        })
    }

    /// A unified diff of the resolved texts of two versions of prompt `id`
    /// (`system.md`, then `user.md`); empty when they render the same.
    ///
    /// # Errors
    /// As [`Catalog::get`], for either version.
    pub fn diff(&mut self, id: &str, from: &Selector, to: &Selector) -> Result<String, Error> {
        let (a, b) = self
            .store
            .read(&mut |tx| Ok((select(tx, id, from)?, select(tx, id, to)?)))?;
        Ok(unified_diff(&a, &b))
    }

    /// Points `label` of prompt `id` at `version`, recording the move in the
    /// audit history. Rolling back is moving a label back.
    ///
    /// # Errors
    /// `invalid_request` for `latest` (kept automatically) or a label that
    /// is not a name; `already_exists` for a label that differs from one
    /// the catalog has (on any prompt) only by case (`Production` beside
    /// `production`); `not_found` for a missing or deleted prompt or a
    /// version it does not have.
    pub fn set_label(&mut self, id: &str, label: &str, version: u32) -> Result<AuditEntry, Error> {
        check_label(label)?;
        check_record(&self.author, "")?;
        let author = self.author.clone();
        self.store.write(&mut |tx| {
            let prompt = rows::live_prompt(tx, id, true)?;
            if version == 0 || version > prompt.latest_version {
                return Err(no_version(id, version, prompt.latest_version));
            }
            refuse_look_alike(tx, label)?;
            rows::move_label(tx, id, label, version, &author)
        })
    }

    /// Splits `label` of prompt `id` over two or more versions with
    /// weights (`production`: v3 90, v4 10), for a service that picks an arm
    /// per caller; recorded in the audit history as `split`. [`Catalog::get`]
    /// by the label reads its heaviest arm; [`Catalog::set_label`] ends the
    /// split. One arm is the same as [`Catalog::set_label`].
    ///
    /// # Errors
    /// `invalid_request` for `latest`, no arms, more than 16, a version given
    /// twice, a weight of 0 or weights past a million in all;
    /// `already_exists` for a look-alike label, as [`Catalog::set_label`];
    /// `not_found` for a missing or deleted prompt or a version it does
    /// not have.
    pub fn split_label(
        &mut self,
        id: &str,
        label: &str,
        arms: &[Arm],
    ) -> Result<AuditEntry, Error> {
        if arms.len() == 1 {
            return self.set_label(id, label, arms[0].version);
        }
        check_label(label)?;
        let arms = check_arms(arms)?;
        check_record(&self.author, "")?;
        let author = self.author.clone();
        self.store.write(&mut |tx| {
            let prompt = rows::live_prompt(tx, id, true)?;
            if let Some(arm) = arms
                .iter()
                .find(|arm| arm.version == 0 || arm.version > prompt.latest_version)
            {
                return Err(no_version(id, arm.version, prompt.latest_version));
            }
            refuse_look_alike(tx, label)?;
            rows::split_label(tx, id, label, &arms, &author)
        })
    }

    /// The arms of `label` of prompt `id`, heaviest first: one arm of
    /// weight 1 for a label that is not split (`latest` too).
    ///
    /// # Errors
    /// `not_found` for a missing or deleted prompt, or a label it lacks.
    pub fn label_arms(&mut self, id: &str, label: &str) -> Result<Vec<Arm>, Error> {
        self.store.read(&mut |tx| {
            let prompt = rows::live_prompt(tx, id, false)?;
            if label == "latest" {
                return Ok(vec![Arm {
                    version: prompt.latest_version,
                    weight: 1,
                }]);
            }
            let arms = rows::label_arms(tx, id, label)?;
            if arms.is_empty() {
                return Err(Error::new(
                    ErrorCode::NotFound,
                    format!("prompt `{id}` has no label `{label}`"),
                ));
            }
            Ok(arms)
        })
    }

    /// The arms of `label` of every live prompt that has one, by id (one
    /// arm of weight 1 where the label is not split; every prompt with a
    /// version for `latest`): one read for a service that follows a label
    /// across all its prompts, instead of [`Catalog::label_arms`] per prompt.
    ///
    /// # Errors
    /// `unavailable` when the store cannot be read.
    pub fn labelled(&mut self, label: &str) -> Result<Vec<(String, Vec<Arm>)>, Error> {
        self.store.read(&mut |tx| rows::labelled(tx, label))
    }

    /// A mark that changes whenever a version is published, a label moved
    /// or split, or a prompt deleted or restored: a follower that polls
    /// reads it and re-reads its labels only when it differs from the last.
    /// One cheap query (an index's last entry and a sum over prompts).
    ///
    /// # Errors
    /// `unavailable` when the store cannot be read.
    pub fn change_marker(&mut self) -> Result<ChangeMarker, Error> {
        let (audit, versions) = self.store.read(&mut |tx| rows::change_marker(tx))?;
        Ok(ChangeMarker { audit, versions })
    }

    /// Soft-deletes prompt `id`: it no longer resolves or lists, and its
    /// rows stay for the audit.
    ///
    /// # Errors
    /// `not_found` when it is missing or deleted already.
    pub fn delete(&mut self, id: &str) -> Result<(), Error> {
        check_record(&self.author, "")?;
        let author = self.author.clone();
        self.store.write(&mut |tx| {
            rows::live_prompt(tx, id, true)?;
            rows::set_deleted(tx, id, true, &author)
        })
    }

    /// Undoes [`Catalog::delete`].
    ///
    /// # Errors
    /// `not_found` when the catalog has no such prompt; `invalid_request`
    /// when it is not deleted.
    pub fn restore(&mut self, id: &str) -> Result<(), Error> {
        check_record(&self.author, "")?;
        let author = self.author.clone();
        self.store.write(&mut |tx| {
            let prompt = rows::prompt(tx, id, true)?.ok_or_else(|| rows::no_prompt(id))?;
            if !prompt.deleted {
                return Err(Error::new(
                    ErrorCode::InvalidRequest,
                    format!("prompt `{id}` is not deleted"),
                ));
            }
            rows::set_deleted(tx, id, false, &author)
        })
    }

    /// Mints the next version of prompt `id` from its newest one, with
    /// every snippet it includes at its newest revision: the same text,
    /// new pins. Checked as a publish is.
    ///
    /// # Errors
    /// `pins_current` when every pin is current already (nothing would
    /// change); as [`Catalog::publish`] otherwise.
    pub fn upgrade(&mut self, id: &str, contract: Option<&Contract>) -> Result<Version, Error> {
        let Catalog {
            store,
            author,
            before_commit,
            ..
        } = self;
        store.write(&mut |tx| {
            let prompt = rows::live_prompt(tx, id, true)?;
            let current = rows::version(tx, id, prompt.latest_version)?
                .ok_or_else(|| no_version(id, prompt.latest_version, prompt.latest_version))?;
            let snippets = rows::current_snippets(tx)?;
            let mut draft = Draft {
                system: current.system.clone(),
                user: current.user.clone(),
                messages: current.messages.clone(),
                message: String::new(),
                syntax: current.syntax.clone(),
            };
            let compiled = compile_draft(id, &draft, &snippets, contract)?;
            if compiled.pins == current.pins {
                return Err(Error::new(
                    ErrorCode::PinsCurrent,
                    format!(
                        "version {} of `{id}` pins the newest revision of every snippet it includes: an upgrade would change nothing",
                        current.version
                    ),
                ));
            }
            draft.message = upgrade_message(&current.pins, &compiled.pins);
            insert_version(tx, id, &draft, &compiled, author, before_commit)
        })
    }

    /// The sources `version` renders from: its text and the snippet
    /// revisions it pins, ready for the pipeline (`templates/<id>/…`,
    /// `snippets/<name>.md`).
    ///
    /// # Errors
    /// `not_found` when a pinned revision is missing (a catalog edited by
    /// hand).
    pub fn sources(&mut self, version: &Version) -> Result<Sources, Error> {
        let snippets = self.pinned_snippets(&version.pins)?;
        Ok(sources(
            &version.prompt_id,
            Files::of_version(version),
            &snippets,
        ))
    }

    /// The sources `draft` would render from as the next version of prompt
    /// `id`: its text and the newest revision of every snippet, as
    /// [`Catalog::publish`] compiles it. For checking and previewing a draft
    /// without writing it.
    ///
    /// # Errors
    /// Only the store's (`unavailable`).
    pub fn draft_sources(&mut self, id: &str, draft: &Draft) -> Result<Sources, Error> {
        let snippets = self.store.read(&mut |tx| rows::current_snippets(tx))?;
        Ok(sources(id, Files::of_draft(draft), &snippets))
    }

    pub(crate) fn pinned_snippets(&mut self, pins: &[Pin]) -> Result<Vec<SnippetText>, Error> {
        self.store
            .read(&mut |tx| pinned_texts(tx, pins, &mut HashMap::new()))
    }

    /// Versions `wanted` (prompt id, version number), each with the
    /// sources it renders from (as [`Catalog::sources`]), in one read
    /// transaction, reading a snippet revision that several pin once: what
    /// a service that follows a label across many prompts fetches at
    /// start-up. Each answer is in `wanted`'s order.
    ///
    /// # Errors
    /// `unavailable` when the store cannot be read (for all of them). What
    /// is wrong with one version (`not_found` for a missing or deleted
    /// prompt, version or pinned revision; `not_configured` for a row
    /// written by hand that does not parse) is its answer's error.
    pub fn versions_with_sources(
        &mut self,
        wanted: &[(String, u32)],
    ) -> Result<Vec<VersionSources>, Error> {
        self.store.read(&mut |tx| follow::versions_in(tx, wanted))
    }

    /// Judges version `version` of prompt `id` as a live handle judges
    /// it, its files and pinned snippet revisions read in one snapshot:
    /// compiled under its own syntax, its content hash checked, and checked
    /// against `contract` when given. A version the store holds damaged is
    /// refused, not an error.
    ///
    /// # Errors
    /// `unavailable` when the store cannot be read; `not_found` for a
    /// missing or deleted prompt or version: what says nothing of the
    /// version itself.
    pub fn judge(
        &mut self,
        id: &str,
        version: u32,
        contract: Option<&PromptContract>,
    ) -> Result<Verdict, Error> {
        let wanted = [(id.to_string(), version)];
        let fetched = self.versions_with_sources(&wanted)?.into_iter().next();
        let fetched = fetched.ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!("version {version} of `{id}` was not read"),
            )
        })?;
        judge_fetched(fetched, contract)
    }

    pub(crate) fn parts(&mut self) -> (&mut Store, &str) {
        (&mut self.store, &self.author)
    }
}

/// Whether `draft`, compiled with the current snippets, is what version
/// `newest` holds already: the same files, syntax and pins, so that it
/// would render the same. Publishing and importing it writes nothing.
pub(crate) fn unchanged(newest: &Version, draft: &Draft, compiled: &Compiled) -> bool {
    newest.system == draft.system
        && newest.user == draft.user
        && newest.messages == draft.messages
        && newest.syntax == draft.syntax
        && newest.pins == compiled.pins
}

/// Writes the version and runs the fault tests' hook, if any, before the
/// transaction commits.
fn insert_version(
    tx: &mut dyn Tx,
    id: &str,
    draft: &Draft,
    compiled: &Compiled,
    author: &str,
    before_commit: &mut Option<Box<dyn FnMut() + Send>>,
) -> Result<Version, Error> {
    let version = rows::insert_version(tx, id, draft, compiled, author)?;
    if let Some(hook) = before_commit.as_mut() {
        hook();
    }
    Ok(version)
}

/// The version `selector` names.
/// One answer of [`Catalog::versions_with_sources`]: a version and the
/// sources it renders from, or why the catalog cannot give that one.
pub type VersionSources = Result<(Version, Sources), Error>;

/// `version` with the sources it renders from, its pinned snippets' texts
/// being `snippets`.
fn with_sources(version: Version, snippets: &[SnippetText]) -> (Version, Sources) {
    let sources = sources(&version.prompt_id, Files::of_version(&version), snippets);
    (version, sources)
}

/// The error of a pinned revision the catalog lacks (a catalog edited by
/// hand).
fn missing_revision(pin: &Pin) -> Error {
    Error::new(
        ErrorCode::NotFound,
        format!(
            "the catalog has no revision {} of snippet `{}`",
            pin.revision, pin.snippet
        ),
    )
}

/// The texts of the snippet revisions `pins` names, each read once per
/// `cache`.
fn pinned_texts(
    tx: &mut dyn Tx,
    pins: &[Pin],
    cache: &mut HashMap<(String, u32), SnippetText>,
) -> Result<Vec<SnippetText>, Error> {
    pins.iter()
        .map(|pin| {
            let key = (pin.snippet.clone(), pin.revision);
            if let Some(text) = cache.get(&key) {
                return Ok(text.clone());
            }
            let revision = rows::snippet_revision(tx, &pin.snippet, Some(pin.revision))?
                .ok_or_else(|| missing_revision(pin))?;
            let text = SnippetText {
                name: revision.name,
                revision: revision.revision,
                text: revision.text,
            };
            cache.insert(key, text.clone());
            Ok(text)
        })
        .collect()
}

fn select(tx: &mut dyn Tx, id: &str, selector: &Selector) -> Result<Version, Error> {
    let prompt = rows::live_prompt(tx, id, false)?;
    let number = match selector {
        Selector::Latest => prompt.latest_version,
        Selector::Version(n) => *n,
        Selector::Label(label) if label == "latest" => prompt.latest_version,
        Selector::Label(label) => rows::label(tx, id, label)?.ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!("prompt `{id}` has no label `{label}`"),
            )
        })?,
    };
    rows::version(tx, id, number)?.ok_or_else(|| no_version(id, number, prompt.latest_version))
}

fn no_version(id: &str, version: u32, latest: u32) -> Error {
    let has = match latest {
        0 => "none yet: publish one first".to_string(),
        1 => "only version 1".to_string(),
        n => format!("versions 1 to {n}"),
    };
    Error::new(
        ErrorCode::NotFound,
        format!("prompt `{id}` has no version {version} ({has})"),
    )
}

fn upgrade_message(from: &[Pin], to: &[Pin]) -> String {
    let moves: Vec<String> = to
        .iter()
        .filter_map(|pin| {
            let old = from.iter().find(|p| p.snippet == pin.snippet);
            match old {
                Some(old) if old.revision == pin.revision => None,
                Some(old) => Some(format!(
                    "{} {} → {}",
                    pin.snippet, old.revision, pin.revision
                )),
                None => Some(format!("{} → {}", pin.snippet, pin.revision)),
            }
        })
        .collect();
    format!("upgrade pins: {}", moves.join(", "))
}

/// A label that can be set: a name, not `latest`.
fn check_label(label: &str) -> Result<(), Error> {
    check_name("label", label)?;
    // `LATEST` beside `latest` would read as the same label to a person.
    if label.eq_ignore_ascii_case("latest") {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "`{label}` is reserved: `latest` moves by itself to each new version; label another name"
            ),
        ));
    }
    Ok(())
}

/// Refuses `label`, a spelling no prompt has, when the catalog has a label
/// spelled the same but for case, on any prompt: `Production` beside
/// `production` reads as the same label to a person, yet a service
/// following `production` would never see it. A spelling some prompt has
/// already is an existing label, moved and set as ever.
fn refuse_look_alike(tx: &mut dyn Tx, label: &str) -> Result<(), Error> {
    let Some(existing) = rows::look_alike_label(tx, label)? else {
        return Ok(());
    };
    Err(Error::new(
        ErrorCode::AlreadyExists,
        format!(
            "the catalog has label `{existing}`, which `{label}` differs from only by case: labels are compared without case; use `{existing}`"
        ),
    ))
}

/// The most arms a label may be split over.
const MAX_ARMS: usize = 16;

/// The most all of a split's weights may add up to.
const MAX_TOTAL_WEIGHT: u64 = 1_000_000;

/// `arms`, checked, heaviest first (the lower version first among equals).
fn check_arms(arms: &[Arm]) -> Result<Vec<Arm>, Error> {
    let refuse = |why: String| Err(Error::new(ErrorCode::InvalidRequest, why));
    if arms.is_empty() || arms.len() > MAX_ARMS {
        return refuse(format!(
            "a split has 1 to {MAX_ARMS} arms, not {}",
            arms.len()
        ));
    }
    if arms.iter().any(|arm| arm.weight == 0) {
        return refuse("every arm of a split needs a weight above 0".into());
    }
    let total: u64 = arms.iter().map(|arm| u64::from(arm.weight)).sum();
    if total > MAX_TOTAL_WEIGHT {
        return refuse(format!(
            "the weights of a split add up to {total}, past {MAX_TOTAL_WEIGHT}"
        ));
    }
    let mut sorted = arms.to_vec();
    sorted.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.version.cmp(&b.version)));
    let mut versions: Vec<u32> = sorted.iter().map(|arm| arm.version).collect();
    versions.sort_unstable();
    if versions.windows(2).any(|pair| pair[0] == pair[1]) {
        return refuse("a split names each version once".into());
    }
    Ok(sorted)
}

/// Ids, snippet names and labels: a template folder's name.
pub(crate) fn check_name(what: &str, name: &str) -> Result<(), Error> {
    if is_snippet_name(name) && name.len() <= 200 {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::InvalidRequest,
        format!(
            "`{}` is not a valid {what}: use up to 200 letters, digits, `_` and `-`, not starting with `-`",
            promptpack_core::diagnostics::escape_controls(name)
        ),
    ))
}

fn default_author() -> String {
    ["PROMPTPACK_AUTHOR", "USER", "USERNAME"]
        .iter()
        .find_map(|key| std::env::var(key).ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| "unknown".to_string())
}
