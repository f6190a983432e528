//! Object keys read without copying them.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;

use serde::de::{self, Deserialize, Deserializer, Visitor};

/// A JSON object key, borrowed from the input unless it has escapes.
///
/// `Cow<str>` would do, except that serde's `Deserialize` for it always
/// allocates (borrowing needs `#[serde(borrow)]`, which only a derived
/// struct field can ask for): a visitor walking `params` paid one
/// allocation per key.
pub(crate) struct Key<'de>(Cow<'de, str>);

impl Deref for Key<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Key<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }

            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }

            fn visit_string<E: de::Error>(self, key: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_keys_are_borrowed_and_escaped_ones_decoded() {
        let key: Key<'_> = serde_json::from_str(r#""name""#).unwrap();
        assert!(matches!(key.0, Cow::Borrowed("name")));
        let key: Key<'_> = serde_json::from_str(r#""n\u0061me""#).unwrap();
        assert!(matches!(&key.0, Cow::Owned(name) if name == "name"));
        assert!(serde_json::from_str::<Key<'_>>("1").is_err());
    }
}
