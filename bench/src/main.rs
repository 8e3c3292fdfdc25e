//! promptpack render benchmark.
//!
//! ```text
//! cargo run --release --manifest-path bench/Cargo.toml -- [--quick] [--only SECTIONS]
//! promptpack-bench --profile CONTENDER [RENDERS]     # for callgrind
//! ```
//!
//! Renders the workload in `PROMPTPACK_BENCH_WORKLOAD` (default
//! `../shared/bench-workload` beside the repository) with promptpack (the
//! dynamic `Library` and the typed code `build.rs` generates with
//! promptpack's build API) and its peers, checks every output against
//! `expected-output.md` byte for byte before timing anything, and prints
//! Markdown tables: median ns per render and the ratio to a lower bound
//! measured in the same run; the typed render of the bench's own prompt with
//! a three-way `{{#if role == "…"}}` choice, per role, against its own lower
//! bound; loading and rendering the conformance corpus
//! (`PROMPTPACK_CONFORMANCE_DIR`, default `../shared/conformance/openmaic`);
//! the memory of loading 10,000 synthetic prompts; the build-script cost of
//! 10, 100 and 1,000 of them; the latency of hot reload; the catalog's
//! latency and growth on SQLite and PostgreSQL (`catalog.rs`); live
//! prompts served from a catalog label (`live.rs`); and the language
//! server's keystroke-to-diagnostics latency and memory (`lsp.rs`).

mod catalog;
mod choice;
mod console;
mod live;
mod live_tree;
mod lsp;
mod translate;

use promptpack::{Library, MissingVars, ValueRef};
use serde_json::{Map, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering::Relaxed};
use std::time::{Duration, Instant};
use translate::{PROMPT_ID, Tok, Workload};

// ---------------------------------------------------------------------------
// Counting allocator: live bytes and their peak, counted only while enabled
// so that it costs the timed renders one relaxed load per allocation.

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn count(delta: isize) {
    if COUNTING.load(Relaxed) {
        let now = LIVE.fetch_add(delta, Relaxed) + delta;
        PEAK.fetch_max(now, Relaxed);
    }
}

// SAFETY: every call is forwarded to `System` unchanged; only counters are
// updated on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f` with the counter on; returns its result, the peak of bytes
/// allocated and not yet freed during the call, and those still live after.
fn measure_memory<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    LIVE.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    COUNTING.store(true, Relaxed);
    let out = f();
    COUNTING.store(false, Relaxed);
    let peak = PEAK.load(Relaxed).max(0) as usize;
    let live = LIVE.load(Relaxed).max(0) as usize;
    (out, peak, live)
}

// ---------------------------------------------------------------------------
// The timed values.

/// The values of the timed case (the workload README's table).
pub struct Values {
    texts: Vec<(&'static str, String)>,
    flags: Vec<(&'static str, bool)>,
}

impl Values {
    fn timed(workload: &Path) -> Result<Values, String> {
        let state = workload.join("state_context.md");
        let state =
            std::fs::read_to_string(&state).map_err(|e| format!("{}: {e}", state.display()))?;
        let texts = [
            ("agentName", "Atlas"),
            ("userName", "Dana Whitfield"),
            ("projectName", "orbit-api"),
            ("workspaceRoot", "/home/dana/src/orbit-api"),
            ("primaryLanguage", "TypeScript"),
            ("currentDate", "2025-03-14"),
            ("responseLanguage", "English (US)"),
        ];
        let mut texts: Vec<(&'static str, String)> =
            texts.iter().map(|&(k, v)| (k, v.to_owned())).collect();
        texts.push(("stateContext", state));
        Ok(Values {
            texts,
            flags: vec![("hasTools", true), ("isTeacher", false)],
        })
    }

    /// The text value `name` (empty when there is none).
    pub fn text(&self, name: &str) -> &str {
        self.texts
            .iter()
            .find(|(n, _)| *n == name)
            .map_or("", |(_, v)| v)
    }

    /// The flag `name`, or whether the text `name` is non-empty.
    pub fn flag(&self, name: &str) -> bool {
        match self.flags.iter().find(|(n, _)| *n == name) {
            Some(&(_, b)) => b,
            None => !self.text(name).is_empty(),
        }
    }

    fn json(&self) -> Map<String, Value> {
        let mut map = Map::new();
        for (k, v) in &self.texts {
            map.insert((*k).to_owned(), Value::String(v.clone()));
        }
        for &(k, b) in &self.flags {
            map.insert(k.to_owned(), Value::Bool(b));
        }
        map
    }

    fn value_refs(&self) -> Vec<(&str, ValueRef<'_>)> {
        let texts = self.texts.iter().map(|(k, v)| (*k, ValueRef::Str(v)));
        texts
            .chain(self.flags.iter().map(|&(k, b)| (k, ValueRef::Bool(b))))
            .collect()
    }
}

// ---------------------------------------------------------------------------
// Contenders.

/// promptpack's typed API for the workload, generated by `build.rs` through
/// `promptpack_build::compile_config`.
#[cfg(promptpack_typed)]
#[allow(dead_code)] // the bench uses one prompt of the generated API
mod typed {
    promptpack::include_prompts!();
}

/// promptpack's typed API for the bench's own `choice/` prompt, generated by
/// `build.rs` through `promptpack_build::compile_config` and moved to
/// `OUT_DIR/choice_prompts.rs` (the workload's set has the default name).
#[cfg(promptpack_choice)]
#[allow(dead_code)] // the bench uses `render_system()` only
mod choice_typed {
    include!(concat!(env!("OUT_DIR"), "/choice_prompts.rs"));
}

/// Peers generated by `build.rs` from the workload (askama, md-tmpl macro).
mod compiled {
    include!(concat!(env!("OUT_DIR"), "/compiled_peers.rs"));
}

type Runner<'a> = Box<dyn FnMut(u64) -> usize + 'a>;

enum State<'a> {
    Ready(Runner<'a>),
    Failed(String),
    #[cfg_attr(all(promptpack_typed, promptpack_choice), allow(dead_code))]
    Skipped(String),
}

struct Contender<'a> {
    name: &'static str,
    note: &'static str,
    state: State<'a>,
    samples: Vec<f64>,
    batch: u64,
}

// For the typed contenders when they are not built.
#[cfg_attr(all(promptpack_typed, promptpack_choice), allow(dead_code))]
fn skipped<'a>(name: &'static str, note: &'static str, why: impl Into<String>) -> Contender<'a> {
    Contender {
        name,
        note,
        state: State::Skipped(why.into()),
        samples: Vec::new(),
        batch: 0,
    }
}

/// A contender whose output has been checked against `expected`; `Failed`
/// when it errs or differs, and then never timed.
fn contender<'a, F>(
    name: &'static str,
    note: &'static str,
    expected: &str,
    mut render: F,
) -> Contender<'a>
where
    F: FnMut() -> Result<String, String> + 'a,
{
    let state = match render() {
        Err(e) => State::Failed(e),
        Ok(out) if out != expected => State::Failed(first_difference(&out, expected)),
        Ok(_) => State::Ready(Box::new(move |n| {
            let mut bytes = 0;
            for _ in 0..n {
                match render() {
                    Ok(out) => bytes += black_box(out).len(),
                    Err(e) => panic!("{name} failed while timed: {e}"),
                }
            }
            bytes
        })),
    };
    Contender {
        name,
        note,
        state,
        samples: Vec::new(),
        batch: 0,
    }
}

/// The lower bound's render: precomputed pieces pushed into a `String` of
/// exact capacity.
fn lower_bound<E>(pieces: Vec<String>) -> impl FnMut() -> Result<String, E> {
    let capacity = pieces.iter().map(String::len).sum();
    move || {
        let mut out = String::with_capacity(capacity);
        for p in &pieces {
            out.push_str(p);
        }
        Ok(out)
    }
}

/// Builds a contender from a setup that may fail (a template that does not
/// compile is a failed contender, not a crash).
fn try_contender<'a, F>(
    name: &'static str,
    note: &'static str,
    expected: &str,
    setup: Result<F, String>,
) -> Contender<'a>
where
    F: FnMut() -> Result<String, String> + 'a,
{
    match setup {
        Ok(render) => contender(name, note, expected, render),
        Err(e) => Contender {
            name,
            note,
            state: State::Failed(e),
            samples: Vec::new(),
            batch: 0,
        },
    }
}

fn first_difference(got: &str, want: &str) -> String {
    let at = got
        .bytes()
        .zip(want.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let around = |s: &str| {
        let mut start = at.saturating_sub(30);
        while !s.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (at + 30).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        format!("{:?}", &s[start..end])
    };
    format!(
        "output differs at byte {at} (got {} bytes, want {}): got {} want {}",
        got.len(),
        want.len(),
        around(got),
        around(want)
    )
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The original TypeScript loader, ported naively: regexes, and the template
/// and snippet files read again on every call.
struct RegexPort {
    dir: PathBuf,
    snippet: regex::Regex,
    block: regex::Regex,
    var: regex::Regex,
}

impl RegexPort {
    fn new(dir: &Path) -> RegexPort {
        // `(?-u:\w)` is JavaScript's ASCII `\w`.
        RegexPort {
            dir: dir.to_owned(),
            snippet: regex::Regex::new(r"\{\{snippet:((?-u:\w)[\w-]*)\}\}").expect("regex"),
            block: regex::Regex::new(r"\{\{#if ((?-u:\w)+)\}\}([\s\S]*?)\{\{/if\}\}")
                .expect("regex"),
            var: regex::Regex::new(r"\{\{((?-u:\w)+)\}\}").expect("regex"),
        }
    }

    fn build_prompt(&self, id: &str, vars: &Map<String, Value>) -> std::io::Result<String> {
        let path = self.dir.join("templates").join(id).join("system.md");
        let template = std::fs::read_to_string(path)?;
        let template = translate::js_trim(&template);
        let with_snippets = self
            .snippet
            .replace_all(template, |c: &regex::Captures<'_>| {
                let path = self.dir.join("snippets").join(format!("{}.md", &c[1]));
                match std::fs::read_to_string(path) {
                    Ok(text) => translate::js_trim(&text).to_owned(),
                    Err(_) => c[0].to_owned(),
                }
            });
        let with_blocks = self
            .block
            .replace_all(&with_snippets, |c: &regex::Captures<'_>| {
                if vars.get(&c[1]).is_some_and(js_truthy) {
                    c[2].to_owned()
                } else {
                    String::new()
                }
            });
        let out = self
            .var
            .replace_all(&with_blocks, |c: &regex::Captures<'_>| {
                match vars.get(&c[1]) {
                    Some(v) => js_string(v),
                    None => c[0].to_owned(),
                }
            });
        Ok(out.into_owned())
    }
}

fn js_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

fn js_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// The lower bound: the output's pieces, precomputed for the timed values,
/// pushed into a `String` of exact capacity.
fn lower_bound_pieces<'v>(toks: &'v [Tok], values: &'v Values) -> Result<Vec<&'v str>, String> {
    let mut pieces = Vec::new();
    // One entry per open block: whether it is being kept.
    let mut keep: Vec<bool> = Vec::new();
    for tok in toks {
        let on = keep.iter().all(|&k| k);
        match tok {
            Tok::Text(t) if on => pieces.push(t.as_str()),
            Tok::Var(n) if on => pieces.push(values.text(n)),
            Tok::If(n) => keep.push(values.flag(n)),
            Tok::Else => {
                let k = keep.last_mut().ok_or("`{{else}}` outside a block")?;
                *k = !*k;
            }
            Tok::EndIf => {
                keep.pop().ok_or("unbalanced `{{/if}}`")?;
            }
            Tok::Snippet(n) => return Err(format!("snippet `{n}` was not inlined")),
            _ => {}
        }
    }
    Ok(pieces)
}

/// The typed vars of the timed case.
#[cfg(promptpack_typed)]
fn typed_vars(values: &Values) -> typed::BenchSystemVars<'_> {
    typed::BenchSystemVars {
        agent_name: values.text("agentName"),
        user_name: values.text("userName"),
        project_name: values.text("projectName"),
        workspace_root: values.text("workspaceRoot"),
        primary_language: values.text("primaryLanguage"),
        current_date: values.text("currentDate"),
        response_language: values.text("responseLanguage"),
        state_context: values.text("stateContext"),
        has_tools: values.flag("hasTools"),
        is_teacher: values.flag("isTeacher"),
    }
}

/// Every contender, checked against the expected output. The order is the
/// order of the table.
fn contenders<'a>(
    workload: &'a Workload,
    expected: &'a str,
    values: &'a Values,
    json: &'a Map<String, Value>,
    refs: &'a [(&'a str, ValueRef<'a>)],
) -> Vec<Contender<'a>> {
    let mut list = Vec::new();
    let inlined = workload.inlined();

    // Lower bound and a memcpy of the output, for scale.
    let pieces = inlined.as_ref().map_err(Clone::clone).and_then(|t| {
        let pieces = lower_bound_pieces(t, values)?;
        Ok(pieces
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<String>>())
    });
    list.push(try_contender(
        "lower bound",
        "precomputed pieces pushed into a String of exact capacity",
        expected,
        pieces.map(lower_bound),
    ));
    list.push(contender(
        "memcpy",
        "`expected.to_owned()`: copying the finished output",
        expected,
        move || Ok(expected.to_owned()),
    ));

    // promptpack, dynamic.
    let library = Library::load(&workload.dir).map_err(|e| format!("Library::load: {e}"));
    match library {
        Ok(library) => {
            let library: &'a Library = Box::leak(Box::new(library));
            list.push(contender(
                "promptpack Library::build_prompt",
                "`&serde_json::Map` converted through serde on every call",
                expected,
                move || {
                    library
                        .build_prompt(PROMPT_ID, json)
                        .map(|p| p.system)
                        .map_err(err)
                },
            ));
            list.push(contender(
                "promptpack Library::render (serde_json::Map)",
                "the same `&serde_json::Map` as `Vars`, no conversion, strict",
                expected,
                move || {
                    library
                        .render(PROMPT_ID, json, MissingVars::Error)
                        .map(|p| p.system)
                        .map_err(err)
                },
            ));
            let map: HashMap<&str, ValueRef<'_>> = refs.iter().copied().collect();
            list.push(contender(
                "promptpack Library::render (HashMap)",
                "`HashMap<&str, ValueRef>` as `Vars`, strict",
                expected,
                move || {
                    library
                        .render(PROMPT_ID, &map, MissingVars::Error)
                        .map(|p| p.system)
                        .map_err(err)
                },
            ));
            list.push(contender(
                "promptpack Library::render (slice)",
                "`&[(&str, ValueRef)]` as `Vars` (linear lookup), strict",
                expected,
                move || {
                    library
                        .render(PROMPT_ID, &refs, MissingVars::Error)
                        .map(|p| p.system)
                        .map_err(err)
                },
            ));
        }
        Err(e) => list.push(Contender {
            name: "promptpack Library",
            note: "",
            state: State::Failed(e),
            samples: Vec::new(),
            batch: 0,
        }),
    }

    // promptpack's generated code, compiled by build.rs with the build API
    // (`include_prompts!` in `mod typed`): the release path, no disk.
    #[cfg(promptpack_typed)]
    {
        let vars = typed_vars(values);
        list.push(contender(
            "promptpack typed `render_system()`",
            "generated at build time: exact capacity, straight-line pushes",
            expected,
            move || black_box(&vars).render_system().map_err(|e| e.to_string()),
        ));
        // The dev path: what `vars.build()` does in a debug build with hot
        // reload, that is the interpreter over the watched, last-loaded set,
        // fed by the typed struct. Called directly so that the release bench
        // times it.
        let leak = |p: std::path::PathBuf| -> &'static str {
            Box::leak(p.to_string_lossy().into_owned().into_boxed_str())
        };
        // The contract of `typed::BenchSystemVars` as the generated code
        // gives it to the dev path.
        static CONTRACT: [promptpack::__private::PromptInfo; 1] = [typed::BenchSystemVars::__INFO];
        let dev_source: &'static promptpack::__private::DevSource =
            Box::leak(Box::new(promptpack::__private::DevSource {
                root: leak(workload.dir.clone()),
                templates: leak(workload.dir.join("templates")),
                snippets: leak(workload.dir.join("snippets")),
                open: "{{",
                close: "}}",
                // As build.rs compiled it: `Config::new`, the default (off).
                standalone_tags: false,
                max_render_bytes: promptpack::DEFAULT_MAX_RENDER_BYTES,
                prompts: &CONTRACT,
            }));
        list.push(contender(
            "promptpack dev path (interpreted, watched)",
            "`__private::dev_render`: the debug-build `build()` after a reload",
            expected,
            move || match promptpack::__private::dev_render(dev_source, PROMPT_ID, black_box(&vars))
            {
                Some(rendered) => rendered.map(|p| p.system).map_err(err),
                None => Err("hot reload is off (PROMPTPACK_NO_RELOAD?)".to_owned()),
            },
        ));
        list.push(contender(
            "promptpack typed `build_prompt(PromptId::BenchSystem, ..)`",
            "generated; id check + `TypedVars::build` (release: no disk) + `Prompt`",
            expected,
            move || {
                typed::build_prompt(typed::PromptId::BenchSystem, *black_box(&vars))
                    .map(|p| p.system)
                    .map_err(err)
            },
        ));
    }
    #[cfg(not(promptpack_typed))]
    list.push(skipped(
        "promptpack typed (generated)",
        "build-time generated code",
        "build.rs could not compile the workload with promptpack_build (see its warning)",
    ));

    // Compile-time peers, generated by build.rs.
    list.push(try_contender(
        "askama",
        "compile-time; snippets inlined by build.rs",
        expected,
        compiled::askama(values).map(|f| move || Ok(f())),
    ));
    list.push(try_contender(
        "md-tmpl template! (build-time)",
        "compile-time macro; snippets inlined by build.rs",
        expected,
        compiled::md_tmpl(values).map(|f| move || Ok(f())),
    ));

    // Run-time peers.
    let snippet_sources =
        |f: &dyn Fn(&[Tok]) -> Result<String, String>| -> Result<Vec<(String, String)>, String> {
            workload
                .snippets
                .keys()
                .map(|name| Ok((name.clone(), f(&workload.snippet_tokens(name)?)?)))
                .collect()
        };

    let tera = (|| -> Result<_, String> {
        let mut tera = tera::Tera::new();
        tera.autoescape_on(Vec::<&str>::new());
        let mut sources = snippet_sources(&|t| translate::to_jinja(t, true))?;
        sources.push((
            PROMPT_ID.to_owned(),
            translate::to_jinja(&workload.tokens(), true)?,
        ));
        tera.add_raw_templates(sources).map_err(err)?;
        let mut ctx = tera::Context::new();
        for (k, v) in &values.texts {
            ctx.insert(*k, v);
        }
        for &(k, b) in &values.flags {
            ctx.insert(k, &b);
        }
        Ok(move || tera.render(PROMPT_ID, &ctx).map_err(err))
    })();
    list.push(try_contender(
        "tera",
        "tera 2, `{% include %}` snippets, context reused",
        expected,
        tera,
    ));

    let minijinja = (|| -> Result<_, String> {
        let mut env = minijinja::Environment::new();
        for (name, source) in snippet_sources(&|t| translate::to_jinja(t, true))? {
            env.add_template_owned(name, source).map_err(err)?;
        }
        env.add_template_owned(PROMPT_ID, translate::to_jinja(&workload.tokens(), true)?)
            .map_err(err)?;
        let env: &'a minijinja::Environment<'static> = Box::leak(Box::new(env));
        let template = env.get_template(PROMPT_ID).map_err(err)?;
        let ctx = minijinja::Value::from(minijinja::value::Serde(json));
        Ok(move || template.render(&ctx).map_err(err))
    })();
    list.push(try_contender(
        "minijinja",
        "`{% include %}` snippets, context reused",
        expected,
        minijinja,
    ));

    let handlebars = (|| -> Result<_, String> {
        let mut hb = handlebars::Handlebars::new();
        hb.register_escape_fn(handlebars::no_escape);
        for (name, source) in snippet_sources(&translate::to_handlebars)? {
            hb.register_partial(&name, source).map_err(err)?;
        }
        hb.register_template_string(PROMPT_ID, translate::to_handlebars(&workload.tokens())?)
            .map_err(err)?;
        let data = Value::Object(json.clone());
        Ok(move || hb.render(PROMPT_ID, &data).map_err(err))
    })();
    list.push(try_contender(
        "handlebars",
        "partials for snippets, no escaping",
        expected,
        handlebars,
    ));

    let md_tmpl = (|| -> Result<_, String> {
        let source = translate::to_md_tmpl(inlined.as_ref().map_err(Clone::clone)?)?;
        let template = md_tmpl::Template::from_source(&source).map_err(err)?;
        let mut ctx = md_tmpl::Context::new();
        for (k, v) in &values.texts {
            ctx.set(*k, v.as_str());
        }
        for &(k, b) in &values.flags {
            ctx.set(k, b);
        }
        Ok(move || template.render_ctx(&ctx).map_err(err))
    })();
    list.push(try_contender(
        "md-tmpl (run-time)",
        "`Template::render_ctx`, snippets inlined",
        expected,
        md_tmpl,
    ));

    let port = RegexPort::new(&workload.dir);
    list.push(contender(
        "regex port of the TS loader",
        "3 regexes; template and snippets read from disk per call",
        expected,
        move || port.build_prompt(PROMPT_ID, json).map_err(err),
    ));
    list
}

// ---------------------------------------------------------------------------
// Timing.

struct Mode {
    quick: bool,
    rounds: usize,
    batch_target: Duration,
    load_samples: usize,
    /// `--only`: the sections to run; all when `None`.
    only: Option<Vec<String>>,
}

impl Mode {
    fn wants(&self, section: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| only.iter().any(|s| s == section))
    }
}

/// Picks a batch size so that one batch takes about `target`.
fn calibrate(run: &mut dyn FnMut(u64) -> usize, target: Duration) -> u64 {
    let mut n = 1u64;
    loop {
        let start = Instant::now();
        black_box(run(n));
        let took = start.elapsed();
        if took >= target / 4 || n >= 1 << 30 {
            let per = took.as_secs_f64() / n as f64;
            return ((target.as_secs_f64() / per.max(1e-12)) as u64).max(1);
        }
        n *= 2;
    }
}

fn median(samples: &mut [f64]) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort_by(f64::total_cmp);
    let mid = samples.len() / 2;
    if samples.len() % 2 == 1 {
        samples[mid]
    } else {
        (samples[mid - 1] + samples[mid]) / 2.0
    }
}

/// Times every ready contender in interleaved rounds (the starting contender
/// rotates each round), one batch each per round; samples are ns/render.
fn time_all(list: &mut [Contender<'_>], mode: &Mode) {
    for c in list.iter_mut() {
        if let State::Ready(run) = &mut c.state {
            c.batch = calibrate(run.as_mut(), mode.batch_target);
        }
    }
    let len = list.len();
    for round in 0..mode.rounds {
        for i in 0..len {
            let c = &mut list[(i + round) % len];
            if let State::Ready(run) = &mut c.state {
                let start = Instant::now();
                black_box(run(c.batch));
                let ns = start.elapsed().as_nanos() as f64 / c.batch as f64;
                c.samples.push(ns);
            }
        }
    }
}

fn render_table(list: &mut [Contender<'_>], expected_len: usize, mode: &Mode) -> String {
    let mut out = format!(
        "## Render: `{PROMPT_ID}` ({expected_len} bytes out)\n\n\
         {} rounds, interleaved; each round times one batch of each contender \
         (batches of about {:?}). Every output was checked byte for byte against \
         `expected-output.md` first.\n\n\
         | contender | median ns/render | × lower bound | min ns/render | notes |\n\
         |---|---:|---:|---:|---|\n",
        mode.rounds, mode.batch_target
    );
    let lower = list
        .iter_mut()
        .find(|c| c.name == "lower bound")
        .map(|c| median(&mut c.samples.clone()))
        .unwrap_or(f64::NAN);
    for c in list.iter_mut() {
        out.push_str(&table_row(c, lower));
        out.push('\n');
    }
    out
}

/// A row of the render tables: name, median, median / `lower`, min, notes.
fn table_row(c: &mut Contender<'_>, lower: f64) -> String {
    match &c.state {
        State::Ready(_) => {
            let min = c.samples.iter().copied().fold(f64::INFINITY, f64::min);
            let med = median(&mut c.samples);
            format!(
                "| {} | {:.0} | {:.2} | {:.0} | {} |",
                c.name,
                med,
                med / lower,
                min,
                c.note
            )
        }
        State::Failed(why) => format!("| {} | FAILED | – | – | {} |", c.name, escape_cell(why)),
        State::Skipped(why) => {
            format!("| {} | skipped | – | – | {} |", c.name, escape_cell(why))
        }
    }
}

fn escape_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

// ---------------------------------------------------------------------------
// Choice: the typed render of a prompt with a three-way `{{#if role == "…"}}`
// choice, per role, against that role's lower bound.

/// A `&'static str` for a name built at run time (a handful per run).
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The lower bound's row name for `role`.
fn choice_lower_name(role: &str) -> String {
    format!("lower bound ({role})")
}

/// The choice section's contenders: for each role, the lower bound (that
/// role's output pieces, computed by `choice::pieces` without promptpack,
/// pushed into a `String` of exact capacity) and the typed `render_system()`,
/// both checked byte for byte against `Library::render` of the same prompt
/// and role.
fn choice_contenders() -> Vec<Contender<'static>> {
    let dir = choice::dir();
    let library = Library::load(&dir).map_err(|e| format!("Library::load: {e}"));
    let mut list = Vec::new();
    for (i, role) in choice::ROLES.into_iter().enumerate() {
        let expected = library.as_ref().map_err(Clone::clone).and_then(|library| {
            let mut vars: Vec<(&str, ValueRef<'_>)> = choice::TEXTS
                .iter()
                .map(|&(k, v)| (k, ValueRef::Str(v)))
                .collect();
            vars.push(("role", ValueRef::Str(role)));
            library
                .render(choice::PROMPT_ID, vars.as_slice(), MissingVars::Error)
                .map(|p| p.system)
                .map_err(|e| format!("Library::render: {e}"))
        });
        let expected = match expected {
            Ok(expected) => expected,
            Err(e) => {
                for name in [
                    choice_lower_name(role),
                    format!("promptpack typed `render_system()` ({role})"),
                ] {
                    list.push(Contender {
                        name: leak(name),
                        note: "",
                        state: State::Failed(e.clone()),
                        samples: Vec::new(),
                        batch: 0,
                    });
                }
                continue;
            }
        };
        let pieces = choice::pieces(&dir, role);
        let note = match &pieces {
            Ok(p) => leak(format!(
                "{} bytes out; {} precomputed pieces pushed into a String of exact capacity",
                expected.len(),
                p.len()
            )),
            Err(_) => "",
        };
        list.push(try_contender(
            leak(choice_lower_name(role)),
            note,
            &expected,
            pieces.map(lower_bound),
        ));
        let name = leak(format!("promptpack typed `render_system()` ({role})"));
        #[cfg(promptpack_choice)]
        {
            use choice_typed::{ChoiceBenchRole, ChoiceBenchVars};
            // In the order of `choice::ROLES`.
            let value = [
                ChoiceBenchRole::Teacher,
                ChoiceBenchRole::Assistant,
                ChoiceBenchRole::Student,
            ][i];
            let vars = ChoiceBenchVars {
                agent_name: choice::text("agentName"),
                topic: choice::text("topic"),
                role: value,
            };
            list.push(if value.as_str() == role {
                contender(
                    name,
                    "generated at build time; the choice is an enum compared in straight-line code",
                    &expected,
                    move || black_box(&vars).render_system().map_err(|e| e.to_string()),
                )
            } else {
                Contender {
                    name,
                    note: "",
                    state: State::Failed(format!(
                        "ChoiceBenchRole::{value:?} is {:?}, not {role:?}",
                        value.as_str()
                    )),
                    samples: Vec::new(),
                    batch: 0,
                }
            });
        }
        #[cfg(not(promptpack_choice))]
        {
            let _ = i;
            list.push(skipped(
                name,
                "build-time generated code",
                "build.rs could not compile choice/ with promptpack_build (see its warning)",
            ));
        }
    }
    list
}

fn choice_section(mode: &Mode) -> String {
    let mut list = choice_contenders();
    time_all(&mut list, mode);
    let mut out = format!(
        "## Choice: `{}`, per role\n\n\
         The bench's own prompt (`bench/choice/`): one \
         `{{{{#if role == \"teacher\"}}}}…{{{{else if role == \"assistant\"}}}}…\
         {{{{else if role == \"student\"}}}}…{{{{/if}}}}` chain, each branch a role snippet \
         of 0.7–0.9 KB, and three variables (`role` printed once too). {} rounds, \
         interleaved over all six rows; batches of about {:?}. Every output was checked \
         byte for byte against `Library::render` of the same prompt and role first. \
         Each ratio is to the lower bound of the same role.\n\n\
         | contender | median ns/render | × lower bound | min ns/render | notes |\n\
         |---|---:|---:|---:|---|\n",
        choice::PROMPT_ID,
        mode.rounds,
        mode.batch_target
    );
    let mut worst: Option<(&str, f64)> = None;
    for role in choice::ROLES {
        let lower_name = choice_lower_name(role);
        let lower = list
            .iter()
            .find(|c| c.name == lower_name && matches!(c.state, State::Ready(_)))
            .map(|c| median(&mut c.samples.clone()))
            .unwrap_or(f64::NAN);
        for c in list
            .iter_mut()
            .filter(|c| c.name.ends_with(&format!("({role})")))
        {
            if c.name != lower_name && matches!(c.state, State::Ready(_)) {
                let ratio = median(&mut c.samples.clone()) / lower;
                if worst.is_none_or(|(_, w)| ratio > w) {
                    worst = Some((role, ratio));
                }
            }
            out.push_str(&table_row(c, lower));
            out.push('\n');
        }
    }
    if let Some((role, ratio)) = worst {
        out.push_str(&format!(
            "\nTyped `render_system()` at its highest: {ratio:.2}× the lower bound ({role}); \
             target ≤ 1.00×.\n"
        ));
    }
    out
}

// ---------------------------------------------------------------------------
// The conformance corpus.

fn corpus_dir() -> PathBuf {
    match std::env::var_os("PROMPTPACK_CONFORMANCE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/conformance/openmaic"
        )),
    }
}

struct Golden {
    name: String,
    id: String,
    vars: Map<String, Value>,
    mode: MissingVars,
    system: String,
    user: String,
}

fn read_goldens(dir: &Path) -> Result<Vec<Golden>, String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir.join("golden"))
        .map_err(|e| format!("{}: {e}", dir.join("golden").display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut json: Value =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            let name = path
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let field = |json: &Value, ptr: &str| {
                json.pointer(ptr)
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| format!("{name}: no {ptr}"))
            };
            let id = field(&json, "/promptId")?;
            let system = field(&json, "/output/system")?;
            let user = field(&json, "/output/user")?;
            let vars = match json.get_mut("variables").map(Value::take) {
                Some(Value::Object(map)) => map,
                _ => return Err(format!("{name}: variables is not an object")),
            };
            let mode = if name.ends_with("--partial") {
                MissingVars::KeepToken
            } else {
                MissingVars::Error
            };
            Ok(Golden {
                name,
                id,
                vars,
                mode,
                system,
                user,
            })
        })
        .collect()
}

fn render_golden(library: &Library, g: &Golden) -> Result<usize, String> {
    let p = library
        .render(&g.id, &g.vars, g.mode)
        .map_err(|e| format!("{}: {e}", g.name))?;
    Ok(black_box(&p.system).len() + black_box(&p.user).as_ref().map_or(0, String::len))
}

fn render_golden_serde(library: &Library, g: &Golden) -> Result<usize, String> {
    let p = if g.mode == MissingVars::KeepToken {
        library.build_prompt_lenient(&g.id, &g.vars)
    } else {
        library.build_prompt(&g.id, &g.vars)
    }
    .map_err(|e| format!("{}: {e}", g.name))?;
    Ok(black_box(&p.system).len() + black_box(&p.user).as_ref().map_or(0, String::len))
}

fn corpus_section(mode: &Mode) -> String {
    let dir = corpus_dir();
    let mut out = format!("## Conformance corpus (`{}`)\n\n", dir.display());
    if !dir.is_dir() {
        out.push_str("skipped: corpus folder not found (set PROMPTPACK_CONFORMANCE_DIR)\n");
        return out;
    }
    // Loading.
    let (library, peak, live) = measure_memory(|| Library::load(&dir));
    let library = match library {
        Ok(l) => l,
        Err(e) => {
            out.push_str(&format!("FAILED: Library::load: {e}\n"));
            return out;
        }
    };
    let mut load_ms: Vec<f64> = (0..mode.load_samples)
        .map(|_| {
            let start = Instant::now();
            black_box(Library::load(&dir).expect("loaded once already"));
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let load_median = median(&mut load_ms);

    out.push_str(
        "| measure | result | notes |\n\
         |---|---:|---|\n",
    );
    out.push_str(&format!(
        "| `Library::load` (read + validate) | {load_median:.2} ms | median of {} loads; {} prompts; \
         peak {:.2} MB allocated, {:.2} MB held after |\n",
        mode.load_samples,
        library.prompts().len(),
        peak as f64 / 1e6,
        live as f64 / 1e6
    ));

    // Rendering every golden.
    let goldens = match read_goldens(&dir) {
        Ok(g) => g,
        Err(e) => {
            out.push_str(&format!(
                "| render goldens | FAILED | {} |\n",
                escape_cell(&e)
            ));
            return out;
        }
    };
    let mut failures = Vec::new();
    for g in &goldens {
        match library.render(&g.id, &g.vars, g.mode) {
            Ok(p) if p.system == g.system && p.user.as_deref().unwrap_or("") == g.user => {}
            Ok(p) => failures.push(format!(
                "{}: {}",
                g.name,
                if p.system != g.system {
                    first_difference(&p.system, &g.system)
                } else {
                    first_difference(p.user.as_deref().unwrap_or(""), &g.user)
                }
            )),
            Err(e) => failures.push(format!("{}: {e}", g.name)),
        }
    }
    if !failures.is_empty() {
        out.push_str(&format!(
            "| render goldens | FAILED | {} of {} differ: {} |\n",
            failures.len(),
            goldens.len(),
            escape_cell(&failures.join("; "))
        ));
        return out;
    }
    let passes = |render: fn(&Library, &Golden) -> Result<usize, String>| {
        let mut run = |n: u64| {
            let mut bytes = 0;
            for _ in 0..n {
                for g in &goldens {
                    bytes += render(&library, g).expect("checked before timing");
                }
            }
            bytes
        };
        let bytes_per_pass = run(1);
        let batch = calibrate(&mut run, mode.batch_target);
        let mut ns: Vec<f64> = (0..mode.rounds)
            .map(|_| {
                let start = Instant::now();
                black_box(run(batch));
                start.elapsed().as_nanos() as f64 / batch as f64
            })
            .collect();
        let per_pass = median(&mut ns);
        (bytes_per_pass, per_pass)
    };
    for (label, render) in [
        (
            "`Library::render` with the golden's `serde_json::Map` as `Vars`",
            render_golden as fn(&_, &_) -> _,
        ),
        (
            "`Library::build_prompt` / `build_prompt_lenient` (serde conversion)",
            render_golden_serde,
        ),
    ] {
        let (bytes, ns) = passes(render);
        out.push_str(&format!(
            "| render all {} goldens | {:.2} GB/s | {label}; {:.1} µs per pass over {} bytes of output; \
             `--partial` ones lenient |\n",
            goldens.len(),
            bytes as f64 / ns,
            ns / 1e3,
            bytes
        ));
    }
    out
}

// ---------------------------------------------------------------------------
// Peak memory with 10,000 synthetic prompts.

const SYNTHETIC_PROMPTS: usize = 10_000;
const SYNTHETIC_SNIPPETS: usize = 40;

/// A small deterministic generator (xorshift) so every run writes the same
/// corpus.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "agent",
    "context",
    "review",
    "change",
    "function",
    "module",
    "test",
    "request",
    "user",
    "result",
    "verify",
    "carefully",
    "before",
    "after",
    "the",
    "a",
    "and",
    "with",
    "every",
    "small",
    "step",
    "report",
    "error",
    "value",
    "file",
    "command",
    "output",
    "explain",
    "reason",
    "plan",
];

fn sentence(rng: &mut Rng, words: usize) -> String {
    let mut s = String::new();
    for i in 0..words {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(WORDS[rng.below(WORDS.len())]);
    }
    s.push('.');
    s
}

/// A prompt of about 5 KB: paragraphs with variables, two conditional blocks
/// and two snippet includes.
fn synthetic_prompt(rng: &mut Rng, i: usize) -> String {
    let mut s = format!("# Prompt {i} for {{{{agentName}}}}\n\n");
    let mut paragraph = 0;
    while s.len() < 4_900 {
        paragraph += 1;
        match paragraph % 7 {
            2 => s.push_str(&format!(
                "{{{{snippet:snippet_{:02}}}}}\n\n",
                rng.below(SYNTHETIC_SNIPPETS)
            )),
            4 => s.push_str(&format!(
                "{{{{#if flag_{}}}}}\n{}\n{{{{/if}}}}\n",
                rng.below(4),
                sentence(rng, 30)
            )),
            _ => s.push_str(&format!(
                "{} {{{{var_{}}}}} {} {{{{userName}}}}.\n\n",
                sentence(rng, 40),
                rng.below(6),
                sentence(rng, 25)
            )),
        }
    }
    s
}

/// A front matter block for synthetic prompt `i` whose text is `body`: a
/// description, every variable the body uses declared (flags with their
/// kind, values with a kind, description and example), an example set,
/// model settings and a budget — about 600 bytes of YAML. Only used names
/// are declared, so that the build reports no `unused_var` warnings.
fn synthetic_front_matter(i: usize, body: &str) -> String {
    let mut s =
        format!("---\ndescription: Synthetic prompt {i}, for the build-script bench.\nvars:\n");
    s.push_str("  agentName: {description: The agent's name., example: Ada}\n");
    s.push_str("  userName: {description: Who the agent works with., example: Grace}\n");
    for v in (0..6).filter(|v| body.contains(&format!("{{{{var_{v}}}}}"))) {
        s.push_str(&format!(
            "  var_{v}: {{kind: text, description: Value {v} of the prompt., example: value {v}}}\n"
        ));
    }
    for f in (0..4).filter(|f| body.contains(&format!("{{{{#if flag_{f}}}}}"))) {
        s.push_str(&format!(
            "  flag_{f}: {{kind: flag, description: Whether part {f} is shown.}}\n"
        ));
    }
    s.push_str("examples:\n  basic: {agentName: Ada, userName: Grace}\n");
    s.push_str("model: {name: some-model, temperature: 0.2, stop: [\"\\n\\n\"]}\n");
    s.push_str("max_tokens: 4000\n---\n");
    s
}

/// Writes `prompts` synthetic prompts (and the snippets they include) under
/// `root`; returns the bytes of template text written.
fn write_synthetic(root: &Path, prompts: usize) -> std::io::Result<u64> {
    write_synthetic_with(root, prompts, false)
}

/// [`write_synthetic`], each prompt with a front matter block when
/// `front_matter` is set (the same template text after it).
fn write_synthetic_with(root: &Path, prompts: usize, front_matter: bool) -> std::io::Result<u64> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut bytes = 0u64;
    std::fs::create_dir_all(root.join("snippets"))?;
    for i in 0..SYNTHETIC_SNIPPETS {
        let text = format!(
            "## Rules {i}\n\n{}\n\n{}",
            sentence(&mut rng, 30),
            sentence(&mut rng, 20)
        );
        bytes += text.len() as u64;
        std::fs::write(
            root.join("snippets").join(format!("snippet_{i:02}.md")),
            text,
        )?;
    }
    for i in 0..prompts {
        let dir = root.join("templates").join(format!("prompt-{i:05}"));
        std::fs::create_dir_all(&dir)?;
        let mut text = synthetic_prompt(&mut rng, i);
        if front_matter {
            let block = synthetic_front_matter(i, &text);
            text.insert_str(0, &block);
        }
        bytes += text.len() as u64;
        std::fs::write(dir.join("system.md"), text)?;
    }
    Ok(bytes)
}

/// A scratch folder under the system's temporary folder, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(label: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("promptpack-bench-{}-{label}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------------------
// Build-script cost: what `promptpack_build` does for a crate with N prompts.

/// Milliseconds `f` takes: the median of `samples` runs.
fn time_ms(samples: usize, mut f: impl FnMut()) -> f64 {
    let mut ms: Vec<f64> = (0..samples.max(1))
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    median(&mut ms)
}

fn codegen_section(mode: &Mode) -> String {
    let mut out = String::from(
        "## Build-script cost: synthetic prompts of about 5 KB\n\n\
         `build::generate_code(&Config)` is everything `build::compile_config` does but the \
         writes to `OUT_DIR`: read + check + resolve + lint + codegen. `codegen::generate` is \
         the code generator alone, on prompts already resolved. The output is the generated \
         code ÷ the template and snippet bytes on disk. \"with front matter\": the same prompts, \
         each with a ~600-byte front matter block (description, every variable it uses declared \
         with kinds, descriptions and examples, an example set, model settings, a budget) through \
         `generate_code`. Median of several runs; ms (ms per prompt).\n\n\
         | prompts | `generate_code` | with front matter | `codegen::generate` | output | ÷ templates |\n\
         |---:|---:|---:|---:|---:|---:|\n",
    );
    let mut per_prompt: Vec<(usize, f64)> = Vec::new();
    let mut front_matter_per_prompt: Vec<(usize, f64)> = Vec::new();
    let mut build_1000 = f64::NAN;
    let mut front_matter_1000 = f64::NAN;
    for (prompts, samples) in [(10, 21), (100, 7), (1_000, 3)] {
        let samples = if mode.quick {
            (samples / 4).max(1)
        } else {
            samples
        };
        let scratch = Scratch::new(&format!("codegen-{prompts}"));
        let result = (|| -> Result<String, String> {
            let template_bytes = write_synthetic(&scratch.0, prompts)
                .map_err(|e| format!("writing {}: {e}", scratch.0.display()))?;
            let config = promptpack::Config::new(&scratch.0);
            let code = promptpack_build::generate_code(&config).map_err(err)?;
            let full = time_ms(samples, || {
                black_box(promptpack_build::generate_code(black_box(&config)).expect("ran once"));
            });
            let (sources, errors) = promptpack_load::read_sources(&config);
            if let Some(e) = errors.first() {
                return Err(e.to_string());
            }
            let (resolved, errors) = promptpack_core::resolve::resolve(
                &sources.templates,
                &sources.snippets,
                config.delimiters_ref(),
            );
            if let Some(e) = errors.first() {
                return Err(e.to_string());
            }
            let dev = promptpack_build::codegen::DevPaths {
                root: scratch.0.display().to_string(),
                templates: config.templates().display().to_string(),
                snippets: config.snippets().display().to_string(),
                open: "{{".into(),
                close: "}}".into(),
                standalone_tags: false,
                max_render_bytes: promptpack::DEFAULT_MAX_RENDER_BYTES,
            };
            let generate =
                || promptpack_build::codegen::generate(&resolved, &sources.templates, &dev);
            generate().map_err(err)?;
            let codegen = time_ms(samples, || {
                black_box(generate().expect("generated once"));
            });
            let with_front_matter = Scratch::new(&format!("codegen-fm-{prompts}"));
            write_synthetic_with(&with_front_matter.0, prompts, true)
                .map_err(|e| format!("writing {}: {e}", with_front_matter.0.display()))?;
            let fm_config = promptpack::Config::new(&with_front_matter.0);
            promptpack_build::generate_code(&fm_config).map_err(err)?;
            let front_matter = time_ms(samples, || {
                black_box(
                    promptpack_build::generate_code(black_box(&fm_config)).expect("ran once"),
                );
            });
            let cell = |ms: f64| format!("{ms:.1} ({:.2})", ms / prompts as f64);
            per_prompt.push((prompts, codegen / prompts as f64));
            front_matter_per_prompt.push((prompts, front_matter / prompts as f64));
            if prompts == 1_000 {
                build_1000 = full;
                front_matter_1000 = front_matter;
            }
            Ok(format!(
                "| {prompts} | {} | {} | {} | {:.1} MB | {:.2} |\n",
                cell(full),
                cell(front_matter),
                cell(codegen),
                code.len() as f64 / 1e6,
                code.len() as f64 / template_bytes as f64
            ))
        })();
        match result {
            Ok(row) => out.push_str(&row),
            Err(e) => out.push_str(&format!(
                "| {prompts} | FAILED: {} | | | | |\n",
                escape_cell(&e)
            )),
        }
    }
    if let (Some(&(_, first)), Some(&(n, last))) = (per_prompt.first(), per_prompt.last()) {
        out.push_str(&format!(
            "\nPer-prompt `codegen::generate` cost at {n} prompts is {:.2}× that at 10 \
             (1.00 = linear growth). 1,000 prompts through the build script's path \
             (`generate_code`): {build_1000:.0} ms (target ≤ 1,000 ms).\n",
            last / first,
        ));
    }
    if let (Some(&(_, first)), Some(&(n, last))) = (
        front_matter_per_prompt.first(),
        front_matter_per_prompt.last(),
    ) {
        out.push_str(&format!(
            "With front matter: per-prompt `generate_code` cost at {n} prompts is {:.2}× that \
             at 10 (1.00 = linear); 1,000 prompts: {front_matter_1000:.0} ms, {:.2}× without \
             (target ≤ 1,000 ms).\n",
            last / first,
            front_matter_1000 / build_1000,
        ));
    }
    out
}

// ---------------------------------------------------------------------------
// Hot reload: a file written → the change visible through `current()`.

fn reload_section(mode: &Mode) -> String {
    let mut out = String::from(
        "## Hot reload: file write → change visible through `WatchedLibrary::current()`\n\n\
         `Library::watch` with its default options (native events, 50 ms debounce). Each edit \
         rewrites one `system.md` with new text; the clock runs from just before the write \
         until `current()` returns a library whose prompt has the new content hash \
         (checked every 0.2 ms).\n\n\
         | prompts in the folder | edits | p50 ms | p95 ms | max ms |\n\
         |---:|---:|---:|---:|---:|\n",
    );
    let edits = if mode.quick { 10 } else { 30 };
    for prompts in [10, 1_000] {
        let scratch = Scratch::new(&format!("reload-{prompts}"));
        let result = (|| -> Result<String, String> {
            write_synthetic(&scratch.0, prompts)
                .map_err(|e| format!("writing {}: {e}", scratch.0.display()))?;
            let watched = Library::watch(&scratch.0).map_err(err)?;
            let id = "prompt-00000";
            let file = scratch.0.join("templates").join(id).join("system.md");
            let hash_now = || watched.current().hash(id);
            let mut ms = Vec::with_capacity(edits);
            for edit in 0..edits {
                let before = hash_now();
                let text =
                    format!("# Edit {edit} for {{{{agentName}}}}\n\nHello {{{{userName}}}}.\n");
                let start = Instant::now();
                std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
                loop {
                    if hash_now() != before {
                        break;
                    }
                    if start.elapsed() > Duration::from_secs(10) {
                        return Err(format!("edit {edit} not seen after 10 s"));
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
                ms.push(start.elapsed().as_secs_f64() * 1e3);
                // Let the watcher settle so that edits do not merge.
                std::thread::sleep(Duration::from_millis(100));
            }
            ms.sort_by(f64::total_cmp);
            let pct = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
            Ok(format!(
                "| {prompts} | {edits} | {:.1} | {:.1} | {:.1} |\n",
                pct(0.5),
                pct(0.95),
                ms[ms.len() - 1]
            ))
        })();
        match result {
            Ok(row) => out.push_str(&row),
            Err(e) => out.push_str(&format!(
                "| {prompts} | FAILED | – | – | {} |\n",
                escape_cell(&e)
            )),
        }
    }
    out
}

/// Heap bytes a loaded library's prompts hold, by kind, from their public
/// fields (capacities, not lengths; allocator overhead not counted).
struct Breakdown {
    text: usize,
    ops: usize,
    vars: usize,
    other: usize,
}

fn breakdown(library: &Library) -> Breakdown {
    let mut b = Breakdown {
        text: 0,
        ops: 0,
        vars: 0,
        other: 0,
    };
    for p in library.prompts() {
        for program in std::iter::once(&p.system).chain(&p.user) {
            b.text += program.text.capacity();
            b.ops += program.ops.capacity() * std::mem::size_of::<promptpack_core::program::Op>();
        }
        b.vars += p.vars.capacity() * std::mem::size_of::<promptpack_core::program::VarInfo>();
        for v in &p.vars {
            // `first_use` shares its file's text: no bytes of its own.
            b.vars += v.name.capacity();
        }
        b.other += std::mem::size_of_val(p)
            + p.id.capacity()
            + p.system_path.capacity()
            + p.user_path.as_ref().map_or(0, String::capacity)
            + p.snippets.iter().map(|s| s.capacity() + 24).sum::<usize>();
    }
    b
}

fn memory_section() -> String {
    let mut out = format!("## Memory: {SYNTHETIC_PROMPTS} synthetic prompts of about 5 KB\n\n");
    let scratch = Scratch::new("memory");
    let root = &scratch.0;
    let result = (|| -> Result<String, String> {
        let bytes = write_synthetic(root, SYNTHETIC_PROMPTS)
            .map_err(|e| format!("writing {}: {e}", root.display()))?;
        let start = Instant::now();
        let (library, peak, live) = measure_memory(|| Library::load(root));
        let took = start.elapsed();
        let library = library.map_err(|e| format!("Library::load: {e}"))?;
        let prompts = library.prompts().len();
        let b = breakdown(&library);
        // Keep the library alive until after the measurement.
        drop(black_box(library));
        let mb = |n: usize| n as f64 / 1e6;
        Ok(format!(
            "| measure | result | notes |\n\
             |---|---:|---|\n\
             | peak live heap during `Library::load` | {:.1} MB | counting global allocator; {prompts} prompts, \
             {:.1} MB of template text on disk |\n\
             | held by the loaded `Library` | {:.1} MB | live bytes after the load returned |\n\
             | of which program text | {:.1} MB | `Program::text`: templates with snippets spliced in |\n\
             | of which ops | {:.1} MB | `Program::ops` ({} bytes per `Op`) |\n\
             | of which variable tables | {:.1} MB | `VarInfo`s and names; `first_use` shares its file's text |\n\
             | of which the rest | {:.1} MB | ids, paths, snippet sets, the structs themselves |\n\
             | `Library::load` time | {:.0} ms | one load, counting allocator on |\n",
            mb(peak),
            bytes as f64 / 1e6,
            mb(live),
            mb(b.text),
            mb(b.ops),
            std::mem::size_of::<promptpack_core::program::Op>(),
            mb(b.vars),
            mb(b.other),
            took.as_secs_f64() * 1e3
        ))
    })();
    match result {
        Ok(table) => out.push_str(&table),
        Err(e) => out.push_str(&format!("FAILED: {e}\n")),
    }
    out
}

// ---------------------------------------------------------------------------

const USAGE: &str = "\
usage: promptpack-bench [--quick] [--only SECTION[,SECTION…]]
       promptpack-bench --profile CONTENDER [RENDERS]

  --quick      10 rounds of ~2 ms batches instead of 100 of ~20 ms, fewer samples elsewhere
  --only       run only these sections: render, choice, corpus, memory, codegen, reload, catalog,
               live, console, lsp
  --profile    render the first contender whose name contains CONTENDER RENDERS times
               (default 10000) inside `profile_batch`, untimed, and exit; for
               valgrind --tool=callgrind --toggle-collect='*profile_batch*'

Run it through cargo: cargo run --release --manifest-path bench/Cargo.toml -- [ARGS]";

/// The sections of the report, in order.
const SECTIONS: [&str; 10] = [
    "render", "choice", "corpus", "memory", "codegen", "reload", "catalog", "live", "console",
    "lsp",
];

/// What the command line asked for.
enum Command {
    Run(Mode),
    /// Render one contender (the first whose name contains the text) that
    /// many times inside [`profile_batch`], untimed, for callgrind.
    Profile(String, u64),
}

fn parse_args() -> Command {
    let usage = |code| -> ! {
        eprintln!("{USAGE}");
        std::process::exit(code)
    };
    let mut quick = false;
    let mut only: Option<Vec<String>> = None;
    let mut profile: Option<(String, u64)> = None;
    let mut args = std::env::args().skip(1).peekable();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => quick = true,
            "--only" => {
                let Some(list) = args.next() else { usage(2) };
                let list: Vec<String> = list.split(',').map(str::to_owned).collect();
                if let Some(bad) = list.iter().find(|s| !SECTIONS.contains(&s.as_str())) {
                    eprintln!("unknown section {bad:?}");
                    usage(2);
                }
                only.get_or_insert_with(Vec::new).extend(list);
            }
            "--profile" => {
                let Some(name) = args.next() else { usage(2) };
                let n = match args.next_if(|a| !a.starts_with("--")) {
                    Some(n) => n.parse().unwrap_or_else(|_| usage(2)),
                    None => 10_000,
                };
                profile = Some((name, n));
            }
            "--help" | "-h" => usage(0),
            _ => usage(2),
        }
    }
    if let Some((name, n)) = profile {
        return Command::Profile(name, n);
    }
    Command::Run(Mode {
        quick,
        rounds: if quick { 10 } else { 100 },
        batch_target: Duration::from_millis(if quick { 2 } else { 20 }),
        load_samples: if quick { 5 } else { 30 },
        only,
    })
}

/// Runs `n` renders of one contender. Not inlined, so that callgrind can
/// count exactly this: `--toggle-collect='*profile_batch*'`.
#[inline(never)]
fn profile_batch(run: &mut dyn FnMut(u64) -> usize, n: u64) -> usize {
    run(n)
}

fn main() {
    let command = parse_args();
    let dir = translate::workload_dir();
    let setup = (|| -> Result<_, String> {
        let workload = Workload::read(&dir)?;
        let expected_path = dir.join("expected-output.md");
        let expected = std::fs::read_to_string(&expected_path)
            .map_err(|e| format!("{}: {e}", expected_path.display()))?;
        let values = Values::timed(&dir)?;
        Ok((workload, expected, values))
    })();
    let (workload, expected, values) = match setup {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "cannot read the workload at {} (set PROMPTPACK_BENCH_WORKLOAD): {e}",
                dir.display()
            );
            std::process::exit(1);
        }
    };
    let json = values.json();
    let refs = values.value_refs();

    let mode = match command {
        Command::Run(mode) => mode,
        Command::Profile(name, n) => {
            let mut list = contenders(&workload, &expected, &values, &json, &refs);
            list.extend(choice_contenders());
            // The live rows (a catalog in a temporary folder, kept until the end).
            let _live = match live::profile_contenders(&workload, &expected, &values) {
                Ok((dir, live)) => {
                    list.extend(live);
                    Some(dir)
                }
                Err(e) => {
                    eprintln!("live rows not available: {e}");
                    None
                }
            };
            let Some(c) = list.iter_mut().find(|c| c.name.contains(name.as_str())) else {
                eprintln!("no contender's name contains {name:?}");
                std::process::exit(2);
            };
            let State::Ready(run) = &mut c.state else {
                eprintln!("{} is not ready: failed or skipped", c.name);
                std::process::exit(1);
            };
            let bytes = profile_batch(run.as_mut(), n);
            println!("{}: {n} renders, {bytes} bytes", c.name);
            return;
        }
    };

    println!(
        "# promptpack benchmark{}\n",
        if mode.quick { " (--quick)" } else { "" }
    );
    println!("workload: `{}`\n", dir.display());

    if mode.wants("render") {
        let mut list = contenders(&workload, &expected, &values, &json, &refs);
        time_all(&mut list, &mode);
        println!("{}", render_table(&mut list, expected.len(), &mode));
    }
    if mode.wants("choice") {
        println!("{}", choice_section(&mode));
    }
    if mode.wants("corpus") {
        println!("{}", corpus_section(&mode));
    }
    if mode.wants("memory") {
        println!("{}", memory_section());
    }
    if mode.wants("codegen") {
        println!("{}", codegen_section(&mode));
    }
    if mode.wants("reload") {
        println!("{}", reload_section(&mode));
    }
    if mode.wants("catalog") {
        println!("{}", catalog::section(mode.quick));
    }
    if mode.wants("live") {
        println!("{}", live::section(&mode, &workload, &expected, &values));
    }
    if mode.wants("console") {
        println!("{}", console::section(mode.quick));
    }
    if mode.wants("lsp") {
        println!("{}", lsp::section(mode.quick));
    }
}
