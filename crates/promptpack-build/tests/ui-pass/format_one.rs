//! Code of an earlier format still compiles against this runtime, as long
//! as its `__generated_code!` lists that format: format 1 (Display and
//! FromStr written out per enum, `__p::prompt_index`, `__p::unknown_choice`),
//! both ways parts render, frozen as promptpack-build 0.1.0 wrote it.

mod straight_line {
    include!("format-1/straight_line.rs");
}

mod tables {
    include!("format-1/tables.rs");
}

macro_rules! reads_format_one {
    ($m:ident) => {{
        use $m::{PromptId, TutorLevel, TutorTone, TutorVars};
        let high = TutorVars { level: TutorLevel::HighSchool, tone: Some(TutorTone::Warm) };
        assert_eq!(high.render_system().as_deref(), Ok("Teen / warmly (warm)"));
        assert_eq!(TutorLevel::HighSchool.to_string(), "high school");
        assert_eq!("adult".parse::<TutorLevel>().ok(), Some(TutorLevel::Adult));
        let typo = "adlut".parse::<TutorLevel>().expect_err("not a value");
        assert_eq!(typo.code().as_str(), "invalid_choice");
        assert_eq!("tutor".parse::<PromptId>().ok(), Some(PromptId::Tutor));
        let id = "tutr".parse::<PromptId>().expect_err("no such prompt");
        assert_eq!(id.code().as_str(), "unknown_prompt");
        let prompt = PromptId::Tutor.render_generated(&|name| match name {
            "level" => Some("adult".to_string()),
            _ => None,
        });
        assert_eq!(prompt.system, "Grown-up / ");
    }};
}

fn main() {
    reads_format_one!(straight_line);
    reads_format_one!(tables);
}
