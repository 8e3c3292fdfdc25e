-- Conversations (issue 39): a version holds `messages.md` where a prompt of
-- two files holds `user.md`, and the conversation it resolves to (role
-- blocks, branches and the history in canonical form) beside the resolved
-- system text. Never both: one prompt, one shape, as the compiler says.
-- Versions stay append-only: adding columns updates no row.
ALTER TABLE prompt_versions
    ADD COLUMN messages_text TEXT,
    ADD COLUMN resolved_messages TEXT,
    ADD CONSTRAINT prompt_versions_one_shape
        CHECK (messages_text IS NULL OR user_text IS NULL),
    ADD CONSTRAINT prompt_versions_one_resolved_shape
        CHECK (resolved_messages IS NULL OR resolved_user IS NULL);
