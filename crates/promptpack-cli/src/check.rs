//! `promptpack check`: every error and every lint, then a summary line.

use crate::Folders;
use crate::budget::token_range;
use crate::tokens::{Counter, Encoding};
use clap::Args;
use promptpack::{Config, Diagnostic, ErrorCode, Library, Location, Severity, Style};
use promptpack_core::resolve::ResolvedPrompt;
use std::io::Write;
use std::process::ExitCode;

/// Options of `promptpack check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    deny_warnings: bool,
    /// The encoding `max_tokens` budgets are counted in.
    #[arg(long, value_enum, default_value_t)]
    tokenizer: Encoding,
    #[command(flatten)]
    folders: Folders,
}

/// Loads and validates everything, prints every error and warning at once.
pub(crate) fn run(args: &CheckArgs, style: Style) -> ExitCode {
    let (mut errors, lints, prompts, snippets) = match args.folders.config() {
        Err(e) => (e.into_diagnostics(), Vec::new(), 0, 0),
        Ok(config) => {
            // Everything the build checks, so that a tree `check` accepts
            // is a tree `cargo build` accepts.
            let checked = promptpack_build::house::check(&config);
            let (prompts, snippets) = (checked.report.prompts, checked.report.snippets);
            let (errors, lints) = findings(&config, checked, &Counter::new(args.tokenizer));
            (errors, lints, prompts, snippets)
        }
    };
    errors.sort_by_key(place);

    crate::print_diagnostics(&errors, Severity::Error, style);
    crate::print_diagnostics(&lints, Severity::Warning, style);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "checked {}, {}: {}, {}",
        count(prompts, "prompt"),
        count(snippets, "snippet"),
        count(errors.len(), "error"),
        count(lints.len(), "warning"),
    );
    let failed = !errors.is_empty() || (args.deny_warnings && !lints.is_empty());
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The errors and lints of a checked tree, with an `over_budget` lint for
/// each prompt over its `max_tokens`: what `check` prints and what the
/// language server shows.
pub(crate) fn findings(
    config: &Config,
    checked: promptpack_build::house::Checked,
    counter: &Counter,
) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    let promptpack_build::house::Checked { report, resolved } = checked;
    let mut errors = report.errors;
    let mut lints = report.warnings;
    // Budgets are counted on a tree that loads (a broken one has no
    // renders to count), from the prompts the check resolved: the tree is
    // not read again, and the tokenizer loads only when some prompt has a
    // budget.
    let budgeted = resolved.iter().any(|p| p.front_matter.max_tokens.is_some());
    if errors.is_empty() && budgeted && !Counter::BUILT {
        // Passing a budget unchecked would let `--deny-warnings` pass a
        // tree over it: each budget is a warning that says why.
        lints.extend(not_counted(&resolved));
    } else if errors.is_empty() && budgeted {
        let library = promptpack::house::library_of(resolved, config.delimiters().clone());
        match over_budget(&library, counter) {
            Ok(found) => lints.extend(found),
            Err(e) => errors.extend(e.into_diagnostics()),
        }
    }
    (errors, lints)
}

/// An `over_budget` lint for each prompt of `library` whose longest
/// combination of conditions renders more tokens than its `max_tokens`.
fn over_budget(library: &Library, counter: &Counter) -> Result<Vec<Diagnostic>, promptpack::Error> {
    let encoding = counter.encoding();
    let mut lints = Vec::new();
    for prompt in promptpack::house::prompts(library) {
        let Some(budget) = prompt.front_matter.max_tokens else {
            continue;
        };
        let range = token_range(library, prompt, &|text| counter.count(text))?;
        let longest = &range.longest;
        if longest.tokens as u64 <= budget {
            continue;
        }
        let at = budget_location(prompt);
        let found = if range.exact {
            "its longest combination of conditions"
        } else {
            "the longest combination of conditions a search found"
        };
        let mut message = format!(
            "`{}` renders {} tokens ({}), over its max_tokens of {budget}, with {found}: {}",
            prompt.id,
            longest.tokens,
            encoding.name(),
            longest.describe(),
        );
        // A conversation's total is of several messages: say which are
        // long (the history, the caller's, counted empty).
        if prompt.conversation.is_some() {
            message.push_str(&format!(
                " (per message: {}; the history not counted)",
                longest.describe_parts()
            ));
        }
        let help = format!(
            "shorten the text those conditions bring in, or raise max_tokens to at least {}",
            longest.tokens
        );
        lints.push(
            Diagnostic::new(ErrorCode::OverBudget, message)
                .at(at)
                .with_help(help),
        );
    }
    Ok(lints)
}

/// Where `max_tokens` is, else the prompt's system.md.
fn budget_location(prompt: &ResolvedPrompt) -> Location {
    prompt
        .front_matter
        .location_of("max_tokens")
        .cloned()
        .unwrap_or_else(|| Location::file(prompt.system_path.clone()))
}

/// An `over_budget` warning at each `max_tokens` of `prompts`, saying that
/// this build cannot count it (no `tokens` feature).
fn not_counted(prompts: &[ResolvedPrompt]) -> Vec<Diagnostic> {
    prompts
        .iter()
        .filter_map(|prompt| {
            let budget = prompt.front_matter.max_tokens?;
            let message = format!(
                "`{}` has a max_tokens of {budget}, which this build of promptpack cannot \
                 check: counting tokens needs the `tokens` feature",
                prompt.id
            );
            Some(
                Diagnostic::new(ErrorCode::OverBudget, message)
                    .at(budget_location(prompt))
                    .with_help(crate::not_built::install_hint("check")),
            )
        })
        .collect()
}

/// Sort key: file, line, column; diagnostics without a place come first.
fn place(d: &Diagnostic) -> (String, usize, usize) {
    d.location
        .as_ref()
        .map(|l| (l.path().to_string(), l.line(), l.column()))
        .unwrap_or_default()
}

/// `1 prompt`, `2 prompts`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use promptpack::{SourceFile, TemplateSource};

    /// A conversation's budget is held to the total of its messages, and
    /// the warning says what each message counts.
    #[cfg(feature = "tokens")]
    #[test]
    fn a_conversation_over_budget_is_judged_on_its_total() {
        let conversation = |budget: u64| TemplateSource {
            id: "chat".into(),
            system: SourceFile::new(
                "templates/chat/system.md",
                format!("---\nmax_tokens: {budget}\n---\nBe brief."),
            ),
            user: None,
            messages: Some(SourceFile::new(
                "templates/chat/messages.md",
                "{{#user}}\nHello there, how are you today?\n{{/user}}\n\
                 {{#assistant}}\nFine, thanks for asking.\n{{/assistant}}\n\
                 {{#user}}\nGood.\n{{/user}}\n",
            )),
        };
        let counter = Counter::new(Encoding::default());
        let count = |text: &str| counter.count(text).expect("counts");
        let parts = [
            count("Be brief."),
            count("Hello there, how are you today?"),
            count("Fine, thanks for asking."),
            count("Good."),
        ];
        let total: usize = parts.iter().sum();
        // Each message alone is under the budget; their total is over it.
        let budget = (total - 1) as u64;
        assert!(parts.iter().all(|&n| (n as u64) < budget));
        let over = |budget: u64| {
            let library =
                Library::from_sources(vec![conversation(budget)], vec![], &Config::default())
                    .expect("the conversation loads");
            over_budget(&library, &counter).expect("counted")
        };
        let lints = over(budget);
        assert_eq!(lints.len(), 1, "{lints:?}");
        let message = &lints[0].message;
        assert!(
            message.starts_with(&format!("`chat` renders {total} tokens (o200k_base)")),
            "{message}"
        );
        assert!(
            message.ends_with(&format!(
                "(per message: system {}, message 0: user {}, message 1: assistant {}, \
                 message 2: user {}; the history not counted)",
                parts[0], parts[1], parts[2], parts[3]
            )),
            "{message}"
        );
        assert!(over(total as u64).is_empty(), "at its total it is within");
    }

    #[test]
    fn a_budget_this_build_cannot_count_is_a_warning_at_its_key() {
        let template = |id: &str, system: &str| TemplateSource {
            id: id.into(),
            system: SourceFile::new(format!("templates/{id}/system.md"), system),
            user: None,
            messages: None,
        };
        let library = Library::from_sources(
            vec![
                template("budgeted", "---\nmax_tokens: 10\n---\nHello."),
                template("free", "Hello."),
            ],
            vec![],
            &Config::default(),
        )
        .expect("the prompts load");
        let lints = not_counted(promptpack::house::prompts(&library));
        assert_eq!(lints.len(), 1, "{lints:?}");
        let lint = &lints[0];
        assert_eq!(lint.code, ErrorCode::OverBudget);
        assert!(
            lint.message
                .starts_with("`budgeted` has a max_tokens of 10, which this build"),
            "{}",
            lint.message
        );
        let at = lint.location.as_ref().expect("a place");
        assert_eq!((at.path(), at.line()), ("templates/budgeted/system.md", 2));
        let help = lint.help.as_deref().unwrap_or_default();
        assert!(help.contains("--features full"), "{help}");
    }
}
