include!("../../../../target/promptpack-ui/choices.rs");

fn main() {
    let high = TutorVars { level: TutorLevel::HighSchool, tone: Some(TutorTone::Warm) };
    assert_eq!(high.render_system().as_deref(), Ok("Teen / warmly (warm)"));
    let adult = TutorVars { level: TutorLevel::Adult, tone: None };
    assert_eq!(adult.render_system().as_deref(), Ok("Grown-up / "));
    // The enum gives its value back, and reads it.
    assert_eq!(TutorLevel::HighSchool.to_string(), "high school");
    assert_eq!("adult".parse::<TutorLevel>().ok(), Some(TutorLevel::Adult));
    let unknown = "child".parse::<TutorLevel>().expect_err("not a value");
    assert_eq!(unknown.code().as_str(), "invalid_choice");
    let help = |e: &promptpack::Error| e.diagnostics()[0].help.clone().unwrap_or_default();
    assert_eq!(help(&unknown), "the values are: high school, adult");
    let typo = "adlut".parse::<TutorLevel>().expect_err("not a value");
    assert_eq!(help(&typo), "did you mean `adult`? The values are: high school, adult");
    // As `PromptId`'s: a typo of the one prompt is named.
    let id = "tutr".parse::<PromptId>().expect_err("no such prompt");
    assert_eq!(id.code().as_str(), "unknown_prompt");
    assert_eq!(help(&id), "did you mean `tutor`? The prompts are: tutor");
    assert_eq!(TutorLevel::ALL, [TutorLevel::HighSchool, TutorLevel::Adult]);
    // The generated render takes the values by name, as tests do.
    let prompt = PromptId::Tutor.render_generated(&|name| match name {
        "level" => Some("adult".to_string()),
        "tone" => Some("warm".to_string()),
        _ => None,
    });
    assert_eq!(prompt.system, "Grown-up / warmly (warm)");
}
