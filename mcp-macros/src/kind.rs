//! The three kinds of handler the macros generate, for messages that name
//! the attribute the user wrote.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Resource,
    Prompt,
}

impl Kind {
    /// The attribute as written, e.g. `#[tool]`.
    pub(crate) fn attribute(self) -> &'static str {
        match self {
            Kind::Tool => "#[tool]",
            Kind::Resource => "#[resource]",
            Kind::Prompt => "#[prompt]",
        }
    }

    /// What the non-`#[ctx]` parameters are called.
    pub(crate) fn parameters(self) -> &'static str {
        match self {
            Kind::Tool => "tool arguments",
            Kind::Resource => "URI template variables",
            Kind::Prompt => "prompt arguments",
        }
    }
}
