//! A subcommand this build leaves out (its cargo feature is off): it still
//! parses, whatever its arguments, so that `promptpack catalog …` says which
//! feature it needs instead of clap's "unrecognized subcommand".

// With every feature on, nothing is left out and only the tests use this.
#![cfg_attr(
    all(
        feature = "tokens",
        feature = "catalog",
        feature = "console",
        feature = "lsp"
    ),
    allow(dead_code)
)]

use clap::{Args, CommandFactory, error::ErrorKind};
use std::ffi::OsString;

/// How to get the whole tool, named by every message about a missing feature.
pub(crate) const INSTALL_FULL: &str = "cargo install --path crates/promptpack-cli --features full";

/// The arguments of a subcommand that is not built: taken and ignored,
/// `--help` included, since the message is the same whatever they are.
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub(crate) struct NotBuilt {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    args: Vec<OsString>,
}

/// What `promptpack SUBCOMMAND` says when its `feature` is off.
pub(crate) fn message(subcommand: &str, feature: &str) -> String {
    format!(
        "`promptpack {subcommand}` needs the `{feature}` feature, which this build of promptpack \
         leaves out: {}",
        install_hint(subcommand)
    )
}

/// How to get a build that has everything, with `args` as the arguments of
/// the repository's `cargo run`.
pub(crate) fn install_hint(args: &str) -> String {
    format!(
        "install the whole tool with `{INSTALL_FULL}` (in the repository, \
         `cargo run -p promptpack-cli --features full -- {args} …`)"
    )
}

/// Prints [`message`] as clap prints a usage error, and exits 2 as a usage
/// error does.
pub(crate) fn exit(subcommand: &str, feature: &str) -> ! {
    crate::Cli::command()
        .error(ErrorKind::InvalidSubcommand, message(subcommand, feature))
        .exit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Parser, Subcommand};

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(Debug, Subcommand)]
    enum Command {
        Catalog(NotBuilt),
    }

    #[test]
    fn a_subcommand_not_built_takes_any_arguments() {
        let cases: &[&[&str]] = &[
            &["catalog"],
            &["catalog", "--help"],
            &["catalog", "init"],
            &[
                "catalog",
                "--db",
                "sqlite:x.db",
                "import",
                "-m",
                "sample prompts",
            ],
            &["catalog", "-x", "--json", "history", "code-review"],
        ];
        for args in cases {
            let parsed =
                Cli::try_parse_from(std::iter::once("promptpack").chain(args.iter().copied()));
            assert!(parsed.is_ok(), "{args:?}: {parsed:?}");
        }
    }

    #[test]
    fn the_message_names_the_feature_and_how_to_install_it() {
        let text = message("catalog", "catalog");
        assert!(
            text.starts_with("`promptpack catalog` needs the `catalog` feature"),
            "{text}"
        );
        assert!(
            text.contains("cargo install --path crates/promptpack-cli --features full"),
            "{text}"
        );
        assert!(
            text.contains("cargo run -p promptpack-cli --features full -- catalog"),
            "{text}"
        );
    }

    #[test]
    fn every_build_has_every_subcommand() {
        // Built or not, each is listed by `--help` and parses.
        let cli = crate::Cli::command();
        for name in [
            "check", "list", "contract", "render", "watch", "init", "catalog", "console", "lsp",
        ] {
            assert!(cli.find_subcommand(name).is_some(), "{name}");
        }
    }
}
