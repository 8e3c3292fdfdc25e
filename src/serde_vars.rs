//! Values straight from a `serde::Serialize` implementation, for
//! `Library::build_prompt`: the top-level map or struct is read entry by
//! entry into a value table, without building a `serde_json::Value` for it.

use crate::name_index::NameIndex;
use promptpack_core::value::ValueRef;
use std::cell::Cell;

/// A value taken from a `Serialize` impl: text is kept in the collector's
/// arena, so a whole set of values costs one growing buffer, and any other
/// value in a list beside it. Plain data of twelve bytes, so a table of
/// slots is set up and thrown away without running any code per slot, and a
/// slot moves in registers: with `usize` bounds (24 bytes) it went through
/// the stack, and reading back what was just written there stalled.
#[derive(Clone, Copy)]
enum Slot {
    /// Bytes `start..end` of the arena, which stays under 4 GiB (a longer
    /// text takes the `to_value` path).
    Str(u32, u32),
    Bool(bool),
    /// JSON's null, as `serde_json::to_value` gives for `None` and `()`.
    Null,
    /// An index into the collection's JSON values.
    Json(u32),
}

/// Prompts with at most this many variables collect their values without
/// allocating a table for them.
const STACK_SLOTS: usize = 32;

/// Calls `f` with the values `vars` gives the variables `names`, numbered as
/// `names`, read straight from `vars`'s `Serialize` impl: the top-level map
/// or struct is never built, text values are copied once into one buffer,
/// and entries for names the prompt does not use are only checked.
///
/// Returns `None`, without calling `f`, whenever the result could differ
/// from rendering `serde_json::to_value(vars)` — the top level is not a map,
/// a struct or null, a key is not a string, anything fails — so that the
/// caller takes that path instead and gets its exact result or error. Values
/// other than strings, chars and booleans go through `serde_json::to_value`
/// themselves, so numbers, arrays and objects (their key order included)
/// mean exactly what they mean there. A key given twice takes its last
/// value, as in a `serde_json::Map`.
pub(crate) fn collect<T, R>(
    names: &NameIndex,
    vars: &T,
    f: impl FnOnce(&[Option<ValueRef<'_>>]) -> R,
) -> Option<R>
where
    T: serde::Serialize + ?Sized,
{
    let mut arena = take_arena();
    let mut json = Vec::new();
    let n = names.len();
    let result = if n <= STACK_SLOTS {
        let mut slots = [None; STACK_SLOTS];
        collect_into(names, vars, &mut slots[..n], &mut arena, &mut json).then(|| {
            let mut values = [None; STACK_SLOTS];
            for (value, slot) in values.iter_mut().zip(&slots[..n]) {
                *value = slot.map(|s| s.value_ref(&arena, &json));
            }
            f(&values[..n])
        })
    } else {
        let mut slots = vec![None; n];
        collect_into(names, vars, &mut slots, &mut arena, &mut json).then(|| {
            let values: Vec<Option<ValueRef<'_>>> = slots
                .iter()
                .map(|slot| slot.map(|s| s.value_ref(&arena, &json)))
                .collect();
            f(&values)
        })
    };
    give_back_arena(arena);
    result
}

thread_local! {
    /// The text buffer of the last collection on this thread, kept for the
    /// next one: most renders then allocate nothing but their output.
    static ARENA: Cell<String> = const { Cell::new(String::new()) };
}

/// Buffers larger than this are freed rather than kept.
const ARENA_KEEP: usize = 64 * 1024;

/// This thread's kept buffer, empty; a new one when there is none (the
/// first call, or a collection nested in a `Serialize` impl).
fn take_arena() -> String {
    let arena = ARENA.try_with(Cell::take).unwrap_or_default();
    if arena.capacity() == 0 {
        String::with_capacity(1024)
    } else {
        arena
    }
}

fn give_back_arena(mut arena: String) {
    if arena.capacity() <= ARENA_KEEP {
        arena.clear();
        let _ = ARENA.try_with(|kept| kept.set(arena));
    }
}

/// Fills `slots` from `vars`, their text into `arena`; false when that path
/// does not apply.
fn collect_into<T: serde::Serialize + ?Sized>(
    names: &NameIndex,
    vars: &T,
    slots: &mut [Option<Slot>],
    arena: &mut String,
    json: &mut Vec<serde_json::Value>,
) -> bool {
    let mut collector = Collector {
        names,
        slots,
        arena,
        json,
        key: None,
    };
    vars.serialize(&mut collector).is_ok()
}

impl Slot {
    #[inline]
    fn value_ref<'a>(self, arena: &'a str, json: &'a [serde_json::Value]) -> ValueRef<'a> {
        match self {
            Slot::Str(start, end) => ValueRef::Str(&arena[start as usize..end as usize]),
            Slot::Bool(b) => ValueRef::Bool(b),
            Slot::Null => ValueRef::Json(&NULL),
            // Always an index the collection pushed.
            Slot::Json(i) => json
                .get(i as usize)
                .map_or(ValueRef::Json(&NULL), ValueRef::Json),
        }
    }
}

static NULL: serde_json::Value = serde_json::Value::Null;

/// "Take the `serde_json::to_value` path instead."
#[derive(Debug)]
struct Unsupported;

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not collected directly")
    }
}

impl std::error::Error for Unsupported {}

impl serde::ser::Error for Unsupported {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        Unsupported
    }
}

/// The top-level serializer: a map or a struct of values.
struct Collector<'n, 's> {
    names: &'n NameIndex,
    slots: &'s mut [Option<Slot>],
    arena: &'s mut String,
    json: &'s mut Vec<serde_json::Value>,
    /// The key just serialized by `SerializeMap::serialize_key`: the index
    /// of the variable, or `None` for a name the prompt does not use.
    key: Option<Option<usize>>,
}

impl Collector<'_, '_> {
    fn index_of(&self, key: &str) -> Option<usize> {
        self.names.find(key)
    }

    fn entry<V: serde::Serialize + ?Sized>(
        &mut self,
        index: Option<usize>,
        value: &V,
    ) -> Result<(), Unsupported> {
        let Some(index) = index else {
            // Not used by the prompt, but it must serialize as it would
            // have inside the whole map.
            serde_json::to_value(value).map_err(|_| Unsupported)?;
            return Ok(());
        };
        let mark = self.arena.len();
        let slot = match value.serialize(ValueCollector { arena: self.arena }) {
            Ok(slot) => slot,
            Err(ValueError::Other) => {
                self.arena.truncate(mark);
                let index = u32::try_from(self.json.len()).map_err(|_| Unsupported)?;
                self.json
                    .push(serde_json::to_value(value).map_err(|_| Unsupported)?);
                Slot::Json(index)
            }
            Err(ValueError::Failed) => return Err(Unsupported),
        };
        self.slots[index] = Some(slot);
        Ok(())
    }
}

macro_rules! unsupported {
    ($error:expr; $($name:ident($($arg:ty),*) -> $ok:ty;)*) => {
        $(fn $name(self, $(_: $arg),*) -> Result<$ok, Self::Error> {
            Err($error)
        })*
    };
}

impl serde::Serializer for &mut Collector<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = serde::ser::Impossible<(), Unsupported>;
    type SerializeTuple = serde::ser::Impossible<(), Unsupported>;
    type SerializeTupleStruct = serde::ser::Impossible<(), Unsupported>;
    type SerializeTupleVariant = serde::ser::Impossible<(), Unsupported>;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = serde::ser::Impossible<(), Unsupported>;

    unsupported! { Unsupported;
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> ();
        serialize_i16(i16) -> ();
        serialize_i32(i32) -> ();
        serialize_i64(i64) -> ();
        serialize_u8(u8) -> ();
        serialize_u16(u16) -> ();
        serialize_u32(u32) -> ();
        serialize_u64(u64) -> ();
        serialize_f32(f32) -> ();
        serialize_f64(f64) -> ();
        serialize_char(char) -> ();
        serialize_str(&str) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    // `to_value` gives null for these, which means "no values".
    fn serialize_none(self) -> Result<(), Unsupported> {
        Ok(())
    }

    fn serialize_unit(self) -> Result<(), Unsupported> {
        Ok(())
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Unsupported> {
        Ok(())
    }

    fn serialize_some<V: serde::Serialize + ?Sized>(self, value: &V) -> Result<(), Unsupported> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<V: serde::Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &V,
    ) -> Result<(), Unsupported> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<V: serde::Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &V,
    ) -> Result<(), Unsupported> {
        Err(Unsupported)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self, Unsupported> {
        Ok(self)
    }

    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Self, Unsupported> {
        // serde_json's own markers (raw values, arbitrary precision numbers).
        if name.starts_with("$serde_json::") {
            return Err(Unsupported);
        }
        Ok(self)
    }
}

impl serde::ser::SerializeMap for &mut Collector<'_, '_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_key<K: serde::Serialize + ?Sized>(&mut self, key: &K) -> Result<(), Unsupported> {
        let index = key.serialize(KeyIndex { names: self.names })?;
        self.key = Some(index);
        Ok(())
    }

    fn serialize_value<V: serde::Serialize + ?Sized>(
        &mut self,
        value: &V,
    ) -> Result<(), Unsupported> {
        let index = self.key.take().ok_or(Unsupported)?;
        self.entry(index, value)
    }

    fn end(self) -> Result<(), Unsupported> {
        Ok(())
    }
}

impl serde::ser::SerializeStruct for &mut Collector<'_, '_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_field<V: serde::Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &V,
    ) -> Result<(), Unsupported> {
        let index = self.index_of(key);
        self.entry(index, value)
    }

    fn end(self) -> Result<(), Unsupported> {
        Ok(())
    }
}

/// A map key, as the index of the variable it names (`None` for a name the
/// prompt does not use). Only string keys: the other key types `serde_json`
/// accepts (numbers, booleans) are left to it.
struct KeyIndex<'n> {
    names: &'n NameIndex,
}

impl serde::Serializer for KeyIndex<'_> {
    type Ok = Option<usize>;
    type Error = Unsupported;
    type SerializeSeq = serde::ser::Impossible<Option<usize>, Unsupported>;
    type SerializeTuple = serde::ser::Impossible<Option<usize>, Unsupported>;
    type SerializeTupleStruct = serde::ser::Impossible<Option<usize>, Unsupported>;
    type SerializeTupleVariant = serde::ser::Impossible<Option<usize>, Unsupported>;
    type SerializeMap = serde::ser::Impossible<Option<usize>, Unsupported>;
    type SerializeStruct = serde::ser::Impossible<Option<usize>, Unsupported>;
    type SerializeStructVariant = serde::ser::Impossible<Option<usize>, Unsupported>;

    fn serialize_str(self, key: &str) -> Result<Option<usize>, Unsupported> {
        Ok(self.names.find(key))
    }

    unsupported! { Unsupported;
        serialize_bool(bool) -> Option<usize>;
        serialize_i8(i8) -> Option<usize>;
        serialize_i16(i16) -> Option<usize>;
        serialize_i32(i32) -> Option<usize>;
        serialize_i64(i64) -> Option<usize>;
        serialize_u8(u8) -> Option<usize>;
        serialize_u16(u16) -> Option<usize>;
        serialize_u32(u32) -> Option<usize>;
        serialize_u64(u64) -> Option<usize>;
        serialize_f32(f32) -> Option<usize>;
        serialize_f64(f64) -> Option<usize>;
        serialize_char(char) -> Option<usize>;
        serialize_bytes(&[u8]) -> Option<usize>;
        serialize_none() -> Option<usize>;
        serialize_unit() -> Option<usize>;
        serialize_unit_struct(&'static str) -> Option<usize>;
        serialize_unit_variant(&'static str, u32, &'static str) -> Option<usize>;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_some<V: serde::Serialize + ?Sized>(
        self,
        _: &V,
    ) -> Result<Option<usize>, Unsupported> {
        Err(Unsupported)
    }

    fn serialize_newtype_struct<V: serde::Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &V,
    ) -> Result<Option<usize>, Unsupported> {
        Err(Unsupported)
    }

    fn serialize_newtype_variant<V: serde::Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &V,
    ) -> Result<Option<usize>, Unsupported> {
        Err(Unsupported)
    }
}

/// Why a value was not collected directly.
#[derive(Debug)]
enum ValueError {
    /// Not text, a char or a flag: convert it with `serde_json::to_value`.
    Other,
    /// Its `Serialize` impl failed: take the `to_value` path for the whole
    /// set, which reports it.
    Failed,
}

impl std::fmt::Display for ValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not collected directly")
    }
}

impl std::error::Error for ValueError {}

impl serde::ser::Error for ValueError {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        ValueError::Failed
    }
}

/// One value: text (into the arena), a char or a flag directly, through
/// options and newtypes as `serde_json` does; [`ValueError::Other`] for
/// anything else.
struct ValueCollector<'a> {
    arena: &'a mut String,
}

impl serde::Serializer for ValueCollector<'_> {
    type Ok = Slot;
    type Error = ValueError;
    type SerializeSeq = serde::ser::Impossible<Slot, ValueError>;
    type SerializeTuple = serde::ser::Impossible<Slot, ValueError>;
    type SerializeTupleStruct = serde::ser::Impossible<Slot, ValueError>;
    type SerializeTupleVariant = serde::ser::Impossible<Slot, ValueError>;
    type SerializeMap = serde::ser::Impossible<Slot, ValueError>;
    type SerializeStruct = serde::ser::Impossible<Slot, ValueError>;
    type SerializeStructVariant = serde::ser::Impossible<Slot, ValueError>;

    fn serialize_str(self, s: &str) -> Result<Slot, ValueError> {
        let start = self.arena.len();
        let bounds = u32::try_from(start)
            .ok()
            .zip(u32::try_from(start.saturating_add(s.len())).ok());
        let Some((start, end)) = bounds else {
            return Err(ValueError::Other);
        };
        self.arena.push_str(s);
        Ok(Slot::Str(start, end))
    }

    fn serialize_char(self, c: char) -> Result<Slot, ValueError> {
        self.serialize_str(c.encode_utf8(&mut [0; 4]))
    }

    fn serialize_bool(self, b: bool) -> Result<Slot, ValueError> {
        Ok(Slot::Bool(b))
    }

    // As `serde_json::to_value`: null, and the variant's name.
    fn serialize_none(self) -> Result<Slot, ValueError> {
        Ok(Slot::Null)
    }

    fn serialize_unit(self) -> Result<Slot, ValueError> {
        Ok(Slot::Null)
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<Slot, ValueError> {
        Ok(Slot::Null)
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Slot, ValueError> {
        self.serialize_str(variant)
    }

    fn serialize_some<V: serde::Serialize + ?Sized>(self, value: &V) -> Result<Slot, ValueError> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<V: serde::Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &V,
    ) -> Result<Slot, ValueError> {
        value.serialize(self)
    }

    unsupported! { ValueError::Other;
        serialize_i8(i8) -> Slot;
        serialize_i16(i16) -> Slot;
        serialize_i32(i32) -> Slot;
        serialize_i64(i64) -> Slot;
        serialize_i128(i128) -> Slot;
        serialize_u8(u8) -> Slot;
        serialize_u16(u16) -> Slot;
        serialize_u32(u32) -> Slot;
        serialize_u64(u64) -> Slot;
        serialize_u128(u128) -> Slot;
        serialize_f32(f32) -> Slot;
        serialize_f64(f64) -> Slot;
        serialize_bytes(&[u8]) -> Slot;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_newtype_variant<V: serde::Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &V,
    ) -> Result<Slot, ValueError> {
        Err(ValueError::Other)
    }
}

#[cfg(test)]
mod tests {
    use crate::library::Library;
    use promptpack_core::program::VarInfo;
    use promptpack_core::render::MissingVars;
    use promptpack_core::source_file::SourceFile;
    use promptpack_core::sources::TemplateSource;
    use promptpack_core::vars::VarNames;
    use serde::Serialize;
    use serde_json::json;
    use std::collections::{BTreeMap, HashMap};

    fn library() -> Library {
        let system = "a={{a}} b={{b}} n={{n}} o={{o}} c={{c}} \
                      {{#if flag}}F{{else}}f{{/if}}{{#if a}}A{{/if}}{{#if n}}N{{/if}}{{#if o}}O{{/if}}";
        Library::from_sources(
            vec![TemplateSource {
                id: "t".into(),
                system: SourceFile::new("templates/t/system.md", system),
                user: Some(SourceFile::new(
                    "templates/t/user.md",
                    "u={{u}}{{#if b}}B{{/if}}",
                )),
                messages: None,
            }],
            vec![],
            &crate::Config::default(),
        )
        .expect("valid")
    }

    /// `build_prompt` (collected directly where it can) against rendering
    /// `serde_json::to_value(vars)`, which it must equal in every case.
    fn same<T: Serialize + ?Sized>(vars: &T) {
        let library = library();
        for mode in [MissingVars::Error, MissingVars::KeepToken] {
            let direct = if mode == MissingVars::Error {
                library.build_prompt("t", vars)
            } else {
                library.build_prompt_lenient("t", vars)
            };
            // What `build_prompt` did before it collected values directly.
            let via_value =
                crate::library::to_map(vars).and_then(|map| library.render("t", &map, mode));
            assert_eq!(
                direct,
                via_value,
                "{}",
                serde_json::to_string(vars).unwrap_or_default()
            );
        }
    }

    #[derive(Serialize)]
    struct Typed<'a> {
        a: &'a str,
        b: Option<&'a str>,
        n: f64,
        o: Inner,
        c: char,
        flag: bool,
        u: Unit,
        unused: Vec<u8>,
    }

    #[derive(Serialize)]
    struct Inner {
        z: u32,
        y: Vec<&'static str>,
    }

    #[derive(Serialize)]
    enum Unit {
        Variant,
    }

    #[derive(Serialize)]
    struct Newtype<T>(T);

    #[derive(Serialize)]
    enum Wrapped {
        A(BTreeMap<&'static str, &'static str>),
    }

    struct Failing;

    impl Serialize for Failing {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("nope"))
        }
    }

    #[test]
    fn collected_values_render_as_to_value_does() {
        same(
            &json!({"a": "x{{b}}", "b": "", "n": 562.5, "o": {"k": [1, null]}, "c": "c",
                     "flag": false, "u": "user"}),
        );
        same(&json!({"a": 0, "b": true, "n": 1e21, "o": [], "c": null, "flag": "0", "u": -7}));
        same(&json!({"a": 9007199254740993u64, "b": {}, "n": 0, "o": {"2": 1, "b": 2, "1": 3}}));
        same(&json!({"a": "first", "a2": 1}));
        same(&json!({}));
        same(&json!(null));
        same(&json!([1, 2]));
        same(&json!("text"));
        same(&json!(true));
        same(&Typed {
            a: "ä",
            b: None,
            n: f64::NAN,
            o: Inner {
                z: 3,
                y: vec!["p", "q"],
            },
            c: 'ç',
            flag: true,
            u: Unit::Variant,
            unused: vec![1, 2],
        });
        same(&Typed {
            a: "",
            b: Some("b"),
            n: -0.0,
            o: Inner { z: 0, y: vec![] },
            c: '\u{0}',
            flag: false,
            u: Unit::Variant,
            unused: vec![],
        });
        same(&Some(json!({"a": "in an option"})));
        same(&Newtype(json!({"a": "in a newtype"})));
        same(&Newtype(HashMap::from([
            ("a", Newtype(Some("x"))),
            ("b", Newtype(None)),
        ])));
        same(&Wrapped::A(BTreeMap::from([("a", "variant")])));
        same(&HashMap::from([(1, "one")]));
        same(&BTreeMap::from([("a", Failing)]));
        same(&BTreeMap::from([("unused", Failing)]));
        same(&BTreeMap::from([(
            "a",
            BTreeMap::from([(vec![1], "key is not a string")]),
        )]));
        same(&BTreeMap::from([(
            "unused",
            BTreeMap::from([(vec![1], "key is not a string")]),
        )]));
        same(&(1, 2));
        same(&());
        same(&[("a", "x")]);
        same(&vec![("a", "x"), ("b", "y")].into_iter().collect::<Vec<_>>());
        same(&BTreeMap::from([("a", 1u128 << 70), ("b", 5u128)]));
        same(&BTreeMap::from([("a", -1i128)]));
    }

    #[test]
    fn maps_and_structs_are_collected_directly() {
        fn direct<T: Serialize + ?Sized>(vars: &T) -> bool {
            let library = library();
            let names = &library.get("t").expect("t").vars;
            super::collect(&crate::name_index::NameIndex::new(names), vars, |_| ()).is_some()
        }
        assert!(direct(&json!({"a": "x", "n": 1, "o": {"k": 1}, "zz": [1]})));
        assert!(direct(&BTreeMap::from([("a", "x")])));
        assert!(direct(&Some(Newtype(HashMap::from([("b", "y")])))));
        assert!(direct(&json!(null)));
        assert!(!direct(&json!([1])));
        assert!(!direct(&HashMap::from([(1, "one")])));
        assert!(!direct(&BTreeMap::from([("a", Failing)])));
    }

    /// `get_many` gives what one `get` per name gives, walked or looked up.
    fn same_as_get(vars: &dyn promptpack_core::vars::Vars, names: &[VarInfo]) {
        let mut many = vec![None; names.len()];
        vars.get_many(VarNames::new(names), &mut many);
        let one_by_one: Vec<_> = names.iter().map(|v| vars.get(&v.name)).collect();
        assert_eq!(many, one_by_one);
    }

    #[test]
    fn get_many_agrees_with_get() {
        let library = library();
        let names = &library.get("t").expect("t").vars;
        for extra in [0, 5, 40] {
            let mut map: HashMap<String, String> = (0..extra)
                .map(|i| (format!("extra{i}"), format!("{i}")))
                .collect();
            map.insert("b".into(), "B".into());
            map.insert("flag".into(), String::new());
            same_as_get(&map, names);
            let json: serde_json::Map<String, serde_json::Value> = map
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .chain([("n".to_string(), json!(3))])
                .collect();
            same_as_get(&json, names);
            same_as_get(&&json, names);
            let refs: HashMap<&str, super::ValueRef<'_>> = [
                ("a", super::ValueRef::Str("x")),
                ("o", super::ValueRef::Bool(true)),
            ]
            .into_iter()
            .collect();
            same_as_get(&refs, names);
            same_as_get(&BTreeMap::from([("u", "v")]), names);
        }
        let mut values = vec![None; names.len()];
        let walked: HashMap<&str, &str> = HashMap::from([("a", "x")]);
        promptpack_core::vars::Vars::get_many(&walked, VarNames::new(names), &mut values);
        assert_eq!(values[0], Some(super::ValueRef::Str("x")));
        assert!(values[1..].iter().all(Option::is_none));
    }

    #[test]
    fn many_names_in_any_order_are_found() {
        let n = 300;
        let system: String = (0..n).map(|i| format!("{{{{v{i}}}}},")).collect();
        let library = Library::from_sources(
            vec![TemplateSource {
                id: "many".into(),
                system: SourceFile::new("templates/many/system.md", system),
                user: None,
                messages: None,
            }],
            vec![],
            &crate::Config::default(),
        )
        .expect("valid");
        let want: String = (0..n).map(|i| format!("{i},")).collect();
        // In the prompt's order, reversed (past the scanning budget: hashed),
        // and with names the prompt does not use in between.
        let in_order: serde_json::Map<String, serde_json::Value> =
            (0..n).map(|i| (format!("v{i}"), json!(i))).collect();
        let reversed: serde_json::Map<String, serde_json::Value> = (0..n)
            .rev()
            .flat_map(|i| [(format!("v{i}"), json!(i)), (format!("x{i}"), json!("x"))])
            .collect();
        for vars in [in_order, reversed] {
            let prompt = library.build_prompt("many", &vars).expect("renders");
            assert_eq!(prompt.system, want);
        }
    }

    #[test]
    fn a_key_given_twice_takes_its_last_value() {
        struct Twice;
        impl Serialize for Twice {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut map = s.serialize_map(None)?;
                map.serialize_entry("a", "first")?;
                map.serialize_entry("b", &1)?;
                map.serialize_entry("a", &2.5)?;
                map.serialize_entry("b", "second")?;
                map.end()
            }
        }
        same(&Twice);
        let prompt = library()
            .build_prompt_lenient("t", &Twice)
            .expect("renders");
        assert!(
            prompt.system.starts_with("a=2.5 b=second"),
            "{}",
            prompt.system
        );
    }
}
