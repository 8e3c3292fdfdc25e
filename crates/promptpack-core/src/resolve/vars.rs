//! The variables of one prompt as its parts are spliced: each numbered on
//! its first use, how it is used (printed, tested, compared with which
//! values), and for a variable compared with values, the `{{#if}}` chains
//! that compare it (what each value renders).

use crate::error::Location;
use crate::program::{ChoiceBlock, Op, Program, VarInfo, VarUses};
use crate::source_file::SourceFile;
use crate::syntax::{Condition, Name};
use std::collections::HashMap;

/// How a template uses a variable.
#[derive(Clone, Copy)]
pub(super) enum Usage<'a> {
    /// `{{name}}`.
    Value,
    /// `{{#if name}}`.
    Condition,
    /// `{{#if name == "value"}}`.
    Equals(&'a str),
    /// `{{name}}` between a conversation's messages: the history.
    History,
}

/// An `{{#if}}` chain being walked: where it opens, each test (the
/// variable, and for a comparison its value, tag and place) and its
/// `{{else}}`.
pub(super) struct Chain {
    pub(super) at: Location,
    pub(super) tests: Vec<ChainTest>,
    pub(super) else_tag: Option<(String, Location)>,
}

/// One test of a [`Chain`]: the variable tested and, for a comparison, the
/// value, the tag as written and where.
pub(super) type ChainTest = (usize, Option<(String, String, Location)>);

/// One test of a [`Chain`], from its condition and the `If` op made of it.
pub(super) fn chain_test(file: &SourceFile, condition: &Condition, op: &Op) -> ChainTest {
    let var = match op {
        Op::If { cond, .. } => *cond,
        _ => usize::MAX,
    };
    let compared = condition.equals.as_ref().map(|value| {
        let tag = file.slice(condition.name.span).to_string();
        (value.clone(), tag, file.location(condition.name.span))
    });
    (var, compared)
}

/// One prompt's variable table: every variable its parts use, in order of
/// first use, each numbered by its place.
#[derive(Default)]
pub(super) struct VarTable {
    vars: Vec<VarInfo>,
    index: HashMap<String, usize>,
}

impl VarTable {
    /// The variables, in order of first use.
    pub(super) fn list(&self) -> &[VarInfo] {
        &self.vars
    }

    /// The variables, in order of first use, for the prompt to keep.
    pub(super) fn into_list(self) -> Vec<VarInfo> {
        self.vars
    }

    /// The number of variable `name`, used in `file` as `usage` says.
    pub(super) fn var(&mut self, file: &SourceFile, name: &Name, usage: Usage<'_>) -> usize {
        let index = *self.index.entry(name.name.clone()).or_insert_with(|| {
            self.vars.push(VarInfo {
                name: name.name.clone(),
                as_value: false,
                as_condition: false,
                choices: Vec::new(),
                compared: Vec::new(),
                blocks: Vec::new(),
                first_use: file.location(name.span),
                uses: VarUses::default(),
                declared: None,
            });
            self.vars.len() - 1
        });
        let info = &mut self.vars[index];
        let first = match usage {
            Usage::Value => &mut info.uses.value,
            Usage::Condition => &mut info.uses.condition,
            Usage::Equals(_) => &mut info.uses.compared,
            Usage::History => &mut info.uses.history,
        };
        if first.is_none() {
            *first = Some(file.location(name.span));
        }
        match usage {
            Usage::History => {}
            Usage::Value => info.as_value = true,
            Usage::Condition => info.as_condition = true,
            Usage::Equals(value) => {
                // Without a declaration the enum is what is compared with;
                // front matter may replace `choices` with its declared set.
                if !info.compared.iter().any(|c| c == value) {
                    info.compared.push(value.to_string());
                    info.choices.push(value.to_string());
                }
            }
        }
        index
    }

    /// The `If` op of `condition`, its literal added to `program`.
    pub(super) fn test(
        &mut self,
        file: &SourceFile,
        condition: &Condition,
        program: &mut Program,
    ) -> Op {
        let (cond, equals) = match &condition.equals {
            None => (self.var(file, &condition.name, Usage::Condition), None),
            Some(value) => {
                let cond = self.var(file, &condition.name, Usage::Equals(value));
                let at = program
                    .literals
                    .iter()
                    .position(|l| **l == **value)
                    .unwrap_or_else(|| {
                        program.literals.push(value.as_str().into());
                        program.literals.len() - 1
                    });
                (cond, u32::try_from(at).ok())
            }
        };
        Op::If {
            cond,
            equals,
            else_at: 0,
            end_at: 0,
        }
    }

    /// Gives each variable a chain compares with values its
    /// [`ChoiceBlock`], once however often the chain's file is walked.
    pub(super) fn record_chain(&mut self, chain: Chain) {
        let mut compared: Vec<usize> = Vec::new();
        for (var, test) in &chain.tests {
            if test.is_some() && !compared.contains(var) {
                compared.push(*var);
            }
        }
        for var in compared {
            let Some(info) = self.vars.get_mut(var) else {
                continue;
            };
            if info.blocks.iter().any(|b| b.at == chain.at) {
                continue;
            }
            info.blocks.push(ChoiceBlock {
                at: chain.at.clone(),
                branches: chain
                    .tests
                    .iter()
                    .filter(|(v, _)| *v == var)
                    .filter_map(|(_, test)| test.clone())
                    .collect(),
                other_tests: chain
                    .tests
                    .iter()
                    .any(|(v, test)| *v != var || test.is_none()),
                else_tag: chain.else_tag.clone(),
            });
        }
    }
}
