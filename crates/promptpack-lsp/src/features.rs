//! The answers to the editor's requests about a position: hover, go to
//! definition, find references, completion, rename and quick fixes.

use crate::analysis::{Place, Token, Tree, heading_line_start, in_front_matter, token_at, tokens};
use crate::declarations;
use crate::position::{location_range, offset, position, range};
use crate::workspace::{Role, TemplateFile};
use lsp_types::{
    CodeAction, CodeActionKind, CompletionItem, CompletionItemKind, Diagnostic, Hover,
    HoverContents, Location, MarkupContent, MarkupKind, NumberOrString, Position, Range, TextEdit,
    Uri, WorkspaceEdit,
};
use promptpack_core::front_matter::{DeclaredVar, FrontMatter};
use promptpack_core::message::Role as MessageRole;
use promptpack_core::program::VarKind;
use promptpack_core::scan::{FindingKind, ParsedRoleTag, find_tokens, role_tag};
use promptpack_core::sections::Headings;
use promptpack_core::similar::edit_distance;
use promptpack_core::source_file::{SourceFile, Span};
use promptpack_core::syntax::is_var_name;
use std::collections::HashMap;

/// Where a request points: the file, what it is, and the byte offset.
pub(crate) struct At<'s, 'u> {
    pub(crate) tree: &'u Tree<'s>,
    pub(crate) place: Place<'s>,
    pub(crate) offset: usize,
    /// The URI of a file as diagnostics name it.
    pub(crate) uri_of: &'u dyn Fn(&str) -> Option<Uri>,
}

impl<'s> At<'s, '_> {
    /// `position` in `place`.
    pub(crate) fn new<'u>(
        tree: &'u Tree<'s>,
        place: Place<'s>,
        at: Position,
        uri_of: &'u dyn Fn(&str) -> Option<Uri>,
    ) -> At<'s, 'u> {
        let offset = offset(place.file.text(), at);
        At {
            tree,
            place,
            offset,
            uri_of,
        }
    }

    fn text(&self) -> &'s str {
        self.place.file.text()
    }

    fn token(&self) -> Option<Token> {
        token_at(&tokens(self.text(), self.tree.delims), self.offset).cloned()
    }

    /// The well-formed role tag under the cursor (`{{#user}}`,
    /// `{{/assistant}}`, `{{#tool name}}`), wherever it is written.
    fn role_tag(&self) -> Option<ParsedRoleTag<'s>> {
        let text = self.text();
        find_tokens(text, self.tree.delims)
            .iter()
            .filter(|f| f.span.start <= self.offset && self.offset <= f.span.end)
            .find_map(|f| role_tag(f, text))
    }

    /// Whether role tags are blocks in this file: `messages.md`, and a
    /// snippet (one of whole turns is read as a conversation). In
    /// `system.md` and `user.md` they are literal text.
    fn role_tags_are_blocks(&self) -> bool {
        matches!(
            self.place.role,
            Role::Template {
                file: TemplateFile::Messages,
                ..
            } | Role::Snippet { .. }
        )
    }

    fn location(&self, file: &SourceFile, span: Span) -> Option<Location> {
        let uri = (self.uri_of)(file.path())?;
        Some(Location::new(uri, range(file.text(), span.start, span.end)))
    }

    fn front_matter(&self) -> FrontMatter {
        let scope = self.tree.scope(&self.place);
        self.tree.front_matter(&scope, &self.place.role)
    }

    /// The variable named at the cursor: in a token, or a declaration's
    /// `name:` in front matter.
    fn var_name(&self) -> Option<(String, Range)> {
        if let Some(token) = self.token().filter(Token::is_var) {
            let span = token.name?;
            let name = token.name(self.text())?.to_string();
            return Some((name, range(self.text(), span.start, span.end)));
        }
        if in_front_matter(self.place.file, self.offset) {
            let here = position(self.text(), self.offset);
            let vars = self.front_matter().vars.unwrap_or_default();
            return vars.iter().find_map(|v| {
                let r = location_range(&v.at);
                let inside = r.start.line == here.line
                    && r.start.character <= here.character
                    && here.character <= r.end.character;
                (inside && v.at.path() == self.place.file.path()).then(|| (v.name.clone(), r))
            });
        }
        None
    }
}

/// Hover: a variable's declaration and uses (a history's too), a snippet's
/// or section's text, the response `{{schema:response}}` prints, a choice's values, what a role tag is, a template's
/// token range on its first line.
pub(crate) fn hover(
    at: &At<'_, '_>,
    token_range: &dyn Fn(&str) -> Option<String>,
) -> Option<Hover> {
    let markdown = |value: String| Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range: None,
    };
    if let Some(token) = at.token()
        && token.finding.kind == FindingKind::Snippet
    {
        let name = token.name(at.text())?;
        let file = at.tree.snippet(name)?;
        let section = token.section.and_then(|s| at.text().get(s.start..s.end));
        let (title, body) = match section {
            Some(section) => {
                let list = Headings::of(file);
                let heading = list.list.get(list.find(section)?)?;
                let text = file
                    .text()
                    .get(heading.section.start..heading.section.end)?;
                (
                    format!("snippet `{name}`, section `#{section}`"),
                    text.trim(),
                )
            }
            None => (format!("snippet `{name}` ({})", file.path()), file.body()),
        };
        return Some(markdown(format!(
            "**{title}**\n\n```markdown\n{}\n```",
            fence_safe(body)
        )));
    }
    if let Some(token) = at.token()
        && token.finding.kind == FindingKind::Schema
    {
        return Some(markdown(describe_schema_token(at)));
    }
    if let Some(tag) = at.role_tag() {
        return Some(markdown(describe_role_tag(at, tag)));
    }
    if let Some((name, _)) = at.var_name() {
        return Some(markdown(describe_var(at, &name)));
    }
    if in_front_matter(at.place.file, at.offset) {
        let here = position(at.text(), at.offset);
        let declared = declarations::hover(&at.front_matter(), at.place.file.path(), here);
        if let Some(text) = declared {
            return Some(markdown(text));
        }
    }
    if let Role::Template { id, .. } = &at.place.role
        && position(at.text(), at.offset).line == 0
    {
        let counted = token_range(id)?;
        return Some(markdown(format!("**prompt `{id}`**: {counted}")));
    }
    None
}

/// What `{{schema:response}}` prints here: the prompt's response, as the
/// model will read it; in a snippet, the response of each prompt that
/// includes it.
fn describe_schema_token(at: &At<'_, '_>) -> String {
    let title = "**the prompt's response schema**, printed here as text";
    match &at.place.role {
        Role::Template { id, .. } => match at.front_matter().response {
            Some(response) => format!(
                "{title}:\n\n```ts\n{}\n```",
                fence_safe(&response.describe())
            ),
            None => {
                format!("{title}, but prompt `{id}` declares no `response:` in its front matter")
            }
        },
        Role::Snippet { .. } => {
            format!("{title}: the `response:` of each prompt that includes this snippet")
        }
    }
}

/// What a message of `role` is, in a line.
fn role_meaning(role: MessageRole, name: Option<&str>) -> String {
    match (role, name) {
        (MessageRole::User, _) => "a **user** message: what the person (or the program) asking says".into(),
        (MessageRole::Assistant, _) => {
            "an **assistant** message: the model's answer, here an example of one (a few-shot turn)"
                .into()
        }
        (MessageRole::System, _) => {
            "a **system** message: instructions to the model, within the conversation (`system.md` is the first)"
                .into()
        }
        (MessageRole::Tool, Some(name)) => format!(
            "a **tool** result: what tool `{name}` returned to the assistant's call, shown as an example"
        ),
        (MessageRole::Call, Some(name)) => format!(
            "a **call**: the assistant calling tool `{name}`, shown as an example; its text is the arguments, JSON the build checks against the tool's parameters"
        ),
        (MessageRole::Call, None) => {
            "a **call**: the assistant calling a tool, shown as an example; its text is the arguments as JSON"
                .into()
        }
        (_, _) => "a **tool** result: what a tool returned, shown as an example".into(),
    }
}

/// A role tag's hover: the role, and whether the tag is a block here.
fn describe_role_tag(at: &At<'_, '_>, tag: ParsedRoleTag<'_>) -> String {
    let (open, close) = (at.tree.delims.open(), at.tree.delims.close());
    let written = match (tag.opens, tag.name) {
        (true, Some(name)) => format!("{open}#{} {name}{close}", tag.role),
        (true, None) => format!("{open}#{}{close}", tag.role),
        (false, _) => format!("{open}/{}{close}", tag.role),
    };
    let meaning = role_meaning(tag.role, tag.name);
    if !at.role_tags_are_blocks() {
        return format!(
            "**`{written}`** is literal text here: role tags are blocks only in `messages.md` \
             (and the snippets of whole turns it includes), where it would open {meaning}"
        );
    }
    if tag.opens {
        format!(
            "**`{written}`** opens {meaning}.\n\nIts content is the lines up to \
             `{open}/{}{close}`; the tags' own lines are not part of it.",
            tag.role
        )
    } else {
        format!("**`{written}`** closes {meaning}.")
    }
}

/// A variable's hover: kind, description, example, choice values, uses.
fn describe_var(at: &At<'_, '_>, name: &str) -> String {
    let front_matter = at.front_matter();
    let declared = front_matter.declared(name);
    let mut out = format!("**`{name}`**");
    match declared {
        Some(var) => {
            let kind = var
                .kind
                .map_or("no kind declared (its uses decide)", VarKind::as_str);
            out.push_str(&format!(": {kind}"));
            if let Some(description) = &var.description {
                out.push_str(&format!("\n\n{description}"));
            }
            if var.kind == Some(VarKind::Messages) {
                out.push_str(
                    "\n\nthe history: a list of messages (role and content) given with the \
                     values, sent where it stands between the messages of `messages.md`, \
                     each as given",
                );
            }
            if let Some(values) = &var.values {
                let listed: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
                out.push_str(&format!("\n\nvalues: {}", listed.join(", ")));
            }
            if let Some(example) = &var.example {
                let shown = match example {
                    serde_json::Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                out.push_str(&format!("\n\nexample: `{shown}`"));
            }
        }
        None if front_matter.vars.is_some() => out.push_str(": not declared under `vars:`"),
        None => out.push_str(": undeclared (this prompt declares no `vars:`)"),
    }
    let scope = at.tree.scope(&at.place);
    let uses = at.tree.var_uses(&scope, name);
    if !uses.is_empty() {
        let places: Vec<String> = uses
            .iter()
            .map(|(file, span)| {
                let p = position(file.text(), span.start);
                format!("- {}:{}:{}", file.path(), p.line + 1, p.character + 1)
            })
            .collect();
        out.push_str(&format!("\n\nused at:\n{}", places.join("\n")));
    }
    out
}

/// A text shown in a fenced block, with its own fences kept from closing it.
fn fence_safe(text: &str) -> String {
    text.replace("```", "`\u{200b}``")
}

/// Go to definition: a snippet include → the snippet file, or its heading
/// line for a section; a variable → its declaration in front matter (a
/// history too); a role block's closing tag → its opening tag.
pub(crate) fn definition(at: &At<'_, '_>) -> Option<Location> {
    if at.role_tags_are_blocks()
        && let Some(tag) = at.role_tag().filter(|t| !t.opens)
    {
        // The opening tag the message began with: the last one before the
        // cursor (a message holds no other, so no nesting to count).
        let text = at.text();
        let opened = find_tokens(text, at.tree.delims)
            .into_iter()
            .filter(|f| f.span.start < at.offset)
            .rfind(|f| role_tag(f, text).is_some_and(|t| t.opens && t.role == tag.role))?;
        return at.location(at.place.file, opened.span);
    }
    if let Some(token) = at
        .token()
        .filter(|t| t.finding.kind == FindingKind::Snippet)
    {
        let file = at.tree.snippet(token.name(at.text())?)?;
        let section = token.section.and_then(|s| at.text().get(s.start..s.end));
        let start = match section {
            Some(section) => {
                let list = Headings::of(file);
                let heading = list.list.get(list.find(section)?)?;
                heading_line_start(file.text(), heading.section.start)
            }
            None => 0,
        };
        return at.location(file, Span { start, end: start });
    }
    let (name, _) = at.var_name()?;
    let declared = at.front_matter().declared(&name)?.at.clone();
    let uri = (at.uri_of)(declared.path())?;
    Some(Location::new(uri, location_range(&declared)))
}

/// Find references: of a snippet (an include, or anywhere in the snippet's
/// own file) every include of it; of a variable every use in the prompt's
/// files, with its declaration when asked.
pub(crate) fn references(at: &At<'_, '_>, with_declaration: bool) -> Vec<Location> {
    let token = at.token();
    let snippet = match (&token, &at.place.role) {
        (Some(t), _) if t.finding.kind == FindingKind::Snippet => {
            t.name(at.text()).map(str::to_string)
        }
        (None, Role::Snippet { name }) if !in_front_matter(at.place.file, at.offset) => {
            Some(name.clone())
        }
        _ => None,
    };
    if let Some(name) = snippet {
        return at
            .tree
            .includes_of(&name)
            .into_iter()
            .filter_map(|(file, span)| at.location(file, span))
            .collect();
    }
    let Some((name, _)) = at.var_name() else {
        return Vec::new();
    };
    let scope = at.tree.scope(&at.place);
    let mut found: Vec<Location> = Vec::new();
    if with_declaration && let Some(var) = at.front_matter().declared(&name) {
        found.extend(
            (at.uri_of)(var.at.path()).map(|uri| Location::new(uri, location_range(&var.at))),
        );
    }
    found.extend(
        at.tree
            .var_uses(&scope, &name)
            .into_iter()
            .filter_map(|(file, span)| at.location(file, span)),
    );
    found
}

/// The keys front matter knows at its top level.
const TOP_KEYS: [(&str, &str); 7] = [
    (
        "description",
        "one line: the rustdoc of the prompt and its vars struct",
    ),
    (
        "vars",
        "the declared variables: a contract every use must keep",
    ),
    (
        "examples",
        "named sets of values, for `render --example` and snapshots",
    ),
    ("max_tokens", "the budget of the rendered prompt, in tokens"),
    (
        "model",
        "free-form model settings, passed to the application",
    ),
    ("config", "free-form, passed through"),
    ("metadata", "free-form, passed through"),
];

/// The keys of one declared variable.
const VAR_KEYS: [(&str, &str); 4] = [
    (
        "kind",
        "text, flag, optional, choice, optional_choice or messages",
    ),
    ("description", "the field's rustdoc"),
    ("example", "a value to render examples with"),
    ("values", "every value a choice takes"),
];

/// Completion at the cursor: in a token, variables, snippet names, heading
/// slugs, choice values and block keywords; in front matter, keys and kinds.
pub(crate) fn completion(at: &At<'_, '_>) -> Vec<CompletionItem> {
    let text = at.text();
    let line_start = text
        .get(..at.offset)
        .and_then(|b| b.rfind('\n'))
        .map_or(0, |i| i + 1);
    let before = text.get(line_start..at.offset).unwrap_or("");
    if in_front_matter(at.place.file, at.offset) {
        return front_matter_completion(before);
    }
    let open = at.tree.delims.open();
    let close = at.tree.delims.close();
    let Some(start) = before.rfind(open) else {
        return Vec::new();
    };
    let typed = &before[start + open.len()..];
    if typed.contains(close) {
        return Vec::new();
    }
    let item = |label: &str, kind: CompletionItemKind, detail: String| CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail: Some(detail),
        ..CompletionItem::default()
    };
    if typed.starts_with("schema:") {
        return vec![item(
            "response",
            CompletionItemKind::KEYWORD,
            "prints the response schema the front matter declares".to_string(),
        )];
    }
    if let Some(target) = typed.strip_prefix("snippet:") {
        if let Some((name, _)) = target.split_once('#') {
            let Some(file) = at.tree.snippet(name) else {
                return Vec::new();
            };
            return Headings::of(file)
                .list
                .iter()
                .map(|h| {
                    item(
                        h.name(),
                        CompletionItemKind::REFERENCE,
                        format!("a section of `{name}`"),
                    )
                })
                .collect();
        }
        return at
            .tree
            .sources
            .snippets
            .iter()
            .map(|s| item(&s.name, CompletionItemKind::FILE, s.file.path().to_string()))
            .collect();
    }
    let front_matter = at.front_matter();
    let condition = typed
        .strip_prefix("#if ")
        .or_else(|| typed.strip_prefix("else if "));
    if let Some((name, _)) = condition.and_then(|c| c.split_once(" ==")) {
        let values = front_matter
            .declared(name)
            .and_then(|v| v.values.clone())
            .unwrap_or_default();
        return values
            .iter()
            .map(|v| CompletionItem {
                insert_text: Some(if typed.ends_with('"') {
                    v.clone()
                } else {
                    format!(" \"{v}\"")
                }),
                ..item(
                    v,
                    CompletionItemKind::ENUM_MEMBER,
                    format!("a value of `{name}`"),
                )
            })
            .collect();
    }
    let mut items: Vec<CompletionItem> = variables(at, &front_matter)
        .into_iter()
        .map(|(name, detail)| item(&name, CompletionItemKind::VARIABLE, detail))
        .collect();
    if condition.is_none() {
        for (keyword, detail) in [
            ("#if ", "a block: `#if name` or `#if name == \"value\"`"),
            ("else", "the other branch"),
            ("else if ", "another condition"),
            ("/if", "closes the block"),
            ("snippet:", "includes a snippet"),
            (
                "schema:response",
                "prints the response schema the front matter declares",
            ),
        ] {
            items.push(item(
                keyword,
                CompletionItemKind::KEYWORD,
                detail.to_string(),
            ));
        }
        if at.role_tags_are_blocks() {
            let (close, open) = role_tag_items(at, line_start + start);
            // The message open here is what most likely closes next: its
            // closing tag leads the list.
            items.splice(0..0, close);
            items.extend(open);
        }
    }
    items
}

/// The role tags to offer in a conversation's file: the closing tag of the
/// message open at `before` (the byte where the tag being typed starts),
/// if one is, and each role's opening tag.
fn role_tag_items(at: &At<'_, '_>, before: usize) -> (Option<CompletionItem>, Vec<CompletionItem>) {
    let text = at.text().get(..before).unwrap_or("");
    let mut open: Option<MessageRole> = None;
    for finding in find_tokens(text, at.tree.delims) {
        if let Some(tag) = role_tag(&finding, text) {
            open = tag.opens.then_some(tag.role);
        }
    }
    let close = open.map(|role| CompletionItem {
        label: format!("/{role}"),
        kind: Some(CompletionItemKind::KEYWORD),
        detail: Some(format!("closes the {role} message")),
        // Sorted first by editors that sort, as it is listed first.
        sort_text: Some("0".to_string()),
        ..CompletionItem::default()
    });
    let mut items = Vec::new();
    for role in MessageRole::ALL {
        let label = if role.takes_name() {
            format!("#{role} ")
        } else {
            format!("#{role}")
        };
        let meaning = role_meaning(role, None).replace("**", "");
        items.push(CompletionItem {
            label,
            kind: Some(CompletionItemKind::KEYWORD),
            detail: Some(format!("opens {meaning}")),
            ..CompletionItem::default()
        });
    }
    (close, items)
}

/// The variables to offer: the declared ones, else those the scope uses
/// (and those too when only a history is declared, which makes no contract
/// of the other variables).
fn variables(at: &At<'_, '_>, front_matter: &FrontMatter) -> Vec<(String, String)> {
    let mut offered: Vec<(String, String)> = Vec::new();
    if let Some(vars) = &front_matter.vars {
        offered.extend(vars.iter().map(|v| (v.name.clone(), kind_detail(v))));
        if vars.iter().any(|v| v.kind != Some(VarKind::Messages)) {
            return offered;
        }
    }
    let mut names: Vec<String> = offered.iter().map(|(n, _)| n.clone()).collect();
    let declared = names.len();
    for file in at.tree.scope(&at.place) {
        for token in tokens(file.text(), at.tree.delims) {
            if let Some(name) = token.name(file.text()).filter(|_| token.is_var())
                && !names.iter().any(|n| n == name)
            {
                names.push(name.to_string());
            }
        }
    }
    offered.extend(
        names
            .into_iter()
            .skip(declared)
            .map(|n| (n, "used in this prompt".to_string())),
    );
    offered
}

fn kind_detail(var: &DeclaredVar) -> String {
    let kind = var.kind.map_or("no kind declared", VarKind::as_str);
    match &var.description {
        Some(d) => format!("{kind}: {d}"),
        None => kind.to_string(),
    }
}

fn front_matter_completion(before: &str) -> Vec<CompletionItem> {
    let keyword = |(label, detail): (&str, &str)| CompletionItem {
        label: label.to_string(),
        kind: Some(CompletionItemKind::PROPERTY),
        detail: Some(detail.to_string()),
        insert_text: Some(format!("{label}: ")),
        ..CompletionItem::default()
    };
    let trimmed = before.trim_start();
    if let Some(after) = trimmed.strip_prefix("kind:") {
        let _ = after;
        return [
            "text",
            "flag",
            "optional",
            "choice",
            "optional_choice",
            "messages",
        ]
        .iter()
        .map(|k| CompletionItem {
            label: (*k).to_string(),
            kind: Some(CompletionItemKind::ENUM_MEMBER),
            ..CompletionItem::default()
        })
        .collect();
    }
    if trimmed.contains(':') {
        return Vec::new();
    }
    if before.starts_with(' ') || before.starts_with('-') || trimmed.starts_with('-') {
        VAR_KEYS.into_iter().map(keyword).collect()
    } else {
        TOP_KEYS.into_iter().map(keyword).collect()
    }
}

/// The range of the variable name to rename at the cursor.
pub(crate) fn prepare_rename(at: &At<'_, '_>) -> Option<Range> {
    at.var_name().map(|(_, r)| r)
}

// lsp-types keys a `WorkspaceEdit` by `Uri`, whose interior cell caches a
// parse of the text and plays no part in its hash or equality.
#[allow(clippy::mutable_key_type)]
/// Renames the variable at the cursor in every file of its scope: each
/// use, its declaration under `vars:` and its key in each example.
pub(crate) fn rename(at: &At<'_, '_>, new_name: &str) -> Result<Option<WorkspaceEdit>, String> {
    let Some((old, _)) = at.var_name() else {
        return Ok(None);
    };
    if !is_var_name(new_name) {
        return Err(format!(
            "`{new_name}` is not a variable name: letters, digits and `_`, not starting with a digit"
        ));
    }
    let scope = at.tree.scope(&at.place);
    let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
    let mut add = |path: &str, r: Range| {
        if let Some(uri) = (at.uri_of)(path) {
            changes
                .entry(uri)
                .or_default()
                .push(TextEdit::new(r, new_name.to_string()));
        }
    };
    for (file, span) in at.tree.var_uses(&scope, &old) {
        add(file.path(), range(file.text(), span.start, span.end));
    }
    let front_matter = at.front_matter();
    let declared = front_matter
        .vars
        .iter()
        .flatten()
        .filter(|v| v.name == old)
        .map(|v| &v.at);
    let in_examples = front_matter
        .examples
        .iter()
        .filter_map(|e| e.key_location(&old));
    for key in declared.chain(in_examples) {
        add(key.path(), location_range(key));
    }
    Ok(Some(WorkspaceEdit::new(changes)))
}

/// Quick fixes for `diagnostics` of `file`: the suggestion of a
/// "did you mean" in place of the typo, and a declaration for an
/// undeclared variable.
pub(crate) fn quick_fixes(
    file: &SourceFile,
    front_matter: &FrontMatter,
    uri: &Uri,
    diagnostics: &[Diagnostic],
) -> Vec<CodeAction> {
    let mut actions = Vec::new();
    for diagnostic in diagnostics {
        let code = match &diagnostic.code {
            Some(NumberOrString::String(code)) => code.as_str(),
            _ => continue,
        };
        let fix = |title: String, edits: Vec<TextEdit>, preferred: bool| CodeAction {
            title,
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![diagnostic.clone()]),
            edit: Some(WorkspaceEdit::new(HashMap::from([(uri.clone(), edits)]))),
            is_preferred: Some(preferred),
            ..CodeAction::default()
        };
        if let Some(edit) = typo_fix(file, diagnostic) {
            actions.push(fix(
                format!("Change to `{}`", edit.new_text),
                vec![edit],
                true,
            ));
        }
        if code == "undeclared_var" {
            let name = backticked(&diagnostic.message).into_iter().next();
            if let Some((name, edit)) =
                name.and_then(|n| declare(file, front_matter, n).map(|e| (n, e)))
            {
                actions.push(fix(
                    format!("Declare `{name}` under `vars:`"),
                    vec![edit],
                    false,
                ));
            }
        }
    }
    actions
}

/// The words of `message` between backticks, in order.
fn backticked(message: &str) -> Vec<&str> {
    message.split('`').skip(1).step_by(2).collect()
}

/// The edit a "did you mean `x`?" help asks for: the word of the
/// diagnostic's range nearest to `x` (the typo) replaced by it.
fn typo_fix(file: &SourceFile, diagnostic: &Diagnostic) -> Option<TextEdit> {
    let (_, help) = diagnostic.message.split_once("\nhelp: ")?;
    let suggestion = help.strip_prefix("did you mean ")?;
    let suggestion = suggestion
        .strip_prefix('`')
        .and_then(|s| s.split_once('`'))
        .or_else(|| suggestion.strip_prefix('"').and_then(|s| s.split_once('"')))
        .map(|(s, _)| s)?;
    let text = file.text();
    let start = offset(text, diagnostic.range.start);
    let end = offset(text, diagnostic.range.end);
    let covered = text.get(start..end)?;
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    let (at, wrong) = covered
        .match_indices(|c: char| !is_word(c))
        .map(|(i, sep)| i + sep.len())
        .chain(std::iter::once(0))
        .filter_map(|i| {
            let word = covered.get(i..)?;
            let len = word.find(|c: char| !is_word(c)).unwrap_or(word.len());
            let word = &word[..len];
            (!word.is_empty() && word != suggestion).then_some((i, word))
        })
        .min_by_key(|(_, word)| edit_distance(word, suggestion))?;
    let at = start + at;
    Some(TextEdit::new(
        range(text, at, at + wrong.len()),
        suggestion.to_string(),
    ))
}

/// An edit declaring `name` under the `vars:` of `file`'s front matter,
/// where the prompt declares its variables, with no kind (its uses say
/// which it is) for its author to describe.
fn declare(file: &SourceFile, front_matter: &FrontMatter, name: &str) -> Option<TextEdit> {
    let at = front_matter.location_of("vars")?;
    if at.path() != file.path() {
        return None;
    }
    let text = file.text();
    let line = at.line().saturating_sub(1);
    let vars_line = text.lines().nth(line)?;
    let next = text.lines().nth(line + 1).unwrap_or("");
    let next_indent = &next[..next.len() - next.trim_start().len()];
    let indent = if next_indent.is_empty() {
        "  "
    } else {
        next_indent
    };
    let (_, value) = vars_line.split_once(':')?;
    match value.split('#').next().unwrap_or("").trim() {
        "" => {
            let below = Position::new(as_line(line + 1), 0);
            Some(TextEdit::new(
                Range::new(below, below),
                format!("{indent}{name}:\n"),
            ))
        }
        "{}" => {
            let whole = Range::new(
                Position::new(as_line(line), 0),
                Position::new(as_line(line), utf16_len(vars_line)),
            );
            Some(TextEdit::new(whole, format!("vars:\n{indent}{name}:")))
        }
        // A flow map written on one line: left to its author.
        _ => None,
    }
}

fn as_line(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn utf16_len(text: &str) -> u32 {
    as_line(text.chars().map(char::len_utf16).sum())
}
