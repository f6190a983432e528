//! `Content-Type` and `Accept` negotiation for the MCP endpoint.

/// Whether `Content-Type` names JSON (`application/json`, parameters such as
/// `charset=utf-8` allowed).
pub(crate) fn is_json(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|value| {
        // What clients send, answered without parsing.
        value == "application/json" || media_type(value).eq_ignore_ascii_case("application/json")
    })
}

/// What a client's `Accept` header lets the server send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Accepts {
    pub(crate) json: bool,
    pub(crate) sse: bool,
}

/// Reads `Accept`. A missing header accepts JSON (and only JSON, so the
/// response is never a stream the client did not ask for).
pub(crate) fn accepts(accept: Option<&str>) -> Accepts {
    let Some(accept) = accept else {
        return Accepts {
            json: true,
            sse: false,
        };
    };
    // What conforming clients send, answered without parsing.
    if accept == "application/json, text/event-stream" {
        return Accepts {
            json: true,
            sse: true,
        };
    }
    let mut accepts = Accepts {
        json: false,
        sse: false,
    };
    for range in accept.split(',') {
        let mut pieces = range.split(';');
        let media = pieces.next().unwrap_or("").trim();
        let refused = pieces.any(|p| {
            let p = p.trim();
            p.strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        if refused {
            continue;
        }
        let is = |name: &str| media.eq_ignore_ascii_case(name);
        if is("*/*") {
            accepts.json = true;
            accepts.sse = true;
        } else if is("application/*") || is("application/json") {
            accepts.json = true;
        } else if is("text/*") || is("text/event-stream") {
            accepts.sse = true;
        }
    }
    accepts
}

fn media_type(value: &str) -> &str {
    value.split(';').next().unwrap_or("").trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types() {
        assert!(is_json(Some("application/json")));
        assert!(is_json(Some("Application/JSON; charset=utf-8")));
        assert!(!is_json(Some("text/plain")));
        assert!(!is_json(Some("application/jsonx")));
        assert!(!is_json(None));
    }

    #[test]
    fn accept_headers() {
        let both = Accepts {
            json: true,
            sse: true,
        };
        let json = Accepts {
            json: true,
            sse: false,
        };
        let sse = Accepts {
            json: false,
            sse: true,
        };
        let neither = Accepts {
            json: false,
            sse: false,
        };
        assert_eq!(accepts(None), json);
        assert_eq!(accepts(Some("application/json, text/event-stream")), both);
        assert_eq!(accepts(Some("text/event-stream, application/json")), both);
        assert_eq!(accepts(Some("*/*")), both);
        assert_eq!(accepts(Some("application/json")), json);
        assert_eq!(accepts(Some("text/event-stream")), sse);
        assert_eq!(accepts(Some("text/html")), neither);
        assert_eq!(accepts(Some("application/json;q=0, text/html")), neither);
        assert_eq!(accepts(Some("application/*;q=0.5")), json);
    }
}
