//! `promptpack console`: the catalog's web console and JSON API
//! (promptpack-console), and its users.

use crate::store_args::StoreArgs;
use crate::tokens::{Counter, Encoding};
use clap::{Args, Subcommand};
use promptpack::{Error, Style};
use promptpack_catalog::{Catalog, Role, token_hash};
use promptpack_console::{Server, Settings};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

/// Options of `promptpack console`.
#[derive(Debug, Args)]
pub(crate) struct ConsoleArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Where to listen. Beyond loopback only once the catalog has an admin.
    #[arg(long, default_value = "127.0.0.1:7878", value_name = "ADDR")]
    listen: SocketAddr,
    /// A label only admins may move, besides `production`; repeatable.
    #[arg(long = "protect", value_name = "LABEL")]
    protect: Vec<String>,
    /// The most bytes one part of a prompt may render to in a preview, the
    /// API's render and a diff's examples: more is refused (`too_large`)
    /// before it is allocated.
    #[arg(long, value_name = "BYTES", default_value_t = promptpack::DEFAULT_MAX_RENDER_BYTES, value_parser = crate::render::parse_byte_count)]
    max_render_bytes: usize,
    /// The most browser sessions one user keeps; signing in past them ends
    /// that user's oldest.
    #[arg(long, default_value_t = promptpack_console::DEFAULT_MAX_SESSIONS, value_name = "N")]
    max_sessions: u32,
    #[command(subcommand)]
    command: Option<ConsoleCommand>,
}

#[derive(Debug, Subcommand)]
enum ConsoleCommand {
    /// The console's users: each has a role and a token.
    #[command(subcommand)]
    User(UserCommand),
}

#[derive(Debug, Subcommand)]
enum UserCommand {
    /// Add a user; print their token once (the catalog keeps only its hash).
    Add {
        /// The user's name, recorded as the author of their writes.
        name: String,
        /// viewer (reads), editor (publishes and moves labels) or admin
        /// (also protected labels, delete and restore).
        #[arg(long, value_parser = parse_role)]
        role: Role,
    },
    /// List the users and their roles.
    List,
    /// Every user added and removed, oldest first, with who did it.
    History,
    /// Remove a user: their token and sessions stop working at once.
    Remove {
        /// The user's name.
        name: String,
    },
}

fn parse_role(text: &str) -> Result<Role, String> {
    text.parse().map_err(|e: Error| e.to_string())
}

impl ConsoleArgs {
    fn url(&self) -> String {
        self.store.url()
    }
}

pub(crate) fn run(args: &ConsoleArgs, style: Style) -> ExitCode {
    let result = match &args.command {
        None => serve(args),
        Some(ConsoleCommand::User(command)) => users(args, command),
    };
    match result {
        Ok(text) => crate::print_out(&text, style),
        Err(e) => crate::fail(&e, style),
    }
}

fn serve(args: &ConsoleArgs) -> Result<String, Error> {
    let counter = Arc::new(Counter::new(Encoding::default()));
    let mut settings = Settings::new(args.url())
        .listen(args.listen)
        .max_render_bytes(args.max_render_bytes)
        .max_sessions_per_user(args.max_sessions)
        .token_counter(Arc::new(move |text: &str| counter.count(text).unwrap_or(0)));
    for label in &args.protect {
        settings = settings.protect(label.clone());
    }
    let server = Server::bind(settings)?;
    eprintln!(
        "promptpack console on http://{} (catalog {})",
        server.local_addr(),
        promptpack_catalog::redact_url(&args.url())
    );
    server.run()?;
    Ok(String::new())
}

fn users(args: &ConsoleArgs, command: &UserCommand) -> Result<String, Error> {
    let mut catalog =
        Catalog::connect_writable(&args.url(), &promptpack_catalog::Timeouts::DEFAULT)?;
    match command {
        UserCommand::Add { name, role } => {
            let token = promptpack_console::new_token();
            let user = catalog.add_user(name, *role, &token_hash(&token))?;
            eprintln!(
                "added {} `{}`; their token, shown this once (the catalog keeps only its hash):",
                user.role, user.name
            );
            Ok(format!("{token}\n"))
        }
        UserCommand::List => Ok(catalog
            .users()?
            .iter()
            .map(|u| {
                format!(
                    "{}\t{}\tadded by {} at {}\n",
                    u.name, u.role, u.created_by, u.created_at
                )
            })
            .collect()),
        UserCommand::History => Ok(catalog
            .user_history()?
            .iter()
            .map(|change| {
                format!(
                    "{}\t{} {}\t{}\tby {}\n",
                    change.at, change.action, change.user, change.role, change.author
                )
            })
            .collect()),
        UserCommand::Remove { name } => {
            catalog.remove_user(name)?;
            Ok(format!("removed `{name}`\n"))
        }
    }
}
