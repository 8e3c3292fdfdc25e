//! The contract of a compiled program: for each prompt id, the variables of
//! its generated vars struct and their kinds. A template is only safe to
//! render with that struct when it fits the contract, so text that did not
//! come from the build (a catalog version, an edit on disk in dev) is
//! checked against it here, with one set of rules for every caller.

#[cfg(feature = "contract-check")]
use crate::error::{Diagnostic, Location};
#[cfg(any(feature = "contract-check", feature = "contract-json"))]
use crate::error::{Error, ErrorCode};
#[cfg(feature = "contract-check")]
use crate::field::field_name;
#[cfg(feature = "contract-check")]
use crate::program::VarInfo;
use crate::program::VarKind;
#[cfg(feature = "contract-check")]
use crate::resolve::ResolvedPrompt;
#[cfg(feature = "contract-check")]
use crate::schema::compat::{self, ToolProblem};
#[cfg(feature = "contract-check")]
use crate::schema::{Schema, Tool};
use serde::{Deserialize, Serialize};
#[cfg(any(feature = "contract-check", feature = "contract-json"))]
use std::collections::BTreeMap;

/// The version of [`Contract`]'s JSON shape. A reader meets files written
/// by other builds of promptpack; it bumps whenever a field changes meaning,
/// so that an old file is refused rather than misread.
#[cfg(any(feature = "contract-check", feature = "contract-json"))]
pub const FORMAT: u32 = 1;

#[cfg(feature = "contract-check")]
/// How many fields the help of a contract diagnostic lists before it counts
/// the rest, so that its size is bounded whatever the struct's.
const LISTED_FIELDS: usize = 12;

/// The contract of a compiled program: every prompt id with the fields of
/// its vars struct. (Not in a `Library`-only build, which never compares a
/// prompt with a compiled struct.)
#[cfg(any(feature = "contract-check", feature = "contract-json"))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Contract {
    /// The version of this shape, [`FORMAT`] when written.
    pub format: u32,
    /// Every prompt, by id (a `BTreeMap`, so the JSON lists them sorted and
    /// the same program always writes the same bytes).
    pub prompts: BTreeMap<String, PromptContract>,
}

/// The vars struct of one prompt, and the shape of what it renders.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptContract {
    /// The struct's fields, in order of first use, as it declares them (a
    /// conversation's history among them, of kind `messages`).
    pub variables: Vec<VarContract>,
    /// Two files or a conversation: the code the program has to send it.
    /// Written only for a conversation, so that the contract of a prompt
    /// of two files is the bytes it always was, and a contract written
    /// before conversations reads as two files.
    #[serde(default, skip_serializing_if = "Shape::is_files")]
    pub shape: Shape,
    /// The JSON Schema of the response the program's generated type reads;
    /// `None` when it has none. Written only when there is one, as are the
    /// tools, so that a contract of prompts without them stays the bytes it
    /// was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<serde_json::Value>,
    /// The tools the program has argument types for, as a chat request
    /// lists them (`{"type": "function", "function": {…}}`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<serde_json::Value>,
}

/// What a prompt renders: `system.md` and an optional `user.md`, or
/// `system.md` and the messages of `messages.md`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// `system.md` and the optional `user.md`: a system and a user text.
    #[default]
    Files,
    /// `system.md` and `messages.md`: a list of messages.
    Conversation,
}

impl Shape {
    /// Whether it is [`Shape::Files`] (what a contract leaves unwritten).
    pub fn is_files(&self) -> bool {
        *self == Shape::Files
    }

    /// The shape, as a diagnostic words it.
    #[cfg(feature = "contract-check")]
    fn describe(self) -> &'static str {
        match self {
            Shape::Files => "two files (`system.md`, `user.md`)",
            Shape::Conversation => "a conversation (`system.md`, `messages.md`)",
        }
    }
}

/// One field of a vars struct.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct VarContract {
    /// The variable's name in the templates (`agentName`, not the field's
    /// `agent_name`): what a template must use.
    pub name: String,
    /// How the struct types it: `text`, `flag`, `optional`, `choice` or
    /// `optional_choice`.
    pub kind: VarKind,
    /// For a choice, the values of its generated enum; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

#[cfg(feature = "contract-check")]
/// The contract of the program generated from `prompts`. A function of
/// this module rather than a method, so that the contract types, which
/// `promptpack-build` re-exports, name no type of the compiler's.
pub fn of(prompts: &[ResolvedPrompt]) -> Contract {
    Contract {
        format: FORMAT,
        prompts: prompts
            .iter()
            .map(|p| (p.id.clone(), of_prompt(p)))
            .collect(),
    }
}

#[cfg(feature = "contract-check")]
/// The vars struct generated for `prompt`.
pub fn of_prompt(prompt: &ResolvedPrompt) -> PromptContract {
    PromptContract {
        variables: prompt
            .vars
            .iter()
            .map(|var| VarContract::new(&var.name, var.kind(), var.choices.clone()))
            .collect(),
        shape: shape_of(prompt),
        response: prompt
            .front_matter
            .response
            .as_ref()
            .map(|response| response.json_schema()),
        tools: prompt
            .front_matter
            .tools
            .iter()
            .map(|tool| tool.json())
            .collect(),
    }
}

#[cfg(feature = "contract-check")]
/// The shape of `prompt`.
fn shape_of(prompt: &ResolvedPrompt) -> Shape {
    if prompt.conversation.is_some() {
        Shape::Conversation
    } else {
        Shape::Files
    }
}

#[cfg(any(feature = "contract-check", feature = "contract-json"))]
impl Contract {
    /// The contract of a program whose prompts are `prompts` (by id), of
    /// this promptpack's [`FORMAT`]: what a running binary that knows its
    /// prompts' contracts (a live handle) builds to say what it is.
    pub fn new(prompts: BTreeMap<String, PromptContract>) -> Contract {
        Contract {
            format: FORMAT,
            prompts,
        }
    }

    /// Reads a contract file's text (`path` names it in errors). Text that
    /// is not a contract, or one of another [`FORMAT`] (written by a build
    /// of promptpack whose fields may mean something else), is
    /// `invalid_config`: checking against a misread contract would let a
    /// version through that the program cannot render.
    #[cfg(feature = "contract-json")]
    pub fn from_json(path: &str, text: &str) -> Result<Contract, Error> {
        let contract: Contract = serde_json::from_str(text).map_err(|e| {
            Error::new(
                ErrorCode::InvalidConfig,
                format!("{path} is not a promptpack contract: {e}"),
            )
        })?;
        if contract.format != FORMAT {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                format!(
                    "{path} is a contract of format {}, and this promptpack reads format {FORMAT}: write it again with `promptpack contract` of this version",
                    contract.format
                ),
            ));
        }
        Ok(contract)
    }

    /// The contract as pretty-printed JSON with a final newline: the text of
    /// the file the build writes and `promptpack contract` prints.
    #[cfg(feature = "contract-json")]
    pub fn to_json(&self) -> String {
        // Strings, numbers and maps with string keys only: serializing
        // cannot fail.
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

impl PromptContract {
    /// A struct with these fields, in this order, of a prompt of two files.
    pub fn new(variables: Vec<VarContract>) -> PromptContract {
        PromptContract {
            variables,
            shape: Shape::Files,
            response: None,
            tools: Vec::new(),
        }
    }

    /// The same, of a prompt of `shape`.
    pub fn with_shape(mut self, shape: Shape) -> PromptContract {
        self.shape = shape;
        self
    }

    /// The same, reading answers of the JSON Schema `response` and calls
    /// to `tools` (each as a chat request lists it).
    pub fn with_exchange(
        mut self,
        response: Option<serde_json::Value>,
        tools: Vec<serde_json::Value>,
    ) -> PromptContract {
        self.response = response;
        self.tools = tools;
        self
    }

    /// Field `name`, when the struct has one.
    pub fn variable(&self, name: &str) -> Option<&VarContract> {
        self.variables.iter().find(|v| v.name == name)
    }
}

impl VarContract {
    /// Field `name` of kind `kind`; `values` are a choice's (empty for
    /// other kinds).
    pub fn new(name: &str, kind: VarKind, values: Vec<String>) -> VarContract {
        VarContract {
            name: name.to_string(),
            kind,
            values,
        }
    }
}

#[cfg(feature = "contract-check")]
/// Every way `prompt` leaves the vars struct `compiled`, as diagnostics of
/// `code`, one per variable at its first use: a variable the struct lacks
/// (it would render as missing), a variable whose kind changed (a flag
/// printed would render `true`, a new condition on text would test the
/// text), or a value compared with that the struct's enum lacks (the struct
/// could never hold it: the branch would be dead). Fields the prompt no
/// longer uses, and values it no longer compares with, never block: the
/// struct still supplies them and nothing renders differently. But the
/// shape is the code's: a conversation where the program renders two files
/// (or the reverse) is a violation, and so is a history the struct has that
/// the prompt no longer places (the program's history would silently not
/// be sent), located at the file that makes the shape.
///
/// `code` is [`ErrorCode::StaleBuild`] for an edit on disk in dev, whose
/// fix is a rebuild; any other code words the problem as a version the
/// program cannot serve ([`ErrorCode::ContractViolation`]).
pub fn check(
    prompt: &ResolvedPrompt,
    compiled: &PromptContract,
    code: ErrorCode,
) -> Vec<Diagnostic> {
    let wording = Wording::for_code(code);
    let help = wording.help(compiled);
    let mut found: Vec<Diagnostic> = shape_problems(prompt, compiled, &wording)
        .into_iter()
        .map(|(message, at)| {
            Diagnostic::new(code, message)
                .at(at)
                .with_help(help.clone())
        })
        .collect();
    found.extend(
        exchange_problems(prompt, compiled, &wording)
            .into_iter()
            .map(|(message, at)| {
                Diagnostic::new(code, message)
                    .at(at)
                    .with_help(wording.exchange_help())
            }),
    );
    found.extend(prompt.vars.iter().filter_map(|var| {
        let (message, at) = problem(&prompt.id, var, compiled, &wording)?;
        Some(
            Diagnostic::new(code, message)
                .at(at)
                .with_help(help.clone()),
        )
    }));
    found
}

#[cfg(feature = "contract-check")]
/// Where `prompt`'s shape leaves `compiled`'s: another shape, at the file
/// that makes it one (`messages.md`, else `user.md`, else `system.md`);
/// each history of the struct the prompt does not place, at `messages.md`.
fn shape_problems(
    prompt: &ResolvedPrompt,
    compiled: &PromptContract,
    wording: &Wording,
) -> Vec<(String, Location)> {
    let Wording {
        prompt: on_disk,
        structure,
        fix,
        ..
    } = wording;
    let id = &prompt.id;
    let file = prompt
        .messages_path
        .as_ref()
        .or(prompt.user_path.as_ref())
        .unwrap_or(&prompt.system_path);
    let shape = shape_of(prompt);
    if shape != compiled.shape {
        // The variables are compared too, below: each says what else the
        // struct lacks.
        return vec![(
            format!(
                "prompt `{id}`{on_disk} is {}, but {structure} is of {}{fix}",
                shape.describe(),
                compiled.shape.describe()
            ),
            Location::file(file.clone()),
        )];
    }
    compiled
        .variables
        .iter()
        .filter(|field| field.kind == VarKind::Messages)
        .filter(|field| !prompt.vars.iter().any(|var| var.name == field.name))
        .map(|field| {
            (
                format!(
                    "prompt `{id}`{on_disk} no longer places history `{}`, which {structure} has: the history it is given would not be sent{fix}",
                    field.name
                ),
                Location::file(file.clone()),
            )
        })
        .collect()
}

#[cfg(feature = "contract-check")]
/// Where what `prompt` asks the model for leaves what the program's
/// generated types read (the rules of [`crate::schema::compat`]): its
/// response, and the arguments of each tool it offers.
fn exchange_problems(
    prompt: &ResolvedPrompt,
    compiled: &PromptContract,
    wording: &Wording,
) -> Vec<(String, Location)> {
    let Wording {
        prompt: on_disk,
        structure: _,
        fix,
        ..
    } = wording;
    let id = &prompt.id;
    let origin = "contract.json";
    let file = || Location::file(prompt.system_path.clone());
    let mut found = Vec::new();
    let program_response = compiled
        .response
        .as_ref()
        .and_then(|json| Schema::from_json_schema(json, origin));
    // A field gone from the top is at the `response` key.
    let response_key = || {
        prompt
            .front_matter
            .location_of("response")
            .cloned()
            .unwrap_or_else(file)
    };
    match (&prompt.front_matter.response, &program_response) {
        (Some(response), Some(program)) => {
            for problem in compat::unreadable(response, program) {
                found.push((
                    format!(
                        "prompt `{id}`{on_disk} asks for a response the program could not read: \
                         `{}` {}{fix}",
                        problem.path, problem.message
                    ),
                    problem.at.unwrap_or_else(response_key),
                ));
            }
        }
        (None, Some(_)) => found.push((
            format!(
                "prompt `{id}`{on_disk} declares no `response`, but the program reads its \
                 answer into a generated type{fix}"
            ),
            file(),
        )),
        // A program without a response type reads no answer by its shape.
        (_, None) => {}
    }
    if !prompt.front_matter.tools.is_empty() {
        let program_tools: Vec<Tool> = compiled
            .tools
            .iter()
            .filter_map(|json| Tool::from_json(json, origin))
            .collect();
        for problem in compat::unreadable_tools(&prompt.front_matter.tools, &program_tools) {
            found.push(match problem {
                ToolProblem::Unknown { name, at } => (
                    format!(
                        "prompt `{id}`{on_disk} offers tool `{name}`, which the program has no \
                         type for: it could not read a call to it{fix}"
                    ),
                    at,
                ),
                ToolProblem::Arguments { name, problem } => (
                    format!(
                        "prompt `{id}`{on_disk} offers tool `{name}` with arguments the program \
                         could not read: `{}` {}{fix}",
                        problem.path, problem.message
                    ),
                    problem.at.unwrap_or_else(file),
                ),
            });
        }
    }
    found
}

#[cfg(feature = "contract-check")]
/// [`check`] of every prompt against its vars struct in `contract`, as
/// [`ErrorCode::ContractViolation`]; a prompt the program does not have at
/// all is one too, since it has no typed API to render it with.
pub fn check_all(prompts: &[ResolvedPrompt], contract: &Contract) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for prompt in prompts {
        match contract.prompts.get(&prompt.id) {
            Some(compiled) => {
                diagnostics.extend(check(prompt, compiled, ErrorCode::ContractViolation));
            }
            None => diagnostics.push(unknown_prompt(prompt, contract)),
        }
    }
    diagnostics
}

#[cfg(feature = "contract-check")]
/// The diagnostic of a prompt id the program lacks, its help the ids the
/// program has (bounded as `unknown_prompt`'s).
fn unknown_prompt(prompt: &ResolvedPrompt, contract: &Contract) -> Diagnostic {
    let known = Error::unknown_prompt(&prompt.id, contract.prompts.keys().map(String::as_str))
        .into_diagnostics()
        .into_iter()
        .find_map(|d| d.help)
        .unwrap_or_default();
    Diagnostic::new(
        ErrorCode::ContractViolation,
        format!(
            "the program has no prompt `{}`: it has no vars struct to render it with",
            prompt.id
        ),
    )
    .at(Location::file(prompt.system_path.clone()))
    .with_help(format!(
        "{known}; a new prompt needs a rebuild of the program before it can be served"
    ))
}

#[cfg(feature = "contract-check")]
/// What `var` needs that `compiled` does not give, as a sentence, and
/// where: the comparison with the first value the struct's enum lacks, or
/// else the variable's first use. `None` when the struct serves it as it is.
fn problem(
    id: &str,
    var: &VarInfo,
    compiled: &PromptContract,
    wording: &Wording,
) -> Option<(String, Location)> {
    let Wording {
        prompt,
        structure,
        fix,
        ..
    } = wording;
    let kind = var.kind();
    let Some(field) = compiled.variable(&var.name) else {
        return Some((
            format!(
                "prompt `{id}`{prompt} needs variable `{}`, which {structure} lacks{fix}",
                var.name
            ),
            var.first_use.clone(),
        ));
    };
    if field.kind != kind {
        return Some((
            format!(
                "prompt `{id}`{prompt} uses `{}` as {}, but {structure} has it as {}{fix}",
                var.name,
                describe(kind),
                describe(field.kind)
            ),
            var.first_use.clone(),
        ));
    }
    // What the template compares with, not what it declares: a declared
    // value the binary's enum lacks is never passed to it, so it renders
    // nothing the program cannot ask for.
    let lacking: Vec<String> = var
        .compared
        .iter()
        .filter(|value| !field.values.contains(value))
        .map(|value| format!("{value:?}"))
        .collect();
    if lacking.is_empty() {
        return None;
    }
    // The comparison a new value was added in, not the chain's `{{#if}}`
    // nor the variable's first use, which may be far from the edit.
    let at = var
        .blocks
        .iter()
        .flat_map(|block| &block.branches)
        .find(|(value, _, _)| !field.values.contains(value))
        .map_or_else(|| var.first_use.clone(), |(_, _, at)| at.clone());
    Some((
        format!(
            "prompt `{id}`{prompt} compares `{}` with {}, which {structure}'s enum lacks{fix}",
            var.name,
            lacking.join(", ")
        ),
        at,
    ))
}

#[cfg(feature = "contract-check")]
/// A kind as the vars struct types it.
fn describe(kind: VarKind) -> String {
    let what = match kind {
        VarKind::Text => "text",
        VarKind::Flag => "a condition",
        VarKind::Optional => "text and a condition",
        VarKind::Choice => "a choice",
        VarKind::OptionalChoice => "a choice and a condition",
        VarKind::Messages => "a history",
    };
    format!("{what} (`{}`)", kind.rust_type())
}

#[cfg(feature = "contract-check")]
/// The words of a contract diagnostic, which differ with who meets it: a
/// developer whose edit on disk outran the build, or an operator whose
/// version the program cannot serve.
struct Wording {
    /// After the prompt's id: where the text is.
    prompt: &'static str,
    /// The struct, as the reader knows it.
    structure: &'static str,
    /// After the message.
    fix: &'static str,
    /// After the fields, in the help.
    remedy: &'static str,
}

#[cfg(feature = "contract-check")]
impl Wording {
    fn for_code(code: ErrorCode) -> Wording {
        if code == ErrorCode::StaleBuild {
            Wording {
                prompt: " on disk now",
                structure: "the compiled vars struct",
                fix: ": rebuild",
                remedy: "run `cargo build` so that the build script regenerates the vars struct, \
                         or undo the edit",
            }
        } else {
            Wording {
                prompt: "",
                structure: "the program's vars struct",
                fix: "",
                remedy: "change the prompt to fit them, or rebuild the program from it",
            }
        }
    }

    /// The help of a response or tool the program could not read.
    fn exchange_help(&self) -> String {
        format!(
            "a program reads answers into the types of its build: a version may add optional \
             fields (`name?`), narrow an enum or reword descriptions, but not drop, retype or \
             require fields; {}",
            self.remedy
        )
    }

    /// The help: the fields `compiled` has (the first few, then how many
    /// more), then the remedy.
    fn help(&self, compiled: &PromptContract) -> String {
        let fields = &compiled.variables;
        let mut listed: Vec<String> = fields
            .iter()
            .take(LISTED_FIELDS)
            .map(|field| {
                let shown = field.kind.shown_type(&field.values);
                // The field as the vars struct has it (`agent_name`), which
                // is what the reader's code writes; the contract keeps the
                // template's name (`agentName`).
                let name = field_name(&field.name);
                match field.kind {
                    VarKind::Choice | VarKind::OptionalChoice => format!("`{name}` ({shown})"),
                    _ => format!("`{name}` (`{shown}`)"),
                }
            })
            .collect();
        if fields.len() > LISTED_FIELDS {
            listed.push(format!("and {} more", fields.len() - LISTED_FIELDS));
        }
        let has = if listed.is_empty() {
            "no fields".to_string()
        } else {
            format!("the fields {}", listed.join(", "))
        };
        let structure = self.structure;
        format!("{structure} has {has}; {}", self.remedy)
    }
}

#[cfg(all(test, feature = "contract-check"))]
mod tests;
