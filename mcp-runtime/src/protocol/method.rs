//! Method names mapped to an enum once, at the edge.

/// The request methods of revision 2026-07-28 that a server answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Method {
    Discover,
    ToolsList,
    ToolsCall,
    ResourcesList,
    ResourcesTemplatesList,
    ResourcesRead,
    PromptsList,
    PromptsGet,
    CompletionComplete,
    SubscriptionsListen,
}

impl Method {
    pub(crate) const ALL: [Method; 10] = [
        Method::Discover,
        Method::ToolsList,
        Method::ToolsCall,
        Method::ResourcesList,
        Method::ResourcesTemplatesList,
        Method::ResourcesRead,
        Method::PromptsList,
        Method::PromptsGet,
        Method::CompletionComplete,
        Method::SubscriptionsListen,
    ];

    /// Whether this is one of the paginated `*/list` methods.
    pub(crate) fn is_list(self) -> bool {
        matches!(
            self,
            Method::ToolsList
                | Method::PromptsList
                | Method::ResourcesList
                | Method::ResourcesTemplatesList
        )
    }

    /// The server capability that offers this method, if one does.
    pub(crate) fn capability(self) -> Option<&'static str> {
        match self {
            Method::ToolsList | Method::ToolsCall => Some("tools"),
            Method::ResourcesList | Method::ResourcesTemplatesList | Method::ResourcesRead => {
                Some("resources")
            }
            Method::PromptsList | Method::PromptsGet => Some("prompts"),
            Method::CompletionComplete => Some("completions"),
            Method::Discover | Method::SubscriptionsListen => None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Method::Discover => "server/discover",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::ResourcesList => "resources/list",
            Method::ResourcesTemplatesList => "resources/templates/list",
            Method::ResourcesRead => "resources/read",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::CompletionComplete => "completion/complete",
            Method::SubscriptionsListen => "subscriptions/listen",
        }
    }
}

/// Server methods of the initialize-handshake revisions that 2026-07-28
/// removed (its changelog: the handshake, `resources/subscribe` for
/// `subscriptions/listen`, `ping` and `logging/setLevel`). A modern server
/// answers them `-32601`; the legacy adapter serves them to clients of
/// those revisions.
pub(crate) const REMOVED: [&str; 5] = [
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// The methods a client serves (the server asks through multi round-trip
/// results, and, for legacy clients, as server-to-client requests).
pub(crate) const CLIENT_METHODS: [&str; 3] =
    ["elicitation/create", "sampling/createMessage", "roots/list"];

/// A request's method: one this revision defines, or anything else (kept
/// for the error message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum MethodName {
    Known(Method),
    Unknown(Box<str>),
}

impl MethodName {
    pub(crate) fn parse(name: &str) -> MethodName {
        Method::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .map_or_else(|| MethodName::Unknown(name.into()), MethodName::Known)
    }

    pub(crate) fn as_str(&self) -> &str {
        match self {
            MethodName::Known(m) => m.name(),
            MethodName::Unknown(name) => name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in Method::ALL {
            assert_eq!(MethodName::parse(m.name()), MethodName::Known(m));
        }
        assert_eq!(
            MethodName::parse("initialize"),
            MethodName::Unknown("initialize".into())
        );
    }
}
