use crate::front_matter::{FileRole, read_front_matter};
use crate::source_file::SourceFile;

const SUPPORT: &str = "---
tools:
  order_status:
    description: Looks an order up by its number
    parameters:
      order: string, the order number
      verbose?: boolean
  escalate: Hands the chat to a person
response:
  reply: string, what the customer reads
  category: [billing, shipping, other]
  order?: string, the order number when there is one
  steps: string[], what to do, in order
  refund?(object, when one is due):
    amount: number
    currency(enum): [EUR, USD]
  lines(array):
    sku: string
    quantity: integer
  tags?(array, labels): [urgent, vip]
---
Body
";

fn front_matter(text: &str) -> crate::FrontMatter {
    let read = read_front_matter(&SourceFile::new("t/system.md", text), FileRole::Template);
    assert!(read.errors.is_empty(), "{:?}", read.errors);
    read.front_matter
}

#[test]
fn the_compact_notation_is_described_as_the_prompt_prints_it() {
    let response = front_matter(SUPPORT).response.expect("a response");
    insta::assert_snapshot!(response.describe());
}

#[test]
fn the_json_schema_is_strict_closed_and_every_property_required() {
    let front_matter = front_matter(SUPPORT);
    let response = front_matter.response.expect("a response");
    insta::assert_snapshot!(
        serde_json::to_string_pretty(&response.response_format("support_chat")).expect("json")
    );
    let tools: Vec<_> = front_matter.tools.iter().map(|t| t.json()).collect();
    insta::assert_snapshot!(serde_json::to_string_pretty(&tools).expect("json"));
}

#[test]
fn a_prompt_hash_names_its_tools_and_response_and_no_more() {
    use crate::TemplateSource;
    use crate::resolve::resolve;
    use crate::syntax::Delimiters;
    let hash = |system: &str| {
        let template = TemplateSource {
            id: "p".to_string(),
            system: SourceFile::new("templates/p/system.md", system),
            user: None,
            messages: None,
        };
        let (prompts, errors) = resolve(&[template], &[], &Delimiters::default());
        assert!(errors.is_empty(), "{errors:?}");
        prompts[0].hash
    };
    let plain = hash("Answer.");
    let answered = hash("---\nresponse:\n  reply: string\n---\nAnswer.");
    let retyped = hash("---\nresponse:\n  reply: integer\n---\nAnswer.");
    let tooled = hash("---\ntools:\n  lookup: Finds\n---\nAnswer.");
    let described = hash("---\ndescription: Answers.\n---\nAnswer.");
    assert_eq!(plain, described, "a description is no part of what is sent");
    assert_ne!(plain, answered);
    assert_ne!(answered, retyped);
    assert_ne!(plain, tooled);
}
