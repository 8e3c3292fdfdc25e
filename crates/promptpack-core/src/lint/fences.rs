//! The `broken_fence` lint: an `{{#if}}` block whose branches do not agree
//! on whether a Markdown code fence is open after them. Under the
//! conditions that pick the odd branch out, the rendered prompt keeps a
//! fence open that the author meant closed (or the reverse), and the rest of
//! the prompt reaches the model as code.
//!
//! Each branch (then, every `else if`, else, or the empty else a block
//! without `{{else}}` has) is rendered on its own, tokens as a neutral
//! placeholder, and read by pulldown-cmark, so that indented, tilde, longer
//! and info-string fences count as CommonMark counts them. What a branch
//! leaves behind depends on what surrounds it, so each is read with the same
//! surroundings: the opening line of the code block the block sits in (if
//! any), the start of the block's line, and the rest of the line after
//! `{{/if}}`. A nested block takes its first branch inside its enclosing
//! branch: when its branches disagree it gets a warning of its own. When
//! every branch leaves a fence open, the rest of the file (each block on
//! its first branch) tells a fence closed after the block from one opened
//! in one branch and closed in another.

use crate::error::{Diagnostic, ErrorCode};
use crate::source_file::SourceFile;
use crate::syntax::{Delimiters, Item, parse, strip_standalone_tags};
use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag};
use std::ops::Range;

/// What a variable or snippet token reads as: one letter, which neither
/// opens, closes nor indents a fence, as most values would not.
const PLACEHOLDER: &str = "x";

/// How many bytes a file's branches may make pulldown-cmark read, for each
/// byte of the file (plus a floor for small files). Nesting repeats a
/// branch's text in every enclosing branch, and blocks on one long line each
/// repeat the line, so hostile input (thousands of nested blocks) could
/// cost the square of its size; the cheapest blocks are examined first and
/// those past the budget not at all.
const BUDGET_PER_BYTE: usize = 16;
const BUDGET_FLOOR: usize = 1 << 16;

/// A `broken_fence` warning at the `{{#if}}` of every block of `file` whose
/// branches leave a code fence open in some and not in others, or open in
/// all with nothing after the block to close it (a fence one branch opens
/// and another closes). A file that does not parse gets none: its errors are
/// reported elsewhere.
pub(super) fn broken_fences(file: &SourceFile, delims: &Delimiters, lints: &mut Vec<Diagnostic>) {
    let Ok(mut parsed) = parse(file, delims) else {
        return;
    };
    // What is linted is what renders: standalone tag lines leave no line.
    strip_standalone_tags(file, &mut parsed);
    let items = &parsed.items;
    let flat = Flat::new(file, items);
    let blocks = blocks(items);
    if blocks.is_empty() {
        return;
    }
    let code = fenced_code(&flat.text);
    let mut budget = BUDGET_FLOOR.saturating_add(file.body().len().saturating_mul(BUDGET_PER_BYTE));
    let planned: Vec<(usize, Surroundings)> = blocks
        .iter()
        .map(|block| {
            let around = Surroundings::of(items, &flat, &code, block);
            (block.cost(&flat, &around), around)
        })
        .collect();
    let mut order: Vec<usize> = (0..blocks.len()).collect();
    order.sort_by_key(|&b| planned[b].0);
    let mut text = String::new();
    for b in order {
        let (cost, around) = &planned[b];
        let Some(left) = budget.checked_sub(*cost) else {
            break;
        };
        budget = left;
        let block = &blocks[b];
        let exits: Vec<bool> = block
            .branches
            .iter()
            .map(|branch| {
                text.clear();
                around.render(items, &flat, branch.clone(), &mut text);
                leaves_fence_open(&text)
            })
            .collect();
        let why = if exits.iter().any(|&open| open != exits[0]) {
            "some of its branches leave a code fence open and others do not"
        } else if exits[0] && never_closed(items, &flat, block, around, &mut budget) {
            // Every branch leaving a fence open is how a fence that one
            // branch opens and the next closes looks, as well as how a
            // fence opened in every branch and closed after the block
            // does: only what follows tells them apart.
            "every branch leaves a code fence open, and under some conditions nothing after the block closes it"
        } else {
            continue;
        };
        let Item::If(cond) = &items[block.open] else {
            continue;
        };
        let span = cond.name.span;
        lints.push(
            Diagnostic::new(
                ErrorCode::BrokenFence,
                format!("`{}` cuts a fenced code block in two: {why}", file.slice(span)),
            )
            .at(file.location(span))
            .with_help(
                "keep a fence's opening and closing lines in the same branch, or both outside the block: otherwise, under some conditions, the rest of the prompt renders as code",
            ),
        );
    }
}

/// Whether, with `block` taking one of its branches and every other block
/// its first, some branch leaves a fence open to the end of the file. No
/// when reading the rest of the file once per branch is past the budget.
fn never_closed(
    items: &[Item],
    flat: &Flat,
    block: &Block,
    around: &Surroundings,
    budget: &mut usize,
) -> bool {
    let close = block.close();
    // Counted before the rest is rendered: that takes as long as reading it.
    let rest_cost = flat.text.len() - flat.at[close] + (items.len() - close);
    let cost = block.branches.len() * (around.before_len() + rest_cost + 1)
        + block
            .branches
            .iter()
            .map(|b| flat.at[b.end] - flat.at[b.start] + b.len())
            .sum::<usize>();
    let Some(left) = budget.checked_sub(cost) else {
        return false;
    };
    *budget = left;
    let mut rest = String::new();
    render_items(items, flat, close + 1..items.len(), &mut rest);
    let mut text = String::new();
    block.branches.iter().any(|branch| {
        text.clear();
        around.before(flat, &mut text);
        render_items(items, flat, branch.clone(), &mut text);
        text.push_str(&rest);
        leaves_fence_open(&text)
    })
}

/// The file rendered with every branch of every block, tokens as the
/// placeholder and block tags as nothing: the text the branches are cut
/// from, and the best guess at what surrounds each block.
struct Flat {
    text: String,
    /// Where item `i` starts in `text`; one more entry for the end.
    at: Vec<usize>,
    /// Where each `\n` of `text` is, in order.
    newlines: Vec<usize>,
}

impl Flat {
    fn new(file: &SourceFile, items: &[Item]) -> Flat {
        let mut text = String::with_capacity(file.body().len());
        let mut at = Vec::with_capacity(items.len() + 1);
        for item in items {
            at.push(text.len());
            match item {
                Item::Text(span) => text.push_str(file.slice(*span)),
                Item::Var(_) | Item::Snippet(_) | Item::Schema(_) => text.push_str(PLACEHOLDER),
                Item::If(_)
                | Item::ElseIf(_)
                | Item::Else(_)
                | Item::EndIf(_)
                | Item::OpenMessage(_)
                | Item::CloseMessage(..) => {}
            }
        }
        at.push(text.len());
        let newlines = text.match_indices('\n').map(|(i, _)| i).collect();
        Flat { text, at, newlines }
    }

    /// Where the line holding `at` starts.
    fn line_start(&self, at: usize) -> usize {
        match self.newlines.partition_point(|&n| n < at) {
            0 => 0,
            i => self.newlines[i - 1] + 1,
        }
    }

    /// Where the line holding `at` ends (its `\n`, or the end of the text).
    fn line_end(&self, at: usize) -> usize {
        let i = self.newlines.partition_point(|&n| n < at);
        self.newlines.get(i).copied().unwrap_or(self.text.len())
    }

    /// The rendered text of item `i`.
    fn item(&self, i: usize) -> &str {
        &self.text[self.at[i]..self.at[i + 1]]
    }
}

/// An `{{#if}}` block: the index of its `If` item and the item ranges of its
/// branches, the empty else included when it has no `{{else}}`.
struct Block {
    open: usize,
    branches: Vec<Range<usize>>,
}

/// Every block of `items` (which parsed, so blocks balance), in the order
/// they close.
fn blocks(items: &[Item]) -> Vec<Block> {
    let mut done = Vec::new();
    // Open blocks: the `If`'s index, the branches so far, where the current
    // branch starts, and whether an `{{else}}` was seen.
    let mut open: Vec<(usize, Vec<Range<usize>>, usize, bool)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item {
            Item::If(_) => open.push((i, Vec::new(), i + 1, false)),
            Item::ElseIf(_) | Item::Else(_) => {
                if let Some((_, branches, start, seen_else)) = open.last_mut() {
                    branches.push(*start..i);
                    *start = i + 1;
                    *seen_else |= matches!(item, Item::Else(_));
                }
            }
            Item::EndIf(_) => {
                if let Some((at, mut branches, start, seen_else)) = open.pop() {
                    branches.push(start..i);
                    if !seen_else {
                        branches.push(i..i);
                    }
                    done.push(Block { open: at, branches });
                }
            }
            Item::Text(_)
            | Item::Var(_)
            | Item::Snippet(_)
            | Item::Schema(_)
            | Item::OpenMessage(_)
            | Item::CloseMessage(..) => {}
        }
    }
    done
}

impl Block {
    /// The index of its `{{/if}}`.
    fn close(&self) -> usize {
        self.branches.last().map_or(self.open, |b| b.end)
    }

    /// Roughly the bytes and items rendering every branch takes: what the
    /// budget counts.
    fn cost(&self, flat: &Flat, around: &Surroundings) -> usize {
        let fixed = around.before_len() + around.after.len() + 2;
        self.branches
            .iter()
            .map(|b| fixed + (flat.at[b.end] - flat.at[b.start]) + b.len())
            .sum()
    }
}

/// What every branch of one block is read with: the text before it
/// (the opening line of an enclosing code block, then the start of the
/// block's line) and the text after it (the rest of the line). Ranges of
/// the flat text: blocks on one long line would each copy it.
struct Surroundings {
    context: Option<Range<usize>>,
    prefix: Range<usize>,
    after: Range<usize>,
}

impl Surroundings {
    fn of(items: &[Item], flat: &Flat, code: &[Range<usize>], block: &Block) -> Surroundings {
        let start = flat.at[block.open];
        let close = block.close();
        let end = flat.at[close];
        // Inside a code block (past its opening line), a fence line in a
        // branch may close it rather than open one, and an info-string line
        // is code: the opening line says so to pulldown-cmark.
        let context = code
            .partition_point(|r| r.start < start)
            .checked_sub(1)
            .map(|i| &code[i])
            .filter(|r| start < r.end && flat.line_end(r.start) < start)
            .map(|r| r.start..flat.line_end(r.start));
        // A standalone `{{/if}}` took its line's end with it: the next line
        // is no part of this one. Tags are cut only there, so a gap between
        // `{{/if}}` and the next item is that cut.
        let end_span = match &items[close] {
            Item::EndIf(span) => Some(*span),
            _ => None,
        };
        let cut = match (end_span, items.get(close + 1)) {
            (Some(span), Some(next)) => item_start(next) != span.end,
            _ => true,
        };
        Surroundings {
            context,
            prefix: flat.line_start(start)..start,
            after: if cut {
                end..end
            } else {
                end..flat.line_end(end)
            },
        }
    }

    /// How long the text before a branch is.
    fn before_len(&self) -> usize {
        self.context.as_ref().map_or(0, |c| c.len() + 1) + self.prefix.len()
    }

    /// Writes the text before a branch into `out`.
    fn before(&self, flat: &Flat, out: &mut String) {
        if let Some(context) = &self.context {
            out.push_str(&flat.text[context.clone()]);
            out.push('\n');
        }
        out.push_str(&flat.text[self.prefix.clone()]);
    }

    /// Writes into `out` the branch `range` of the block with its
    /// surroundings.
    fn render(&self, items: &[Item], flat: &Flat, range: Range<usize>, out: &mut String) {
        self.before(flat, out);
        render_items(items, flat, range, out);
        out.push_str(&flat.text[self.after.clone()]);
    }
}

/// Writes into `out` the items of `range` as the placeholder rendering has
/// them, each block taking its first branch: blocks that start in `range`,
/// and those it leaves by their `{{else}}` (the rest of the file after a
/// nested block).
fn render_items(items: &[Item], flat: &Flat, range: Range<usize>, out: &mut String) {
    // For each block open here, whether it is past its first branch;
    // `skipping` counts those that are (a block entered before `range` is
    // pushed at its `{{else}}`, already past).
    let mut nested: Vec<bool> = Vec::new();
    let mut skipping = 0usize;
    for i in range {
        match &items[i] {
            Item::If(_) => nested.push(false),
            Item::ElseIf(_) | Item::Else(_) => match nested.last_mut() {
                Some(true) => {}
                Some(past) => {
                    *past = true;
                    skipping += 1;
                }
                None => {
                    nested.push(true);
                    skipping += 1;
                }
            },
            Item::EndIf(_) => {
                if nested.pop() == Some(true) {
                    skipping -= 1;
                }
            }
            Item::Text(_) | Item::Var(_) | Item::Snippet(_) | Item::Schema(_) => {
                if skipping == 0 {
                    out.push_str(flat.item(i));
                }
            }
            Item::OpenMessage(_) | Item::CloseMessage(..) => {}
        }
    }
}

/// Where an item starts in the file.
fn item_start(item: &Item) -> usize {
    match item {
        Item::Text(span)
        | Item::Else(span)
        | Item::EndIf(span)
        | Item::CloseMessage(_, span)
        | Item::Schema(span) => span.start,
        Item::OpenMessage(tag) => tag.span.start,
        Item::Var(name) => name.span.start,
        Item::Snippet(include) => include.name.span.start,
        Item::If(cond) | Item::ElseIf(cond) => cond.name.span.start,
    }
}

/// The byte ranges of the fenced code blocks of `text`, in order.
fn fenced_code(text: &str) -> Vec<Range<usize>> {
    Parser::new(text)
        .into_offset_iter()
        .filter_map(|(event, range)| {
            matches!(
                event,
                Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_)))
            )
            .then_some(range)
        })
        .collect()
}

/// Whether a fenced code block is still open at the end of `text`: one is
/// when a line after `text` is code. An unclosed fence runs to the end of
/// the document, so a last line of plain text tells: a fenced block that
/// reaches it was never closed. (One inside a list item or block quote
/// ends with its container, at that unindented line: the prompt after it
/// is no code.)
fn leaves_fence_open(text: &str) -> bool {
    let mut probe = String::with_capacity(text.len() + 2);
    probe.push_str(text);
    probe.push('\n');
    let sentinel = probe.len();
    probe.push_str(PLACEHOLDER);
    fenced_code(&probe).iter().any(|r| r.end > sentinel)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines and columns of the `broken_fence` warnings of `text`.
    fn warnings(text: &str) -> Vec<(usize, usize)> {
        let file = SourceFile::new("templates/t/system.md", text);
        let mut lints = Vec::new();
        broken_fences(&file, &Delimiters::default(), &mut lints);
        assert!(lints.iter().all(|l| l.code == ErrorCode::BrokenFence));
        lints
            .iter()
            .filter_map(|l| l.location.as_ref())
            .map(|l| (l.line(), l.column()))
            .collect()
    }

    #[test]
    fn a_fence_opened_in_one_branch_only() {
        let text = "Intro\n{{#if showCode}}\n```python\n{{/if}}\nprint(1)\n```\n";
        assert_eq!(warnings(text), [(2, 1)]);
        // Opened in the then branch, closed in the else branch only: under
        // either condition a fence is left open.
        let text = "{{#if a}}\n```python\nprint(1)\n{{else}}\n```\n{{/if}}\nAfter.\n";
        assert_eq!(warnings(text), [(1, 1)]);
        // The same branches, with a closing fence after the block, are fine.
        let text = "{{#if a}}\n```python\nprint(1)\n{{else}}\n```\n{{/if}}\nprint(2)\n```\n";
        assert_eq!(warnings(text), []);
        // Closed in one branch of a fence opened before the block.
        let text = "```\ncode\n{{#if a}}\n```\n{{/if}}\nmore\n";
        assert_eq!(warnings(text), [(3, 1)]);
        // Inline tags: the fence line is in the branch.
        let text = "Say {{#if a}}\n```\n{{/if}}x";
        assert_eq!(warnings(text), [(1, 5)]);
    }

    #[test]
    fn every_branch_of_an_else_if_chain_counts() {
        let chain = |middle: &str| {
            format!(
                "{{{{#if a}}}}\n```js\n{{{{else if b}}}}\n{middle}{{{{else}}}}\n```py\n{{{{/if}}}}\ncode\n```\n"
            )
        };
        assert_eq!(warnings(&chain("```rust\n")), []);
        assert_eq!(warnings(&chain("no code\n")), [(1, 1)]);
        // Without an else, the empty branch disagrees.
        let text = "{{#if a}}\n```js\n{{else if b}}\n```py\n{{/if}}\ncode\n```\n";
        assert_eq!(warnings(text), [(1, 1)]);
    }

    #[test]
    fn balanced_branches_do_not_warn() {
        // A whole fenced block inside one branch.
        let text = "{{#if showCode}}\n```python\nprint({{x}})\n```\n{{/if}}\nAfter.\n";
        assert_eq!(warnings(text), []);
        // Both branches open the fence that closes after the block.
        let text = "{{#if py}}```python{{else}}```js{{/if}}\ncode\n```\n";
        assert_eq!(warnings(text), []);
        let text = "{{#if py}}\n````python\n{{else}}\n```js\n{{/if}}\ncode\n````\n";
        assert_eq!(warnings(text), []);
        // A tilde fence that a backtick one after the block cannot close.
        let text = "{{#if py}}\n```python\n{{else}}\n~~~js\n{{/if}}\ncode\n```\n";
        assert_eq!(warnings(text), [(1, 1)]);
        // Balanced fences inside a branch, in both branches.
        let text = "{{#if a}}\n```\nx\n```\n~~~\ny\n~~~\n{{else}}\n````\nz\n````\n{{/if}}\n";
        assert_eq!(warnings(text), []);
        // No fences at all, nested blocks, tokens.
        let text = "{{#if a}}A {{b}}{{#if c}}C{{else}}D{{/if}}{{else if e}}E{{/if}}\n";
        assert_eq!(warnings(text), []);
        // The info string is inside the block: both branches open a fence.
        let text = "```{{#if a}}python{{/if}}\ncode\n```\n";
        assert_eq!(warnings(text), []);
    }

    #[test]
    fn what_commonmark_reads_as_no_fence_is_none() {
        // Four spaces: an indented code line, not a fence.
        let text = "{{#if a}}\n    ```\n{{/if}}\ntext\n";
        assert_eq!(warnings(text), []);
        // Text before the tag on its line: the backticks are inline.
        let text = "Use {{#if a}}```{{/if}} here.\n";
        assert_eq!(warnings(text), []);
        // Inside a code block, an info-string line is code, not a fence.
        let text = "```\n{{#if py}}\n```python\n{{/if}}\n```\n";
        assert_eq!(warnings(text), []);
        // A shorter fence does not close a longer one.
        let text = "````\n{{#if a}}\n```\n{{/if}}\n````\n";
        assert_eq!(warnings(text), []);
    }

    #[test]
    fn nested_blocks_warn_where_they_break() {
        let text = "{{#if a}}\n{{#if b}}\n```\n{{/if}}\n{{/if}}\ncode\n";
        // The inner block breaks the fence; the outer, whose then-branch
        // holds the inner's first branch, too.
        assert_eq!(warnings(text), [(2, 1), (1, 1)]);
        // A nested block whose branches agree does not make its enclosing
        // one warn.
        let text = "{{#if a}}\n{{#if b}}\n```js\n{{else}}\n```py\n{{/if}}\ncode\n```\n{{/if}}\n";
        assert_eq!(warnings(text), []);
    }

    #[test]
    fn files_that_do_not_parse_get_no_warning() {
        assert_eq!(warnings("{{#if a}}\n```\n"), []);
    }

    /// Thousands of nested blocks, each opening a fence in its then-branch
    /// only: the budget keeps the work near linear, and the innermost
    /// blocks, examined first, still warn.
    #[test]
    fn deep_nesting_stays_within_the_budget() {
        let n = 10_000;
        let text = format!(
            "{}```\n{}",
            "{{#if a}}\n```\n".repeat(n),
            "{{/if}}\n".repeat(n)
        );
        let found = warnings(&text);
        assert!(!found.is_empty() && found.len() < n, "{}", found.len());
        let text = "{{#if a}}```{{/if}} ".repeat(n);
        assert_eq!(warnings(&text), []);
    }
}
