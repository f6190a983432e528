//! Canonical JSON: object keys sorted at every level, so that equal
//! values written in another key order (a client's arguments, a request
//! rebuilt from a map) digest equally. On its own so that the state and
//! the question digests can both use it.

use serde_json::Value;

/// JSON with object keys sorted at every level, so equal arguments digest
/// equally whatever order the client wrote them in.
pub(crate) fn canonical_json(value: &Value) -> Vec<u8> {
    fn write(value: &Value, out: &mut Vec<u8>) {
        match value {
            Value::Object(map) => {
                out.push(b'{');
                if map.keys().is_sorted() {
                    write_entries(map.iter(), out);
                } else {
                    let mut entries: Vec<_> = map.iter().collect();
                    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                    write_entries(entries.into_iter(), out);
                }
                out.push(b'}');
            }
            Value::Array(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write(item, out);
                }
                out.push(b']');
            }
            // Writing to a `Vec` cannot fail.
            scalar => {
                let _ = serde_json::to_writer(&mut *out, scalar);
            }
        }
    }
    fn write_entries<'a>(
        entries: impl Iterator<Item = (&'a String, &'a Value)>,
        out: &mut Vec<u8>,
    ) {
        for (i, (key, value)) in entries.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let _ = serde_json::to_writer(&mut *out, key);
            out.push(b':');
            write(value, out);
        }
    }
    let mut out = Vec::with_capacity(128);
    write(value, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys() {
        assert_eq!(
            canonical_json(&json!({"b": 1, "a": {"d": [2, {"z": 0, "y": 1}], "c": null}})),
            br#"{"a":{"c":null,"d":[2,{"y":1,"z":0}]},"b":1}"#.to_vec()
        );
    }
}
