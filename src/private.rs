//! Items the generated code calls. Not a public API: names and signatures
//! may change in any release.

pub use crate::answer::{nullable, parse_answer, parse_arguments, property, tool, unknown_tool};
use crate::exchange::{Exchange, RequestJson};
use crate::prompt::Prompt;
pub use crate::prompt::PromptHash;
use crate::provenance::Provenance;
use promptpack_core::contract::{PromptContract, Shape, VarContract};
use promptpack_core::error::{Error, ErrorCode, Result};
use promptpack_core::message::{Message, Role};
pub use promptpack_core::schema::{Property, Schema, SchemaKind, Tool};
use promptpack_core::value::ValueRef;
use promptpack_core::vars::{VarNames, Vars};

/// Where the crate that generated the code keeps its prompts, fixed at build
/// time, for the dev path to read them from disk.
#[derive(Debug)]
pub struct DevSource {
    /// The prompt root (the crate's manifest folder by default).
    pub root: &'static str,
    /// The templates folder.
    pub templates: &'static str,
    /// The snippets folder.
    pub snippets: &'static str,
    /// The opening delimiter.
    pub open: &'static str,
    /// The closing delimiter.
    pub close: &'static str,
    /// Whether lines holding only a block tag are removed.
    pub standalone_tags: bool,
    /// The most bytes one part of a prompt may render to, in the embedded
    /// renderers and on the dev path alike.
    pub max_render_bytes: usize,
    /// Each prompt as compiled: the dev path checks an edit on disk against
    /// its contract, and an edit that leaves it is `stale_build`, not a
    /// render the struct cannot express.
    pub prompts: &'static [PromptInfo],
}

/// One prompt as the generated code describes it: the table behind
/// `PromptId`'s methods, the contract of its compiled vars struct and, in
/// builds without optimization, the tables its parts render from.
#[derive(Debug)]
pub struct PromptInfo {
    /// The prompt id.
    pub id: &'static str,
    /// Stable content hash of the resolved template.
    pub hash: PromptHash,
    /// Every variable, in order of first use: the struct's fields.
    pub variables: &'static [&'static str],
    /// How the struct types each of [`PromptInfo::variables`], a letter each
    /// ([`VarKind::letter`]).
    pub kinds: &'static str,
    /// The variables tested with `#if`.
    pub conditions: &'static [&'static str],
    /// The compared variables, each with its values.
    pub choices: &'static [(&'static str, &'static [&'static str])],
    /// The system part, then the user part when there is one; empty where
    /// the parts render from straight-line code.
    pub parts: &'static [Part],
    /// Whether the prompt is a conversation (`system.md` and
    /// `messages.md`), however its messages render.
    pub conversation: bool,
    /// A conversation's steps ([`TurnStep`]); empty where its messages
    /// render from straight-line code, and for two files.
    pub turns: &'static [TurnStep],
    /// The messages [`PromptInfo::turns`] send, in file order.
    pub messages: &'static [MessagePart],
    /// The front matter's `description`.
    pub description: Option<&'static str>,
    /// The front matter's `model`, `config` and `metadata` (those set), as
    /// one JSON object's text.
    pub metadata: &'static str,
    /// The front matter's `max_tokens`.
    pub max_tokens: Option<u64>,
    /// The printable values (text, numbers) of the front matter's first
    /// example, by variable name.
    pub example: &'static [(&'static str, &'static str)],
    /// The front matter's `tools`, as a chat request lists them.
    pub tools: Option<RequestJson>,
    /// The front matter's `response`, as a chat request's
    /// `response_format`.
    pub response_format: Option<RequestJson>,
}

impl PromptInfo {
    /// The kind of variable `i`.
    fn kind(&self, i: usize) -> VarKind {
        VarKind::from_letter(self.kinds.as_bytes().get(i).copied().unwrap_or(b't'))
    }

    /// The values of compared variable `name`.
    fn values_of(&self, name: &str) -> &'static [&'static str] {
        self.choices
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(&[], |(_, values)| values)
    }

    /// Whether `prompt` (as it is on disk) has the compiled shape and the
    /// struct's fields in order, each of the same kind, comparing only with
    /// values its enum has: the dev path's common case, told in one pass
    /// (before the full [`check`](promptpack_core::contract::check), which
    /// builds a contract).
    #[cfg(feature = "hot-reload")]
    pub(crate) fn fits_in_order(&self, prompt: &promptpack_core::resolve::ResolvedPrompt) -> bool {
        let vars = &prompt.vars;
        self.conversation == prompt.conversation.is_some()
            && self.asks_as(prompt)
            && vars.len() == self.variables.len()
            && vars.iter().enumerate().all(|(i, var)| {
                self.variables[i] == var.name
                    && self.kind(i) == var.kind()
                    && var
                        .compared
                        .iter()
                        .all(|value| self.values_of(&var.name).contains(&value.as_str()))
            })
    }

    /// Whether `prompt` declares the very tools and response the compiled
    /// types read (a prompt that declares neither, at once).
    #[cfg(feature = "hot-reload")]
    fn asks_as(&self, prompt: &promptpack_core::resolve::ResolvedPrompt) -> bool {
        let declared = &prompt.front_matter;
        let tools = if declared.tools.is_empty() {
            None
        } else {
            let listed: Vec<serde_json::Value> = declared.tools.iter().map(|t| t.json()).collect();
            Some(serde_json::Value::Array(listed).to_string())
        };
        let response = declared
            .response
            .as_ref()
            .map(|r| r.response_format(&prompt.id).to_string());
        tools.as_deref() == self.tools.map(RequestJson::as_str)
            && response.as_deref() == self.response_format.map(RequestJson::as_str)
    }

    /// The contract of the compiled vars struct, for the checks that also
    /// judge text from elsewhere against a contract read from JSON.
    pub fn contract(&self) -> PromptContract {
        let shape = if self.conversation {
            Shape::Conversation
        } else {
            Shape::Files
        };
        PromptContract::new(
            self.variables
                .iter()
                .enumerate()
                .map(|(i, &name)| {
                    let values = self.values_of(name).iter().map(|v| v.to_string());
                    VarContract::new(name, self.kind(i), values.collect())
                })
                .collect(),
        )
        .with_shape(shape)
        .with_exchange(
            self.response_format
                .map(|format| format.to_value()["json_schema"]["schema"].take()),
            match self.tools.map(RequestJson::to_value) {
                Some(serde_json::Value::Array(tools)) => tools,
                _ => Vec::new(),
            },
        )
    }
}

/// A prompt the compiled code does not know: a struct without fields.
pub const NO_FIELDS: PromptInfo = PromptInfo {
    id: "",
    hash: PromptHash::new(0),
    variables: &[],
    kinds: "",
    conditions: &[],
    choices: &[],
    parts: &[],
    conversation: false,
    turns: &[],
    messages: &[],
    description: None,
    metadata: "{}",
    max_tokens: None,
    example: &[],
    tools: None,
    response_format: None,
};

/// A prompt with a contract and nothing else, for tests of the dev path:
/// its tables are leaked, as the generated code's are static.
pub fn contract(id: &'static str, vars: &[DevVar]) -> PromptInfo {
    let variables: Vec<&'static str> = vars.iter().map(|v| v.name).collect();
    let kinds: String = vars.iter().map(|v| char::from(v.kind.letter())).collect();
    let choices: Vec<(&'static str, &'static [&'static str])> = vars
        .iter()
        .filter(|v| !v.values.is_empty())
        .map(|v| (v.name, v.values))
        .collect();
    PromptInfo {
        id,
        hash: PromptHash::new(0),
        variables: Vec::leak(variables),
        kinds: String::leak(kinds),
        conditions: &[],
        choices: Vec::leak(choices),
        ..NO_FIELDS
    }
}

/// One field of a compiled vars struct, as the dev path checks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DevVar {
    /// The variable's name in the templates.
    pub name: &'static str,
    /// How the struct types it.
    pub kind: VarKind,
    /// For a choice, the values of its generated enum.
    pub values: &'static [&'static str],
}

/// A template part as a table: its static text and the steps that
/// interleave it with values. Builds without optimization render from
/// these (one loop in this crate for every prompt), so the code generated
/// per prompt is data, which rustc compiles fast.
#[derive(Debug)]
pub struct Part {
    /// All static text of the part, in step order.
    pub text: &'static str,
    /// The steps.
    pub steps: &'static [Step],
}

pub use promptpack_core::table::{Step, TurnStep};

/// A message of a conversation as a table: who speaks it, the tool's name
/// for a tool result, and its text as a [`Part`].
#[derive(Debug)]
pub struct MessagePart {
    /// Who speaks it.
    pub role: Role,
    /// For a tool result, the tool's name.
    pub name: Option<&'static str>,
    /// Its text.
    pub part: Part,
}

/// One message sent, made by the generated code: a message of the
/// template, rendered, or one of the history.
pub fn message(role: Role, name: Option<&'static str>, content: String) -> Message {
    Message {
        role,
        content,
        name: name.map(str::to_string),
        id: None,
    }
}

/// Sends the history `given` after the messages `sent` so far, each as
/// given; a message longer than `bound` is refused as a message of the
/// file is (its length given back), so the typed path and `Library` refuse
/// alike.
pub fn history(
    sent: &mut Vec<Message>,
    given: &[Message],
    bound: usize,
) -> std::result::Result<(), usize> {
    if let Some(long) = given.iter().find(|m| m.content.len() > bound) {
        return Err(long.content.len());
    }
    sent.extend_from_slice(given);
    Ok(())
}

/// A field's value as [`render`] sees it.
#[derive(Debug, Clone, Copy)]
pub struct Slot<'a> {
    text: &'a str,
    truthy: bool,
    choice: u32,
    messages: &'a [Message],
}

/// A text field.
pub const fn s(text: &str) -> Slot<'_> {
    Slot {
        text,
        truthy: !text.is_empty(),
        choice: 0,
        messages: &[],
    }
}

/// A flag field.
pub const fn f(flag: bool) -> Slot<'static> {
    Slot {
        text: "",
        truthy: flag,
        choice: 0,
        messages: &[],
    }
}

/// An optional text field.
pub const fn o(text: Option<&str>) -> Slot<'_> {
    match text {
        Some(text) => s(text),
        None => NONE,
    }
}

/// A choice field holding its `index`-th value (from 0).
pub const fn c(value: &'static str, index: u32) -> Slot<'static> {
    Slot {
        text: value,
        truthy: true,
        choice: index + 1,
        messages: &[],
    }
}

/// An optional field holding nothing.
pub const NONE: Slot<'static> = Slot {
    text: "",
    truthy: false,
    choice: 0,
    messages: &[],
};

/// A history field: its messages, sent as given; true when there are some.
pub const fn m(messages: &[Message]) -> Slot<'_> {
    Slot {
        text: "",
        truthy: !messages.is_empty(),
        choice: 0,
        messages,
    }
}

/// Renders `part` with the struct's fields as `slots`: one pass adds up the
/// length, one allocation, one pass pushes the pieces. A length past `bound`
/// is given back instead, before anything is allocated.
pub fn render(part: &Part, slots: &[Slot<'_>], bound: usize) -> std::result::Result<String, usize> {
    let mut len = 0usize;
    walk(part, slots, |piece| len = len.saturating_add(piece.len()));
    if len > bound {
        return Err(len);
    }
    let mut out = String::with_capacity(len);
    walk(part, slots, |piece| out.push_str(piece));
    Ok(out)
}

/// `render_system` or `render_user` of a vars struct rendered from tables:
/// part `n` of `info`'s prompt, within `bound`.
pub fn render_part(
    info: &PromptInfo,
    n: usize,
    slots: &[Slot<'_>],
    bound: usize,
) -> Result<String> {
    let part = if n == 0 {
        PartName::System
    } else {
        PartName::User
    };
    match info.parts.get(n) {
        Some(table) => {
            render(table, slots, bound).map_err(|len| too_large(info.id, part, len, bound))
        }
        None => Ok(String::new()),
    }
}

pub use promptpack_core::render::{PartName, output_too_large as too_large};

/// Calls `each` with every piece of the output of `part`, in order.
fn walk<'a>(part: &'a Part, slots: &[Slot<'a>], mut each: impl FnMut(&'a str)) {
    let mut at = 0;
    while let Some(step) = part.steps.get(at) {
        at += 1;
        match *step {
            Step::T(start, end) => each(part.text.get(start as usize..end as usize).unwrap_or("")),
            Step::V(i) => each(slots.get(i as usize).map_or("", |slot| slot.text)),
            Step::I(i, equals, else_at) => {
                if !holds(slots, i, equals) {
                    at = else_at as usize;
                }
            }
            Step::E(end_at) => at = end_at as usize,
        }
    }
}

/// Whether the test of step `I(i, equals, _)` holds: field `i`'s truth
/// when `equals` is 0, else whether it holds the `equals`-th value.
fn holds(slots: &[Slot<'_>], i: u32, equals: u32) -> bool {
    let slot = slots.get(i as usize).copied().unwrap_or(NONE);
    if equals == 0 {
        slot.truthy
    } else {
        slot.choice == equals
    }
}

/// `Vars::get` of a vars struct whose fields are `slots`.
pub fn get<'a>(info: &PromptInfo, slots: &[Slot<'a>], name: &str) -> Option<ValueRef<'a>> {
    let i = info.variables.iter().position(|&v| v == name)?;
    let slot = slots.get(i)?;
    Some(match info.kind(i) {
        VarKind::Flag => ValueRef::Bool(slot.truthy),
        VarKind::Messages => ValueRef::Messages(slot.messages),
        _ => ValueRef::Str(slot.text),
    })
}

/// `Vars::get_many` of a vars struct whose fields are `slots`: the fields
/// made once for all the names a render asks for.
pub fn get_many<'a>(
    info: &PromptInfo,
    slots: &[Slot<'a>],
    names: VarNames<'_>,
    values: &mut [Option<ValueRef<'a>>],
) {
    for (value, name) in values.iter_mut().zip(names.iter()) {
        if let Some(found) = get(info, slots, name) {
            *value = Some(found);
        }
    }
}

/// `PromptId::render_generated` from the tables: values looked up by name,
/// as the straight-line code's `render_generated` takes them.
pub fn render_generated<Id>(
    id: Id,
    info: &PromptInfo,
    values: &dyn Fn(&str) -> Option<String>,
) -> Prompt<Id> {
    let given: Vec<Option<String>> = info.variables.iter().map(|name| values(name)).collect();
    let slots: Vec<Slot<'_>> = info
        .variables
        .iter()
        .zip(&given)
        .enumerate()
        .map(|(i, (&name, value))| {
            let value = value.as_deref();
            let choice = || {
                let values = info.values_of(name);
                let k = values.iter().position(|v| Some(*v) == value)?;
                Some(c(values[k], k as u32))
            };
            match info.kind(i) {
                VarKind::Flag => f(value.is_some_and(|v| !v.is_empty())),
                VarKind::Optional => o(value),
                VarKind::Choice => choice()
                    .unwrap_or_else(|| c(info.values_of(name).first().copied().unwrap_or(""), 0)),
                VarKind::OptionalChoice => choice().unwrap_or(NONE),
                // No history from values by name: examples and tests
                // give text.
                VarKind::Messages => NONE,
                _ => s(value.unwrap_or("")),
            }
        })
        .collect();
    // Values from examples and tests, for tools that treat every prompt
    // alike: rendered whole, without the bound, so nothing is refused.
    match render_parts(id, info, &slots, usize::MAX) {
        Ok(prompt) => prompt,
        Err(_) => unreachable!("no length is past usize::MAX"),
    }
}

/// The prompt `info`'s tables render with `slots`: the system part, and the
/// user part when there is one, each refused past `bound`.
fn render_parts<Id>(
    id: Id,
    info: &PromptInfo,
    slots: &[Slot<'_>],
    bound: usize,
) -> Result<Prompt<Id>> {
    let user = match info.parts.len() {
        0 | 1 => None,
        _ => Some(render_part(info, 1, slots, bound)?),
    };
    Ok(Prompt {
        id,
        system: render_part(info, 0, slots, bound)?,
        user,
        messages: render_turns(info, slots, bound)?,
        hash: info.hash,
        provenance: Provenance::Embedded,
        exchange: Exchange::__embedded(info.tools, info.response_format),
    })
}

/// `render_messages` of a vars struct rendered from tables: the messages
/// `info`'s conversation sends with `slots`, each message refused past
/// `bound`. None for a prompt of two files.
pub fn render_turns(info: &PromptInfo, slots: &[Slot<'_>], bound: usize) -> Result<Vec<Message>> {
    // Every message of the file at most, and the history: one allocation.
    let given: usize = slots.iter().map(|slot| slot.messages.len()).sum();
    let mut sent = Vec::with_capacity(info.messages.len() + given);
    let mut at = 0;
    while let Some(step) = info.turns.get(at) {
        at += 1;
        match *step {
            TurnStep::M(k) => {
                let Some(message) = info.messages.get(k as usize) else {
                    continue;
                };
                let content = render(&message.part, slots, bound)
                    .map_err(|len| too_large(info.id, PartName::Messages, len, bound))?;
                sent.push(self::message(message.role, message.name, content));
            }
            TurnStep::H(i) => {
                let given = slots.get(i as usize).map_or(&[][..], |slot| slot.messages);
                history(&mut sent, given, bound)
                    .map_err(|len| too_large(info.id, PartName::Messages, len, bound))?;
            }
            TurnStep::I(i, equals, else_at) => {
                if !holds(slots, i, equals) {
                    at = else_at as usize;
                }
            }
            TurnStep::E(end_at) => at = end_at as usize,
        }
    }
    Ok(sent)
}

pub use promptpack_core::program::VarKind;

/// The reload events of the dev path's watcher of `source`'s folder (started
/// when it is not yet): `None` when the dev path renders the embedded code
/// instead. Generated code does not call it; tests do, to know that an edit
/// was handled before they check that it changed nothing.
#[cfg(feature = "hot-reload")]
pub fn dev_reload_events(
    source: &DevSource,
) -> Option<std::sync::mpsc::Receiver<crate::ReloadEvent>> {
    crate::reload::dev_reload_events(source)
}

/// Renders prompt `id` from the files on disk, kept current by a watcher.
/// `None` means "render from the embedded code instead": hot reload is not
/// compiled in, is turned off, or the folder is gone.
pub fn dev_render(source: &DevSource, id: &str, vars: &dyn Vars) -> Option<Result<Prompt>> {
    #[cfg(feature = "hot-reload")]
    {
        crate::reload::dev_render(source, id, vars)
    }
    #[cfg(not(feature = "hot-reload"))]
    {
        let _ = (source, id, vars);
        None
    }
}

/// The dev path of a generated `build()`: [`dev_render`] when `enabled`
/// (the generated code passes `cfg!(debug_assertions)` of the crate that
/// includes it), `None` at once otherwise, so a release build never reads
/// the disk.
#[inline]
pub fn dev_build<Id>(
    enabled: bool,
    source: &DevSource,
    id: Id,
    name: &str,
    vars: &dyn Vars,
) -> Option<Result<Prompt<Id>>> {
    if !enabled {
        return None;
    }
    let rendered = dev_render(source, name, vars)?;
    Some(rendered.map(|p| Prompt {
        id,
        system: p.system,
        user: p.user,
        messages: p.messages,
        hash: p.hash,
        provenance: p.provenance,
        exchange: p.exchange,
    }))
}

/// The index of prompt `id` in `prompts`, or the error of an unknown id:
/// what `PromptId::from_str` of format 1 of generated code calls (format 2
/// calls [`parse_name`] through `__names_enum!`).
pub fn prompt_index(prompts: &[PromptInfo], id: &str) -> Result<usize> {
    prompts
        .iter()
        .position(|p| p.id == id)
        .ok_or_else(|| Error::unknown_prompt(id, prompts.iter().map(|p| p.id)))
}

/// The values of text fields, by name, for `render_generated`: `""` for a
/// missing one.
pub fn text_values(values: &dyn Fn(&str) -> Option<String>, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .map(|n| values(n).unwrap_or_default())
        .collect()
}

/// The values of optional fields, by name, for `render_generated`.
pub fn optional_values(
    values: &dyn Fn(&str) -> Option<String>,
    names: &[&str],
) -> Vec<Option<String>> {
    names.iter().map(|n| values(n)).collect()
}

/// A condition for `render_generated`: true when given a non-empty string.
pub fn flag_value(values: &dyn Fn(&str) -> Option<String>, name: &str) -> bool {
    values(name).is_some_and(|v| !v.is_empty())
}

/// A compared variable for `render_generated`: the value given, when it is
/// one of the enum's.
pub fn choice_value<E: std::str::FromStr>(
    values: &dyn Fn(&str) -> Option<String>,
    name: &str,
) -> Option<E> {
    values(name).and_then(|v| v.parse().ok())
}

/// `build()` of a vars struct rendered from tables: from disk when `enabled`
/// and the dev path serves it ([`dev_build`]), else from the tables.
pub fn build_from_tables<Id: Copy>(
    enabled: bool,
    source: &DevSource,
    id: Id,
    info: &PromptInfo,
    slots: &[Slot<'_>],
    vars: &dyn Vars,
) -> Result<Prompt<Id>> {
    crate::trace::render(info.id, || {
        if let Some(rendered) = dev_build(enabled, source, id, info.id, vars) {
            return rendered;
        }
        render_parts(id, info, slots, source.max_render_bytes)
    })
}

/// `build()` of a vars struct rendered by straight-line code: `build`, the
/// render of prompt `name` (from disk on the dev path, else the generated
/// code), in a span with promptpack's `tracing` feature. Without it, a
/// call of `build` and nothing else: the generated code cannot ask for the
/// feature itself, since `cfg(feature)` in it would test the features of
/// the user's crate.
#[inline(always)]
pub fn traced_build<Id>(
    name: &str,
    build: impl FnOnce() -> Result<Prompt<Id>>,
) -> Result<Prompt<Id>> {
    crate::trace::render(name, build)
}

/// What every vars struct rendered from tables has alike: `build`,
/// `render_system` (and `render_user` with `user 1`, `render_messages` with
/// `messages turns`), `Vars` and `TypedVars`,
/// written once here instead of once per prompt in the generated code. The
/// struct brings `__INFO` (its [`PromptInfo`]) and `__slots()`; the
/// including module brings `PromptId`, `__Built` and `__DEV_SOURCE`.
#[macro_export]
#[doc(hidden)]
macro_rules! __table_impls {
    ($vars:ident $(<$lt:lifetime>)?, $variant:ident $(, user $user:literal)? $(, messages $messages:ident)?) => {
        impl $(<$lt>)? $vars $(<$lt>)? {
            /// Renders the prompt: from the files on disk in dev builds with
            /// hot reload (so edits show without a restart), from the tables
            /// generated at build time otherwise.
            pub fn build(&self) -> __Built {
                $crate::__private::build_from_tables(
                    cfg!(debug_assertions),
                    &__DEV_SOURCE,
                    PromptId::$variant,
                    &Self::__INFO,
                    &self.__slots(),
                    self,
                )
            }

            /// Renders the system part from the tables generated at build
            /// time. Fails with `too_large`, before it allocates, when the
            /// output would be longer than the render bound set at build
            /// time (`Config::max_render_bytes`, 16 MiB unless set).
            pub fn render_system(&self) -> ::core::result::Result<String, $crate::Error> {
                $crate::__private::render_part(&Self::__INFO, 0, &self.__slots(), __MAX_RENDER_BYTES)
            }

            $(
                /// Renders the user part from the tables generated at build
                /// time. Fails with `too_large`, before it allocates, when
                /// the output would be longer than the render bound set at
                /// build time.
                pub fn render_user(&self) -> ::core::result::Result<String, $crate::Error> {
                    $crate::__private::render_part(&Self::__INFO, $user, &self.__slots(), __MAX_RENDER_BYTES)
                }
            )?

            $(
                /// Renders the conversation's messages after the system
                /// part from the tables generated at build time: each
                /// message of `messages.md` whose branch is taken, and the
                /// history as given. Fails with `too_large`, before it
                /// allocates, when a message would be longer than the
                /// render bound set at build time.
                pub fn render_messages(&self) -> ::core::result::Result<::std::vec::Vec<$crate::Message>, $crate::Error> {
                    // The repetition must name one of its fragments.
                    let _ = stringify!($messages);
                    $crate::__private::render_turns(&Self::__INFO, &self.__slots(), __MAX_RENDER_BYTES)
                }
            )?
        }

        impl $(<$lt>)? $crate::Vars for $vars $(<$lt>)? {
            fn get(&self, name: &str) -> Option<$crate::ValueRef<'_>> {
                $crate::__private::get(&Self::__INFO, &self.__slots(), name)
            }

            fn get_many<'b>(
                &'b self,
                names: $crate::VarNames<'_>,
                values: &mut [Option<$crate::ValueRef<'b>>],
            ) {
                $crate::__private::get_many(&Self::__INFO, &self.__slots(), names, values)
            }
        }

        impl $(<$lt>)? $crate::TypedVars for $vars $(<$lt>)? {
            type Id = PromptId;
            const ID: PromptId = PromptId::$variant;

            fn build(&self) -> __Built {
                $vars::build(self)
            }
        }
    };
}

/// `Serialize` and `Deserialize` for a generated `PromptId`, when promptpack's
/// `serde` feature is on; nothing otherwise. A macro, so that the feature of
/// the promptpack the user's crate links decides, not the build script's.
#[cfg(feature = "serde")]
#[macro_export]
#[doc(hidden)]
macro_rules! __impl_serde_for_prompt_id {
    ($ty:ident) => {
        impl $crate::__private::serde::Serialize for $ty {
            fn serialize<S: $crate::__private::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::core::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
        impl<'de> $crate::__private::serde::Deserialize<'de> for $ty {
            fn deserialize<D: $crate::__private::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::core::result::Result<Self, D::Error> {
                let s =
                    <::std::string::String as $crate::__private::serde::Deserialize>::deserialize(
                        deserializer,
                    )?;
                s.parse()
                    .map_err(<D::Error as $crate::__private::serde::de::Error>::custom)
            }
        }
    };
}

/// Without the `serde` feature a generated `PromptId` gets no serde impls.
#[cfg(not(feature = "serde"))]
#[macro_export]
#[doc(hidden)]
macro_rules! __impl_serde_for_prompt_id {
    ($ty:ident) => {};
}

pub use serde;

/// With promptpack's `live` feature: the generated `PromptId` becomes a
/// [`GeneratedPrompts`](crate::live::GeneratedPrompts), and `Prompts` names
/// the live handle of these prompts. Nothing otherwise. A macro, for the
/// same reason as `__impl_serde_for_prompt_id`.
#[cfg(feature = "live")]
#[macro_export]
#[doc(hidden)]
macro_rules! __live_prompts {
    ($ty:ident) => {
        impl $crate::live::GeneratedPrompts for $ty {
            fn __source() -> &'static $crate::__private::DevSource {
                &__DEV_SOURCE
            }
            fn __index(self) -> usize {
                self as usize
            }
        }

        /// These prompts served from a label of a prompt catalog:
        /// `Prompts::connect(url).label("production").start()?`, then
        /// `prompts.build_prompt(PromptId::…, vars)`.
        pub type Prompts = $crate::live::Prompts<$ty>;
    };
}

/// Without the `live` feature a generated `PromptId` has no live handle.
#[cfg(not(feature = "live"))]
#[macro_export]
#[doc(hidden)]
macro_rules! __live_prompts {
    ($ty:ident) => {};
}

/// The error of a generated `build_prompt` given another prompt's vars.
pub fn wrong_vars(requested: &str, vars_of: &str) -> Error {
    Error::new(
        ErrorCode::WrongVars,
        format!("build_prompt({requested}) was given the variables of `{vars_of}`"),
    )
}

/// What a generated enum of names names, for the error of a name it lacks.
#[derive(Debug, Clone, Copy)]
pub enum NamesOf {
    /// Prompts (`PromptId`): an unknown name is `unknown_prompt`.
    Prompts,
    /// The values of the variable named (its choice enum): an unknown one
    /// is `invalid_choice`.
    Choice(&'static str),
}

/// `FromStr` of a generated enum of names: the variant of `all` whose
/// `name` is `s`, or the error that lists the names (a near one first).
pub fn parse_name<T: Copy>(
    all: &[T],
    name: fn(T) -> &'static str,
    s: &str,
    of: NamesOf,
) -> Result<T> {
    if let Some(found) = all.iter().copied().find(|v| name(*v) == s) {
        return Ok(found);
    }
    let known: Vec<&str> = all.iter().map(|v| name(*v)).collect();
    Err(match of {
        NamesOf::Prompts => Error::unknown_prompt(s, known.iter().copied()),
        NamesOf::Choice(var) => unknown_choice(var, s, &known),
    })
}

/// `Display` (the name) and `FromStr` (by name, [`parse_name`]) of a
/// generated enum of names, which brings `ALL` and `as_str`: `PromptId`
/// with `(PromptId)`, a compared variable's enum with
/// `(Enum, "variable")`. Written once here for both, so that the two
/// cannot drift apart; generated code of format 2 calls it.
#[macro_export]
#[doc(hidden)]
macro_rules! __names_enum {
    (@impls $ty:ident, $of:expr) => {
        impl ::core::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::core::str::FromStr for $ty {
            type Err = $crate::Error;

            fn from_str(s: &str) -> ::core::result::Result<Self, $crate::Error> {
                $crate::__private::parse_name(&Self::ALL, Self::as_str, s, $of)
            }
        }
    };
    ($ty:ident) => {
        $crate::__names_enum!(@impls $ty, $crate::__private::NamesOf::Prompts);
    };
    ($ty:ident, $var:literal) => {
        $crate::__names_enum!(@impls $ty, $crate::__private::NamesOf::Choice($var));
    };
}

/// The error of a generated choice enum's `from_str` given a value the
/// prompt does not compare with: the values, and first the one meant when
/// `value` is a typo of one.
pub fn unknown_choice(var: &str, value: &str, known: &[&str]) -> Error {
    let values = known.join(", ");
    let help = match promptpack_core::similar::nearest(value, known.iter().copied(), 1).first() {
        Some(near) => format!("did you mean `{near}`? The values are: {values}"),
        None => format!("the values are: {values}"),
    };
    Error::from(
        promptpack_core::error::Diagnostic::new(
            ErrorCode::InvalidChoice,
            format!("`{value}` is not a value of `{var}`"),
        )
        .with_help(help),
    )
}

/// The error of a generated `PromptId::from_str` given an unknown id.
pub fn unknown_prompt(id: &str, known: &[&str]) -> Error {
    Error::unknown_prompt(id, known.iter().copied())
}
