//! Whether a program can read what a prompt version asks the model for:
//! the rules a live version's response and tools are judged by against the
//! types a binary was compiled with (README, "Tools and responses").
//!
//! The program reads an answer into its generated type, which ignores
//! fields it does not know and needs every field it has. So a version may
//! add a nullable field (the program drops it), narrow an enum, make a
//! nullable field required, or describe anything differently; it may not
//! drop or rename a field the type has, change a type, widen an enum, let
//! a field be null the type cannot hold, or add a required field (the
//! model would be made to produce what the program never reads: a version
//! that needs a new field needs a new build).

use super::{Schema, SchemaKind, Tool};
use crate::error::Location;

/// One way a version's shape leaves what the program reads.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unreadable {
    /// Where in the value: `$.refund.amount` (`$` the whole response or
    /// the tool's arguments).
    pub path: String,
    /// What changed, in a sentence that starts after the path.
    pub message: String,
    /// Where the version declares it, when it does.
    pub at: Option<Location>,
}

/// Every way values of `version`'s shape could fail to read as `program`'s
/// (empty: every answer under `version` reads).
pub fn unreadable(version: &Schema, program: &Schema) -> Vec<Unreadable> {
    let mut found = Vec::new();
    compare(version, program, "$", None, &mut found);
    found
}

/// How a version's tool leaves the program's.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolProblem {
    /// The program has no type for the tool, so a call to it could not be
    /// read.
    Unknown {
        /// The tool.
        name: String,
        /// Where the version declares it.
        at: Location,
    },
    /// The program could not read the tool's arguments.
    Arguments {
        /// The tool.
        name: String,
        /// How, `$` being the arguments.
        problem: Unreadable,
    },
}

/// Every way `version`'s tools leave `program`'s. A tool the version drops
/// is fine (the model will not call it).
pub fn unreadable_tools(version: &[Tool], program: &[Tool]) -> Vec<ToolProblem> {
    let mut found = Vec::new();
    for tool in version {
        match program.iter().find(|p| p.name == tool.name) {
            Some(known) => {
                let mut problems = Vec::new();
                compare(
                    &tool.parameters,
                    &known.parameters,
                    "$",
                    Some(&tool.at),
                    &mut problems,
                );
                found.extend(problems.into_iter().map(|problem| ToolProblem::Arguments {
                    name: tool.name.clone(),
                    problem,
                }));
            }
            None => found.push(ToolProblem::Unknown {
                name: tool.name.clone(),
                at: tool.at.clone(),
            }),
        }
    }
    found
}

fn compare(
    version: &Schema,
    program: &Schema,
    path: &str,
    at: Option<&Location>,
    found: &mut Vec<Unreadable>,
) {
    let mut problem = |message: String| {
        found.push(Unreadable {
            path: path.to_string(),
            message,
            at: at.cloned(),
        });
    };
    if version.nullable && !program.nullable {
        problem("may be null, which the program's type cannot hold".to_string());
    }
    match (&version.kind, &program.kind) {
        (SchemaKind::String, SchemaKind::String)
        | (SchemaKind::Integer, SchemaKind::Integer | SchemaKind::Number)
        | (SchemaKind::Number, SchemaKind::Number)
        | (SchemaKind::Boolean, SchemaKind::Boolean)
        | (SchemaKind::Enum(_), SchemaKind::String) => {}
        (SchemaKind::Enum(values), SchemaKind::Enum(known)) => {
            let added: Vec<String> = values
                .iter()
                .filter(|v| !known.contains(v))
                .map(|v| format!("{v:?}"))
                .collect();
            if !added.is_empty() {
                problem(format!(
                    "takes {}, which the program's enum has no variant for",
                    added.join(", ")
                ));
            }
        }
        (SchemaKind::Array(item), SchemaKind::Array(known)) => {
            compare(item, known, &format!("{path}[]"), at, found);
        }
        (SchemaKind::Object(properties), SchemaKind::Object(known)) => {
            for field in known {
                if !properties.iter().any(|p| p.name == field.name) {
                    found.push(Unreadable {
                        path: format!("{path}.{}", field.name),
                        message: "is gone, and the program's type needs it".to_string(),
                        at: at.cloned(),
                    });
                }
            }
            for property in properties {
                let child = format!("{path}.{}", property.name);
                match known.iter().find(|k| k.name == property.name) {
                    Some(field) => compare(
                        &property.schema,
                        &field.schema,
                        &child,
                        Some(&property.at),
                        found,
                    ),
                    None if property.schema.nullable => {}
                    None => found.push(Unreadable {
                        path: child,
                        message: "is a new required field, which the program's type does not read"
                            .to_string(),
                        at: Some(property.at.clone()),
                    }),
                }
            }
        }
        (kind, known) => problem(format!(
            "is {}, where the program's type reads {}",
            kind.wanted(),
            known.wanted()
        )),
    }
}
