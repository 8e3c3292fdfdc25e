//! Tools and responses in the editor, on a copy of `tests/fixtures/conversation`
//! whose `templates/support/system.md` is given front matter declaring a
//! tool and a response: a mistake in the schema is shown at its line as
//! you type, and a field or a tool hovers with what the model is sent.

use crate::support;

use support::{Editor, hover_text};

const SYSTEM: &str = "templates/support/system.md";

const DECLARED: &str = "---
tools:
  order_status:
    description: Looks an order up
    parameters:
      order: string, the order number
response:
  reply: string, what the customer reads
  refund?:
    amount: number, in euros
---
You answer customers of {{product}}.
";

#[test]
fn a_schema_mistake_is_shown_at_its_line_as_you_type() {
    let mut editor = Editor::start("conversation");
    editor.open(SYSTEM);
    editor.replace(SYSTEM, DECLARED);
    assert!(
        editor
            .shown()
            .iter()
            .all(|(_, _, _, code, _)| code != "invalid_schema"),
        "a well-formed declaration shows nothing"
    );
    editor.replace(SYSTEM, &DECLARED.replace("amount: number", "amount: nmber"));
    let shown = editor.shown();
    let mistake = shown
        .iter()
        .find(|(_, _, _, code, _)| code == "invalid_schema")
        .unwrap_or_else(|| panic!("no invalid_schema in {shown:?}"));
    assert_eq!(
        (mistake.0.as_str(), mistake.1, mistake.2),
        (SYSTEM, 10, 13),
        "{mistake:?}"
    );
    assert!(mistake.4.contains("`nmber` is not a type"), "{mistake:?}");
    // A tool without a description is a warning at its name.
    editor.replace(
        SYSTEM,
        &DECLARED.replace("    description: Looks an order up\n", ""),
    );
    let shown = editor.shown();
    assert!(
        shown.iter().any(|(file, line, _, code, _)| file == SYSTEM
            && *line == 3
            && code == "undescribed_tool"),
        "{shown:?}"
    );
    editor.shutdown();
}

#[test]
fn a_field_or_a_tool_hovers_with_what_the_model_is_sent() {
    let mut editor = Editor::start("conversation");
    editor.open(SYSTEM);
    editor.replace(SYSTEM, DECLARED);
    // `amount` on line 10 (0-based 9).
    let amount = hover_text(&mut editor, SYSTEM, 9, 5);
    for part in [
        "**response field `refund.amount`**: a number",
        "in euros",
        "\"type\": \"number\"",
    ] {
        assert!(amount.contains(part), "{part} in {amount}");
    }
    let refund = hover_text(&mut editor, SYSTEM, 8, 3);
    assert!(refund.contains("optional"), "{refund}");
    assert!(refund.contains("\"anyOf\""), "{refund}");
    let tool = hover_text(&mut editor, SYSTEM, 2, 4);
    assert!(
        tool.starts_with("**tool `order_status`**: Looks an order up"),
        "{tool}"
    );
    let argument = hover_text(&mut editor, SYSTEM, 5, 7);
    assert!(
        argument.starts_with("**order_status argument `order`**: a string"),
        "{argument}"
    );
    editor.shutdown();
}
