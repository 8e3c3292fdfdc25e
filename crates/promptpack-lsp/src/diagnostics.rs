//! The check's findings as the protocol's diagnostics, one list per file,
//! and which lists changed since they were last published.

use crate::position::location_range;
use crate::uri;
use crate::workspace::Workspace;
use lsp_types::{DiagnosticSeverity, NumberOrString, Uri};
use promptpack_build::{CONFIG_FILE, Diagnostic};
use std::collections::BTreeMap;

/// Diagnostics by file URI.
pub(crate) type ByFile = BTreeMap<String, Vec<lsp_types::Diagnostic>>;

/// The protocol's diagnostics of `errors` and `warnings`, by the file each
/// is in. One with no file is shown on `promptpack.toml`, where the tree's
/// settings are.
pub(crate) fn by_file(
    workspace: &Workspace,
    errors: &[Diagnostic],
    warnings: &[Diagnostic],
) -> ByFile {
    let mut files = ByFile::new();
    let tagged = errors
        .iter()
        .map(|d| (d, DiagnosticSeverity::ERROR))
        .chain(warnings.iter().map(|d| (d, DiagnosticSeverity::WARNING)));
    for (diagnostic, severity) in tagged {
        let shown = diagnostic
            .location
            .as_ref()
            .map_or(CONFIG_FILE, |l| l.path());
        let Some(address) = uri::from_path(&workspace.absolute(shown)) else {
            continue;
        };
        let converted = convert(diagnostic, severity);
        let list = files.entry(address.as_str().to_string()).or_default();
        // The build tells some problems once per prompt that meets them;
        // an editor shows each once.
        if !list.contains(&converted) {
            list.push(converted);
        }
    }
    files
}

/// One diagnostic as the protocol has it: the code as `code`, the help
/// line under the message.
fn convert(diagnostic: &Diagnostic, severity: DiagnosticSeverity) -> lsp_types::Diagnostic {
    let range = diagnostic
        .location
        .as_ref()
        .map(location_range)
        .unwrap_or_default();
    let message = match &diagnostic.help {
        Some(help) => format!("{}\nhelp: {help}", diagnostic.message),
        None => diagnostic.message.clone(),
    };
    lsp_types::Diagnostic {
        range,
        severity: Some(severity),
        code: Some(NumberOrString::String(diagnostic.code.as_str().to_string())),
        source: Some("promptpack".to_string()),
        message,
        ..lsp_types::Diagnostic::default()
    }
}

/// The lists to publish going from `before` to `now`: each file whose list
/// changed, and an empty list for each file that had some and has none.
pub(crate) fn changes(before: &ByFile, now: &ByFile) -> Vec<(Uri, Vec<lsp_types::Diagnostic>)> {
    let mut out = Vec::new();
    for (address, list) in now {
        if before.get(address) != Some(list) {
            out.extend(parse(address).map(|u| (u, list.clone())));
        }
    }
    for address in before.keys() {
        if !now.contains_key(address) {
            out.extend(parse(address).map(|u| (u, Vec::new())));
        }
    }
    out
}

fn parse(address: &str) -> Option<Uri> {
    address.parse().ok()
}
