//! The straight-line renderer of one part of a prompt: one allocation of
//! exact size, then the pieces pushed in order. No parsing, no lookups, no
//! I/O at render time.

use crate::names::Field;
use crate::rust_source::{Source, char_lit, lit, text_lit};
use promptpack_core::program::{Op, Program, VarKind};
use promptpack_core::render::PartName;

/// The renderer's statements, flat: every `{{#if}}` branch becomes a boolean
/// (an element of the array `__b`, true when the branch renders: its parent
/// renders and its condition holds), and every piece of the output an `if`
/// on one of them. However deep the template nests, the code nests one level,
/// which rustc (whose passes recurse per nested expression and block)
/// handles at any size.
#[derive(Default)]
struct FlatRender {
    /// `__b[N] = …;`, parents before children.
    flags: Vec<String>,
    /// Static bytes per branch; index 0 is the top level, `N` is `__b[N - 1]`.
    static_len: Vec<usize>,
    /// The length of each value pushed, per branch, indexed as `static_len`.
    value_len: Vec<Vec<String>>,
    /// Pushes in output order, each run of one branch together.
    runs: Vec<(usize, Vec<String>)>,
    /// Text not yet pushed, of the branch the last run belongs to.
    pending: String,
}

impl FlatRender {
    /// A new branch under `parent` rendering when `cond` holds.
    fn branch(&mut self, parent: usize, cond: &str) -> usize {
        let n = self.static_len.len();
        let value = if parent == 0 {
            cond.to_string()
        } else {
            format!("{} && {cond}", flag(parent))
        };
        self.flags.push(format!("{} = {value};", flag(n)));
        self.static_len.push(0);
        self.value_len.push(Vec::new());
        n
    }

    /// A value at the end of the output, in branch `at`.
    fn value(&mut self, at: usize, len: String, value: String) {
        self.value_len[at].push(len);
        self.push(at, format!("o.push_str({value});"));
    }

    /// `statement` at the end of the output, in branch `at`.
    fn push(&mut self, at: usize, statement: String) {
        self.flush_text();
        match self.runs.last_mut() {
            Some((branch, run)) if *branch == at => run.push(statement),
            _ => self.runs.push((at, vec![statement])),
        }
    }

    /// Static `text` at the end of the output, in branch `at`: joined with
    /// the text before it when nothing comes between.
    fn text(&mut self, at: usize, text: &str) {
        if text.is_empty() {
            return;
        }
        self.static_len[at] += text.len();
        if self.runs.last().is_none_or(|(branch, _)| *branch != at) {
            self.flush_text();
            self.runs.push((at, Vec::new()));
        }
        self.pending.push_str(text);
    }

    fn flush_text(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.pending);
        let mut chars = text.chars();
        let statement = match (chars.next(), chars.next()) {
            (Some(c), None) => format!("o.push({});", char_lit(c)),
            _ => format!("o.push_str({});", text_lit(&text)),
        };
        if let Some((_, run)) = self.runs.last_mut() {
            run.push(statement);
        }
    }
}

/// Whether branch `n` (from 1) renders: an element of one array, not a
/// local each, since debug info nests a scope per `let` and LLVM overflows
/// its stack on thousands of them.
fn flag(n: usize) -> String {
    format!("__b[{}]", n - 1)
}

/// The length and the text of field `f` as rendered.
fn value_of(f: &Field) -> (String, String) {
    let ident = &f.ident;
    match (f.kind, &f.choice) {
        (VarKind::Optional, _) => (
            format!("self.{ident}.map_or(0, str::len)"),
            format!("self.{ident}.unwrap_or(\"\")"),
        ),
        // A flag is never a value: the struct would type it otherwise; nor
        // is a history, which stands between messages.
        (VarKind::Flag | VarKind::Messages, _) => ("0".into(), "\"\"".into()),
        (VarKind::Choice, _) => (
            format!("self.{ident}.as_str().len()"),
            format!("self.{ident}.as_str()"),
        ),
        (VarKind::OptionalChoice, Some(c)) => (
            format!("self.{ident}.map_or(0, |v| v.as_str().len())"),
            format!("self.{ident}.map_or(\"\", {}::as_str)", c.ident),
        ),
        _ => (format!("self.{ident}.len()"), format!("self.{ident}")),
    }
}

/// The condition of `{{#if}}` on `f` (compared with `equals` when given),
/// and its negation, each without parentheses (rustc warns of those around
/// a `let`'s value).
pub(crate) fn condition_of(f: &Field, equals: Option<&str>) -> (String, String) {
    let ident = &f.ident;
    let variant = equals.and_then(|value| {
        let choice = f.choice.as_ref()?;
        Some((choice, choice.variant(value)?))
    });
    match (f.kind, variant) {
        (VarKind::Choice, Some((c, v))) => (
            format!("self.{ident} == {}::{v}", c.ident),
            format!("self.{ident} != {}::{v}", c.ident),
        ),
        (VarKind::OptionalChoice, Some((c, v))) => (
            format!("self.{ident} == Some({}::{v})", c.ident),
            format!("self.{ident} != Some({}::{v})", c.ident),
        ),
        (VarKind::OptionalChoice, None) => (
            format!("self.{ident}.is_some()"),
            format!("self.{ident}.is_none()"),
        ),
        (VarKind::Flag, _) => (format!("self.{ident}"), format!("!self.{ident}")),
        _ => {
            let truthy = format!("self.{ident}.is_some_and(|v| !v.is_empty())");
            (truthy.clone(), format!("!{truthy}"))
        }
    }
}

/// Writes `pub fn render_{part}(&self) -> Result<String, Error>`, which
/// renders `program` with the struct's `fields` (indexed as the program's
/// variables) within the crate's render bound, through
/// `fn __render_{part}(&self, bound) -> Result<String, usize>`, which
/// measures the output and gives its length instead of allocating past
/// `bound`.
pub(crate) fn render_fn(
    out: &mut Source,
    id: &str,
    part: PartName,
    program: &Program,
    fields: &[Field],
    runtime: &str,
) {
    let part_name = part.as_str();
    let variant = match part {
        PartName::User => "User",
        _ => "System",
    };
    out.doc(&format!(
        "Renders the {part_name} part from the code generated at build time.\n\n\
         Fails with `too_large`, before it allocates, when the output would\n\
         be longer than the render bound set at build time\n\
         (`Config::max_render_bytes`, 16 MiB unless set)."
    ));
    out.open(format!(
        "pub fn render_{part_name}(&self) -> Result<String, {runtime}::Error> {{"
    ));
    out.line(format!(
        "self.__render_{part_name}(__MAX_RENDER_BYTES).map_err(|l| __p::too_large({}, __p::PartName::{variant}, l, __MAX_RENDER_BYTES))",
        lit(id)
    ));
    out.close("}");
    out.line("");
    measured_fn(out, &format!("__render_{part_name}"), program, fields);
}

/// Writes `fn {name}(&self, bound) -> Result<String, usize>`, the
/// straight-line renderer of `program`, which measures the output and gives
/// its length instead of allocating past `bound`.
pub(crate) fn measured_fn(out: &mut Source, name: &str, program: &Program, fields: &[Field]) {
    let mut flat = FlatRender {
        static_len: vec![0],
        value_len: vec![Vec::new()],
        ..FlatRender::default()
    };
    // The open blocks, innermost last: (parent branch, negated condition).
    // No recursion: nesting depth is the template's.
    let mut open: Vec<(usize, String)> = Vec::new();
    let mut current = 0;
    for op in &program.ops {
        match *op {
            Op::Text { start, end } => flat.text(current, program.text_of(start, end)),
            Op::Var(i) => {
                let (len, value) = value_of(&fields[i]);
                flat.value(current, len, value);
            }
            Op::If { cond, equals, .. } => {
                let equals = equals.and_then(|i| program.literals.get(i as usize));
                let (cond, negated) = condition_of(&fields[cond], equals.map(AsRef::as_ref));
                let then = flat.branch(current, &cond);
                open.push((current, negated));
                current = then;
            }
            Op::Else { .. } => {
                if let Some((parent, negated)) = open.last() {
                    let (parent, negated) = (*parent, negated.clone());
                    current = flat.branch(parent, &negated);
                }
            }
            Op::EndIf => {
                if let Some((parent, _)) = open.pop() {
                    current = parent;
                }
            }
        }
    }
    flat.flush_text();
    out.line("/// The part rendered, or its length when that is more than `bound`.");
    out.open(format!(
        "fn {name}(&self, bound: usize) -> Result<String, usize> {{"
    ));
    if flat.runs.is_empty() {
        out.line("let _ = bound;");
        out.line("Ok(String::new())");
        out.close("}");
        return;
    }
    if !flat.flags.is_empty() {
        out.line(format!("let mut __b = [false; {}];", flat.flags.len()));
        for f in &flat.flags {
            out.line(f);
        }
    }
    // Branch lengths without a branch (a length times 0 or 1): each `if` is
    // blocks for LLVM, which a debug build of a deep template pays for.
    let mut lengths: Vec<String> = flat.value_len[0]
        .iter()
        .map(|len| format!("l += {len};"))
        .collect();
    for n in 1..flat.static_len.len() {
        let flag = flag(n);
        if flat.static_len[n] > 0 {
            lengths.push(format!("l += {flag} as usize * {};", flat.static_len[n]));
        }
        for len in &flat.value_len[n] {
            lengths.push(format!("l += {flag} as usize * {len};"));
        }
    }
    // Not `mut` for text alone: rustc would warn in the user's crate.
    let binding = if lengths.is_empty() { "l" } else { "mut l" };
    out.line(format!("let {binding}: usize = {};", flat.static_len[0]));
    for line in &lengths {
        out.line(line);
    }
    out.open("if l > bound {");
    out.line("return Err(l);");
    out.close("}");
    out.line("let mut o = String::with_capacity(l);");
    for (branch, run) in &flat.runs {
        if *branch == 0 {
            for statement in run {
                out.line(statement);
            }
        } else {
            out.open(format!("if {} {{", flag(*branch)));
            for statement in run {
                out.line(statement);
            }
            out.close("}");
        }
    }
    out.line("Ok(o)");
    out.close("}");
}
