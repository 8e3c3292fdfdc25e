//! A small OpenAI-compatible chat-completions server on loopback: it
//! records the body of every request and answers each from a [`Script`],
//! so that a real client (async-openai's, genai's) can be tested end to end
//! with no network and no API key.
//!
//! It serves `POST /v1/chat/completions` only; the first request gets the
//! script's first answer, the second its second, and every request after
//! the last answer gets the last one again. Nothing is timed. Like
//! OpenAI's API, it refuses (400) a conversation whose tool messages and
//! tool calls do not pair ([`pairing_problem`]).

use axum::Router;
use axum::extract::State;
use axum::routing::post;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The model every answer names, and the tests ask for.
pub const MODEL: &str = "gpt-4o-mini";

/// The chat-completion bodies the server answers with, in order.
#[derive(Debug, Clone)]
pub struct Script {
    answers: Vec<Value>,
}

impl Script {
    /// A script of these chat-completion bodies (at least one), answered in
    /// order, the last one again after the others.
    pub fn new(answers: Vec<Value>) -> Script {
        Script { answers }
    }

    /// An agent's two turns with the `orders` prompt: first the model calls
    /// both tools (`order_status` for order 1234, `escalate` with an
    /// urgent priority and no note), then it answers with the JSON the
    /// prompt's response declares.
    pub fn tool_calls_then_answer() -> Script {
        Script::new(vec![tool_calls_completion(), final_completion()])
    }

    /// Every request answered with the final answer: for clients whose
    /// request, not its answer, is under test.
    pub fn answer_only() -> Script {
        Script::new(vec![final_completion()])
    }

    /// The answer to the request numbered `index` (from 0).
    fn answer(&self, index: usize) -> Value {
        let at = index.min(self.answers.len().saturating_sub(1));
        self.answers.get(at).cloned().unwrap_or(Value::Null)
    }
}

/// The text of the final answer: what `OrdersResponse` reads.
pub const FINAL_ANSWER: &str = r#"{"reply": "Order 1234 left the warehouse and arrives on 8 December.", "status": "in_transit", "eta": "2026-12-08"}"#;

/// A chat completion of one choice holding `message`.
fn completion(id: &str, message: Value, finish_reason: &str) -> Value {
    json!({
        "id": id,
        "object": "chat.completion",
        "created": 1_764_940_000,
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 24, "total_tokens": 144},
    })
}

/// The chat completion in which the model calls both tools of the
/// `orders` prompt: `order_status` (id `call_status_1234`) and `escalate`
/// (id `call_escalate_1`).
pub fn tool_calls_completion() -> Value {
    let call = |id: &str, name: &str, arguments: Value| {
        json!({
            "id": id,
            "type": "function",
            "function": {"name": name, "arguments": arguments.to_string()},
        })
    };
    completion(
        "chatcmpl-wire-1",
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [
                call("call_status_1234", "order_status", json!({"order": "1234"})),
                call(
                    "call_escalate_1",
                    "escalate",
                    json!({"reason": "asks for a person", "priority": "urgent", "note": null}),
                ),
            ],
        }),
        "tool_calls",
    )
}

/// The chat completion of the model's final answer, [`FINAL_ANSWER`].
pub fn final_completion() -> Value {
    completion(
        "chatcmpl-wire-2",
        json!({"role": "assistant", "content": FINAL_ANSWER}),
        "stop",
    )
}

/// One request the server received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The request's path, `/v1/chat/completions`.
    pub path: String,
    /// The request's body, exactly as received (UTF-8).
    pub body: String,
}

/// What the handler shares: the script and what came.
struct Shared {
    script: Script,
    received: Mutex<Vec<Recorded>>,
}

/// A running server; [`Server::stop`] ends it (dropping it ends it too,
/// without waiting).
pub struct Server {
    address: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

impl Server {
    /// Starts a server on 127.0.0.1 on a free port, answering from
    /// `script`. Must be called within a tokio runtime.
    pub async fn start(script: Script) -> std::io::Result<Server> {
        let shared = Arc::new(Shared {
            script,
            received: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(chat_completions))
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    // A dropped sender stops the server as a sent stop does.
                    let _ = stopped.await;
                })
                .await
        });
        Ok(Server {
            address,
            shared,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// The API's base URL, `http://127.0.0.1:PORT/v1` (async-openai's
    /// `api_base`; genai's endpoint is this with a `/`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    /// Every request received so far, in order.
    pub fn received(&self) -> Vec<Recorded> {
        self.shared
            .received
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Stops the server and waits for it to end.
    pub async fn stop(mut self) -> std::io::Result<()> {
        if let Some(stop) = self.stop.take() {
            // The server may have ended already: nothing to stop then.
            let _ = stop.send(());
        }
        match self.task.take() {
            Some(task) => task.await.map_err(std::io::Error::other)?,
            None => Ok(()),
        }
    }
}

/// What is wrong with the pairing of `body`'s tool calls and tool
/// messages, as OpenAI's API checks it: each `tool` message answers a call
/// of an assistant message before it (by `tool_call_id`), and every call
/// is answered before the next message that is not a tool's. `None` when
/// they pair (or the body has no `messages` list).
pub fn pairing_problem(body: &Value) -> Option<String> {
    let messages = body.get("messages")?.as_array()?;
    let mut waiting: Vec<&str> = Vec::new();
    for (at, message) in messages.iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        if role == "tool" {
            let id = message
                .get("tool_call_id")
                .and_then(Value::as_str)
                .unwrap_or("");
            match waiting.iter().position(|waiting| *waiting == id) {
                Some(found) => {
                    waiting.remove(found);
                }
                None => {
                    return Some(format!(
                        "messages[{at}]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (no call has id {id:?})"
                    ));
                }
            }
            continue;
        }
        if !waiting.is_empty() {
            return Some(format!(
                "messages[{at}]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id' (not answered: {waiting:?})"
            ));
        }
        if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
            waiting.extend(
                calls
                    .iter()
                    .filter_map(|call| call.get("id").and_then(Value::as_str)),
            );
        }
    }
    None
}

/// `POST /v1/chat/completions`: records the body, answers from the script,
/// or refuses a body whose tool calls and results do not pair.
async fn chat_completions(
    State(shared): State<Arc<Shared>>,
    uri: axum::http::Uri,
    body: String,
) -> Result<axum::Json<Value>, (axum::http::StatusCode, axum::Json<Value>)> {
    let problem = serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|parsed| pairing_problem(&parsed));
    let index = {
        let mut received = shared
            .received
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        received.push(Recorded {
            path: uri.path().to_string(),
            body,
        });
        received.len() - 1
    };
    match problem {
        Some(message) => Err((
            axum::http::StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": {
                "message": message,
                "type": "invalid_request_error",
                "param": "messages",
                "code": null
            }})),
        )),
        None => Ok(axum::Json(shared.script.answer(index))),
    }
}
