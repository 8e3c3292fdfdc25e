fn main() {
    // templates/ compiled into typed Rust: `PromptId::OrderDesk`, its vars
    // struct, and from its front matter `OrderDeskTool` and
    // `OrderDeskResponse`.
    promptpack_build::compile_or_exit();
}
