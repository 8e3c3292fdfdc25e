//! Which branches of a prompt's `{{#if}}` blocks its declared examples
//! reach, and which none does: each example walked through the compiled
//! program with the engine's own truth and equality of values.

use crate::preview::ExampleRender;
use promptpack::Library;
use promptpack_core::json::{is_truthy, write_value};
use promptpack_core::program::{Op, Program};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Each branch of prompt `id` in words, and whether an example reaches it.
pub(crate) fn branches(
    library: &Library,
    id: &str,
    examples: &[ExampleRender],
) -> Vec<(String, bool)> {
    let Some(prompt) = promptpack::house::resolved(library, id) else {
        return Vec::new();
    };
    let names: Vec<&str> = prompt.vars.iter().map(|v| v.name.as_str()).collect();
    let parts = [
        ("system", Some(&prompt.system)),
        ("user", prompt.user.as_ref()),
    ];
    let mut out = Vec::new();
    for (part, program) in parts {
        let Some(program) = program else { continue };
        // (if op index, branch taken) → the examples that took it
        let mut reached: BTreeMap<(usize, bool), Vec<&str>> = BTreeMap::new();
        for example in examples {
            for taken in walk(program, &names, &example.values) {
                reached.entry(taken).or_default().push(&example.name);
            }
        }
        for (index, op) in program.ops.iter().enumerate() {
            let Op::If { cond, equals, .. } = op else {
                continue;
            };
            let name = names.get(*cond).copied().unwrap_or("?");
            let test = match equals {
                Some(literal) => format!(
                    "{name} == \"{}\"",
                    program
                        .literals
                        .get(*literal as usize)
                        .map(|l| &**l)
                        .unwrap_or("")
                ),
                None => name.to_string(),
            };
            for (branch, taken) in [("then", true), ("else", false)] {
                let by = reached.get(&(index, taken));
                let text = match by {
                    Some(examples) => format!(
                        "{part}: {{{{#if {test}}}}} {branch}: reached by {}",
                        examples.join(", ")
                    ),
                    None => format!("{part}: {{{{#if {test}}}}} {branch}: reached by no example"),
                };
                out.push((text, by.is_some()));
            }
        }
    }
    out
}

/// The branches one walk through `program` with `values` takes.
fn walk(program: &Program, names: &[&str], values: &Map<String, Value>) -> Vec<(usize, bool)> {
    let mut taken = Vec::new();
    let mut at = 0;
    while let Some(op) = program.ops.get(at) {
        at = match op {
            Op::If {
                cond,
                equals,
                else_at,
                ..
            } => {
                let value = names.get(*cond).and_then(|name| values.get(*name));
                let holds = match (value, equals) {
                    (None, _) => false,
                    (Some(value), None) => is_truthy(value),
                    (Some(value), Some(literal)) => {
                        let mut text = String::new();
                        write_value(&mut text, value);
                        program
                            .literals
                            .get(*literal as usize)
                            .is_some_and(|l| **l == text)
                    }
                };
                taken.push((at, holds));
                if holds { at + 1 } else { *else_at }
            }
            Op::Else { end_at } => *end_at,
            _ => at + 1,
        };
    }
    taken
}
