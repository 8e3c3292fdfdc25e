//! `promptpack list`: what every prompt needs and includes.

use crate::budget::{TokenRange, token_range};
use crate::tokens::{Counter, Encoding};
use crate::{Folders, hex};
use clap::Args;
use promptpack::{Error, Library, Style};
use promptpack_core::conversation::Turn;
use promptpack_core::resolve::ResolvedPrompt;
use serde_json::json;
use std::fmt::Write as _;
use std::process::ExitCode;

/// Options of `promptpack list`.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Print a JSON array instead of text.
    #[arg(long)]
    json: bool,
    /// The encoding token counts are in.
    #[arg(long, value_enum, default_value_t)]
    tokenizer: Encoding,
    #[command(flatten)]
    folders: Folders,
}

/// Lists every prompt, sorted by id.
pub(crate) fn run(args: &ListArgs, style: Style) -> ExitCode {
    let library = match args.folders.config().and_then(|c| Library::load_config(&c)) {
        Ok(library) => library,
        Err(e) => return crate::fail(&e, style),
    };
    let counter = Counter::new(args.tokenizer);
    let counted: Result<Vec<(&ResolvedPrompt, Option<TokenRange>)>, Error> =
        promptpack::house::prompts(&library)
            .iter()
            .map(|prompt| {
                if !Counter::BUILT {
                    return Ok((prompt, None));
                }
                let range = token_range(&library, prompt, &|text| counter.count(text))?;
                Ok((prompt, Some(range)))
            })
            .collect();
    let counted = match counted {
        Ok(counted) => counted,
        Err(e) => return crate::fail(&e, style),
    };
    let encoding = counter.encoding();
    let text = if args.json {
        let list: Vec<serde_json::Value> = counted
            .iter()
            .map(|(prompt, range)| to_json(prompt, range.as_ref(), encoding))
            .collect();
        let mut text = serde_json::to_string_pretty(&list).unwrap_or_default();
        text.push('\n');
        text
    } else {
        counted
            .iter()
            .map(|(prompt, range)| to_text(prompt, range.as_ref(), encoding))
            .collect::<Vec<_>>()
            .join("\n")
    };
    crate::print_out(&text, style)
}

fn parts(prompt: &ResolvedPrompt) -> Vec<&'static str> {
    if prompt.conversation.is_some() {
        vec!["system", "messages"]
    } else if prompt.user.is_some() {
        vec!["system", "user"]
    } else {
        vec!["system"]
    }
}

fn conditions(prompt: &ResolvedPrompt) -> Vec<&str> {
    prompt
        .vars
        .iter()
        .filter(|v| v.as_condition)
        .map(|v| v.name.as_str())
        .collect()
}

/// Bytes of static text of the resolved parts (every message of a
/// conversation, in every branch), snippets spliced in.
fn size(prompt: &ResolvedPrompt) -> usize {
    fn turns_size(turns: &[Turn]) -> usize {
        turns
            .iter()
            .map(|turn| match turn {
                Turn::Message { program, .. } => program.text.len(),
                Turn::History(_) => 0,
                Turn::Branch { arms, otherwise } => {
                    arms.iter().map(|arm| turns_size(&arm.turns)).sum::<usize>()
                        + turns_size(otherwise)
                }
            })
            .sum()
    }
    prompt.system.text.len()
        + prompt.user.as_ref().map_or(0, |u| u.text.len())
        + prompt
            .conversation
            .as_ref()
            .map_or(0, |c| turns_size(&c.turns))
}

/// The token line: `MIN–MAX (encoding)`, one number when they are equal;
/// when not every combination was counted, `≤MIN–≥MAX`, since the shortest
/// may be shorter and the longest longer than those the search found.
pub(crate) fn shown_tokens(range: &TokenRange, encoding: Encoding, budget: Option<u64>) -> String {
    let (min, max) = (range.shortest.tokens, range.longest.tokens);
    let mut notes = vec![encoding.name().to_string()];
    if let Some(budget) = budget {
        notes.push(format!("max_tokens {budget}"));
    }
    let counts = if !range.exact {
        notes.push(format!(
            "estimated from some of {} combinations",
            shown_combinations(range.combinations)
        ));
        format!("≤{min}–≥{max}")
    } else if min == max {
        min.to_string()
    } else {
        format!("{min}–{max}")
    };
    format!("{counts} ({})", notes.join("; "))
}

/// A number of combinations; past what a `u128` holds, a bound.
fn shown_combinations(n: u128) -> String {
    if n == u128::MAX {
        "over 2^127".to_string()
    } else {
        n.to_string()
    }
}

/// The token line of a build without the `tokens` feature.
const NOT_COUNTED: &str = "not counted (this build of promptpack leaves out the `tokens` feature)";

fn to_text(prompt: &ResolvedPrompt, range: Option<&TokenRange>, encoding: Encoding) -> String {
    let or_none = |items: Vec<String>| {
        if items.is_empty() {
            "-".to_string()
        } else {
            items.join(", ")
        }
    };
    let vars = prompt
        .vars
        .iter()
        .map(|v| format!("{}: {}", v.name, v.kind().shown_type(&v.choices)))
        .collect();
    let conditions = conditions(prompt).into_iter().map(String::from).collect();
    let snippets = prompt.snippets.iter().cloned().collect();
    let mut out = String::new();
    match &prompt.front_matter.description {
        Some(description) => {
            let _ = writeln!(out, "{} — {description}", prompt.id);
        }
        None => {
            let _ = writeln!(out, "{}", prompt.id);
        }
    }
    let _ = writeln!(out, "  parts:      {}", parts(prompt).join(", "));
    let _ = writeln!(out, "  variables:  {}", or_none(vars));
    let _ = writeln!(out, "  conditions: {}", or_none(conditions));
    let _ = writeln!(out, "  snippets:   {}", or_none(snippets));
    // Only a prompt that declares them has the lines: the others list as
    // they always did.
    let front_matter = &prompt.front_matter;
    if !front_matter.tools.is_empty() {
        let tools: Vec<&str> = front_matter.tools.iter().map(|t| t.name.as_str()).collect();
        let _ = writeln!(out, "  tools:      {}", tools.join(", "));
    }
    if let Some(fields) = front_matter.response.as_ref().and_then(|r| r.properties()) {
        let fields: Vec<String> = fields
            .iter()
            .map(|p| {
                let optional = if p.schema.nullable { "?" } else { "" };
                format!("{}{optional}", p.name)
            })
            .collect();
        let _ = writeln!(out, "  response:   {}", fields.join(", "));
    }
    let _ = writeln!(out, "  size:       {} bytes", size(prompt));
    let budget = prompt.front_matter.max_tokens;
    let tokens = match range {
        Some(range) => shown_tokens(range, encoding, budget),
        None => NOT_COUNTED.to_string(),
    };
    let _ = writeln!(out, "  tokens:     {tokens}");
    // A conversation's counts per message, of its longest combination:
    // where the tokens of a total are (with the tools' and the response
    // format's, for a prompt that declares them).
    let declares_request = !front_matter.tools.is_empty() || front_matter.response.is_some();
    if let (Some(range), true) = (range, prompt.conversation.is_some() || declares_request) {
        let _ = writeln!(out, "  longest:    {}", range.longest.describe_parts());
    }
    let _ = writeln!(out, "  hash:       {}", hex(prompt.hash));
    out
}

/// `tokens` is `null` in a build without the `tokens` feature.
fn to_json(
    prompt: &ResolvedPrompt,
    range: Option<&TokenRange>,
    encoding: Encoding,
) -> serde_json::Value {
    let vars: Vec<serde_json::Value> = prompt
        .vars
        .iter()
        .map(|v| {
            let mut var = json!({"name": v.name, "type": v.kind().rust_type()});
            if !v.choices.is_empty() {
                var["values"] = json!(v.choices);
            }
            var
        })
        .collect();
    let mut tokens = range.map(|range| {
        json!({
            "min": range.shortest.tokens,
            "max": range.longest.tokens,
            "exact": range.exact,
            "tokenizer": encoding.name(),
            "shortest": range.shortest.values,
            "longest": range.longest.values,
        })
    });
    // A conversation's counts per message of each extreme (a prompt of two
    // files lists as it always did).
    let declares_request =
        !prompt.front_matter.tools.is_empty() || prompt.front_matter.response.is_some();
    if let (Some(tokens), Some(range), true) = (
        &mut tokens,
        range,
        prompt.conversation.is_some() || declares_request,
    ) {
        let per_part = |parts: &[(String, usize)]| -> Vec<serde_json::Value> {
            parts
                .iter()
                .map(|(part, n)| json!({"part": part, "tokens": n}))
                .collect()
        };
        tokens["shortest_parts"] = json!(per_part(&range.shortest.parts));
        tokens["longest_parts"] = json!(per_part(&range.longest.parts));
    }
    let mut listed = json!({
        "id": prompt.id,
        "parts": parts(prompt),
        "system_path": prompt.system_path,
        "user_path": prompt.user_path,
        "variables": vars,
        "conditions": conditions(prompt),
        "snippets": prompt.snippets,
        "size": size(prompt),
        "hash": hex(prompt.hash),
        "description": prompt.front_matter.description,
        "max_tokens": prompt.front_matter.max_tokens,
        "tokens": tokens,
    });
    // Only a conversation has the key: a prompt of two files lists as it
    // always did.
    if let Some(path) = &prompt.messages_path {
        listed["messages_path"] = json!(path);
    }
    // Likewise tools and the response, for a prompt that declares them.
    if let Some(tools) = prompt.front_matter.tools_json() {
        listed["tools"] = tools;
    }
    if let Some(response) = &prompt.front_matter.response {
        listed["response"] = response.json_schema();
    }
    listed
}

#[cfg(test)]
mod tests {
    use super::*;
    use promptpack::{SourceFile, TemplateSource};

    #[test]
    fn a_build_without_token_counts_says_so() {
        let template = TemplateSource {
            id: "p".into(),
            system: SourceFile::new("templates/p/system.md", "Hello."),
            user: None,
            messages: None,
        };
        let library = Library::from_sources(vec![template], vec![], &promptpack::Config::default())
            .expect("it loads");
        let prompt = &promptpack::house::prompts(&library)[0];
        let text = to_text(prompt, None, Encoding::default());
        assert!(
            text.contains(&format!("  tokens:     {NOT_COUNTED}\n")),
            "{text}"
        );
        assert_eq!(
            to_json(prompt, None, Encoding::default())["tokens"],
            serde_json::Value::Null
        );
    }
}
