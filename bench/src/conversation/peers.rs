//! The conversation through the engines that are not promptpack: minijinja (a template per
//! message, the conversation's control flow in Rust) and Prompty (one `.prompty` file with role
//! markers and a `kind: thread` input, rendered, parsed and expanded by `prompty::prepare`).

use super::text::{self, EXAMPLES, LAST, SHOW_EXAMPLES, SYSTEM, TEXTS};
use crate::harness::err;
use promptpack::Message;

/// The values as one JSON object, the history (`history`) as an array of `{"role",
/// "content"}`: what `Library::build_prompt` and Prompty take.
pub fn json_values() -> serde_json::Value {
    let mut map = serde_json::Map::new();
    for (name, value) in TEXTS {
        map.insert(name.to_owned(), value.into());
    }
    map.insert("showExamples".to_owned(), SHOW_EXAMPLES.into());
    map.insert(
        "history".to_owned(),
        text::history_texts()
            .map(|(role, content)| serde_json::json!({ "role": role.as_str(), "content": content }))
            .collect(),
    );
    serde_json::Value::Object(map)
}

/// minijinja as a user of it would write a conversation: minijinja has no notion of messages,
/// so each message is a template of its own (registered once in an `Environment`, as files
/// would be), and the conversation's shape is Rust: the system message, the few-shot turns
/// behind an `if`, the history cloned in, the last message. Each template renders into a
/// `String` of its own, with one context (the values, built once and reused) for all.
pub struct MiniJinja {
    env: minijinja::Environment<'static>,
    ctx: minijinja::Value,
    show_examples: bool,
    history: &'static [Message],
}

/// The templates' names: the system message, the four few-shot turns, the last message.
const NAMES: [&str; 6] = [
    "system",
    "example-1-user",
    "example-1-assistant",
    "example-2-user",
    "example-2-assistant",
    "last-user",
];

impl MiniJinja {
    pub fn new(history: &'static [Message]) -> Result<MiniJinja, String> {
        let mut env = minijinja::Environment::new();
        let sources = std::iter::once(SYSTEM)
            .chain(EXAMPLES.iter().map(|&(_, t)| t))
            .chain(std::iter::once(LAST.1));
        for (name, source) in NAMES.into_iter().zip(sources) {
            env.add_template(name, source).map_err(err)?;
        }
        let ctx = minijinja::Value::from(minijinja::value::Serde(json_values()));
        Ok(MiniJinja {
            env,
            ctx,
            show_examples: SHOW_EXAMPLES,
            history,
        })
    }

    fn render_one(&self, name: &str) -> Result<String, String> {
        self.env
            .get_template(name)
            .and_then(|t| t.render(&self.ctx))
            .map_err(err)
    }

    /// The system message's text and the messages after it.
    pub fn render(&self) -> Result<(String, Vec<Message>), String> {
        let system = self.render_one(NAMES[0])?;
        let mut m = Vec::with_capacity(EXAMPLES.len() + self.history.len() + 1);
        if self.show_examples {
            for (name, &(role, _)) in NAMES[1..5].iter().zip(&EXAMPLES) {
                m.push(Message::new(role, self.render_one(name)?));
            }
        }
        m.extend_from_slice(self.history);
        m.push(Message::new(LAST.0, self.render_one(NAMES[5])?));
        Ok((system, m))
    }
}

/// The conversation as one `.prompty` file, built from the same texts: `system:`, `user:` and
/// `assistant:` marker lines (Prompty's roles: system, user, assistant, developer; a tool's
/// result cannot be written in a template, so this conversation has none), the few-shot turns
/// inside `{% if showExamples %}` (Prompty's default renderer is Jinja, run by minijinja 2), and
/// the history as an input of `kind: thread` placed with `{{history}}`. Prompty has no include
/// in its templates: the snippet of turns is written out in place.
pub fn prompty_source() -> String {
    let mut inputs = String::new();
    for (name, _) in TEXTS {
        inputs.push_str(&format!("  {name}:\n    kind: string\n"));
    }
    let mut examples = String::new();
    for (role, content) in EXAMPLES {
        examples.push_str(&format!("{}:\n{content}\n\n", role.as_str()));
    }
    format!(
        "---\n\
         name: {id}\n\
         description: The bench's conversation prompt, in Prompty's format.\n\
         inputs:\n\
         {inputs}  showExamples:\n    kind: boolean\n  history:\n    kind: thread\n\
         ---\n\
         system:\n{SYSTEM}\n\n\
         {{% if showExamples %}}\n{examples}{{% endif %}}\n\
         {{{{history}}}}\n\n\
         {role}:\n{last}\n",
        id = text::PROMPT_ID,
        role = LAST.0.as_str(),
        last = LAST.1,
    )
}

/// Prompty's `prepare` (render the template with minijinja, parse the role markers into
/// messages, put the thread's messages in place of its marker), with the agent loaded once
/// and the values given as JSON, as Prompty takes them.
pub struct Prompty {
    agent: prompty::Agent,
    inputs: serde_json::Value,
}

impl Prompty {
    pub fn new() -> Result<Prompty, String> {
        prompty::register_defaults();
        let agent =
            prompty::load_from_string(&prompty_source(), text::dir()).map_err(|e| e.to_string())?;
        Ok(Prompty {
            agent,
            inputs: json_values(),
        })
    }

    /// `prompty::prepare` is `async` (its renderers and parsers are `async_trait`s, for the
    /// ones that call out), but neither the Jinja renderer nor the role-marker parser ever
    /// waits: the future is polled once with a no-op waker, and a render that did not finish
    /// then is an error, not a wait.
    pub fn render(&self) -> Result<Vec<prompty::Message>, String> {
        use std::future::Future;
        use std::task::{Context, Poll, Waker};
        let future = prompty::prepare(&self.agent, Some(&self.inputs));
        let mut future = std::pin::pin!(future);
        match future
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(messages) => messages.map_err(|e| e.to_string()),
            Poll::Pending => Err("prompty::prepare did not finish in one poll".to_owned()),
        }
    }
}

/// [`text::Sent`] of Prompty's messages.
pub fn sent_prompty(messages: &[prompty::Message]) -> text::Sent {
    messages
        .iter()
        .map(|m| (m.role.as_str().to_owned(), m.text_content()))
        .collect()
}

/// The bytes of Prompty's messages' text parts (a `&Vec`: the harness's `size` takes a
/// reference to the output, which is a `Vec`).
#[allow(clippy::ptr_arg)]
pub fn bytes_prompty(messages: &Vec<prompty::Message>) -> usize {
    messages
        .iter()
        .flat_map(|m| &m.parts)
        .map(|p| match &p.kind {
            prompty::ContentPartKind::TextPart { value } => value.len(),
            _ => 0,
        })
        .sum()
}
