//! A small agent loop on async-openai: the `order-desk` prompt (a tool,
//! `order_status`, and a response: `reply`, `status`, `eta`) sent as one
//! request, the model's tool call run and answered, and its final answer
//! read into the generated `OrderDeskResponse`.
//!
//! ```text
//! OPENAI_API_KEY=… cargo run -p agent-loop -- "Where is my order 1234?"
//! ```
//!
//! `OPENAI_BASE_URL` points it at any OpenAI-compatible server; CI runs it
//! against a local one (`mock-openai examples/agent-loop/mock-script.json`).

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use promptpack::adapters::async_openai_0_43 as openai;

promptpack::include_prompts!();

/// How many requests the loop sends before it gives up: a model that keeps
/// calling tools never ends the chat otherwise.
const MAX_TURNS: usize = 4;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let question = std::env::args().nth(1);
    let config = OpenAIConfig::new()
        .with_api_base(env_or("OPENAI_BASE_URL", "https://api.openai.com/v1"))
        .with_api_key(env_or("OPENAI_API_KEY", ""));
    let client = Client::with_config(config);

    // The prompt, checked by the compiler: its vars struct, its tools and
    // response type are generated from templates/order-desk/.
    let prompt = build_prompt(
        PromptId::OrderDesk,
        OrderDeskVars {
            shop: "Huset",
            question: question.as_deref().unwrap_or("Where is my order 1234?"),
        },
    )?;
    // Messages, tools and the response format, in one call.
    let mut request = openai::request(&prompt, env_or("OPENAI_MODEL", "gpt-4o-mini"));

    for _ in 0..MAX_TURNS {
        let response = client.chat().create(request.clone()).await?;
        let calls = openai::tool_calls::<OrderDeskTool>(&response)?;
        if calls.is_empty() {
            let answer: OrderDeskResponse = openai::answer(&response)?;
            println!(
                "answer: {} ({:?}, eta {:?})",
                answer.reply, answer.status, answer.eta
            );
            return Ok(());
        }
        // The model's turn goes back into the chat, then each call's result.
        if let Some(choice) = response.choices.first() {
            request
                .messages
                .push(openai::assistant_message(&choice.message));
        }
        for call in &calls {
            let result = match &call.call {
                OrderDeskTool::OrderStatus(args) => order_status(&args.order),
            };
            println!("tool: {}({}) -> {result}", call.call.name(), call.id);
            request.messages.push(openai::tool_result(call, result));
        }
    }
    Err(format!("no answer after {MAX_TURNS} requests").into())
}

/// The tool: where an order is. A real agent asks its order system.
fn order_status(order: &str) -> String {
    serde_json::json!({"order": order, "status": "in_transit", "eta": "2026-12-08"}).to_string()
}

/// The environment variable `name`, or `default` when it is not set.
fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}
