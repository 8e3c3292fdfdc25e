//! `promptpack catalog verify`: whether the catalog holds what promptpack
//! wrote. Prints `ok: …` and exits 0, or prints every finding and exits
//! non-zero with `damaged`.

use promptpack::{Error, ErrorCode, Style};
use promptpack_catalog::{Catalog, Contract, VerifyReport};
use std::fmt::Write as _;

/// Verifies the catalog at `url`, and every version of `contract`'s
/// prompts against it when given: what to print when nothing is wrong.
///
/// # Errors
/// `damaged` when something is, after printing the findings on stdout;
/// what connecting or reading the catalog fails with otherwise.
pub(super) fn execute(
    catalog: &mut Catalog,
    contract: Option<&Contract>,
    json: bool,
    style: Style,
) -> Result<String, Error> {
    let report = catalog.verify_with(contract)?;
    let shown = if json {
        as_json(&report)
    } else {
        text(&report)
    };
    if report.is_ok() {
        return Ok(shown);
    }
    crate::print_out(&shown, style);
    let count = report.findings.len();
    let findings = if count == 1 { "finding" } else { "findings" };
    Err(Error::new(
        ErrorCode::Damaged,
        format!("{count} {findings} (listed above): the catalog was changed outside promptpack"),
    ))
}

/// One line per finding, its code first; or `ok: …`.
fn text(report: &VerifyReport) -> String {
    if report.is_ok() {
        return format!(
            "ok: {} versions, {} snippet revisions, guards and migrations checked\n",
            report.versions, report.snippet_revisions
        );
    }
    let codes: Vec<String> = report.findings.iter().map(|f| code(&f.code)).collect();
    let width = codes.iter().map(String::len).max().unwrap_or(0);
    let mut out = String::new();
    for (finding, code) in report.findings.iter().zip(&codes) {
        // The catalog escapes the names it puts in a message already.
        let _ = writeln!(out, "{code:<width$}  {}", finding.message);
    }
    let _ = writeln!(
        out,
        "checked {} versions, {} snippet revisions, {} guards, {} migrations",
        report.versions, report.snippet_revisions, report.guards, report.migrations
    );
    out
}

/// The report as JSON, with `ok`.
fn as_json(report: &VerifyReport) -> String {
    let mut value = serde_json::to_value(report).unwrap_or_default();
    if let Some(object) = value.as_object_mut() {
        object.insert("ok".into(), report.is_ok().into());
    }
    super::to_json(&value)
}

/// A finding's code as its JSON spells it: `hash_mismatch`, `guard`, …
fn code(code: &impl serde::Serialize) -> String {
    match serde_json::to_value(code) {
        Ok(serde_json::Value::String(code)) => code,
        _ => String::new(),
    }
}
