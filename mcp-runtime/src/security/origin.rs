//! `Host` and `Origin` allow-lists against DNS rebinding.
//!
//! A web page on `evil.example` can make a victim's browser send requests to
//! `http://127.0.0.1:PORT` by rebinding its DNS name to the loopback
//! address: the browser then sends `Host: evil.example` and
//! `Origin: http://evil.example`. Checking both before anything else runs
//! stops that. By default only loopback names are allowed.

/// Host names every server accepts by default.
const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Which `Host` and `Origin` values are accepted.
#[derive(Clone, Debug)]
pub(crate) struct OriginPolicy {
    /// Lower-case host names (no port, no brackets) allowed in `Host`.
    hosts: Vec<String>,
    /// Whether any `Host` is accepted (a proxy in front checks it).
    any_host: bool,
    /// Exact origins (`scheme://host[:port]`, lower case) allowed besides
    /// loopback ones.
    origins: Vec<String>,
}

impl Default for OriginPolicy {
    fn default() -> Self {
        OriginPolicy {
            hosts: LOOPBACK.iter().map(|h| (*h).to_owned()).collect(),
            any_host: false,
            origins: Vec::new(),
        }
    }
}

impl OriginPolicy {
    pub(crate) fn allow_host(&mut self, host: &str) {
        self.hosts.push(normalize_host(host).to_owned());
    }

    pub(crate) fn allow_any_host(&mut self) {
        self.any_host = true;
    }

    pub(crate) fn allow_origin(&mut self, origin: &str) {
        self.origins
            .push(origin.trim_end_matches('/').to_ascii_lowercase());
    }

    /// Whether a request's `Host` header (`host[:port]`) is allowed. A
    /// missing `Host` is refused: HTTP/1.1 requires it.
    pub(crate) fn host_allowed(&self, host: Option<&str>) -> bool {
        if self.any_host {
            return true;
        }
        let Some(host) = host else {
            return false;
        };
        let name = normalize_host(strip_port(host));
        self.hosts
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(name))
    }

    /// Whether an `Origin` header is allowed. Requests without one (not
    /// from a browser) pass; `Origin: null` does not.
    pub(crate) fn origin_allowed(&self, origin: Option<&str>) -> bool {
        let Some(origin) = origin else {
            return true;
        };
        let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
        if self.origins.contains(&origin) {
            return true;
        }
        let Some((scheme, authority)) = origin.split_once("://") else {
            return false;
        };
        matches!(scheme, "http" | "https")
            && !authority.contains(['/', '@'])
            && LOOPBACK.contains(&normalize_host(strip_port(authority)))
    }
}

/// `host:port` → `host`, `[::1]:8080` → `[::1]`. Byte-wise: it runs on
/// every request.
fn strip_port(authority: &str) -> &str {
    let bytes = authority.as_bytes();
    if bytes.first() == Some(&b'[') {
        return match bytes.iter().position(|&b| b == b']') {
            Some(end) => &authority[..=end],
            None => authority,
        };
    }
    match bytes.iter().rposition(|&b| b == b':') {
        Some(colon) if bytes[colon + 1..].iter().all(u8::is_ascii_digit) => &authority[..colon],
        _ => authority,
    }
}

/// `[::1]` → `::1`; a trailing dot is dropped.
fn normalize_host(host: &str) -> &str {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_allowed_by_default() {
        let policy = OriginPolicy::default();
        for host in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:3000",
            "[::1]:80",
            "LOCALHOST",
        ] {
            assert!(policy.host_allowed(Some(host)), "{host}");
        }
        for host in [
            "evil.example.com",
            "evil.example.com:8080",
            "127.0.0.2",
            "localhost.evil.com",
            "",
        ] {
            assert!(!policy.host_allowed(Some(host)), "{host}");
        }
        assert!(!policy.host_allowed(None));
    }

    #[test]
    fn configured_hosts_and_any_host() {
        let mut policy = OriginPolicy::default();
        policy.allow_host("mcp.example.com");
        assert!(policy.host_allowed(Some("mcp.example.com:443")));
        assert!(!policy.host_allowed(Some("other.example.com")));
        policy.allow_any_host();
        assert!(policy.host_allowed(Some("other.example.com")));
    }

    #[test]
    fn origins() {
        let mut policy = OriginPolicy::default();
        assert!(policy.origin_allowed(None));
        for origin in [
            "http://localhost:5173",
            "https://127.0.0.1",
            "http://[::1]:8080",
        ] {
            assert!(policy.origin_allowed(Some(origin)), "{origin}");
        }
        for origin in [
            "http://evil.example.com",
            "null",
            "file://",
            "http://localhost.evil.com",
            "http://user@localhost",
        ] {
            assert!(!policy.origin_allowed(Some(origin)), "{origin}");
        }
        policy.allow_origin("https://app.example.com/");
        assert!(policy.origin_allowed(Some("https://APP.example.com")));
        assert!(!policy.origin_allowed(Some("https://app.example.com.evil")));
    }
}
