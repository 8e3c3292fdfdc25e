//! The generated API over the repository's own sample prompts: typed
//! rendering, and agreement with the interpreted `Library` renderer.

use promptpack::{Library, Message, MissingVars, Prompt, Role};
use std::collections::HashMap;
use std::str::FromStr;

promptpack::include_prompts!();

fn library() -> Library {
    Library::load(env!("CARGO_MANIFEST_DIR")).expect("sample prompts load")
}

#[test]
fn renders_a_prompt_from_typed_vars() {
    let prompt = build_prompt(
        PromptId::AgentSystem,
        AgentSystemVars {
            agent_name: "Ada",
            user_name: "Grace",
            has_tools: true,
            tool_list: "- search",
            memory: None,
            state_context: "idle",
        },
    )
    .expect("renders");
    assert_eq!(prompt.id, PromptId::AgentSystem);
    assert!(
        prompt
            .system
            .starts_with("# Role\nYou are Ada, an assistant working with Grace.")
    );
    assert!(
        prompt
            .system
            .contains("## Tools\nYou can call tools. Available right now:\n- search\n")
    );
    assert!(!prompt.system.contains("## No tools"));
    assert!(!prompt.system.contains("What you remember"));
    assert_eq!(prompt.user, None);
    assert_eq!(prompt.hash, PromptId::AgentSystem.hash());
    assert_eq!(
        prompt.hash,
        library().hash("agent-system").unwrap_or_default()
    );
}

#[test]
fn prompt_with_user_part_renders_both() {
    let vars = DirectorVars {
        allow_ending: false,
        agent_roster: "Ada, Bob",
        transcript: "Ada: hi",
    };
    let prompt = vars.build().expect("renders");
    assert!(
        prompt
            .user
            .as_deref()
            .is_some_and(|u| u.contains("Ada, Bob") && u.ends_with("Who speaks next?"))
    );
}

#[test]
fn another_prompts_vars_are_a_coded_error() {
    let vars = DirectorVars {
        allow_ending: true,
        agent_roster: "",
        transcript: "",
    };
    let error = build_prompt(PromptId::CodeReview, vars).expect_err("wrong vars must not render");
    assert_eq!(error.code(), promptpack::ErrorCode::WrongVars);
}

#[test]
fn prompt_id_round_trips_through_strings() {
    for id in PromptId::ALL {
        assert_eq!(PromptId::from_str(id.as_str()).ok(), Some(id));
        assert_eq!(id.to_string(), id.as_str());
    }
    let error = PromptId::from_str("agent-sytem").expect_err("misspelled id");
    assert_eq!(error.code(), promptpack::ErrorCode::UnknownPrompt);
    // The generated `FromStr` names the prompt meant, among the few there
    // are, as `str::parse` is usually called.
    let error = "code-reveiw"
        .parse::<PromptId>()
        .expect_err("misspelled id");
    let help = error.diagnostics()[0].help.as_deref().unwrap_or("");
    assert!(
        help.starts_with("did you mean `code-review`? The prompts are: "),
        "{help}"
    );
    assert_eq!(PromptId::ALL.len(), library().ids().len());
}

#[test]
fn snake_case_variables_and_keywords_map_to_fields() {
    let vars = SupportTriageVars {
        product_name: "Orbit",
        is_priority_customer: true,
        customer_name: "Dana",
        ticket_body: "It crashes.",
    };
    let prompt = vars.build().expect("renders");
    assert!(prompt.system.contains("priority plan"));
    assert_eq!(
        prompt.user.as_deref(),
        Some("Ticket from Dana:\n\nIt crashes.")
    );
}

/// Every sample prompt, every combination of its conditions, every value
/// of each compared variable: the generated renderer and the `Library`
/// interpreter give the same bytes.
#[test]
fn generated_and_interpreted_renderers_agree() {
    let library = library();
    let mut cases = 0;
    let mut choice_cases = 0;
    let mut conversations = 0;
    for id in PromptId::ALL {
        let conditions = id.conditions();
        assert!(conditions.len() < 16, "too many combinations for {id}");
        // Each compared variable at each of its values (the others at
        // their first), on top of every combination of conditions.
        // (A prompt without any keeps one setting: no choice to make.)
        let mut settings: Vec<Vec<(&str, &str)>> = Vec::new();
        if id.choices().is_empty() {
            settings.push(Vec::new());
        }
        for (i, (name, values)) in id.choices().iter().enumerate() {
            for value in values.iter() {
                let mut chosen: Vec<(&str, &str)> =
                    id.choices().iter().map(|(n, v)| (*n, v[0])).collect();
                chosen[i] = (name, value);
                settings.push(chosen);
            }
        }
        for (mask, chosen) in (0u32..(1 << conditions.len()))
            .flat_map(|mask| settings.iter().map(move |chosen| (mask, chosen)))
        {
            let mut values: HashMap<&str, String> = HashMap::new();
            for name in id.variables() {
                values.insert(name, format!("‹{name} {{{{snippet:x}}}} $&›"));
            }
            for (name, value) in chosen {
                values.insert(name, value.to_string());
                choice_cases += 1;
            }
            for (bit, name) in conditions.iter().enumerate() {
                if mask & (1 << bit) == 0 {
                    values.remove(name);
                }
            }
            let generated = id.render_generated(&|name| values.get(name).cloned());
            // The interpreter sees what the struct shows: missing → "", a
            // history (which `render_generated` never fills) empty.
            let mut shown = serde_json::Map::new();
            for name in id.variables() {
                let value = values.get(name).cloned().unwrap_or_default();
                shown.insert(name.to_string(), value.into());
            }
            if id.is_conversation() {
                shown.insert("history".into(), serde_json::json!([]));
            }
            let interpreted = library
                .build_prompt(id.as_str(), &serde_json::Value::Object(shown))
                .expect("interpreted render");
            assert_eq!(
                generated.system, interpreted.system,
                "{id} mask {mask:b} {chosen:?}"
            );
            assert_eq!(
                generated.user, interpreted.user,
                "{id} mask {mask:b} {chosen:?}"
            );
            assert_eq!(
                generated.messages, interpreted.messages,
                "{id} mask {mask:b} {chosen:?}"
            );
            assert_eq!(generated.hash, interpreted.hash);
            cases += 1;
            conversations += usize::from(id.is_conversation());
        }
    }
    assert!(cases >= 10, "only {cases} cases");
    assert!(choice_cases >= 3, "only {choice_cases} cases with choices");
    assert!(
        conversations >= 2,
        "only {conversations} conversation cases"
    );
}

fn support_chat_vars(history: &[Message], show_examples: bool) -> SupportChatVars<'_> {
    SupportChatVars {
        product_name: "Acme Cloud",
        show_examples,
        history,
        question: "Where is order {{question}} 1234?",
    }
}

/// The conversation `build_prompt` sends (from disk in a dev build with
/// hot reload), checked against what the generated code alone renders.
fn support_chat(history: &[Message], show_examples: bool) -> Prompt<PromptId> {
    let vars = support_chat_vars(history, show_examples);
    let prompt = build_prompt(PromptId::SupportChat, vars).expect("renders");
    assert_eq!(prompt.system, vars.render_system().expect("renders"));
    assert_eq!(prompt.messages, vars.render_messages().expect("renders"));
    prompt
}

/// A conversation from typed vars: the system message first, the few-shot
/// turns when asked for, the history as given (a role tag or a token in a
/// history message stays its text), then the new question.
#[test]
fn a_conversation_renders_from_typed_vars() {
    let history = [
        Message::new(Role::User, "Hi {{#assistant}} there"),
        Message::new(Role::Assistant, "Hello! How can I help?"),
    ];
    let prompt = support_chat(&history, true);
    let sent: Vec<(Role, &str)> = prompt.messages().map(|m| (m.role, m.content)).collect();
    assert_eq!(sent.len(), 9, "{sent:#?}");
    assert_eq!(sent[0].0, Role::System);
    assert!(
        sent[0]
            .1
            .starts_with("You are the support agent for Acme Cloud.")
    );
    assert_eq!(
        sent[1..].iter().map(|(role, _)| *role).collect::<Vec<_>>(),
        [
            Role::User,
            Role::Assistant,
            Role::Call,
            Role::Tool,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::User
        ]
    );
    assert_eq!(sent[1].1, "Can I get a refund for order 981?");
    // The example call, its arguments as written, and the result it gets.
    assert_eq!(prompt.messages[2].name, Some("order_status".to_string()));
    assert_eq!(prompt.messages[2].content, "{\"order\": \"981\"}");
    assert_eq!(prompt.messages[3].name, Some("order_status".to_string()));
    assert_eq!(&prompt.messages[5..7], &history);
    assert_eq!(sent[8].1, "Where is order {{question}} 1234?");
    assert_eq!(prompt.user, None);

    let without = support_chat(&[], false);
    let roles: Vec<Role> = without.messages().map(|m| m.role).collect();
    assert_eq!(roles, [Role::System, Role::User]);
}

/// The typed path and `Library` send the same conversation for the same
/// values, history included.
#[test]
fn a_typed_conversation_is_what_library_sends() {
    let history = [
        Message::new(Role::User, "Where is my order?"),
        Message::tool("order_status", "{\"status\": \"shipped\"}"),
    ];
    let typed = support_chat(&history, true);
    let values = serde_json::json!({
        "productName": "Acme Cloud",
        "showExamples": true,
        "history": history,
        "question": "Where is order {{question}} 1234?",
    });
    let loaded = library()
        .build_prompt("support-chat", &values)
        .expect("renders");
    assert_eq!(typed.system, loaded.system);
    assert_eq!(typed.messages, loaded.messages);
    assert_eq!(typed.hash, loaded.hash);
}

/// A history message past the render bound is refused as a message of the
/// file would be, on the typed path as through `Library`.
#[test]
fn a_history_message_past_the_bound_is_too_large() {
    let long = "x".repeat(promptpack::DEFAULT_MAX_RENDER_BYTES + 1);
    let history = [Message::new(Role::User, long)];
    let vars = support_chat_vars(&history, false);
    let built = build_prompt(PromptId::SupportChat, vars).expect_err("too large");
    let generated = vars.render_messages().expect_err("too large");
    for error in [built, generated] {
        assert_eq!(error.code(), promptpack::ErrorCode::TooLarge, "{error}");
    }
}

#[cfg(feature = "serde")]
#[test]
fn prompt_id_serializes_as_its_folder_name() {
    let json = serde_json::to_string(&PromptId::SupportTriage).expect("serializes");
    assert_eq!(json, "\"support_triage\"");
    let back: PromptId = serde_json::from_str(&json).expect("deserializes");
    assert_eq!(back, PromptId::SupportTriage);
    let error = serde_json::from_str::<PromptId>("\"nope\"").expect_err("unknown id");
    assert!(error.to_string().contains("unknown_prompt"), "{error}");
}

#[test]
fn generated_code_records_its_delimiters() {
    assert_eq!(PromptId::DELIMITERS, ("{{", "}}"));
}

/// Each way of rendering says where its text came from: generated code is
/// `embedded`, a `Library` read at run time `loaded`, and a typed call is
/// whichever of the two served it (the files on disk in a dev build with
/// hot reload, the generated code otherwise).
#[test]
fn every_prompt_says_where_its_text_came_from() {
    use promptpack::Provenance;
    let generated = PromptId::Director.render_generated(&|_| Some("x".into()));
    assert_eq!(&generated.provenance, &Provenance::Embedded);
    assert_eq!(generated.provenance.to_string(), "embedded");
    let values: HashMap<&str, &str> = HashMap::new();
    let loaded = library()
        .render("director", &values, MissingVars::KeepToken)
        .expect("renders");
    assert_eq!(&loaded.provenance, &Provenance::Loaded);
    let typed = build_prompt(
        PromptId::AgentSystem,
        AgentSystemVars {
            agent_name: "Ada",
            user_name: "Grace",
            has_tools: false,
            tool_list: "",
            memory: None,
            state_context: "idle",
        },
    )
    .expect("renders");
    let from_disk = cfg!(all(debug_assertions, feature = "hot-reload"))
        && std::env::var_os("PROMPTPACK_NO_RELOAD").is_none_or(|v| v.is_empty() || v == "0");
    let expected = if from_disk {
        Provenance::Loaded
    } else {
        Provenance::Embedded
    };
    assert_eq!(&typed.provenance, &expected);
}
