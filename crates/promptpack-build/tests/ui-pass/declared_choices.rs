include!("../../../../target/promptpack-ui/declared.rs");

use promptpack::{Library, MissingVars, SourceFile, TemplateSource};
use std::collections::HashMap;

fn main() {
    // Every declared value, in the declared order: `observer`, which no
    // branch compares, has a variant too.
    assert_eq!(
        LessonRole::ALL,
        [LessonRole::Observer, LessonRole::Teacher, LessonRole::Student]
    );
    assert_eq!(LessonMood::ALL, [LessonMood::Calm, LessonMood::Excited]);
    let watching = LessonVars { role: LessonRole::Observer, mood: Some(LessonMood::Excited) };
    assert_eq!(PromptId::Lesson.choices(), [("role", &["observer", "teacher", "student"][..]), ("mood", &["calm", "excited"][..])]);
    let prompt = PromptId::Lesson.render_generated(&|name| match name {
        "role" => Some(watching.role.to_string()),
        "mood" => watching.mood.map(|m| m.to_string()),
        _ => None,
    });
    assert_eq!(prompt.system, "Watch quietly.\nMood: excited.");
    assert_eq!("observer".parse::<LessonRole>().ok(), Some(LessonRole::Observer));

    // Generated and interpreted renders agree on every declared value of
    // each choice, the optional one also absent.
    let library = Library::from_sources(
        vec![TemplateSource {
            id: "lesson".into(),
            system: SourceFile::new(
                "templates/lesson/system.md",
                include_str!("../../../../tests/codegen/declared-choices/templates/lesson/system.md"),
            ),
            user: None,
            messages: None,
        }],
        vec![],
        &promptpack::Config::default(),
    )
    .expect("the prompt loads");
    let moods = LessonMood::ALL.map(Some);
    let mut cases = 0;
    for role in LessonRole::ALL {
        for mood in moods.iter().copied().chain([None]) {
            let values: HashMap<&str, String> = [("role", Some(role.to_string())), ("mood", mood.map(|m| m.to_string()))]
                .into_iter()
                .filter_map(|(k, v)| Some((k, v?)))
                .collect();
            let generated = PromptId::Lesson.render_generated(&|name| values.get(name).cloned());
            let interpreted = library
                .render("lesson", &values, MissingVars::Error)
                .expect("renders");
            assert_eq!(generated.system, interpreted.system, "{role} {mood:?}");
            assert_eq!(generated.hash, interpreted.hash);
            cases += 1;
        }
    }
    assert_eq!(cases, 9);
}
