include!("../../../../target/promptpack-ui/declared.rs");

fn main() {
    // `role` declares observer, teacher and student: a guest has no
    // variant, though a branch could compare with it.
    let _ = LessonVars { role: LessonRole::Guest, mood: None }.build();
}
