//! A validated set of prompts, rendered by string id with dynamic values.

use crate::exchange::Exchange;
use crate::prompt::{Prompt, PromptHash};
use crate::provenance::Provenance;
#[cfg(feature = "hot-reload")]
use crate::reload::{WatchOptions, WatchedLibrary};
use promptpack_core::conversation::Sent;
use promptpack_core::error::{Diagnostic, Error, ErrorCode, Result};
use promptpack_core::front_matter::FrontMatter;
use promptpack_core::message::Message;
use promptpack_core::pipeline::{Compiled, Stages};
use promptpack_core::program::{Op, Program, VarKind};
use promptpack_core::render::{
    DEFAULT_MAX_RENDER_BYTES, Missing, MissingVars, PartName, measure_ops, output_too_large,
    render_ops, write_token,
};
use promptpack_core::resolve::ResolvedPrompt;
use promptpack_core::sources::{SnippetSource, Sources, TemplateSource};
use promptpack_core::syntax::Delimiters;
use promptpack_core::value::ValueRef;
use promptpack_core::vars::{VarNames, Vars};
use promptpack_load::Config;
use std::path::PathBuf;

/// A validated set of prompts, rendered by id.
///
/// Every template has been parsed and every snippet resolved when a `Library`
/// exists; loading reports every problem at once.
///
/// ```
/// use promptpack::{Config, Library, SourceFile, SnippetSource, TemplateSource};
/// let library = Library::from_sources(
///     vec![TemplateSource {
///         id: "greet".into(),
///         system: SourceFile::new("templates/greet/system.md", "Hi {{name}}.{{#if formal}} Welcome.{{/if}}"),
///         user: None,
///         messages: None,
///     }],
///     vec![],
///     &Config::default(),
/// )?;
/// let prompt = library.build_prompt("greet", &serde_json::json!({"name": "Ada", "formal": true}))?;
/// assert_eq!(prompt.system, "Hi Ada. Welcome.");
/// # Ok::<(), promptpack::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Library {
    /// Sorted by id, which [`Library::get`] relies on.
    prompts: Vec<ResolvedPrompt>,
    /// What renders need of each prompt, in the order of `prompts`, worked
    /// out once when the library is made.
    tables: Vec<RenderTables>,
    delimiters: Delimiters,
    /// The most bytes one part may render to ([`Library::max_render_bytes`]).
    max_render_bytes: usize,
    /// What its renders say they came from: `Loaded`, or the catalog
    /// version the library was made of (`house::catalog_library`).
    provenance: Provenance,
}

/// What the renders of one prompt look up, derived from it once.
#[derive(Debug, Clone)]
struct RenderTables {
    /// How many value tokens each variable has in `system` (the first
    /// `vars.len()` numbers) and in `user` (the rest): with the values'
    /// lengths, they bound the output's length.
    uses: Box<[u32]>,
    /// The variables by name, for `build_prompt`.
    names: crate::name_index::NameIndex,
    /// Whether front matter declares a choice's values, which renders then
    /// check: most prompts skip that at no cost.
    declares_choices: bool,
    /// The tools and response format the prompt declares, as the JSON a
    /// request sends: written here once, not at every render.
    exchange: Exchange,
}

impl RenderTables {
    fn of(prompt: &ResolvedPrompt) -> RenderTables {
        RenderTables {
            uses: value_uses(prompt),
            names: crate::name_index::NameIndex::new(&prompt.vars),
            exchange: exchange_of(prompt),
            declares_choices: prompt
                .vars
                .iter()
                .any(|v| matches!(v.declared, Some(VarKind::Choice | VarKind::OptionalChoice))),
        }
    }
}

/// What `prompt` declares of its request, as [`Library::tools`] and
/// [`Library::response_format`] give it (no `tools` when it declares none).
fn exchange_of(prompt: &ResolvedPrompt) -> Exchange {
    let declared = &prompt.front_matter;
    let tools = (!declared.tools.is_empty())
        .then(|| serde_json::Value::Array(declared.tools.iter().map(|tool| tool.json()).collect()));
    let response_format = declared
        .response
        .as_ref()
        .map(|response| response.response_format(&prompt.id));
    Exchange::loaded(tools.as_ref(), response_format.as_ref())
}

impl Library {
    /// Loads and checks the prompts under `root`: `root/templates`,
    /// `root/snippets` and `root/promptpack.toml` when present.
    pub fn load(root: impl Into<PathBuf>) -> Result<Library> {
        Library::load_config(&Config::load(root)?)
    }

    /// Loads and checks the prompts `config` points at, reporting every
    /// problem, of reading or of the templates, at once.
    pub fn load_config(config: &Config) -> Result<Library> {
        let compiled = promptpack_load::load(config, Stages::default()).into_result()?;
        Ok(
            Library::from_compiled(compiled, config.delimiters().clone())
                .with_max_render_bytes(config.max_render_bytes()),
        )
    }

    /// Builds a library from sources held in memory, checking everything,
    /// written as `config` says: its delimiters, its `standalone_tags`
    /// setting and its render bound (its folders are not read).
    /// `&Config::default()` is the language's defaults.
    pub fn from_sources(
        templates: Vec<TemplateSource>,
        snippets: Vec<SnippetSource>,
        config: &Config,
    ) -> Result<Library> {
        let sources = Sources {
            templates,
            snippets,
            ..Sources::default()
        };
        let compiled = promptpack_core::pipeline::compile(
            sources,
            Vec::new(),
            config.settings(),
            Stages::default(),
        )
        .into_result()?;
        Ok(
            Library::from_compiled(compiled, config.delimiters().clone())
                .with_max_render_bytes(config.max_render_bytes()),
        )
    }

    /// A library of what the pipeline compiled without error.
    pub(crate) fn from_compiled(compiled: Compiled, delimiters: Delimiters) -> Library {
        Library::from_resolved(compiled.prompts, delimiters)
    }

    /// A library of prompts that were already resolved without error.
    pub(crate) fn from_resolved(
        mut prompts: Vec<ResolvedPrompt>,
        delimiters: Delimiters,
    ) -> Library {
        prompts.sort_by(|a, b| a.id.cmp(&b.id));
        prompts.shrink_to_fit();
        let tables = prompts.iter().map(RenderTables::of).collect();
        Library {
            prompts,
            tables,
            delimiters,
            max_render_bytes: DEFAULT_MAX_RENDER_BYTES,
            provenance: Provenance::Loaded,
        }
    }

    /// The library with its renders saying `provenance` (a catalog version
    /// it was made of) instead of `loaded`.
    #[cfg(feature = "house")]
    pub(crate) fn with_provenance(mut self, provenance: Provenance) -> Library {
        self.provenance = provenance;
        self
    }

    /// The library with its render bound set to `bytes`: a render whose
    /// system or user text would be longer fails with `too_large` before
    /// it allocates. [`Library::load_config`] and [`Library::from_sources`]
    /// take the bound of their [`Config`] ([`DEFAULT_MAX_RENDER_BYTES`]
    /// unless set).
    ///
    /// ```
    /// use promptpack::{Config, ErrorCode, Library, SourceFile, TemplateSource};
    /// use serde_json::json;
    /// let template = TemplateSource {
    ///     id: "echo".into(),
    ///     system: SourceFile::new("templates/echo/system.md", "{{x}}{{x}}{{x}}"),
    ///     user: None,
    ///     messages: None,
    /// };
    /// let library = Library::from_sources(vec![template], vec![], &Config::default())?
    ///     .with_max_render_bytes(10);
    /// let error = library.build_prompt("echo", &json!({"x": "abcd"})).unwrap_err();
    /// assert_eq!(error.code(), ErrorCode::TooLarge);
    /// assert_eq!(library.build_prompt("echo", &json!({"x": "abc"}))?.system, "abcabcabc");
    /// # Ok::<(), promptpack::Error>(())
    /// ```
    #[must_use]
    pub fn with_max_render_bytes(mut self, bytes: usize) -> Library {
        self.max_render_bytes = bytes;
        self
    }

    /// The most bytes one part of a prompt (its system or its user text)
    /// may render to (see [`Library::with_max_render_bytes`]).
    pub fn max_render_bytes(&self) -> usize {
        self.max_render_bytes
    }

    /// Loads the prompts under `root` (as [`Library::load`] does) and keeps
    /// them current: the returned handle reloads when a template, a snippet
    /// or `promptpack.toml` changes. Fails when the first load fails, or with
    /// [`ErrorCode::Watch`] when the watcher cannot start. For a fixed
    /// [`Config`], polling or another debounce, [`WatchedLibrary::new`] and
    /// [`WatchedLibrary::with_config`] take [`WatchOptions`].
    #[cfg(feature = "hot-reload")]
    #[cfg_attr(docsrs, doc(cfg(feature = "hot-reload")))]
    pub fn watch(root: impl Into<PathBuf>) -> Result<WatchedLibrary> {
        WatchedLibrary::new(root, WatchOptions::default())
    }

    /// The ids of the prompts, sorted.
    pub fn ids(&self) -> impl ExactSizeIterator<Item = &str> {
        self.prompts.iter().map(|p| p.id.as_str())
    }

    /// Whether there is a prompt named `id`.
    pub fn contains(&self, id: &str) -> bool {
        self.index_of(id).is_some()
    }

    /// The content hash of prompt `id` (what its [`Prompt::hash`] will be),
    /// for logging which version of a prompt is deployed.
    pub fn hash(&self, id: &str) -> Option<PromptHash> {
        self.get(id).map(|p| PromptHash::from(p.hash))
    }

    /// The front matter of prompt `id` (its `system.md` and `user.md`
    /// merged): description, declared variables, examples, model settings,
    /// budget. Empty for a prompt without front matter.
    pub fn front_matter(&self, id: &str) -> Option<&FrontMatter> {
        self.get(id).map(|p| &p.front_matter)
    }

    /// The front matter's `description` of prompt `id`.
    pub fn description(&self, id: &str) -> Option<&str> {
        self.get(id)?.front_matter.description.as_deref()
    }

    /// The front matter's `model`, `config` and `metadata` of prompt `id`,
    /// those set, as one JSON object (empty when none is): the same object
    /// the generated `PromptId::metadata()` holds as text.
    pub fn metadata(&self, id: &str) -> Option<serde_json::Value> {
        self.get(id).map(|p| p.front_matter.settings_json())
    }

    /// The tools prompt `id` declares, as a chat request lists them: a JSON
    /// array of `{"type": "function", "function": {name, description,
    /// parameters, "strict": true}}` (empty when it declares none). `None`
    /// for an unknown id.
    pub fn tools(&self, id: &str) -> Option<serde_json::Value> {
        let index = self.index_of(id)?;
        // The text the renders carry, written once at load.
        let tools = self.tables[index].exchange.tools_value();
        Some(tools.unwrap_or_else(|| serde_json::Value::Array(Vec::new())))
    }

    /// The response format of prompt `id` for a chat request: `{"type":
    /// "json_schema", "json_schema": {"name": id, "strict": true, "schema"}}`.
    /// `None` for an unknown id or a prompt that declares no `response`.
    pub fn response_format(&self, id: &str) -> Option<serde_json::Value> {
        self.tables[self.index_of(id)?]
            .exchange
            .response_format_value()
    }

    /// Reads a model's answer to prompt `id` against the `response` it
    /// declares: the JSON found in `text` (the whole text, a Markdown
    /// fence's content, or what follows a sentence before it; text after
    /// it is ignored), held to the schema exactly. A refusal is
    /// `answer_not_json` or `answer_mismatch`, located at the line and
    /// column of `text` where it is, saying what the schema wanted there.
    ///
    /// ```
    /// # use promptpack::{Config, Library, SourceFile, TemplateSource};
    /// let system = "---\nresponse:\n  reply: string\n  urgent: boolean\n---\nTriage.";
    /// let template = TemplateSource {
    ///     id: "triage".into(),
    ///     system: SourceFile::new("templates/triage/system.md", system),
    ///     user: None,
    ///     messages: None,
    /// };
    /// let library = Library::from_sources(vec![template], vec![], &Config::default())?;
    /// let answer = "Here it is:\n```json\n{\"reply\": \"On it.\", \"urgent\": true}\n```";
    /// let value = library.parse_response("triage", answer)?;
    /// assert_eq!(value["urgent"], true);
    /// let refused = library.parse_response("triage", "{\"reply\": 3, \"urgent\": true}").unwrap_err();
    /// assert_eq!(refused.code().as_str(), "answer_mismatch");
    /// # Ok::<(), promptpack::Error>(())
    /// ```
    pub fn parse_response(&self, id: &str, text: &str) -> Result<serde_json::Value> {
        crate::trace::read(|| self.read_of(id, None), || self.read_response(id, text))
    }

    /// [`Library::parse_response`] inside its span.
    fn read_response(&self, id: &str, text: &str) -> Result<serde_json::Value> {
        let prompt = self.get(id).ok_or_else(|| self.unknown_prompt(id))?;
        let response = prompt.front_matter.response.as_ref().ok_or_else(|| {
            Error::from(
                Diagnostic::new(
                    ErrorCode::InvalidSchema,
                    format!("prompt `{id}` declares no `response` to read an answer with"),
                )
                .with_help("declare the answer's fields in its front matter, under `response:`"),
            )
        })?;
        promptpack_core::answer::read_answer(text, response)
    }

    /// Reads the arguments of a call to tool `tool` of prompt `id` (the
    /// JSON text a chat API returns as the call's `arguments`) against the
    /// tool's parameters, with the located errors of
    /// [`Library::parse_response`]. A tool the prompt does not declare is
    /// an `invalid_schema` error naming the tools it has.
    pub fn parse_tool_call(
        &self,
        id: &str,
        tool: &str,
        arguments: &str,
    ) -> Result<serde_json::Value> {
        crate::trace::read(
            || self.read_of(id, Some(tool)),
            || self.read_tool_call(id, tool, arguments),
        )
    }

    /// What a read of prompt `id`'s answer (or of a call of `tool`) is of,
    /// for its span: the prompt's hash when the library has it.
    fn read_of<'a>(&'a self, id: &'a str, tool: Option<&'a str>) -> crate::trace::ReadOf<'a> {
        crate::trace::ReadOf {
            prompt: id,
            hash: self.hash(id),
            provenance: Some(&self.provenance),
            tool,
        }
    }

    /// [`Library::parse_tool_call`] inside its span.
    fn read_tool_call(&self, id: &str, tool: &str, arguments: &str) -> Result<serde_json::Value> {
        let prompt = self.get(id).ok_or_else(|| self.unknown_prompt(id))?;
        let declared = &prompt.front_matter.tools;
        let found = declared.iter().find(|t| t.name == tool).ok_or_else(|| {
            let names: Vec<&str> = declared.iter().map(|t| t.name.as_str()).collect();
            let help = if names.is_empty() {
                "it declares no tools".to_string()
            } else {
                format!("its tools: {}", names.join(", "))
            };
            Error::from(
                Diagnostic::new(
                    ErrorCode::InvalidSchema,
                    format!("prompt `{id}` declares no tool `{tool}`"),
                )
                .with_help(help),
            )
        })?;
        promptpack_core::answer::read_arguments(arguments, found)
    }

    /// Every prompt as the pipeline resolved it, sorted by id.
    #[cfg(feature = "unstable-machinery")]
    #[cfg_attr(docsrs, doc(cfg(feature = "unstable-machinery")))]
    pub fn prompts(&self) -> &[ResolvedPrompt] {
        &self.prompts
    }

    /// Every prompt as the pipeline resolved it, sorted by id.
    #[cfg(feature = "house")]
    pub(crate) fn resolved_prompts(&self) -> &[ResolvedPrompt] {
        &self.prompts
    }

    /// The prompt with this id, as the pipeline resolved it.
    pub(crate) fn get(&self, id: &str) -> Option<&ResolvedPrompt> {
        self.index_of(id).map(|i| &self.prompts[i])
    }

    /// The prompt with this id, as the pipeline resolved it.
    #[cfg(feature = "unstable-machinery")]
    #[cfg_attr(docsrs, doc(cfg(feature = "unstable-machinery")))]
    pub fn resolved(&self, id: &str) -> Option<&ResolvedPrompt> {
        self.get(id)
    }

    /// Where prompt `id` is in `prompts`: a binary search of the sorted ids,
    /// cheaper than hashing the id for any realistic number of prompts, and
    /// without a second copy of the ids.
    fn index_of(&self, id: &str) -> Option<usize> {
        self.prompts
            .binary_search_by(|p| p.id.as_str().cmp(id))
            .ok()
    }

    /// The delimiters the templates were parsed with.
    pub fn delimiters(&self) -> &Delimiters {
        &self.delimiters
    }

    /// Renders prompt `id` with any serializable map of values (a
    /// `serde_json::Value` object, a `HashMap`, a struct deriving
    /// `Serialize`). Strict: a value token the render reaches without a value
    /// fails with `missing_var`, naming every missing variable.
    pub fn build_prompt<T: serde::Serialize + ?Sized>(&self, id: &str, vars: &T) -> Result<Prompt> {
        self.build_prompt_with(id, vars, MissingVars::Error)
    }

    /// Like [`Library::build_prompt`], but a missing value leaves its token
    /// (`{{name}}`) in the output, as the original loader did.
    pub fn build_prompt_lenient<T: serde::Serialize + ?Sized>(
        &self,
        id: &str,
        vars: &T,
    ) -> Result<Prompt> {
        self.build_prompt_with(id, vars, MissingVars::KeepToken)
    }

    /// The values are taken straight from `vars`'s `Serialize` impl for the
    /// variables the prompt uses (see [`crate::serde_vars::collect`]); anything
    /// that path does not handle goes through `serde_json::to_value`, whose
    /// meaning it shares exactly.
    fn build_prompt_with<T: serde::Serialize + ?Sized>(
        &self,
        id: &str,
        vars: &T,
        missing_vars: MissingVars,
    ) -> Result<Prompt> {
        crate::trace::render(id, || self.collect_and_render(id, vars, missing_vars))
    }

    /// [`Library::build_prompt_with`] inside its span.
    fn collect_and_render<T: serde::Serialize + ?Sized>(
        &self,
        id: &str,
        vars: &T,
        missing_vars: MissingVars,
    ) -> Result<Prompt> {
        if let Some(index) = self.index_of(id) {
            let rendered = crate::serde_vars::collect(&self.tables[index].names, vars, |values| {
                if self.tables[index].declares_choices {
                    declared_choices(&self.prompts[index], values)?;
                }
                self.render_values(index, values, missing_vars)
            });
            if let Some(rendered) = rendered {
                return rendered;
            }
        }
        self.render_map(id, &to_map(vars)?, missing_vars)
    }

    /// [`Library::render`] of the map `serde_json::to_value` made: not
    /// generic, so that the render is compiled here once rather than in
    /// each crate that calls `build_prompt` (whose generic body calls this).
    fn render_map(
        &self,
        id: &str,
        vars: &serde_json::Map<String, serde_json::Value>,
        missing_vars: MissingVars,
    ) -> Result<Prompt> {
        // Not `render`: the caller's span covers this render.
        self.render_checked(id, vars, missing_vars, true)
    }

    /// Renders prompt `id` with values from any [`Vars`], without converting
    /// them first. A variable whose front matter declares its values
    /// (`kind: choice`) takes one of them: any other value is
    /// `invalid_choice`, as it cannot be a value of the generated enum.
    pub fn render(
        &self,
        id: &str,
        vars: &(impl Vars + ?Sized),
        missing_vars: MissingVars,
    ) -> Result<Prompt> {
        crate::trace::render(id, || self.render_checked(id, vars, missing_vars, true))
    }

    /// [`Library::render`] of values that come from a generated vars struct
    /// (the live handle's): its enums are the program's declared values,
    /// which a catalog version may declare fewer of without being refused,
    /// so they are not checked against the version's declaration. No span
    /// of its own: the live handle's or the generated `build`'s covers it.
    #[cfg(any(feature = "live", feature = "hot-reload"))]
    pub(crate) fn render_typed(
        &self,
        id: &str,
        vars: &(impl Vars + ?Sized),
        missing_vars: MissingVars,
    ) -> Result<Prompt> {
        self.render_checked(id, vars, missing_vars, false)
    }

    fn render_checked(
        &self,
        id: &str,
        vars: &(impl Vars + ?Sized),
        missing_vars: MissingVars,
        check_choices: bool,
    ) -> Result<Prompt> {
        let index = self.index_of(id).ok_or_else(|| self.unknown_prompt(id))?;
        let prompt = &self.prompts[index];
        let names = VarNames::new(&prompt.vars);
        let render = |values: &[Option<ValueRef<'_>>]| {
            if check_choices && self.tables[index].declares_choices {
                declared_choices(prompt, values)?;
            }
            self.render_values(index, values, missing_vars)
        };
        if names.len() <= STACK_VALUES {
            let mut values = [None; STACK_VALUES];
            let values = &mut values[..names.len()];
            vars.get_many(names, values);
            render(values)
        } else {
            let mut values = vec![None; names.len()];
            vars.get_many(names, &mut values);
            render(&values)
        }
    }

    /// Renders `prompts[index]` with values numbered as its
    /// [`ResolvedPrompt::vars`].
    ///
    /// Each part goes into a `String` allocated once: its capacity is the
    /// part's static text plus each value's length times its uses, which
    /// bounds the output (exactly, unless a block is left out), or, when
    /// repeated values would make that bound loose, the length measured
    /// along the branches taken. A part whose measured length passes the
    /// render bound is refused (`too_large`) before anything is allocated
    /// for it. A strict render that reached a missing value is dropped for
    /// the error.
    pub(crate) fn render_values(
        &self,
        index: usize,
        values: &[Option<ValueRef<'_>>],
        missing_vars: MissingVars,
    ) -> Result<Prompt> {
        let prompt = &self.prompts[index];
        let uses = &self.tables[index].uses;
        let delims = &self.delimiters;
        let bound = self.max_render_bytes;
        let keep_tokens = missing_vars == MissingVars::KeepToken;
        // Bytes per use of each variable, when it has a value: exact, so
        // that the bound is checked on what would be written.
        let value_len = |i: usize| match values.get(i) {
            Some(Some(value)) => value.rendered_len(),
            _ if keep_tokens => {
                delims.open().len() + prompt.vars[i].name.len() + delims.close().len()
            }
            _ => 0,
        };
        let mut missing = Missing::default();
        // Each value's printed length, once per render when a part must be
        // measured (every message of a conversation is). A history is never
        // printed in a text, and printing a JSON history to measure it was
        // most of a conversation's render.
        let lens: std::cell::OnceCell<Vec<usize>> = std::cell::OnceCell::new();
        let lens_of_values = || -> Vec<usize> {
            (0..prompt.vars.len())
                .map(|i| match prompt.vars[i].kind() {
                    VarKind::Messages => 0,
                    _ => value_len(i),
                })
                .collect()
        };
        // `uses` counts each variable's value tokens in `program`: without
        // it (a conversation's message), the length is measured.
        let mut render = |program: &Program, uses: Option<&[u32]>, part: PartName| {
            // Text plus each value once, and what repeated values add.
            let (mut len, mut repeats) = (program.text.len(), 0usize);
            let measured = uses.is_none();
            for (i, &n) in uses.unwrap_or_default().iter().enumerate() {
                if n > 0 {
                    let value = value_len(i);
                    len = len.saturating_add(value);
                    repeats = repeats.saturating_add(value.saturating_mul(n as usize - 1));
                }
            }
            // Values repeated many times, maybe in blocks left out, could
            // make that bound much more than the output, and a bound past
            // the limit may still be an output within it: then follow the
            // branches.
            let upper = len.saturating_add(repeats);
            let len = if !measured && repeats <= EXACT_ABOVE && upper <= bound {
                upper
            } else {
                // Each value's length once, not once per use: counting a
                // JSON array's printed length at each of 20,000 uses would
                // cost what the bound is there to refuse.
                let lens = lens.get_or_init(lens_of_values);
                measure_ops(program, values, &|i| {
                    lens.get(i).copied().unwrap_or_else(|| value_len(i))
                })
            };
            if len > bound {
                return Err(output_too_large(&prompt.id, part, len, bound));
            }
            let mut out = String::with_capacity(len);
            render_ops(program, values, &mut out, |i, out| {
                missing.insert(i);
                if keep_tokens {
                    write_token(out, delims, &prompt.vars[i].name);
                }
            });
            Ok(out)
        };
        let (system_uses, user_uses) = uses.split_at(prompt.vars.len().min(uses.len()));
        let system = render(&prompt.system, Some(system_uses), PartName::System)?;
        let user = match &prompt.user {
            Some(user) => Some(render(user, Some(user_uses), PartName::User)?),
            None => None,
        };
        let sent = prompt
            .conversation
            .as_ref()
            .map(|conversation| conversation.sent(values))
            .unwrap_or_default();
        let mut messages = Vec::with_capacity(sent.len());
        let mut missing_history = Vec::new();
        for turn in sent {
            match turn {
                Sent::Message {
                    role,
                    name,
                    program,
                } => messages.push(Message {
                    role,
                    content: render(program, None, PartName::Messages)?,
                    name: name.map(str::to_string),
                    id: None,
                }),
                Sent::History(var) => match values.get(var).copied().flatten() {
                    Some(value) => {
                        history_messages(prompt, var, value, bound, &mut messages)?;
                    }
                    None => missing_history.push(var),
                },
            }
        }
        for var in missing_history {
            missing.insert(var);
        }
        if !keep_tokens && !missing.order.is_empty() {
            return Err(missing_error(prompt, &missing.order));
        }
        Ok(Prompt {
            id: prompt.id.clone(),
            system,
            user,
            messages,
            hash: PromptHash::from(prompt.hash),
            provenance: self.provenance.clone(),
            exchange: self.tables[index].exchange.clone(),
        })
    }

    fn unknown_prompt(&self, id: &str) -> Error {
        Error::unknown_prompt(id, self.prompts.iter().map(|p| p.id.as_str()))
    }
}

/// Appends the history `value` of variable `var` to `messages`: messages
/// given as they are (typed), or a JSON array of `{"role", "content"}`
/// objects (and `"name"` for a tool result), each read as one message,
/// never parsed further. Anything else is `invalid_vars`, naming the
/// element and what is wrong; a message longer than `bound` is `too_large`.
fn history_messages(
    prompt: &ResolvedPrompt,
    var: usize,
    value: ValueRef<'_>,
    bound: usize,
    messages: &mut Vec<Message>,
) -> Result<()> {
    let name = prompt.vars.get(var).map_or("", |v| v.name.as_str());
    let invalid = |what: String| -> Error {
        Diagnostic::new(
            ErrorCode::InvalidVars,
            format!("history `{name}` of prompt `{}`: {what}", prompt.id),
        )
        .with_help(
            "a history is a list of {\"role\", \"content\"} messages; roles are system, user, \
             assistant, call and tool (the last two take the tool's \"name\", and the \"id\" \
             of the call)",
        )
        .into()
    };
    let start = messages.len();
    match value {
        ValueRef::Messages(given) => messages.extend_from_slice(given),
        ValueRef::Json(serde_json::Value::Array(items)) => {
            messages.reserve(items.len());
            for (i, item) in items.iter().enumerate() {
                let message = <Message as serde::Deserialize>::deserialize(item)
                    .map_err(|e| invalid(format!("message {i} is not a message: {e}")))?;
                messages.push(message);
            }
        }
        _ => return Err(invalid("the value is not a list of messages".to_string())),
    }
    if let Some(long) = messages[start..].iter().find(|m| m.content.len() > bound) {
        return Err(output_too_large(
            &prompt.id,
            PartName::Messages,
            long.content.len(),
            bound,
        ));
    }
    Ok(())
}

/// Every value given for a variable whose front matter declares its values
/// (`kind: choice` or `optional_choice`) is one of them: what its generated
/// enum could hold. `null` or no value at all is left to the render, as for
/// any variable (a missing comparison is false), and an optional choice
/// also takes `""` (its `None`, as the struct renders it). Undeclared choices take any
/// value, as they always have.
fn declared_choices(prompt: &ResolvedPrompt, values: &[Option<ValueRef<'_>>]) -> Result<()> {
    let mut errors = Vec::new();
    for (var, value) in prompt.vars.iter().zip(values) {
        if !matches!(
            var.declared,
            Some(VarKind::Choice | VarKind::OptionalChoice)
        ) {
            continue;
        }
        let Some(value) = value else {
            continue;
        };
        // An optional choice's `None` is what a struct shows as nothing:
        // null, or the empty text an `Option` of the enum renders.
        let null = matches!(value, ValueRef::Json(json) if json.is_null());
        let absent =
            null || (var.declared == Some(VarKind::OptionalChoice) && value.renders_as(""));
        if absent || var.choices.iter().any(|c| value.renders_as(c)) {
            continue;
        }
        let mut shown = String::new();
        value.write_to(&mut shown);
        let shown: String = shown.chars().take(60).collect();
        let listed = var
            .choices
            .iter()
            .map(|c| format!("{c:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        let near =
            promptpack_core::similar::nearest(&shown, var.choices.iter().map(String::as_str), 1);
        let help = match near.first() {
            Some(near) => format!(
                "did you mean {near:?}? The values of `{}` are {listed}",
                var.name
            ),
            None => format!("the values of `{}` are {listed}", var.name),
        };
        errors.push(
            Diagnostic::new(
                ErrorCode::InvalidChoice,
                format!(
                    "{shown:?} is not a value of `{}`, which prompt `{}` declares as a choice",
                    var.name, prompt.id
                ),
            )
            .with_help(help),
        );
    }
    match Error::from_diagnostics(errors) {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// How many value tokens each variable of `prompt` has in its system part,
/// then in its user part (see `RenderTables::uses`).
fn value_uses(prompt: &ResolvedPrompt) -> Box<[u32]> {
    let n = prompt.vars.len();
    let mut uses = vec![0u32; if prompt.user.is_some() { 2 * n } else { n }];
    let parts = std::iter::once(&prompt.system).chain(&prompt.user);
    for (part, program) in parts.enumerate() {
        for op in &program.ops {
            if let Op::Var(i) = *op
                && let Some(count) = uses.get_mut(part * n + i)
            {
                *count = count.saturating_add(1);
            }
        }
    }
    uses.into_boxed_slice()
}

/// Prompts with at most this many variables render without allocating
/// their table of values.
const STACK_VALUES: usize = 32;

/// How far repeated values may take the capacity bound of a part beyond
/// its text plus each value once before the length is measured instead.
const EXACT_ABOVE: usize = 4096;

/// The `missing_var` error for the variables `missing` (indices into the
/// prompt's table, in order of first use).
fn missing_error(prompt: &ResolvedPrompt, missing: &[usize]) -> Error {
    // Every diagnostic names the whole set, but briefly: listing all of
    // thousands of names in each of thousands of diagnostics would grow
    // with the square of their number.
    const LISTED: usize = 8;
    let mut names: Vec<&str> = missing
        .iter()
        .take(LISTED)
        .map(|&i| prompt.vars[i].name.as_str())
        .collect();
    let more = missing.len().saturating_sub(LISTED);
    let and_more = format!("and {more} more");
    if more > 0 {
        names.push(&and_more);
    }
    let diagnostics = missing
        .iter()
        .map(|&i| {
            let var = &prompt.vars[i];
            Diagnostic::new(
                ErrorCode::MissingVar,
                format!(
                    "prompt `{}` needs `{}`, which was not given",
                    prompt.id, var.name
                ),
            )
            .at(var.first_use.clone())
            .with_help(format!("missing for `{}`: {}", prompt.id, names.join(", ")))
        })
        .collect();
    Error::from_diagnostics(diagnostics)
        .unwrap_or_else(|| Error::new(ErrorCode::MissingVar, "a variable was not given"))
}

pub(crate) fn to_map<T: serde::Serialize + ?Sized>(
    vars: &T,
) -> Result<serde_json::Map<String, serde_json::Value>> {
    match serde_json::to_value(vars) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(serde_json::Value::Null) => Ok(serde_json::Map::new()),
        Ok(other) => Err(Error::new(
            ErrorCode::InvalidVars,
            format!(
                "variables must be a map of names to values, not {}",
                json_kind(&other)
            ),
        )),
        Err(e) => Err(Error::new(
            ErrorCode::InvalidVars,
            format!("variables could not be serialized: {e}"),
        )),
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use promptpack_core::source_file::SourceFile;
    use serde_json::json;
    use std::collections::HashMap;

    /// `render` takes unsized `Vars` too: a slice of pairs, or `dyn Vars`.
    #[test]
    fn render_takes_a_slice_of_pairs() {
        let library = library(2);
        let pairs = [("v0", "a"), ("v1", "b")];
        let from_slice = library
            .render("many", &pairs[..], MissingVars::KeepToken)
            .expect("renders");
        let as_dyn: &dyn Vars = &pairs;
        let from_dyn = library
            .render("many", as_dyn, MissingVars::KeepToken)
            .expect("renders");
        assert_eq!(from_slice, from_dyn);
        assert!(
            from_slice.system.starts_with("[a|a][b|b]"),
            "{}",
            from_slice.system
        );
    }

    /// A choice whose values front matter declares takes, as strings, only
    /// those (an optional one also `""` and null); the values of a compiled
    /// struct, which the live handle and the dev path render with, are not
    /// checked against a version that declares fewer.
    #[test]
    fn a_declared_choice_takes_its_declared_values() {
        let system = "---\nvars:\n  role: {kind: choice, values: [teacher, student]}\n  mood: {kind: optional_choice, values: [calm]}\n---\n{{#if role == \"teacher\"}}T{{else}}O{{/if}}{{#if mood}}!{{/if}}";
        let library = Library::from_sources(
            vec![TemplateSource {
                id: "p".into(),
                system: SourceFile::new("templates/p/system.md", system),
                user: None,
                messages: None,
            }],
            vec![],
            &Config::default(),
        )
        .expect("loads");
        let render = |role: &str, mood: serde_json::Value| {
            library.build_prompt("p", &json!({"role": role, "mood": mood}))
        };
        assert_eq!(
            render("student", json!(null)).expect("declared").system,
            "O"
        );
        assert_eq!(
            render("teacher", json!("calm")).expect("declared").system,
            "T!"
        );
        assert_eq!(render("teacher", json!("")).expect("`None`").system, "T");
        for (role, mood) in [("observer", json!(null)), ("teacher", json!("calmly"))] {
            let error = render(role, mood).expect_err("not declared");
            assert_eq!(error.code(), ErrorCode::InvalidChoice, "{error}");
        }
        let pairs = [("role", "techer"), ("mood", "calm")];
        let error = library
            .render("p", &pairs[..], MissingVars::Error)
            .expect_err("not declared");
        assert!(
            format!("{error:?}").contains("did you mean \"teacher\"?"),
            "{error:?}"
        );
        #[cfg(any(feature = "live", feature = "hot-reload"))]
        {
            let compiled = [("role", "observer"), ("mood", "calm")];
            let served = library
                .render_typed("p", &compiled[..], MissingVars::Error)
                .expect("a compiled struct's value renders");
            assert_eq!(served.system, "O!");
        }
    }

    /// A prompt with `n` variables `v0`…, each used twice in `system`, the
    /// last one also in `user`, and a block on `v1`.
    fn library(n: usize) -> Library {
        let mut system = String::new();
        for i in 0..n {
            system.push_str(&format!("[{{{{v{i}}}}}|{{{{v{i}}}}}]"));
        }
        system.push_str("{{#if v1}}one{{else}}none{{/if}}");
        let user = format!("user {{{{v{}}}}}", n - 1);
        Library::from_sources(
            vec![TemplateSource {
                id: "many".into(),
                system: SourceFile::new("templates/many/system.md", system),
                user: Some(SourceFile::new("templates/many/user.md", user)),
                messages: None,
            }],
            vec![],
            &Config::default(),
        )
        .expect("valid")
    }

    fn expected(n: usize, value: impl Fn(usize) -> String) -> (String, String) {
        let mut system: String = (0..n).map(|i| format!("[{0}|{0}]", value(i))).collect();
        system.push_str(if value(1).is_empty() { "none" } else { "one" });
        (system, format!("user {}", value(n - 1)))
    }

    #[test]
    fn renders_many_variables_every_way_with_exact_output() {
        // 40 variables: past the stack tables; 10: within them.
        for n in [10, 40] {
            let library = library(n);
            let value = |i: usize| "x".repeat(i % 3) + &i.to_string();
            let (system, user) = expected(n, value);
            let map: HashMap<String, String> =
                (0..n).map(|i| (format!("v{i}"), value(i))).collect();
            let json = serde_json::to_value(&map).expect("json");
            let pairs: Vec<(&str, String)> =
                map.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
            let renders = [
                library.render("many", &map, MissingVars::Error),
                library.render(
                    "many",
                    &json.as_object().expect("object").clone(),
                    MissingVars::Error,
                ),
                library.render("many", &pairs.as_slice(), MissingVars::Error),
                library.build_prompt("many", &map),
                library.build_prompt("many", &json),
            ];
            for prompt in renders {
                let prompt = prompt.expect("every value is given");
                assert_eq!(prompt.system, system);
                assert_eq!(prompt.user.as_deref(), Some(user.as_str()));
                // Exact when no block is left out and every value is text.
                assert_eq!(prompt.system.capacity(), prompt.system.len() + "none".len());
            }
        }
    }

    #[test]
    fn missing_values_are_named_in_order_of_first_use_across_parts() {
        let library = library(40);
        let given: HashMap<String, String> = (0..39)
            .filter(|i| i % 7 != 3)
            .map(|i| (format!("v{i}"), "v".to_string()))
            .collect();
        let error = library
            .render("many", &given, MissingVars::Error)
            .expect_err("values are missing");
        let names: Vec<String> = error
            .diagnostics()
            .iter()
            .map(|d| d.message.clone())
            .collect();
        let want: Vec<String> = [3, 10, 17, 24, 31, 38, 39]
            .iter()
            .map(|i| format!("prompt `many` needs `v{i}`, which was not given"))
            .collect();
        assert_eq!(names, want);
        let lenient = library
            .build_prompt_lenient("many", &given)
            .expect("lenient");
        assert!(lenient.system.starts_with("[v|v][v|v][v|v][{{v3}}|{{v3}}]"));
        assert_eq!(lenient.user.as_deref(), Some("user {{v39}}"));
    }

    #[test]
    fn values_repeated_in_a_block_left_out_take_no_room() {
        let system = format!(
            "{{{{#if on}}}}{}{{{{/if}}}}short {{{{x}}}}",
            "{{big}}".repeat(50)
        );
        let library = Library::from_sources(
            vec![TemplateSource {
                id: "t".into(),
                system: SourceFile::new("templates/t/system.md", system),
                user: None,
                messages: None,
            }],
            vec![],
            &Config::default(),
        )
        .expect("valid");
        let big = "b".repeat(1000);
        for on in [false, true] {
            let vars = json!({"on": on, "big": big, "x": "y"});
            let prompt = library.build_prompt("t", &vars).expect("renders");
            let want = if on {
                big.repeat(50) + "short y"
            } else {
                "short y".into()
            };
            assert_eq!(prompt.system, want);
            assert_eq!(prompt.system.capacity(), want.len());
        }
    }

    #[test]
    fn json_values_that_outgrow_their_estimate_still_render() {
        let library = library(2);
        let big: Vec<u32> = (0..500).collect();
        let prompt = library
            .build_prompt("many", &json!({"v0": big, "v1": 1.5e300}))
            .expect("renders");
        let array = serde_json::to_string_pretty(&big).expect("json");
        assert_eq!(
            prompt.system,
            format!("[{array}|{array}][1.5e+300|1.5e+300]one")
        );
    }
}
