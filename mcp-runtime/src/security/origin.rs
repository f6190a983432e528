//! `Host` and `Origin` allow-lists against DNS rebinding.
//!
//! A web page on `evil.example` can make a victim's browser send requests to
//! `http://127.0.0.1:PORT` by rebinding its DNS name to the loopback
//! address: the browser then sends `Host: evil.example` and
//! `Origin: http://evil.example`. Checking both before anything else runs
//! stops that. By default only loopback names are allowed.

/// Host names every server accepts by default.
const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Which `Host` and `Origin` values are accepted: what the MCP endpoint
/// checks (configured through [`HttpOptions`](crate::HttpOptions)), for an
/// endpoint of your own (a plugin's metrics endpoint) to check the same way.
/// By default, loopback names only.
#[derive(Clone, Debug)]
pub struct OriginPolicy {
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
    /// Also accepts `Host: host` (a name, without port).
    pub fn allow_host(&mut self, host: &str) {
        self.hosts.push(normalize_host(host).to_owned());
    }

    /// Accepts any well-formed `Host` (a proxy in front checks it).
    pub fn allow_any_host(&mut self) {
        self.any_host = true;
    }

    /// Also accepts `Origin: origin` (`scheme://host[:port]`).
    pub fn allow_origin(&mut self, origin: &str) {
        self.origins
            .push(origin.trim_end_matches('/').to_ascii_lowercase());
    }

    /// Whether a request's `Host` (`host[:port]`) is allowed. A missing or
    /// malformed one is refused as malformed (RFC 9112 §3.2 requires 400),
    /// even when any host is allowed.
    pub fn check_host(&self, host: Option<&str>) -> Result<(), HostRefusal> {
        let name = host.and_then(host_of).ok_or(HostRefusal::Malformed)?;
        let allowed = self.any_host
            || self
                .hosts
                .iter()
                .any(|allowed| allowed.eq_ignore_ascii_case(name));
        if allowed {
            Ok(())
        } else {
            Err(HostRefusal::NotAllowed)
        }
    }

    /// Whether an `Origin` header is allowed. Requests without one (not
    /// from a browser) pass; `Origin: null` and malformed origins do not.
    pub fn origin_allowed(&self, origin: Option<&str>) -> bool {
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
            && host_of(authority).is_some_and(|host| LOOPBACK.contains(&host))
    }
}

/// Why a `Host` was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostRefusal {
    /// Missing, or not a host and port (a 400).
    Malformed,
    /// Well formed, but not one this server answers to (a 403).
    NotAllowed,
}

/// The host of an authority (`host[:port]`), read strictly (RFC 3986
/// §3.2.2-3): a DNS name or IPv4 address (one trailing dot allowed, no
/// empty label), or an IPv6 address in one pair of brackets (returned
/// without them); a port of at most five digits below 65536. `None` for
/// anything else: a lax reading would let `[[localhost]]`, `localhost..` or
/// `localhost:99999999999` pass as loopback. One pass over the bytes: it
/// runs on every request (splitting on `:` and `.` with `str` searchers
/// cost ~1,000 instructions a request).
fn host_of(authority: &str) -> Option<&str> {
    if let Some(bracketed) = authority.strip_prefix('[') {
        let (inside, after) = bracketed.split_once(']')?;
        inside.parse::<std::net::Ipv6Addr>().ok()?;
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':')?),
        };
        return port.is_none_or(valid_port).then_some(inside);
    }
    let bytes = authority.as_bytes();
    let mut label = 0;
    let mut end = bytes.len();
    for (at, &byte) in bytes.iter().enumerate() {
        match byte {
            b'.' if label == 0 => return None,
            b'.' => label = 0,
            b':' => {
                end = at;
                if !valid_port(&authority[at + 1..]) {
                    return None;
                }
                break;
            }
            b'-' | b'_' => label += 1,
            _ if byte.is_ascii_alphanumeric() => label += 1,
            _ => return None,
        }
        if label > 63 {
            return None;
        }
    }
    // `label` is the last label's length: zero after a trailing dot,
    // which is allowed once (`localhost.`), never alone (`.`, `a..`
    // failed above).
    let name = match label {
        0 => authority[..end].strip_suffix('.')?,
        _ => &authority[..end],
    };
    (!name.is_empty() && name.len() <= 253).then_some(name)
}

/// A port: digits only, at most 65535 (empty is allowed, RFC 3986 §3.2.3).
fn valid_port(port: &str) -> bool {
    port.len() <= 5
        && port
            .bytes()
            .try_fold(0u32, |value, byte| {
                byte.is_ascii_digit()
                    .then(|| value * 10 + u32::from(byte - b'0'))
            })
            .is_some_and(|value| value <= u32::from(u16::MAX))
}

/// `[::1]` → `::1`; one trailing dot is dropped (configured names).
fn normalize_host(host: &str) -> &str {
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.strip_suffix('.').unwrap_or(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `localhost.` is loopback: the fully qualified form of the same
    /// name, which resolves only to loopback (RFC 6761 §6.3), as a
    /// browser's `http://localhost.:8080` page sends it. One dot only.
    #[test]
    fn loopback_hosts_are_allowed_by_default() {
        let policy = OriginPolicy::default();
        for host in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:3000",
            "[::1]:80",
            "LOCALHOST",
            "localhost.",
            "localhost.:8080",
            "LOCALHOST.",
        ] {
            assert_eq!(policy.check_host(Some(host)), Ok(()), "{host}");
        }
        for host in [
            "evil.example.com",
            "evil.example.com:8080",
            "127.0.0.2",
            "localhost.evil.com",
        ] {
            assert_eq!(
                policy.check_host(Some(host)),
                Err(HostRefusal::NotAllowed),
                "{host}"
            );
        }
    }

    #[test]
    fn malformed_hosts_are_refused_as_malformed_even_when_any_host_is_allowed() {
        let mut policy = OriginPolicy::default();
        for any in [false, true] {
            if any {
                policy.allow_any_host();
            }
            for host in [
                "",
                "[[localhost]]",
                "[localhost]",
                "[::1",
                "[::1]x",
                "[::1]:99999",
                "localhost..",
                "..localhost",
                "local..host",
                "localhost:99999999999",
                "localhost:65536",
                "localhost:8o",
                "localhost:+80",
                "localhost:80:80",
                "::1",
                "user@localhost",
                "localhost/x",
                "local host",
            ] {
                assert_eq!(
                    policy.check_host(Some(host)),
                    Err(HostRefusal::Malformed),
                    "{host}"
                );
            }
            assert_eq!(policy.check_host(None), Err(HostRefusal::Malformed));
        }
        let policy = OriginPolicy::default();
        for host in [
            "localhost.",
            "localhost:",
            "[::1]",
            "[::1]:65535",
            "127.0.0.1:0",
        ] {
            assert_eq!(policy.check_host(Some(host)), Ok(()), "{host}");
        }
    }

    #[test]
    fn labels_and_names_are_held_to_their_lengths() {
        let mut policy = OriginPolicy::default();
        policy.allow_any_host();
        let label = "a".repeat(63);
        let name = [label.as_str(); 4].join(".");
        assert_eq!(name.len(), 255);
        for host in [
            label.clone(),
            format!("{label}.:8080"),
            name[..253].to_owned(),
            format!("{}.", &name[..253]),
            "a.b-c_d.9".to_owned(),
        ] {
            assert_eq!(policy.check_host(Some(&host)), Ok(()), "{host}");
        }
        for host in [
            format!("{label}a"),
            format!("x.{label}a:80"),
            name[..254].to_owned(),
            ".".to_owned(),
            ":80".to_owned(),
            ".:80".to_owned(),
            "a.:8080x".to_owned(),
        ] {
            assert_eq!(
                policy.check_host(Some(&host)),
                Err(HostRefusal::Malformed),
                "{host}"
            );
        }
    }

    #[test]
    fn configured_hosts_and_any_host() {
        let mut policy = OriginPolicy::default();
        policy.allow_host("mcp.example.com");
        assert_eq!(policy.check_host(Some("mcp.example.com:443")), Ok(()));
        assert_eq!(
            policy.check_host(Some("other.example.com")),
            Err(HostRefusal::NotAllowed)
        );
        policy.allow_any_host();
        assert_eq!(policy.check_host(Some("other.example.com")), Ok(()));
    }

    #[test]
    fn origins() {
        let mut policy = OriginPolicy::default();
        assert!(policy.origin_allowed(None));
        for origin in [
            "http://localhost:5173",
            "https://127.0.0.1",
            "http://[::1]:8080",
            "http://localhost.:5173",
        ] {
            assert!(policy.origin_allowed(Some(origin)), "{origin}");
        }
        for origin in [
            "http://evil.example.com",
            "null",
            "file://",
            "http://localhost.evil.com",
            "http://user@localhost",
            "http://[::1",
            "http://[[::1]]",
            "http://localhost..",
            "http://localhost:99999999999",
            "http://localhost/app",
        ] {
            assert!(!policy.origin_allowed(Some(origin)), "{origin}");
        }
        policy.allow_origin("https://app.example.com/");
        assert!(policy.origin_allowed(Some("https://APP.example.com")));
        assert!(!policy.origin_allowed(Some("https://app.example.com.evil")));
    }
}
