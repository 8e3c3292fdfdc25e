//! `promptpack catalog`: prompts kept in a versioned catalog (SQLite or
//! PostgreSQL), through promptpack-catalog: import a tree, publish a
//! prompt or a snippet, read, list, diff, label, delete, restore, upgrade
//! and export.

mod output;
mod render;
mod store_env;
mod tree;
mod verify;

use crate::store_args::StoreArgs;
use crate::{Folders, usage_error};
use clap::{Args, Subcommand};
use promptpack::{Error, ErrorCode, Style};
use promptpack_catalog::{Access, Arm, Catalog, Contract, DEFAULT_SQLITE_PATH, Selector};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Options of `promptpack catalog`.
#[derive(Debug, Args)]
pub(crate) struct CatalogArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// How long to wait for a PostgreSQL store, in seconds: to connect, and
    /// for each answer; the URL's `connect_timeout` wins for connecting
    /// [default: 10].
    #[arg(
        long,
        global = true,
        env = store_env::TIMEOUT_ENV,
        hide_env_values = true,
        value_name = "SECONDS",
        value_parser = store_env::parse_seconds
    )]
    db_timeout: Option<std::time::Duration>,
    /// Who the writes are recorded as [default: $PROMPTPACK_AUTHOR, else
    /// $USER].
    #[arg(long, global = true, value_name = "NAME")]
    author: Option<String>,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: CatalogCommand,
}

#[derive(Debug, Subcommand)]
enum CatalogCommand {
    /// Create the catalog, or bring its schema up to date; print the store
    /// and the schema version.
    ///
    /// The only command that creates a catalog: the others refuse a path
    /// that holds none (`not_configured`). Commands that write bring an
    /// older schema up to date; commands that read open the catalog
    /// read-only and change nothing. The default catalog's folder gets a
    /// `.gitignore` that keeps it out of git.
    Init,
    /// Import a prompt tree: a new version of each prompt that changed.
    ///
    /// Each prompt whose files differ from its newest version becomes its
    /// next version (a new prompt is created), each snippet whose text
    /// differs its next revision; all or nothing. Prints `new vN` or
    /// `unchanged vN` for each.
    Import(TreeArgs),
    /// Publish one template of a tree as the next version of its prompt.
    ///
    /// Reads ROOT/templates/ID/system.md and user.md (or messages.md, a
    /// conversation) verbatim, checks them
    /// against the catalog's snippets (and the contract, when given), and
    /// creates prompt ID first when the catalog lacks it. Files that are
    /// the newest version already write nothing (`unchanged vN`), as
    /// `import` does.
    Publish(PublishArgs),
    /// Publish one snippet of a tree as its next revision.
    ///
    /// Reads ROOT/snippets/NAME.md; no revision is written when it holds
    /// the newest revision's text. Published versions keep the revision
    /// they pin until `upgrade`.
    Snippet(SnippetArgs),
    /// Print a version: a header, then system.md and user.md (or
    /// messages.md) verbatim.
    #[command(disable_version_flag = true)]
    Get(GetArgs),
    /// Render a version with values, as `promptpack render` renders a tree.
    ///
    /// Renders the version's files with the snippet revisions it pins, in
    /// its own syntax; stderr names the version and its content hash. A
    /// conversation prints each message after a line naming its role
    /// (`--- assistant ---`, `--- tool NAME ---`); a history is given in
    /// --vars as a JSON array of {"role", "content"} messages.
    #[command(disable_version_flag = true)]
    Render(render::RenderArgs),
    /// List the prompts: id, current version, hash and description.
    List(ListArgs),
    /// Print a prompt's versions (newest first), labels and audit history.
    History(IdArgs),
    /// Print the unified diff of two versions (nothing when they are the same).
    ///
    /// Compares what the versions render (snippets spliced in). Prints
    /// nothing when that is the same, and exits 0 whether they differ or
    /// not.
    Diff(DiffArgs),
    /// Point a label at a version; rolling back is moving it back.
    Label(LabelArgs),
    /// Split a label over versions with weights: `split ID production 3:90 4:10`.
    ///
    /// A service following the label picks an arm per caller in proportion
    /// to the weights; `get --label` reads the heaviest arm; `label` ends
    /// the split. Recorded in the audit history.
    Split(SplitArgs),
    /// Soft-delete a prompt: it no longer resolves or lists.
    ///
    /// Its versions and audit history stay; `restore` brings it back.
    Delete(IdArgs),
    /// Bring back a deleted prompt.
    Restore(IdArgs),
    /// Publish a prompt's newest version again with the newest snippets.
    ///
    /// The same text, with every snippet it includes pinned at its newest
    /// revision; refused (`pins_current`) when that changes nothing.
    Upgrade(UpgradeArgs),
    /// Write a version's files into a prompt tree at DIR.
    ///
    /// templates/ID/system.md, user.md or messages.md and the snippet
    /// revisions it pins,
    /// byte for byte. A file there already must hold the same text.
    #[command(disable_version_flag = true)]
    Export(ExportArgs),
    /// Check that the catalog holds what promptpack wrote; exit 1 if not.
    ///
    /// Checks every version's text against its content hash and against
    /// what its files and pinned snippet revisions compile to, every pin,
    /// every snippet revision's hash, the append-only guards (triggers) and
    /// the applied migrations' checksums. Prints each finding, or `ok: …`.
    /// Changes nothing.
    Verify(VerifyArgs),
}

/// Options of `promptpack catalog verify`.
#[derive(Debug, Args)]
struct VerifyArgs {
    /// A contract file (what `promptpack contract` prints): also judge every
    /// version of its prompts as a live handle of that program would, and
    /// list each it would refuse (`contract_violation`).
    #[arg(long, value_name = "FILE")]
    contract: Option<PathBuf>,
}

/// Where a command reads a prompt tree, and why it writes.
#[derive(Debug, Args)]
struct TreeArgs {
    /// The prompt tree to read [default: ROOT].
    #[arg(long, value_name = "ROOT")]
    from: Option<PathBuf>,
    /// A contract file (what `promptpack contract` prints): refuse what the
    /// program could not render.
    #[arg(long, value_name = "FILE")]
    contract: Option<PathBuf>,
    /// The message recorded with each new version.
    #[arg(long, short, value_name = "M", default_value = "")]
    message: String,
}

#[derive(Debug, Args)]
struct PublishArgs {
    /// The prompt id: its folder under templates/.
    id: String,
    #[command(flatten)]
    tree: TreeArgs,
}

#[derive(Debug, Args)]
struct SnippetArgs {
    /// The snippet: snippets/NAME.md.
    name: String,
    /// The prompt tree to read [default: ROOT].
    #[arg(long, value_name = "ROOT")]
    from: Option<PathBuf>,
    /// The message recorded with the revision.
    #[arg(long, short, value_name = "M", default_value = "")]
    message: String,
}

/// Which version: the newest unless told.
#[derive(Debug, Args)]
pub(super) struct Which {
    /// Version N.
    #[arg(long = "version", value_name = "N", conflicts_with = "label", value_parser = parse_version)]
    version: Option<u32>,
    /// The version label L points at.
    #[arg(long, value_name = "L")]
    label: Option<String>,
}

impl Which {
    pub(super) fn selector(&self) -> Selector {
        match (&self.version, &self.label) {
            (Some(n), _) => Selector::Version(*n),
            (None, Some(label)) => Selector::Label(label.clone()),
            (None, None) => Selector::Latest,
        }
    }
}

#[derive(Debug, Args)]
struct GetArgs {
    /// The prompt id.
    id: String,
    #[command(flatten)]
    which: Which,
}

#[derive(Debug, Args)]
struct ListArgs {
    /// At most this many prompts (1 to 1000).
    #[arg(long, value_name = "N", default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(promptpack_catalog::MAX_PAGE)))]
    limit: u32,
    /// Start after this prompt id: the `next` cursor of the page before.
    #[arg(long, value_name = "C")]
    cursor: Option<String>,
}

#[derive(Debug, Args)]
struct IdArgs {
    /// The prompt id.
    id: String,
}

#[derive(Debug, Args)]
struct DiffArgs {
    /// The prompt id.
    id: String,
    /// From: `N`, `vN`, `latest` or a label.
    a: String,
    /// To: `N`, `vN`, `latest` or a label.
    b: String,
}

#[derive(Debug, Args)]
struct LabelArgs {
    /// The prompt id.
    id: String,
    /// The label: letters, digits, `_` and `-` (not `latest`, which follows
    /// each new version by itself).
    label: String,
    /// The version it points at from now on: `N` or `vN`.
    #[arg(value_name = "VERSION", value_parser = parse_version)]
    to: u32,
}

#[derive(Debug, Args)]
struct SplitArgs {
    /// The prompt id.
    id: String,
    /// The label (not `latest`).
    label: String,
    /// Each arm as `VERSION:WEIGHT` (`3:90`, `v4:10`): up to 16.
    #[arg(value_name = "VERSION:WEIGHT", required = true, value_parser = parse_arm)]
    arms: Vec<Arm>,
}

/// An arm as `split` takes it: `VERSION:WEIGHT`.
fn parse_arm(text: &str) -> Result<Arm, String> {
    let (version, weight) = text
        .split_once(':')
        .ok_or_else(|| format!("`{text}` is not VERSION:WEIGHT (such as 3:90)"))?;
    let weight = weight
        .parse()
        .map_err(|_| format!("`{weight}` is not a weight: a whole number from 1"))?;
    Ok(Arm {
        version: parse_version(version)?,
        weight,
    })
}

#[derive(Debug, Args)]
struct UpgradeArgs {
    /// The prompt id.
    id: String,
    /// A contract file (what `promptpack contract` prints): refuse what the
    /// program could not render.
    #[arg(long, value_name = "FILE")]
    contract: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct ExportArgs {
    /// The prompt id.
    id: String,
    #[command(flatten)]
    which: Which,
    /// The prompt tree to write into (created when missing); a file there
    /// already must hold the same text.
    dir: PathBuf,
}

/// A version number as given: `N` or `vN`, from 1.
fn parse_version(text: &str) -> Result<u32, String> {
    let digits = text.strip_prefix('v').unwrap_or(text);
    match digits.parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "`{text}` is not a version number: give N or vN, from 1"
        )),
    }
}

/// A version as `diff` takes it: `N` or `vN`, `latest`, else a label.
fn parse_selector(text: &str) -> Selector {
    if text == "latest" {
        return Selector::Latest;
    }
    let digits = text.strip_prefix('v').unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        // Past u32: no such version, said by the catalog.
        return Selector::Version(digits.parse().unwrap_or(u32::MAX));
    }
    Selector::Label(text.to_string())
}

/// Runs a `catalog` subcommand: its output on stdout, or its error on
/// stderr and exit code 1.
pub(crate) fn run(args: &CatalogArgs, style: Style) -> ExitCode {
    match execute(args, style) {
        Ok(text) => crate::print_out(&text, style),
        Err(e) => crate::fail(&e, style),
    }
}

/// What the command prints, or why it failed.
fn execute(args: &CatalogArgs, style: Style) -> Result<String, Error> {
    let mut catalog = open(args, args.command.access())?;
    let json = args.json;
    match &args.command {
        CatalogCommand::Init => {
            let schema = catalog.init()?;
            let store = catalog.store_kind();
            let ignored = match &args.store.db {
                None => keep_out_of_git(&args.folders(None).root())?,
                Some(_) => None,
            };
            Ok(if json {
                to_json(&serde_json::json!({
                    "store": store,
                    "schema_version": schema,
                    "gitignore": ignored,
                }))
            } else {
                let mut out = format!("{store} catalog at schema version {schema}\n");
                if let Some(ignored) = ignored {
                    out.push_str(&format!("kept out of git by {ignored}\n"));
                }
                out
            })
        }
        CatalogCommand::Import(tree) => {
            let contract = read_contract(tree.contract.as_deref())?;
            let root = args.folders(tree.from.as_deref()).root();
            let report = catalog.import(&root, &tree.message, contract.as_ref())?;
            Ok(if json {
                to_json(&report)
            } else {
                output::import(&report)
            })
        }
        CatalogCommand::Publish(publish) => {
            let tree = &publish.tree;
            let contract = read_contract(tree.contract.as_deref())?;
            let config = args.folders(tree.from.as_deref()).config()?;
            let draft = tree::template(&config, &publish.id, &tree.message)?;
            let before = match catalog.prompt(&publish.id) {
                Ok(prompt) => Some(prompt.latest_version),
                Err(e) if e.code() == ErrorCode::NotFound => None,
                Err(e) => return Err(e),
            };
            let published =
                catalog.publish_with_warnings(&publish.id, &draft, contract.as_ref())?;
            let (version, created) = (published.version, published.created);
            // As `check` and the build warn of them: a declared choice value
            // that renders the `{{else}}`, now in the catalog.
            for warning in &published.warnings {
                eprintln!(
                    "{}",
                    promptpack_core::diagnostics::render_diagnostic(
                        warning,
                        promptpack_core::diagnostics::Severity::Warning,
                        style
                    )
                );
            }
            // As `import` and `snippet`: the newest version's files again
            // are no new version.
            let written = before != Some(version.version);
            Ok(if json {
                to_json(
                    &serde_json::json!({"created": created, "written": written, "version": version}),
                )
            } else {
                output::published(&version, created, written)
            })
        }
        CatalogCommand::Snippet(snippet) => {
            let config = args.folders(snippet.from.as_deref()).config()?;
            let text = tree::snippet(&config, &snippet.name)?;
            // Checked in the tree's syntax, as its templates read it.
            let mut catalog = catalog.with_settings(config.settings().clone());
            // As `import` does: the text of the newest revision already is
            // no new revision (which `upgrade` would then pin for nothing).
            let newest = match catalog.snippet(&snippet.name, None) {
                Ok(newest) => Some(newest),
                Err(e) if e.code() == ErrorCode::NotFound => None,
                Err(e) => return Err(e),
            };
            let (revision, written) = match newest {
                Some(newest) if newest.text == text => (newest, false),
                _ => (
                    catalog.publish_snippet(&snippet.name, &text, &snippet.message)?,
                    true,
                ),
            };
            Ok(if json {
                to_json(&serde_json::json!({"written": written, "revision": revision}))
            } else {
                output::snippet(&revision, written)
            })
        }
        CatalogCommand::Render(render) => render::execute(&mut catalog, render, json, style),
        CatalogCommand::Get(get) => {
            let version = catalog.get(&get.id, &get.which.selector())?;
            Ok(if json {
                to_json(&version)
            } else {
                output::version(&version)
            })
        }
        CatalogCommand::List(list) => {
            let page = catalog.list(list.limit, list.cursor.as_deref())?;
            Ok(if json {
                to_json(&page)
            } else {
                output::page(&page)
            })
        }
        CatalogCommand::History(IdArgs { id }) => {
            let history = catalog.history(id)?;
            Ok(if json {
                to_json(&history)
            } else {
                output::history(&history)
            })
        }
        CatalogCommand::Diff(diff) => {
            let text =
                catalog.diff(&diff.id, &parse_selector(&diff.a), &parse_selector(&diff.b))?;
            Ok(if json {
                to_json(&serde_json::json!({
                    "id": diff.id,
                    "from": diff.a,
                    "to": diff.b,
                    "identical": text.is_empty(),
                    "diff": text,
                }))
            } else {
                text
            })
        }
        CatalogCommand::Label(label) => {
            let split_before = split_arms(&mut catalog, &label.id, &label.label);
            let entry = catalog.set_label(&label.id, &label.label, label.to)?;
            Ok(if json {
                to_json(&entry)
            } else {
                output::label_move(&entry, &split_before)
            })
        }
        CatalogCommand::Split(split) => {
            let split_before = split_arms(&mut catalog, &split.id, &split.label);
            let entry = catalog.split_label(&split.id, &split.label, &split.arms)?;
            Ok(if json {
                to_json(&entry)
            } else {
                output::label_move(&entry, &split_before)
            })
        }
        CatalogCommand::Delete(IdArgs { id }) => {
            catalog.delete(id)?;
            let prompt = catalog.prompt(id)?;
            Ok(if json {
                to_json(&prompt)
            } else {
                format!("deleted {id} (`promptpack catalog restore {id}` brings it back)\n")
            })
        }
        CatalogCommand::Restore(IdArgs { id }) => {
            catalog.restore(id)?;
            let prompt = catalog.prompt(id)?;
            Ok(if json {
                to_json(&prompt)
            } else {
                format!("restored {id} at v{}\n", prompt.latest_version)
            })
        }
        CatalogCommand::Upgrade(upgrade) => {
            let contract = read_contract(upgrade.contract.as_deref())?;
            let version = catalog.upgrade(&upgrade.id, contract.as_ref())?;
            Ok(if json {
                to_json(&version)
            } else {
                output::upgraded(&version)
            })
        }
        CatalogCommand::Export(export) => {
            let files = catalog.export(&export.id, &export.which.selector(), &export.dir)?;
            Ok(if json {
                to_json(&serde_json::json!({ "files": files }))
            } else {
                output::files(&files)
            })
        }
        CatalogCommand::Verify(args) => {
            let contract = read_contract(args.contract.as_deref())?;
            verify::execute(&mut catalog, contract.as_ref(), json, style)
        }
    }
}

impl CatalogArgs {
    fn folders(&self, from: Option<&Path>) -> Folders {
        self.store.folders(from)
    }

    fn url(&self) -> String {
        self.store.url()
    }
}

impl CatalogCommand {
    /// What the command does to the catalog, and so how it connects.
    fn access(&self) -> Access {
        match self {
            CatalogCommand::Init => Access::Create,
            CatalogCommand::Import(_)
            | CatalogCommand::Publish(_)
            | CatalogCommand::Snippet(_)
            | CatalogCommand::Label(_)
            | CatalogCommand::Split(_)
            | CatalogCommand::Delete(_)
            | CatalogCommand::Restore(_)
            | CatalogCommand::Upgrade(_) => Access::Write,
            CatalogCommand::Get(_)
            | CatalogCommand::Render(_)
            | CatalogCommand::List(_)
            | CatalogCommand::History(_)
            | CatalogCommand::Diff(_)
            | CatalogCommand::Export(_) => Access::Read,
            CatalogCommand::Verify(_) => Access::Verify,
        }
    }
}

/// The default catalog's folder (`.promptpack/`) kept out of git with a
/// `.gitignore` of its own that ignores everything in it: the catalog is a
/// database, not source. Leaves one that exists alone. The file written,
/// for the output.
fn keep_out_of_git(root: &Path) -> Result<Option<String>, Error> {
    let Some(folder) = Path::new(DEFAULT_SQLITE_PATH).parent() else {
        return Ok(None);
    };
    let ignore = root.join(folder).join(".gitignore");
    if ignore.exists() {
        return Ok(None);
    }
    std::fs::write(
        &ignore,
        "# The prompt catalog is a database: kept out of git.\n*\n",
    )
    .map_err(|e| {
        Error::new(
            ErrorCode::Io,
            format!("cannot write {}: {e}", ignore.display()),
        )
    })?;
    Ok(Some(ignore.display().to_string()))
}

/// The catalog, connected as `access` needs, writing as `--author`.
fn open(args: &CatalogArgs, access: Access) -> Result<Catalog, Error> {
    let url = args.url();
    let timeouts = store_env::timeouts(args.db_timeout);
    let catalog = Catalog::connect_with(&url, access, &timeouts)?;
    Ok(match &args.author {
        Some(author) => catalog.with_author(author),
        None => catalog,
    })
}

/// The contract file at `path`, when one is given.
fn read_contract(path: Option<&Path>) -> Result<Option<Contract>, Error> {
    let Some(path) = path else {
        return Ok(None);
    };
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        usage_error(
            ErrorCode::Io,
            format!("cannot read the contract file {shown}: {e}"),
        )
    })?;
    Contract::from_json(&shown, &text).map(Some)
}

/// `value` as pretty JSON and a newline.
fn to_json(value: &impl Serialize) -> String {
    // The model's types and `json!` values: strings, numbers, maps with
    // string keys; serializing cannot fail.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// The arms of `label` when it is split now, for the "from" side of a move
/// (the audit entry names the heaviest arm only); empty otherwise.
fn split_arms(catalog: &mut Catalog, id: &str, label: &str) -> Vec<Arm> {
    catalog
        .label_arms(id, label)
        .ok()
        .filter(|arms| arms.len() > 1)
        .unwrap_or_default()
}
