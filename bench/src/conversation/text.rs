//! The conversation the section renders, written out in Rust for the contenders that are not
//! promptpack: the values, the history, each message's text with its `{{name}}` tokens (the
//! syntax minijinja and Prompty's Jinja renderer read too), the hand-written lower bound, and
//! the form every contender's output is compared in.
//!
//! This is a copy of `bench/conversation/` (`system.md`, `messages.md` and
//! `snippets/refund-turns.md`) by hand: an edit to one without the other makes every row but
//! promptpack's `FAILED` with the first difference, before anything is timed.

use promptpack::{Message, Role};
use std::path::{Path, PathBuf};

/// The prompt id (its folder under `conversation/templates/`).
pub const PROMPT_ID: &str = "conversation-bench";

/// The prompt root: `conversation/` in the bench package.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("conversation")
}

/// The text values of the timed renders (`showExamples` is true, `history` is [`history`]).
pub const TEXTS: [(&str, &str); 6] = [
    ("agentName", "Juniper"),
    ("productName", "Acme Cloud"),
    ("language", "English"),
    ("customerName", "Dana Whitfield"),
    ("plan", "Team"),
    (
        "question",
        "I was charged twice for November, on the 1st and on the 3rd. Can you refund one of \
         the two charges? The invoice numbers are INV-20931 and INV-21044.",
    ),
];

/// The flag of the timed renders: the few-shot turns are sent.
pub const SHOW_EXAMPLES: bool = true;

/// The text value `name` of the timed renders.
pub fn text(name: &str) -> &'static str {
    TEXTS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("", |&(_, v)| v)
}

/// How many messages the history holds: the workload, a chat of
/// twenty messages so far ([`HISTORY`]'s six, again and again).
pub const HISTORY_LEN: usize = 20;

/// Six messages of a chat, oldest first: the history repeats them up to
/// [`HISTORY_LEN`] (a user's and the assistant's turns alternate).
pub const HISTORY: [(Role, &str); 6] = [
    (
        Role::User,
        "Hi! Our nightly backup failed last night with \"disk quota exceeded\". Is that on our \
         side?",
    ),
    (
        Role::Assistant,
        "Hi Dana! The backup of project `orders-prod` stopped at 02:14 UTC because the project \
         used 100% of its 50 GB quota. Deleting old snapshots, or raising the quota in \
         **Settings → Storage**, will let tonight's backup run.",
    ),
    (
        Role::User,
        "I raised it to 100 GB. Will the backup run again by itself?",
    ),
    (
        Role::Assistant,
        "Yes: the next scheduled backup runs tonight at 02:00 UTC. If you want one now, choose \
         **Backups → Run now**; it takes about 20 minutes for a database of this size.",
    ),
    (
        Role::User,
        "Great, it worked. One more thing, about billing.",
    ),
    (
        Role::Assistant,
        "Of course. What would you like to know about your billing?",
    ),
];

/// The history's messages, as role and text: [`HISTORY`] repeated up to
/// [`HISTORY_LEN`].
pub fn history_texts() -> impl Iterator<Item = (Role, &'static str)> {
    HISTORY.iter().copied().cycle().take(HISTORY_LEN)
}

/// The history as promptpack's messages.
pub fn history() -> Vec<Message> {
    history_texts()
        .map(|(role, content)| Message::new(role, content))
        .collect()
}

/// `system.md`, as sent (front matter off, trimmed).
pub const SYSTEM: &str = "# Who you are

You are {{agentName}}, the support assistant for {{productName}}, a hosted
PostgreSQL service. You answer customers in a chat window, in {{language}}.

# How you answer

- Keep answers short: two or three sentences, unless the customer asks for
  detail or a step-by-step guide.
- Look an order or an invoice up before you talk about its status; never
  invent an order number, a price or a date.
- Refunds are possible within 30 days of delivery. Anything older goes to
  a human agent: offer to open a ticket.
- Never share another customer's data, and never ask for a password.
- When you are not sure, say so and say what would settle it.";

/// The few-shot turns (`{{#if showExamples}}`): two in `messages.md`, two from
/// `snippets/refund-turns.md`.
pub const EXAMPLES: [(Role, &str); 4] = [
    (
        Role::User,
        "How do I rotate the API key of my {{productName}} project?",
    ),
    (
        Role::Assistant,
        "Open the project's settings, choose **API keys**, then **Rotate**. The old
key keeps working for 24 hours, so you can update your services without
downtime.",
    ),
    (
        Role::User,
        "Can I get a refund for order 981? The backup add-on never worked.",
    ),
    (
        Role::Assistant,
        "I'm sorry the add-on did not work. Order 981 was delivered 12 days ago,
within the 30-day refund window, so I have started the refund: you will
see it on your statement in 3 to 5 business days.",
    ),
];

/// The last message, after the history.
pub const LAST: (Role, &str) = (
    Role::User,
    "{{customerName}} (plan: {{plan}}) asks:

{{question}}",
);

/// `template` cut at its `{{name}}` tokens, each token replaced by its value
/// in [`TEXTS`]: the pieces of the message, in order.
fn pieces(template: &'static str) -> Result<Vec<&'static str>, String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        if open > 0 {
            out.push(&rest[..open]);
        }
        let close = rest[open..]
            .find("}}")
            .map(|i| open + i)
            .ok_or("`{{` without `}}`")?;
        let name = &rest[open + 2..close];
        if !TEXTS.iter().any(|(n, _)| *n == name) {
            return Err(format!("no value for `{name}`"));
        }
        out.push(text(name));
        rest = &rest[close + 2..];
    }
    if !rest.is_empty() {
        out.push(rest);
    }
    Ok(out)
}

/// One message of the lower bound: its precomputed pieces and their length.
struct Fixed {
    role: Role,
    pieces: Vec<&'static str>,
    len: usize,
}

impl Fixed {
    fn new((role, template): (Role, &'static str)) -> Result<Fixed, String> {
        let pieces = pieces(template)?;
        let len = pieces.iter().map(|p| p.len()).sum();
        Ok(Fixed { role, pieces, len })
    }

    /// One `String` of exact capacity, the pieces pushed.
    #[inline]
    fn content(&self) -> String {
        let mut s = String::with_capacity(self.len);
        for p in &self.pieces {
            s.push_str(p);
        }
        s
    }

    #[inline]
    fn message(&self) -> Message {
        Message {
            role: self.role,
            content: self.content(),
            name: None,
            id: None,
        }
    }
}

/// The lower bound: hand-written Rust that builds the same system message and `Vec<Message>`
/// as the prompt, without promptpack's renderer: one `String::with_capacity` per message with
/// its precomputed pieces pushed, the few-shot turns behind an `if`, the history cloned, and
/// one vector of exact capacity.
pub struct LowerBound {
    system: Fixed,
    examples: Vec<Fixed>,
    last: Fixed,
    show_examples: bool,
    history: &'static [Message],
}

impl LowerBound {
    /// The lower bound of the timed values.
    pub fn new(history: &'static [Message]) -> Result<LowerBound, String> {
        Ok(LowerBound {
            system: Fixed::new((Role::System, SYSTEM))?,
            examples: EXAMPLES
                .into_iter()
                .map(Fixed::new)
                .collect::<Result<_, _>>()?,
            last: Fixed::new(LAST)?,
            show_examples: SHOW_EXAMPLES,
            history,
        })
    }

    /// The system message's text and the messages after it.
    pub fn render(&self) -> (String, Vec<Message>) {
        let system = self.system.content();
        let examples = if self.show_examples {
            self.examples.len()
        } else {
            0
        };
        let mut m = Vec::with_capacity(examples + self.history.len() + 1);
        if self.show_examples {
            for f in &self.examples {
                m.push(f.message());
            }
        }
        m.extend_from_slice(self.history);
        m.push(self.last.message());
        (system, m)
    }
}

/// What every contender's output is compared in: each message's role and content, the system
/// message first.
pub type Sent = Vec<(String, String)>;

/// [`Sent`] of a system message and the messages after it.
pub fn sent(system: &str, messages: &[Message]) -> Sent {
    std::iter::once(("system".to_owned(), system.to_owned()))
        .chain(
            messages
                .iter()
                .map(|m| (m.role.as_str().to_owned(), m.content.clone())),
        )
        .collect()
}

/// [`Sent`] of a rendered promptpack prompt (`Prompt::messages`).
pub fn sent_prompt<Id>(prompt: &promptpack::Prompt<Id>) -> Sent {
    prompt
        .messages()
        .map(|m| (m.role.as_str().to_owned(), m.content.to_owned()))
        .collect()
}

/// `Ok` when `got` equals `expected`; else where they part: a count, a role, or the first
/// difference of a message's content.
pub fn compare(got: &Sent, expected: &Sent) -> Result<(), String> {
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        if g.0 != e.0 {
            return Err(format!("message {i}: role {:?}, expected {:?}", g.0, e.0));
        }
        if g.1 != e.1 {
            return Err(format!(
                "message {i} ({}): {}",
                e.0,
                crate::harness::first_difference(&g.1, &e.1)
            ));
        }
    }
    if got.len() != expected.len() {
        return Err(format!(
            "{} messages, expected {} (roles {:?})",
            got.len(),
            expected.len(),
            got.iter().map(|(r, _)| r.as_str()).collect::<Vec<_>>()
        ));
    }
    Ok(())
}

/// The bytes of the messages' contents: what a runner keeps of each render.
pub fn bytes(system: &str, messages: &[Message]) -> usize {
    system.len() + messages.iter().map(|m| m.content.len()).sum::<usize>()
}
