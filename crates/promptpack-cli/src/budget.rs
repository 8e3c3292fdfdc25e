//! The shortest and longest a prompt renders, in tokens, over the
//! combinations of its conditions: what `list` shows and what `check`
//! holds against `max_tokens`.
//!
//! Each condition variable is an axis of settings: a flag false or true, an
//! optional unset or set, a compared variable at each of its values (and,
//! when it is also tested for truth, at none of them). The other values are the prompt's first example's, or `‹name›`
//! placeholders. Up to [`EXACT_LIMIT`] combinations, every one is counted;
//! past that, a bounded local search finds a short one and a long one,
//! which the result marks as not exact.
//!
//! A conversation counts its system message and each of its own messages
//! (the history, the caller's, is left empty): the total is what a budget
//! is held to, and each extreme keeps its count per message
//! ([`Extreme::parts`]), so a message says which turn is long.

use promptpack::{Error, Library, MissingVars, ValueRef};
use promptpack_core::program::VarKind;
use promptpack_core::resolve::ResolvedPrompt;
use promptpack_core::vars::placeholder;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Up to this many combinations, every one is rendered and counted.
pub(crate) const EXACT_LIMIT: u128 = 256;

/// Passes of the local search over every axis: each pass that changes
/// nothing ends it sooner, and this bounds one whose every pass changes
/// something.
const MAX_PASSES: usize = 16;

/// Renders the local search may make for one prompt: a prompt of thousands
/// of conditions would otherwise take a pass's thousands of renders many
/// times over.
const MAX_RENDERS: usize = 4096;

/// A combination found to be the shortest or the longest.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Extreme {
    /// Its tokens: the system part's and the user part's (or every
    /// message's) together, with the declared tools and response format.
    pub(crate) tokens: usize,
    /// The tokens of each part, in order: `system`, then `user` or each
    /// message of a conversation as `message N: role` (a tool result's
    /// `message N: tool NAME`), `N` its index after the system message;
    /// then `tools` and `response format` when the prompt declares them.
    pub(crate) parts: Vec<(String, usize)>,
    /// Each condition variable's setting, in the prompt's order: `true` or
    /// `false`, the value set, or `null` for unset (or none of its values).
    pub(crate) values: Map<String, Value>,
}

impl Extreme {
    /// The settings as `name=value` pairs (`unset` for none), or `no
    /// conditions`: how messages name a combination.
    pub(crate) fn describe(&self) -> String {
        if self.values.is_empty() {
            return "no conditions".to_string();
        }
        self.values
            .iter()
            .map(|(name, value)| match value {
                Value::Null => format!("{name} unset"),
                value => format!("{name}={value}"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Each part's count, `system 12, message 0: user 4, …`: how a
    /// message shows where a conversation's tokens are.
    pub(crate) fn describe_parts(&self) -> String {
        self.parts
            .iter()
            .map(|(part, tokens)| format!("{part} {tokens}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Each part of `rendered` with its count: `system`, `user` when there is
/// one, each message of a conversation (see [`Extreme::parts`]).
fn count_parts(
    rendered: &promptpack::Prompt,
    count: &dyn Fn(&str) -> Result<usize, Error>,
) -> Result<Vec<(String, usize)>, Error> {
    let mut parts = vec![("system".to_string(), count(&rendered.system)?)];
    if let Some(user) = &rendered.user {
        parts.push(("user".to_string(), count(user)?));
    }
    for (index, message) in rendered.messages.iter().enumerate() {
        let part = format!("message {index}: {}", message.label());
        parts.push((part, count(&message.content)?));
    }
    Ok(parts)
}

/// What a request sends beside the messages, the same whatever the values:
/// the declared tools and the response format, each counted as the JSON the
/// request carries (providers bill them as part of the prompt; the text they
/// turn the JSON into is theirs, so this is an estimate).
fn request_parts(
    prompt: &ResolvedPrompt,
    count: &dyn Fn(&str) -> Result<usize, Error>,
) -> Result<Vec<(String, usize)>, Error> {
    let mut parts = Vec::new();
    let front_matter = &prompt.front_matter;
    if let Some(tools) = front_matter.tools_json() {
        parts.push(("tools".to_string(), count(&tools.to_string())?));
    }
    if let Some(response) = &front_matter.response {
        let format = response.response_format(&prompt.id).to_string();
        parts.push(("response format".to_string(), count(&format)?));
    }
    Ok(parts)
}

/// The token range of a prompt.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TokenRange {
    /// The shortest combination found.
    pub(crate) shortest: Extreme,
    /// The longest combination found.
    pub(crate) longest: Extreme,
    /// Whether every combination was counted. When not, the shortest may be
    /// shorter still and the longest longer.
    pub(crate) exact: bool,
    /// How many combinations there are (saturating).
    pub(crate) combinations: u128,
}

/// One condition variable and the settings tried for it: the "off" setting
/// first (false, unset, none of its values), then the "on" ones, so that a
/// combination of all 0s is everything off and of all 1s everything on.
#[derive(Debug)]
struct Axis {
    name: String,
    /// `None`: unset.
    settings: Vec<Option<Value>>,
}

/// The token range of `prompt` (one of `library`'s), each render's text
/// measured by `count`.
pub(crate) fn token_range(
    library: &Library,
    prompt: &ResolvedPrompt,
    count: &dyn Fn(&str) -> Result<usize, Error>,
) -> Result<TokenRange, Error> {
    let example = prompt.front_matter.example_values(None).unwrap_or_default();
    let base: Map<String, Value> = prompt
        .vars
        .iter()
        .map(|var| {
            let value = match var.kind() {
                // A history's messages are the caller's, not the prompt's
                // text: counted empty, whatever an example holds.
                VarKind::Messages => Value::Array(Vec::new()),
                _ => example
                    .get(&var.name)
                    .cloned()
                    .unwrap_or_else(|| Value::String(placeholder(&var.name))),
            };
            (var.name.clone(), value)
        })
        .collect();
    let request = request_parts(prompt, count)?;
    let request_tokens: usize = request.iter().map(|(_, tokens)| tokens).sum();
    let axes = axes(prompt, &base);
    let sizes: Vec<usize> = axes.iter().map(|a| a.settings.len()).collect();
    let mut values = base;
    let mut render = |at: &[usize]| -> Result<promptpack::Prompt, Error> {
        for (axis, &i) in axes.iter().zip(at) {
            // Unset renders as the empty string: false, and printed as
            // nothing, as a generated struct's `None` is.
            let setting = axis.settings[i]
                .clone()
                .unwrap_or_else(|| Value::String(String::new()));
            values.insert(axis.name.clone(), setting);
        }
        library.render(&prompt.id, &values, MissingVars::KeepToken)
    };
    let found = {
        let mut cost = |at: &[usize]| -> Result<usize, Error> {
            let rendered = render(at)?;
            let mut total = count(&rendered.system)?;
            if let Some(user) = &rendered.user {
                total += count(user)?;
            }
            for message in &rendered.messages {
                total += count(&message.content)?;
            }
            Ok(total)
        };
        search(&sizes, &mut cost)?
    };
    // The two extremes rendered again for their counts per part: the search
    // keeps only totals, which is all it compares.
    let mut extreme = |(tokens, at): (usize, Vec<usize>)| -> Result<Extreme, Error> {
        let mut parts = count_parts(&render(&at)?, count)?;
        parts.extend(request.iter().cloned());
        Ok(Extreme {
            tokens: tokens + request_tokens,
            parts,
            values: axes
                .iter()
                .zip(at)
                .map(|(axis, i)| {
                    let shown = axis.settings[i].clone().unwrap_or(Value::Null);
                    (axis.name.clone(), shown)
                })
                .collect(),
        })
    };
    Ok(TokenRange {
        shortest: extreme(found.min)?,
        longest: extreme(found.max)?,
        exact: found.exact,
        combinations: found.combinations,
    })
}

/// The axes of `prompt`'s condition variables, in its order; an optional is
/// set to its value in `base` when that is one that tests true, else to
/// its placeholder.
fn axes(prompt: &ResolvedPrompt, base: &Map<String, Value>) -> Vec<Axis> {
    let mut axes = Vec::new();
    for var in &prompt.vars {
        let settings = match var.kind() {
            // A history's messages are the caller's: the budget counts the
            // prompt's own text.
            VarKind::Text | VarKind::Messages => continue,
            VarKind::Flag => vec![Some(Value::Bool(false)), Some(Value::Bool(true))],
            VarKind::Optional => {
                let set = base
                    .get(&var.name)
                    .filter(|v| ValueRef::Json(v).is_truthy())
                    .cloned()
                    .unwrap_or_else(|| Value::String(placeholder(&var.name)));
                vec![None, Some(set)]
            }
            // The vars struct of a plain choice always holds one of its
            // values: "none of them" is a render no compiled program makes.
            VarKind::Choice => var
                .choices
                .iter()
                .map(|c| Some(Value::String(c.clone())))
                .collect(),
            VarKind::OptionalChoice => std::iter::once(None)
                .chain(var.choices.iter().map(|c| Some(Value::String(c.clone()))))
                .collect(),
        };
        axes.push(Axis {
            name: var.name.clone(),
            settings,
        });
    }
    axes
}

/// What a search found: the least and the greatest cost, each with its
/// combination (a setting index per axis).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    min: (usize, Vec<usize>),
    max: (usize, Vec<usize>),
    exact: bool,
    combinations: u128,
}

/// The least and greatest `cost` over the combinations of axes of `sizes`
/// settings each: all of them when they are at most [`EXACT_LIMIT`], else a
/// local search from all-off and all-on that changes one axis at a time
/// while that helps.
fn search(
    sizes: &[usize],
    cost: &mut dyn FnMut(&[usize]) -> Result<usize, Error>,
) -> Result<Found, Error> {
    let combinations = sizes
        .iter()
        .try_fold(1u128, |n, &size| n.checked_mul(size as u128))
        .unwrap_or(u128::MAX);
    if combinations <= EXACT_LIMIT {
        return enumerate(sizes, cost, combinations);
    }
    // Every combination rendered, so that a tie is broken the same way on
    // every run (by the lowest settings) and none is rendered twice.
    let mut seen: BTreeMap<Vec<usize>, usize> = BTreeMap::new();
    let off = vec![0; sizes.len()];
    let on = vec![1; sizes.len()];
    for start in [off, on] {
        for wants_less in [true, false] {
            climb(sizes, start.clone(), wants_less, &mut seen, cost)?;
        }
    }
    let mut min: Option<(usize, &Vec<usize>)> = None;
    let mut max: Option<(usize, &Vec<usize>)> = None;
    for (at, &tokens) in &seen {
        if min.is_none_or(|(m, _)| tokens < m) {
            min = Some((tokens, at));
        }
        if max.is_none_or(|(m, _)| tokens > m) {
            max = Some((tokens, at));
        }
    }
    let owned = |found: Option<(usize, &Vec<usize>)>| {
        found.map_or((0, Vec::new()), |(tokens, at)| (tokens, at.clone()))
    };
    Ok(Found {
        min: owned(min),
        max: owned(max),
        exact: false,
        combinations,
    })
}

/// Every combination, the first axis changing fastest.
fn enumerate(
    sizes: &[usize],
    cost: &mut dyn FnMut(&[usize]) -> Result<usize, Error>,
    combinations: u128,
) -> Result<Found, Error> {
    let mut at = vec![0; sizes.len()];
    let first = cost(&at)?;
    let mut min = (first, at.clone());
    let mut max = min.clone();
    loop {
        let mut axis = 0;
        loop {
            let Some(size) = sizes.get(axis) else {
                return Ok(Found {
                    min,
                    max,
                    exact: true,
                    combinations,
                });
            };
            at[axis] += 1;
            if at[axis] < *size {
                break;
            }
            at[axis] = 0;
            axis += 1;
        }
        let tokens = cost(&at)?;
        if tokens < min.0 {
            min = (tokens, at.clone());
        }
        if tokens > max.0 {
            max = (tokens, at.clone());
        }
    }
}

/// From `at`, sets each axis in turn to its best setting for the goal
/// (fewer tokens when `wants_less`, else more), pass after pass, until a
/// pass changes nothing, [`MAX_PASSES`] are done or `seen` holds
/// [`MAX_RENDERS`] combinations. Every combination costed goes into `seen`.
fn climb(
    sizes: &[usize],
    mut at: Vec<usize>,
    wants_less: bool,
    seen: &mut BTreeMap<Vec<usize>, usize>,
    cost: &mut dyn FnMut(&[usize]) -> Result<usize, Error>,
) -> Result<(), Error> {
    let mut costed = |at: &[usize], seen: &mut BTreeMap<Vec<usize>, usize>| {
        if let Some(&tokens) = seen.get(at) {
            return Ok(Some(tokens));
        }
        if seen.len() >= MAX_RENDERS {
            return Ok(None);
        }
        let tokens = cost(at)?;
        seen.insert(at.to_vec(), tokens);
        Ok::<_, Error>(Some(tokens))
    };
    let Some(mut best) = costed(&at, seen)? else {
        return Ok(());
    };
    let better = |tokens: usize, best: usize| {
        if wants_less {
            tokens < best
        } else {
            tokens > best
        }
    };
    for _ in 0..MAX_PASSES {
        let mut changed = false;
        for (axis, &size) in sizes.iter().enumerate() {
            let kept = at[axis];
            let mut pick = kept;
            for setting in (0..size).filter(|&s| s != kept) {
                at[axis] = setting;
                let Some(tokens) = costed(&at, seen)? else {
                    return Ok(());
                };
                if better(tokens, best) {
                    best = tokens;
                    pick = setting;
                }
            }
            at[axis] = pick;
            changed |= pick != kept;
        }
        if !changed {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use promptpack::{SourceFile, TemplateSource};

    /// A library of one prompt, `p`, with this `system.md`.
    fn library(system: &str) -> Library {
        let template = TemplateSource {
            id: "p".into(),
            system: SourceFile::new("templates/p/system.md", system),
            user: None,
            messages: None,
        };
        Library::from_sources(vec![template], vec![], &promptpack::Config::default())
            .expect("the prompt loads")
    }

    /// Words, split at whitespace: a count easy to work out by hand.
    fn words(text: &str) -> Result<usize, Error> {
        Ok(text.split_whitespace().count())
    }

    fn range(system: &str) -> TokenRange {
        let library = library(system);
        let prompt = promptpack::house::resolved(&library, "p").expect("p is there");
        token_range(&library, prompt, &words).expect("counts")
    }

    #[test]
    fn flags_and_a_choice_give_the_shortest_and_longest_exactly() {
        // Off: "a" (1 word). `long` adds 3 words, `short` 1; `role` adds
        // 2 words as "x", 4 as "y". A plain choice always has one of its
        // values (its enum has no "none"), so the shortest has "x".
        let range = range(
            "a {{#if long}}b c d{{/if}} {{#if short}}e{{/if}} \
             {{#if role == \"x\"}}f g{{else if role == \"y\"}}h i j k{{/if}}",
        );
        assert!(range.exact);
        assert_eq!(range.combinations, 2 * 2 * 2);
        assert_eq!(range.shortest.tokens, 1 + 2);
        assert_eq!(range.longest.tokens, 1 + 3 + 1 + 4);
        assert_eq!(
            Value::Object(range.shortest.values.clone()),
            serde_json::json!({"long": false, "short": false, "role": "x"})
        );
        assert_eq!(
            Value::Object(range.longest.values.clone()),
            serde_json::json!({"long": true, "short": true, "role": "y"})
        );
        assert_eq!(
            range.longest.describe(),
            "long=true, short=true, role=\"y\""
        );
        assert_eq!(
            range.shortest.describe(),
            "long=false, short=false, role=\"x\""
        );
        // Also tested for truth: an `Option` of the enum, so `None` counts.
        let optional = self::range("a {{#if role}}b{{/if}}{{#if role == \"x\"}} c d{{/if}}");
        assert_eq!(optional.combinations, 2);
        assert_eq!((optional.shortest.tokens, optional.longest.tokens), (1, 4));
    }

    #[test]
    fn an_optional_is_counted_set_to_its_placeholder_and_unset() {
        // Set: "Hi ‹name› there" (3 words); unset: "Hi" and the empty value.
        let range = range("Hi{{#if name}} {{name}} there{{/if}}");
        assert!(range.exact);
        assert_eq!((range.shortest.tokens, range.longest.tokens), (1, 3));
        assert_eq!(range.longest.values["name"], "‹name›");
        assert_eq!(range.shortest.values["name"], Value::Null);
    }

    /// A conversation is counted message by message and in total: the
    /// system message and the file's own messages, the history left empty
    /// (it is the caller's, not the prompt's).
    #[test]
    fn a_conversation_counts_each_message_and_the_total() {
        let template = TemplateSource {
            id: "chat".into(),
            system: SourceFile::new("templates/chat/system.md", "Be brief."),
            user: None,
            messages: Some(SourceFile::new(
                "templates/chat/messages.md",
                "---\nvars:\n  history: {kind: messages}\n---\n\
                 {{#if examples}}\n{{#user}}\nWhat is two plus two?\n{{/user}}\n\
                 {{#tool calc}}\n4\n{{/tool}}\n{{/if}}\n\
                 {{history}}\n{{#user}}\nAsk {{question}}\n{{/user}}\n",
            )),
        };
        let library = Library::from_sources(vec![template], vec![], &promptpack::Config::default())
            .expect("the conversation loads");
        let prompt = promptpack::house::resolved(&library, "chat").expect("chat is there");
        let range = token_range(&library, prompt, &words).expect("counts");
        assert!(range.exact);
        assert_eq!(range.combinations, 2);
        // "Be brief." 2, "Ask ‹question›" 2; the examples add 5 + 1.
        assert_eq!((range.shortest.tokens, range.longest.tokens), (4, 10));
        let parts = |e: &Extreme| -> Vec<(String, usize)> { e.parts.clone() };
        assert_eq!(
            parts(&range.longest),
            [
                ("system".to_string(), 2),
                ("message 0: user".to_string(), 5),
                ("message 1: tool calc".to_string(), 1),
                ("message 2: user".to_string(), 2),
            ]
        );
        assert_eq!(
            parts(&range.longest).iter().map(|(_, n)| n).sum::<usize>(),
            range.longest.tokens,
            "the total is the messages' sum"
        );
        assert_eq!(
            range.shortest.describe_parts(),
            "system 2, message 0: user 2"
        );
        assert_eq!(range.longest.describe(), "examples=true");
    }

    #[test]
    fn a_prompt_without_conditions_has_one_count() {
        let range = range("Dear {{name}}, hello.");
        assert!(range.exact);
        assert_eq!(range.combinations, 1);
        assert_eq!(range.shortest, range.longest);
        assert_eq!(range.shortest.tokens, 3);
        assert_eq!(range.shortest.describe(), "no conditions");
    }

    #[test]
    fn past_the_limit_the_search_is_bounded_and_not_exact() {
        // 2^9 = 512 combinations of flags, each adding its own number of
        // words; one flag takes words away, so neither extreme is all-on.
        let mut system = String::from("start {{#if cut}}{{else}}w w w w w w w w w w{{/if}}");
        for i in 1..=8 {
            system.push_str(&format!(" {{{{#if f{i}}}}}{}{{{{/if}}}}", "w ".repeat(i)));
        }
        let range = range(&system);
        assert!(!range.exact);
        assert_eq!(range.combinations, 512);
        assert!(range.shortest.tokens <= range.longest.tokens);
        // Each flag is independent, so one change at a time reaches both
        // extremes: 1 word off with `cut`, 1 + 10 + 36 with everything else.
        assert_eq!(range.shortest.tokens, 1);
        assert_eq!(range.longest.tokens, 1 + 10 + 36);
        assert_eq!(range.longest.values["cut"], false);
    }

    #[test]
    fn the_search_ends_on_a_huge_number_of_combinations() {
        // 2^200 combinations, and a cost with no structure to climb along.
        let sizes = vec![2; 200];
        let mut renders = 0usize;
        let mut cost = |at: &[usize]| {
            renders += 1;
            Ok(at
                .iter()
                .enumerate()
                .map(|(i, &s)| (i * 7919 + s * 104_729) % 13)
                .sum())
        };
        let found = search(&sizes, &mut cost).expect("no error");
        assert!(!found.exact);
        // Past what a u128 holds: saturated.
        assert_eq!(found.combinations, u128::MAX);
        assert!(found.min.0 <= found.max.0);
        assert!(renders <= MAX_RENDERS);
    }

    #[test]
    fn enumeration_visits_every_combination_once() {
        let mut visited = Vec::new();
        let mut cost = |at: &[usize]| {
            visited.push(at.to_vec());
            Ok(at[0] * 10 + at[1])
        };
        let found = search(&[2, 3], &mut cost).expect("no error");
        assert_eq!(visited.len(), 6);
        assert_eq!(found.min, (0, vec![0, 0]));
        assert_eq!(found.max, (12, vec![1, 2]));
        assert!(found.exact);
    }
}
