//! Nothing but the trybuild cases in `ui/` (see `tests/ui.rs`).
