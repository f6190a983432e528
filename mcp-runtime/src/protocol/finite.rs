//! Serialization that refuses non-finite floats. JSON has no NaN or
//! infinity, and serde_json writes them as `null`: a `divide` tool whose
//! `outputSchema` says `number` would answer `1e308 / 1e-308` with
//! `structuredContent: null` and no error. Everything a handler returns is
//! serialized through [`Finite`], which turns such a float into an error
//! instead.
//!
//! Hand-written: serde has no hook for one scalar type, and no maintained
//! crate offers this adapter. It forwards every call unchanged (names
//! included, so serde_json's `RawValue` still works) and costs nothing
//! measurable: each forwarding call is inlined.

use std::fmt::Display;

use serde::ser::{self, Serialize, Serializer};

/// `value`, serialized with every float checked.
pub(crate) struct Finite<'a, T: ?Sized>(pub(crate) &'a T);

impl<T: Serialize + ?Sized> Serialize for Finite<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(Checking(serializer))
    }
}

/// [`Finite`] as a `Value`.
pub(crate) fn to_value<T: Serialize + ?Sized>(
    value: &T,
) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::to_value(Finite(value))
}

fn non_finite<E: ser::Error>(value: f64) -> E {
    E::custom(format_args!(
        "{value} is not a JSON number (JSON has no NaN or infinity)"
    ))
}

/// A serializer (or one of its compound parts) whose floats are checked.
struct Checking<S>(S);

macro_rules! forward {
    ($($method:ident($type:ty)),* $(,)?) => {$(
        #[inline]
        fn $method(self, value: $type) -> Result<S::Ok, S::Error> {
            self.0.$method(value)
        }
    )*};
}

impl<S: Serializer> Serializer for Checking<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Checking<S::SerializeSeq>;
    type SerializeTuple = Checking<S::SerializeTuple>;
    type SerializeTupleStruct = Checking<S::SerializeTupleStruct>;
    type SerializeTupleVariant = Checking<S::SerializeTupleVariant>;
    type SerializeMap = Checking<S::SerializeMap>;
    type SerializeStruct = Checking<S::SerializeStruct>;
    type SerializeStructVariant = Checking<S::SerializeStructVariant>;

    forward!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_unit_struct(&'static str),
    );

    fn serialize_f32(self, value: f32) -> Result<S::Ok, S::Error> {
        match value.is_finite() {
            true => self.0.serialize_f32(value),
            false => Err(non_finite(f64::from(value))),
        }
    }

    fn serialize_f64(self, value: f64) -> Result<S::Ok, S::Error> {
        match value.is_finite() {
            true => self.0.serialize_f64(value),
            false => Err(non_finite(value)),
        }
    }

    fn serialize_none(self) -> Result<S::Ok, S::Error> {
        self.0.serialize_none()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.0.serialize_some(&Finite(value))
    }

    fn serialize_unit(self) -> Result<S::Ok, S::Error> {
        self.0.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_unit_variant(name, index, variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_newtype_struct(name, &Finite(value))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0
            .serialize_newtype_variant(name, index, variant, &Finite(value))
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        self.0.serialize_seq(len).map(Checking)
    }

    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S::Error> {
        self.0.serialize_tuple(len).map(Checking)
    }

    fn serialize_tuple_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        self.0.serialize_tuple_struct(name, len).map(Checking)
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        self.0
            .serialize_tuple_variant(name, index, variant, len)
            .map(Checking)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        self.0.serialize_map(len).map(Checking)
    }

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        self.0.serialize_struct(name, len).map(Checking)
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        self.0
            .serialize_struct_variant(name, index, variant, len)
            .map(Checking)
    }

    fn collect_str<T: Display + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.0.collect_str(value)
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// The compound parts: each element, key, value or field is checked.
macro_rules! compound {
    ($trait:ident, fields) => {
        impl<S: ser::$trait> ser::$trait for Checking<S> {
            type Ok = S::Ok;
            type Error = S::Error;

            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), S::Error> {
                self.0.serialize_field(key, &Finite(value))
            }

            fn skip_field(&mut self, key: &'static str) -> Result<(), S::Error> {
                self.0.skip_field(key)
            }

            fn end(self) -> Result<S::Ok, S::Error> {
                self.0.end()
            }
        }
    };
    ($trait:ident, $method:ident) => {
        impl<S: ser::$trait> ser::$trait for Checking<S> {
            type Ok = S::Ok;
            type Error = S::Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S::Error> {
                self.0.$method(&Finite(value))
            }

            fn end(self) -> Result<S::Ok, S::Error> {
                self.0.end()
            }
        }
    };
}

compound!(SerializeSeq, serialize_element);
compound!(SerializeTuple, serialize_element);
compound!(SerializeTupleStruct, serialize_field);
compound!(SerializeTupleVariant, serialize_field);
compound!(SerializeStruct, fields);
compound!(SerializeStructVariant, fields);

impl<S: ser::SerializeMap> ser::SerializeMap for Checking<S> {
    type Ok = S::Ok;
    type Error = S::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), S::Error> {
        self.0.serialize_key(&Finite(key))
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S::Error> {
        self.0.serialize_value(&Finite(value))
    }

    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), S::Error> {
        self.0.serialize_entry(&Finite(key), &Finite(value))
    }

    fn end(self) -> Result<S::Ok, S::Error> {
        self.0.end()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::{json, value::RawValue};

    use super::*;

    #[derive(serde::Serialize)]
    struct Reading {
        label: &'static str,
        values: Vec<f64>,
        nested: Option<BTreeMap<&'static str, (f32, f64)>>,
    }

    #[test]
    fn finite_values_serialize_as_serde_json_writes_them() {
        let reading = Reading {
            label: "ok",
            values: vec![1.5, -0.0, 1e308],
            nested: Some(BTreeMap::from([("a", (0.25_f32, 2.0))])),
        };
        assert_eq!(
            to_value(&reading).unwrap(),
            serde_json::to_value(&reading).unwrap()
        );
        let raw = RawValue::from_string(r#"{"raw":[1,2]}"#.to_owned()).unwrap();
        assert_eq!(
            serde_json::to_string(&Finite(&raw)).unwrap(),
            r#"{"raw":[1,2]}"#
        );
        assert_eq!(to_value(&json!({"x": 1})).unwrap(), json!({"x": 1}));
    }

    #[test]
    fn a_non_finite_float_anywhere_is_an_error() {
        let errors = [
            to_value(&(1e308_f64 / 1e-308)).unwrap_err(),
            to_value(&f64::NAN).unwrap_err(),
            to_value(&Reading {
                label: "deep",
                values: vec![],
                nested: Some(BTreeMap::from([("a", (f32::NEG_INFINITY, 1.0))])),
            })
            .unwrap_err(),
        ];
        assert_eq!(
            errors[0].to_string(),
            "inf is not a JSON number (JSON has no NaN or infinity)"
        );
        assert!(errors[1].to_string().starts_with("NaN is not"));
        assert!(errors[2].to_string().starts_with("-inf is not"));
        let mut bytes = Vec::new();
        assert!(serde_json::to_writer(&mut bytes, &Finite(&vec![f64::INFINITY])).is_err());
    }
}
