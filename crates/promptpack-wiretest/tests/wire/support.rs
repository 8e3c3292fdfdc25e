//! What the wire tests share: the fixture prompts, the crates' clients and
//! bodies, the golden files, and the bound on every wait.

use promptpack::adapters::{async_openai_0_43, genai_0_7, rig_0_44};
use promptpack::{Message, Prompt, Role};
use promptpack_testkit::wait::{CHECKS, PAUSE};
use promptpack_wiretest::prompts::{
    ChatVars, OrdersVars, PromptId, TriageVars, WelcomeVars, build_prompt,
};
use promptpack_wiretest::server::{MODEL, Server};
use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

/// The variable that writes missing or changed goldens instead of failing.
pub const UPDATE_ENV: &str = "PROMPTPACK_UPDATE_GOLDENS";

/// The longest any wait of these tests lasts before it fails: a hang
/// guard (ten minutes, as the testkit's waits), never a timing.
pub fn bound() -> Duration {
    PAUSE * CHECKS
}

/// `work`, failing with `what` if it has not finished within [`bound`].
pub async fn bounded<T>(what: &str, work: impl Future<Output = T>) -> T {
    match tokio::time::timeout(bound(), work).await {
        Ok(done) => done,
        Err(_) => panic!("never happened: {what} (waited {:?})", bound()),
    }
}

/// The chat so far, as an application keeps it: a user's message and
/// the assistant's answer.
pub fn history() -> Vec<Message> {
    vec![
        Message::new(Role::User, "Hi, I ordered a lamp last week."),
        Message::new(Role::Assistant, "Hello! How can I help with your order?"),
    ]
}

/// A chat in which the model already called a tool: its call and the
/// result kept in the history with the id the model gave, then its
/// answer and the customer's thanks.
pub fn resumed_history() -> Vec<Message> {
    vec![
        Message::new(Role::User, "Is order 77 on its way?"),
        Message::call("order_status", r#"{"order":"77"}"#).with_id("call_Zx81"),
        Message::tool("order_status", r#"{"order": "77", "status": "in_transit"}"#)
            .with_id("call_Zx81"),
        Message::new(
            Role::Assistant,
            r#"{"reply": "Order 77 is on its way.", "status": "in_transit", "eta": null}"#,
        ),
    ]
}

/// Every fixture prompt, rendered by the generated code, with the name
/// of its goldens: one of each shape a request takes.
pub fn fixtures() -> Vec<(&'static str, Prompt<PromptId>)> {
    let history = history();
    let rendered = [
        (
            "welcome",
            build_prompt(
                PromptId::Welcome,
                WelcomeVars {
                    product_name: "Acme Cloud",
                    customer_name: "Ada",
                },
            ),
        ),
        (
            "chat",
            build_prompt(
                PromptId::Chat,
                ChatVars {
                    subject: "arithmetic",
                    history: &history,
                    question: "Is 1 a prime number?",
                },
            ),
        ),
        ("orders", orders_prompt(&history)),
        ("orders-resumed", orders_prompt(&resumed_history())),
        (
            "triage",
            build_prompt(
                PromptId::Triage,
                TriageVars {
                    product_name: "Acme Cloud",
                    customer_name: "Grace",
                    ticket: "I was charged twice for November.",
                },
            ),
        ),
    ];
    rendered
        .into_iter()
        .map(|(name, prompt)| match prompt {
            Ok(prompt) => (name, prompt),
            Err(e) => panic!("fixture `{name}` does not render: {e}"),
        })
        .collect()
}

/// The `orders` prompt: tools, a response, a few-shot tool result and the
/// history.
pub fn orders_prompt(history: &[Message]) -> promptpack::Result<Prompt<PromptId>> {
    build_prompt(
        PromptId::Orders,
        OrdersVars {
            product_name: "Acme Shop",
            history,
            question: "Where is order 1234? I want to talk to a person.",
        },
    )
}

/// An LLM crate the adapters speak, and how the JSON it sends is obtained.
#[derive(Debug, Clone, Copy)]
pub enum Crate {
    /// async-openai: its request type serialized by its own serde (which
    /// its client sends as it is: `clients` checks that too).
    AsyncOpenAi,
    /// genai: the body its client sends to the local server (genai builds
    /// the body inside its client, with no public way to it otherwise).
    Genai,
    /// rig-core: the body its OpenAI chat wire encodes (strict tools),
    /// with no transport.
    Rig,
}

impl Crate {
    /// Every crate, in the order the goldens are checked.
    pub const ALL: [Crate; 3] = [Crate::AsyncOpenAi, Crate::Genai, Crate::Rig];

    /// The folder of its goldens under `tests/goldens`.
    pub fn folder(self) -> &'static str {
        match self {
            Crate::AsyncOpenAi => "async-openai-0_43",
            Crate::Genai => "genai-0_7",
            Crate::Rig => "rig-0_44",
        }
    }

    /// The JSON this crate sends for `prompt` (`server` serves genai).
    pub async fn body(self, prompt: &Prompt<PromptId>, server: &Server) -> String {
        match self {
            Crate::AsyncOpenAi => {
                let request = async_openai_0_43::request(prompt, MODEL);
                serde_json::to_string(&request).unwrap_or_else(|e| panic!("serializing: {e}"))
            }
            Crate::Genai => {
                let before = server.received().len();
                let client = genai_client(server);
                let request = genai_0_7::request(prompt);
                let options = genai_0_7::options(prompt);
                bounded(
                    "genai's client gets an answer",
                    client.exec_chat(MODEL, request, Some(&options)),
                )
                .await
                .unwrap_or_else(|e| panic!("genai's client: {e}"));
                let received = server.received();
                match received.get(before) {
                    Some(request) => request.body.clone(),
                    None => panic!("the server received nothing from genai's client"),
                }
            }
            Crate::Rig => rig_body(rig_0_44::request(prompt), server),
        }
    }
}

/// async-openai's client, speaking to `server` with a dummy key.
pub fn async_openai_client(
    server: &Server,
) -> async_openai::Client<async_openai::config::OpenAIConfig> {
    let config = async_openai::config::OpenAIConfig::new()
        .with_api_base(server.base_url())
        .with_api_key("dummy-key");
    async_openai::Client::with_config(config)
}

/// genai's client, every model served by `server` through genai's OpenAI
/// adapter, with a dummy key.
pub fn genai_client(server: &Server) -> genai::Client {
    use genai::adapter::AdapterKind;
    use genai::resolver::{AuthData, Endpoint, ServiceTargetResolver};
    use genai::{ModelIden, ServiceTarget};
    // genai joins `chat/completions` to the endpoint: it ends with `/`.
    let endpoint = format!("{}/", server.base_url());
    let resolver = ServiceTargetResolver::from_resolver_fn(
        move |target: ServiceTarget| -> Result<ServiceTarget, genai::resolver::Error> {
            Ok(ServiceTarget {
                endpoint: Endpoint::from_owned(endpoint.clone()),
                auth: AuthData::from_single("dummy-key"),
                model: ModelIden::new(AdapterKind::OpenAI, target.model.model_name),
            })
        },
    );
    genai::Client::builder()
        .with_service_target_resolver(resolver)
        .build()
        .unwrap_or_else(|e| panic!("genai's client: {e}"))
}

/// rig's OpenAI chat-completions wire for `server`, strict tools on.
pub fn rig_wire(server: &Server) -> rig_core::providers::openai::wire::Chat {
    rig_core::providers::openai::OpenAIConfig::new("dummy-key")
        .with_base_url(server.base_url())
        .chat(MODEL)
        .with_strict_tools()
}

/// The body rig's OpenAI wire encodes for `request`.
pub fn rig_body(request: rig_core::completion::CompletionRequest, server: &Server) -> String {
    use rig_core::wire::{Body, Mode, Wire};
    let encoded = rig_wire(server)
        .encode(request, Mode::Unary)
        .unwrap_or_else(|e| panic!("rig's wire refused the request: {e}"));
    match encoded.request.body() {
        Body::Bytes(bytes) => String::from_utf8(bytes.clone())
            .unwrap_or_else(|e| panic!("rig's body is not UTF-8: {e}")),
        Body::Multipart(_) => panic!("rig's wire encoded a multipart body"),
    }
}

/// The golden file of `name` for `krate`.
pub fn golden_path(krate: Crate, name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/goldens")
        .join(krate.folder())
        .join(format!("{name}.json"))
}

/// Holds `body` to its golden: the file is the body byte for byte, then a
/// newline (so that the file ends as a text file does). A missing or
/// different golden is an error, unless [`UPDATE_ENV`] is `1`, which
/// writes it.
pub fn check_golden(krate: Crate, name: &str, body: &str) -> Result<(), String> {
    let path = golden_path(krate, name);
    let want_file = format!("{body}\n");
    let update = std::env::var(UPDATE_ENV).is_ok_and(|value| value == "1");
    match std::fs::read_to_string(&path) {
        Ok(file) if file == want_file => Ok(()),
        _ if update => {
            if let Some(folder) = path.parent() {
                std::fs::create_dir_all(folder)
                    .map_err(|e| format!("{}: {e}", folder.display()))?;
            }
            std::fs::write(&path, want_file).map_err(|e| format!("{}: {e}", path.display()))?;
            eprintln!("wrote {}", path.display());
            Ok(())
        }
        Ok(file) => Err(format!(
            "{} differs from what {:?} sent: {}\n  (after a deliberate change, run with {UPDATE_ENV}=1 and review the diff)",
            path.display(),
            krate,
            promptpack_testkit::corpus::first_difference(
                body,
                file.strip_suffix('\n').unwrap_or(&file)
            ),
        )),
        Err(e) => Err(format!(
            "{} is missing ({e}): run with {UPDATE_ENV}=1 to write it, and commit it",
            path.display()
        )),
    }
}
