include!("../../../../target/promptpack-ui/choices.rs");

fn main() {
    let high = TutorVars { level: TutorLevel::HighSchool, tone: Some(TutorTone::Warm) };
    assert_eq!(high.render_system(), "Teen / warmly (warm)");
    let adult = TutorVars { level: TutorLevel::Adult, tone: None };
    assert_eq!(adult.render_system(), "Grown-up / ");
    // The enum gives its value back, and reads it.
    assert_eq!(TutorLevel::HighSchool.to_string(), "high school");
    assert_eq!("adult".parse::<TutorLevel>().ok(), Some(TutorLevel::Adult));
    let unknown = "child".parse::<TutorLevel>().expect_err("not a value");
    assert_eq!(unknown.code().as_str(), "invalid_choice");
    assert_eq!(TutorLevel::ALL, [TutorLevel::HighSchool, TutorLevel::Adult]);
    // The generated render takes the values by name, as tests do.
    let prompt = PromptId::Tutor.render_generated(&|name| match name {
        "level" => Some("adult".to_string()),
        "tone" => Some("warm".to_string()),
        _ => None,
    });
    assert_eq!(prompt.system, "Grown-up / warmly (warm)");
}
