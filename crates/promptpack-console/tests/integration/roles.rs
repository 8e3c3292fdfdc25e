//! Which role each action needs, held alike by the JSON API and the pages:
//! every action is walked through each of its API routes and page routes
//! (and the page that offers it) by a user of each role, on a console of
//! its own, and every route must allow the same users, refuse the others
//! as `forbidden` with one and the same message, and offer its button to
//! exactly the users it allows.

use crate::support;

use promptpack_catalog::Draft;
use serde_json::Value;
use support::{Auth, Console, Store, hidden};

/// The roles, weakest first: a role may do what every weaker one may.
const ROLES: [&str; 3] = ["viewer", "editor", "admin"];

/// A request to the JSON API: method, path and JSON body.
type ApiCall = (&'static str, &'static str, &'static str);

/// A request to a page: a `GET`, or a form `POST` (sent with the session's
/// CSRF token).
enum PageCall {
    Get(&'static str),
    Post(&'static str, &'static [(&'static str, &'static str)]),
}

/// One action: the weakest role allowed it, what the catalog needs before
/// it can be taken, the routes that take it, and where a page offers it
/// (a page, the part of it to look in, and the mark of the offer).
struct Case {
    action: &'static str,
    needs: &'static str,
    prepare: fn(&Console),
    api: &'static [ApiCall],
    pages: &'static [PageCall],
    offers: &'static [(&'static str, &'static str, &'static str)],
}

fn nothing(_: &Console) {}

/// `greet` and `xss` deleted, for their restore.
fn deleted(c: &Console) {
    let mut catalog = c.catalog();
    for id in ["greet", "xss"] {
        catalog.delete(id).expect("a delete");
    }
}

/// `note` and `memo` include `sign-off`, whose newest revision is newer
/// than the one any prompt pins: `letter`, `note` and `memo` are behind.
fn behind(c: &Console) {
    let mut catalog = c.catalog();
    for id in ["note", "memo"] {
        let draft = Draft {
            system: "{{snippet:sign-off}}\n".to_string(),
            message: "includes the snippet".to_string(),
            ..Draft::default()
        };
        catalog
            .publish_or_create(id, &draft, None)
            .expect("a version");
    }
    catalog
        .publish_snippet("sign-off", "Best.\n", "shorter")
        .expect("a revision");
}

/// `triage` published, with a response to read answers as.
fn with_a_response(c: &Console) {
    c.publish_triage(support::TRIAGE_V1, "a response");
}

/// Every action a user's role decides, and every route that takes it.
/// The API writes one prompt and the pages another where an action
/// cannot be taken twice (a delete, a restore, an upgrade).
const CASES: &[Case] = &[
    Case {
        action: "publishing",
        needs: "editor",
        prepare: nothing,
        api: &[(
            "POST",
            "/api/v1/prompts/greet/versions",
            r#"{"system": "Bye {{name}}.\n", "message": "shorter"}"#,
        )],
        pages: &[
            PageCall::Get("/prompts/greet/edit"),
            PageCall::Post(
                "/prompts/greet/edit",
                &[
                    ("system", "Bye {{name}}.\n"),
                    ("message", "shorter"),
                    ("action", "publish"),
                ],
            ),
        ],
        offers: &[("/prompts/greet", "<nav", "id=\"edit\"")],
    },
    Case {
        action: "moving a label",
        needs: "editor",
        prepare: nothing,
        api: &[
            (
                "PUT",
                "/api/v1/prompts/greet/labels/staging",
                r#"{"version": 2}"#,
            ),
            (
                "PUT",
                "/api/v1/prompts/greet/labels/staging",
                r#"{"arms": [[1, 50], [2, 50]]}"#,
            ),
        ],
        pages: &[
            PageCall::Get("/prompts/greet/move?label=staging&version=2"),
            PageCall::Post(
                "/prompts/greet/move",
                &[("label", "staging"), ("target", "2")],
            ),
            PageCall::Post(
                "/prompts/greet/move",
                &[("label", "staging"), ("target", "1:50,2:50")],
            ),
        ],
        offers: &[("/prompts/greet", "</table>", "id=\"new-label\"")],
    },
    Case {
        action: "moving a protected label",
        needs: "admin",
        prepare: nothing,
        api: &[
            (
                "PUT",
                "/api/v1/prompts/greet/labels/production",
                r#"{"version": 2}"#,
            ),
            (
                "PUT",
                "/api/v1/prompts/greet/labels/production",
                r#"{"arms": [[1, 50], [2, 50]]}"#,
            ),
        ],
        pages: &[
            PageCall::Get("/prompts/greet/move?label=production&version=2"),
            PageCall::Post(
                "/prompts/greet/move",
                &[("label", "production"), ("target", "2")],
            ),
            PageCall::Post(
                "/prompts/greet/move",
                &[("label", "production"), ("target", "1:50,2:50")],
            ),
        ],
        offers: &[("/prompts/greet", "id=\"label-production\"", "Move…")],
    },
    Case {
        action: "deleting",
        needs: "admin",
        prepare: nothing,
        api: &[("DELETE", "/api/v1/prompts/xss", "null")],
        pages: &[PageCall::Post("/prompts/greet/delete", &[])],
        offers: &[("/prompts/letter", "<nav", "id=\"delete\"")],
    },
    Case {
        action: "restoring",
        needs: "admin",
        prepare: deleted,
        api: &[("POST", "/api/v1/prompts/xss/restore", "null")],
        pages: &[PageCall::Post("/prompts/greet/restore", &[])],
        offers: &[("/prompts/greet", "<h1", "id=\"restore\"")],
    },
    Case {
        action: "upgrading snippets",
        needs: "editor",
        prepare: behind,
        api: &[("POST", "/api/v1/prompts/letter/upgrade", "null")],
        pages: &[
            PageCall::Post("/prompts/note/upgrade", &[]),
            PageCall::Post("/snippets/sign-off/upgrade", &[("prompt", "memo")]),
        ],
        offers: &[
            ("/prompts/letter", "<nav", "id=\"upgrade\""),
            (
                "/snippets/sign-off",
                "id=\"use-letter\"",
                "id=\"upgrade-letter\"",
            ),
        ],
    },
    // A read, as every read: any user, whatever the role.
    Case {
        action: "reading a model's answer",
        needs: "viewer",
        prepare: with_a_response,
        api: &[(
            "POST",
            "/api/v1/prompts/triage/parse",
            r#"{"answer": "{\"category\": \"bug\", \"summary\": \"s\", \"order\": null}"}"#,
        )],
        pages: &[],
        offers: &[],
    },
    // The API writes no snippets: the pages alone take this one.
    Case {
        action: "editing a snippet",
        needs: "editor",
        prepare: nothing,
        api: &[],
        pages: &[
            PageCall::Get("/snippets/sign-off/edit"),
            PageCall::Post(
                "/snippets/sign-off/edit",
                &[
                    ("text", "Cheers.\n"),
                    ("message", "shorter"),
                    ("action", "publish"),
                ],
            ),
        ],
        offers: &[("/snippets/sign-off", "<h1", "id=\"edit\"")],
    },
];

/// What a route did with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    Allowed,
    Forbidden(String),
    /// Neither: a failure that is not the role's, or an answer of a kind
    /// the route does not give.
    Other(u16, String),
}

/// A page's answer as a verdict: a redirect after a write, a page, or the
/// error page of a `forbidden` refusal with its message as text.
fn page_verdict(status: u16, body: &str) -> Verdict {
    match status {
        200 | 303 => Verdict::Allowed,
        403 if body.contains("<code id=\"error-code\">forbidden</code>") => {
            Verdict::Forbidden(error_page_message(body))
        }
        _ => Verdict::Other(status, body.chars().take(400).collect()),
    }
}

fn api_verdict(status: u16, body: &str) -> Verdict {
    let json: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    match status {
        200..=299 => Verdict::Allowed,
        403 if json["error"]["code"] == "forbidden" => Verdict::Forbidden(
            json["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        ),
        _ => Verdict::Other(status, body.chars().take(400).collect()),
    }
}

/// The error page's message as the API says it: its code spans back in
/// backticks, its escapes undone.
fn error_page_message(page: &str) -> String {
    let start = "<code id=\"error-code\">forbidden</code> ";
    let Some(at) = page.find(start) else {
        return String::new();
    };
    let rest = &page[at + start.len()..];
    let html = &rest[..rest.find("</p>").unwrap_or(rest.len())];
    html.replace("<code>", "`")
        .replace("</code>", "`")
        .replace("&#60;", "<")
        .replace("&#62;", ">")
        .replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&#38;", "&")
}

/// The part of `page` from `start` to the end of its element's row or
/// block: where an offer is looked for.
fn part<'a>(page: &'a str, start: &str) -> &'a str {
    let Some(at) = page.find(start) else {
        return "";
    };
    let rest = &page[at + start.len()..];
    let end = ["</tr>", "</nav>", "</table>"]
        .iter()
        .filter_map(|end| rest.find(end))
        .min()
        .unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn the_api_and_the_pages_allow_and_refuse_each_action_alike() {
    let mut disagreements = Vec::new();
    for case in CASES {
        let needs = ROLES.iter().position(|r| *r == case.needs).expect("a role");
        for (rank, role) in ROLES.iter().enumerate() {
            let c = Console::start(Store::Sqlite, &format!("roles_{rank}"));
            (case.prepare)(&c);
            let (token, user) = match *role {
                "viewer" => (c.viewer.clone(), "vi"),
                "editor" => (c.editor.clone(), "ed"),
                _ => (c.admin.clone(), "ada"),
            };
            let cookie = c.sign_in(&token);
            let csrf = hidden(&c.get("/", Auth::Cookie(&cookie)).body, "csrf");
            let allowed = rank >= needs;
            // Offers first: the routes below change what the pages show.
            for (path, within, mark) in case.offers {
                let page = c.get(path, Auth::Cookie(&cookie)).body;
                let offered = part(&page, within).contains(mark);
                if offered != allowed {
                    disagreements.push(format!(
                        "{} as {role}: {path} {} {mark} (allowed: {allowed})",
                        case.action,
                        if offered { "offers" } else { "does not offer" }
                    ));
                }
            }
            let mut verdicts = Vec::new();
            for (method, path, body) in case.api {
                let body: Value = serde_json::from_str(body).expect("a JSON body");
                let answer = c.send(method, path, Auth::Bearer(&token), &body);
                let verdict = api_verdict(answer.status, &answer.body);
                verdicts.push((format!("{method} {path}"), verdict));
            }
            for call in case.pages {
                let (name, answer) = match call {
                    PageCall::Get(path) => (
                        format!("page GET {path}"),
                        c.get(path, Auth::Cookie(&cookie)),
                    ),
                    PageCall::Post(path, fields) => {
                        let mut with = vec![("csrf", csrf.as_str())];
                        with.extend_from_slice(fields);
                        (
                            format!("page POST {path} {fields:?}"),
                            c.post_form(path, Auth::Cookie(&cookie), &with),
                        )
                    }
                };
                verdicts.push((name, page_verdict(answer.status, &answer.body)));
            }
            let needed = format!(
                "needs the {} role; `{user}` has the {role} role",
                case.needs
            );
            let first_refusal = verdicts.iter().find_map(|(_, v)| match v {
                Verdict::Forbidden(message) => Some(message.clone()),
                _ => None,
            });
            for (route, verdict) in &verdicts {
                let agrees = match (verdict, allowed) {
                    (Verdict::Allowed, true) => true,
                    // One message on every route, naming the role needed
                    // and the user's own.
                    (Verdict::Forbidden(message), false) => {
                        Some(message) == first_refusal.as_ref() && message.contains(&needed)
                    }
                    _ => false,
                };
                if !agrees {
                    disagreements.push(format!(
                        "{} as {role}: {route} answered {verdict:?}; expected {} (the first refusal: {first_refusal:?})",
                        case.action,
                        if allowed { "it allowed".to_string() } else { format!("forbidden, `… {needed}`") }
                    ));
                }
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}
