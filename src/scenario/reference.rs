//! The scenario reference (`weft reference`, docs/guide/src/reference.md): every field of a
//! scenario file, read from the JSON schema that `schemars` derives from the scenario
//! structs. A field's doc comment is its meaning; its type, default and declared range
//! (`#[schemars(range(..))]`, `extend("exclusiveMinimum" = ..)`) come from the code, and its
//! unit from its name's suffix. Nothing here is written by hand per field.

use super::Scenario;
use serde_json::{Map, Value};

/// One row of the reference: a field of a scenario table.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// Dotted path, e.g. `host.nscc.accurate_base_rtt`; `NAME` stands for a key of a map
    /// (`topology.tiers.NAME.rate_gbps`), `[]` for an entry of an array of tables
    /// (`topology.link_rates[].fraction`).
    pub path: String,
    /// Its type as the reference writes it (e.g. "integer", "optional float", "table").
    pub ty: String,
    /// The default as TOML, "unset" (an optional field), "required", or empty (a table).
    pub default: String,
    /// The unit its name's suffix gives (e.g. "µs", "bytes"), or empty.
    pub unit: &'static str,
    /// Enum values as TOML strings, or the declared numeric range.
    pub allowed: String,
    /// Its doc comment (the type's, for a field without one), with enum values' docs.
    pub meaning: String,
    /// The declared numeric range (not a type's own bound such as an unsigned integer's 0).
    pub bounds: Bounds,
    /// Whether the field's values are integers.
    pub integer: bool,
}

/// A declared numeric range; each bound is inclusive unless marked exclusive.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bounds {
    /// Inclusive lower bound.
    pub min: Option<f64>,
    /// Inclusive upper bound.
    pub max: Option<f64>,
    /// Exclusive lower bound.
    pub exclusive_min: Option<f64>,
    /// Exclusive upper bound.
    pub exclusive_max: Option<f64>,
}

impl Bounds {
    /// Whether any bound is declared.
    pub fn any(&self) -> bool {
        *self != Bounds::default()
    }

    fn text(&self) -> String {
        let lo = self
            .min
            .map(|v| format!("[{}", num(v)))
            .or(self.exclusive_min.map(|v| format!("({}", num(v))));
        let hi = self
            .max
            .map(|v| format!("{}]", num(v)))
            .or(self.exclusive_max.map(|v| format!("{})", num(v))));
        match (lo, hi) {
            (Some(lo), Some(hi)) => format!("{lo}, {hi}"),
            (Some(_), None) => match (self.min, self.exclusive_min) {
                (Some(v), _) => format!("≥ {}", num(v)),
                (_, v) => format!("> {}", num(v.unwrap_or(0.0))),
            },
            (None, Some(_)) => match (self.max, self.exclusive_max) {
                (Some(v), _) => format!("≤ {}", num(v)),
                (_, v) => format!("< {}", num(v.unwrap_or(0.0))),
            },
            (None, None) => String::new(),
        }
    }
}

/// A section of the page: one TOML table and its fields.
#[derive(Clone, Debug)]
pub struct Section {
    /// The table's header as in a file, e.g. `[topology.opera]`, `[[lb.mixed]]`; empty for
    /// the top level.
    pub header: String,
    /// The doc comment of the table's type.
    pub intro: String,
    /// The table's own fields, in struct order (a sub-table is one field here, its fields
    /// in its own section).
    pub fields: Vec<Field>,
}

/// The JSON schema of a scenario file.
pub fn schema() -> Value {
    serde_json::to_value(schemars::schema_for!(Scenario)).expect("a schema is JSON")
}

/// Every table of a scenario file, depth first in the structs' field order.
pub fn sections() -> Vec<Section> {
    let root = schema();
    let defs = root["$defs"].as_object().cloned().unwrap_or_default();
    let mut out = Vec::new();
    walk(&root, "", String::new(), String::new(), &defs, &mut out);
    out
}

/// Every field, in page order.
pub fn fields() -> Vec<Field> {
    sections().into_iter().flat_map(|s| s.fields).collect()
}

/// What a field's schema holds.
enum Kind {
    /// A sub-table: its definition's name, and how it nests (`""`, `"[]"` or `".NAME"`).
    Table(String, &'static str),
    Scalar {
        ty: String,
        integer: bool,
        values: Vec<(String, String)>,
    },
}

fn walk(
    table: &Value,
    prefix: &str,
    header: String,
    intro: String,
    defs: &Map<String, Value>,
    out: &mut Vec<Section>,
) {
    let at = out.len();
    out.push(Section {
        header,
        intro,
        fields: Vec::new(),
    });
    let required: Vec<&str> = table["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let empty = Map::new();
    let props = table["properties"].as_object().unwrap_or(&empty);
    for (name, p) in props {
        let path = format!("{prefix}{name}");
        let (kind, optional) = kind(p, defs);
        let mut meaning = text(&p["description"]);
        let def_doc = p["$ref"]
            .as_str()
            .map(|r| text(&def(r, defs)["description"]))
            .unwrap_or_default();
        if meaning.is_empty() {
            meaning = def_doc.clone();
        }
        let default = default_text(p, required.contains(&name.as_str()), &kind, optional);
        let bounds = bounds(p);
        let field = match kind {
            Kind::Table(name, nest) => {
                let t = def(&format!("#/$defs/{name}"), defs);
                let (sub, header) = match nest {
                    "[]" => (format!("{path}[]."), format!("[[{path}]]")),
                    ".NAME" => (format!("{path}.NAME."), format!("[{path}.NAME]")),
                    _ => (format!("{path}."), format!("[{path}]")),
                };
                let ty = match nest {
                    "[]" => "array of tables",
                    ".NAME" => "tables by name",
                    _ if optional => "optional table",
                    _ => "table",
                };
                let f = Field {
                    path: path.clone(),
                    ty: ty.into(),
                    default,
                    unit: "",
                    allowed: format!("[`{header}`](#{})", anchor(&header)),
                    meaning,
                    bounds,
                    integer: false,
                };
                out[at].fields.push(f);
                walk(t, &sub, header, text(&t["description"]), defs, out);
                continue;
            }
            Kind::Scalar {
                ty,
                integer,
                values,
            } => {
                let allowed = allowed_text(&values, &bounds, &mut meaning);
                let ty = if optional {
                    format!("optional {ty}")
                } else {
                    ty
                };
                Field {
                    path: path.clone(),
                    ty,
                    default,
                    unit: unit(name),
                    allowed,
                    meaning: meaning.trim().to_string(),
                    bounds,
                    integer,
                }
            }
        };
        out[at].fields.push(field);
    }
}

/// The reference's default column: required, unset (an optional field), or the value (none
/// for a sub-table, whose fields have their own).
fn default_text(p: &Value, required: bool, kind: &Kind, optional: bool) -> String {
    if required {
        return "required".to_string();
    }
    match p.get("default") {
        Some(Value::Null) => "unset".into(),
        Some(v) if !matches!(kind, Kind::Table(_, "")) => format!("`{}`", toml_value(v)),
        Some(_) => String::new(),
        None if optional => "unset".into(),
        None => String::new(),
    }
}

/// The allowed column of a scalar: its enum values, or its bounds; each value's doc is
/// appended to the meaning.
fn allowed_text(values: &[(String, String)], bounds: &Bounds, meaning: &mut String) -> String {
    for (v, doc) in values.iter().filter(|(_, d)| !d.is_empty()) {
        meaning.push_str(&format!(" `\"{v}\"`: {doc}"));
    }
    if values.is_empty() {
        bounds.text()
    } else {
        let v: Vec<String> = values.iter().map(|(v, _)| format!("`\"{v}\"`")).collect();
        v.join(", ")
    }
}

fn def<'a>(reference: &str, defs: &'a Map<String, Value>) -> &'a Value {
    let name = reference.trim_start_matches("#/$defs/");
    defs.get(name)
        .unwrap_or_else(|| panic!("schema: no definition {name}"))
}

/// A field's kind, and whether it may be unset (`Option`).
fn kind(p: &Value, defs: &Map<String, Value>) -> (Kind, bool) {
    if let Some(r) = p["$ref"].as_str() {
        let d = def(r, defs);
        if d.get("properties").is_some() {
            let name = r.trim_start_matches("#/$defs/").to_string();
            return (Kind::Table(name, ""), false);
        }
        return kind(d, defs);
    }
    if let Some(any) = p["anyOf"].as_array() {
        let optional = any.iter().any(|a| a["type"] == "null");
        let rest: Vec<&Value> = any.iter().filter(|a| a["type"] != "null").collect();
        if let [one] = rest[..] {
            return (kind(one, defs).0, optional);
        }
        let tys: Vec<String> = rest
            .iter()
            .map(|a| match a.get("const") {
                Some(c) => format!("`{c}`"),
                None => match kind(a, defs).0 {
                    Kind::Scalar { ty, .. } => ty,
                    Kind::Table(name, _) => name,
                },
            })
            .collect();
        let integer = rest.iter().any(|a| a["type"] == "integer");
        let ty = tys.join(" or ");
        return (
            Kind::Scalar {
                ty,
                integer,
                values: Vec::new(),
            },
            optional,
        );
    }
    if p.get("oneOf").is_some() || p.get("enum").is_some() {
        return (
            Kind::Scalar {
                ty: "string".into(),
                integer: false,
                values: variants(p),
            },
            false,
        );
    }
    let (ty, optional) = match &p["type"] {
        Value::String(t) => (t.as_str(), false),
        Value::Array(ts) => {
            let t = ts.iter().filter_map(Value::as_str).find(|t| *t != "null");
            (t.unwrap_or("any"), ts.iter().any(|t| t == "null"))
        }
        _ => ("any", false),
    };
    let scalar = |ty: &str, integer| Kind::Scalar {
        ty: ty.into(),
        integer,
        values: Vec::new(),
    };
    let k = match ty {
        "integer" => scalar("integer", true),
        "number" => scalar("float", false),
        "boolean" => scalar("bool", false),
        "string" => scalar("string", false),
        "array" => match kind(&p["items"], defs).0 {
            Kind::Table(name, _) => Kind::Table(name, "[]"),
            Kind::Scalar { ty, .. } => match (p["minItems"].as_u64(), p["maxItems"].as_u64()) {
                (Some(n), Some(m)) if n == m => {
                    scalar(&format!("array of {n} {}", plural(&ty)), false)
                }
                _ => scalar(&format!("array of {}", plural(&ty)), false),
            },
        },
        "object" => match kind(&p["additionalProperties"], defs).0 {
            Kind::Table(name, _) => Kind::Table(name, ".NAME"),
            Kind::Scalar { ty, .. } => scalar(&format!("table of {}", plural(&ty)), false),
        },
        other => scalar(other, false),
    };
    (k, optional)
}

/// "integers", "arrays of 2 integers".
fn plural(ty: &str) -> String {
    match ty.strip_prefix("array of ") {
        Some(rest) => format!("arrays of {rest}"),
        None => format!("{ty}s"),
    }
}

/// An enum's values as TOML strings, each with its doc comment (empty if none).
fn variants(p: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let plain = |e: &Value, doc: &str, out: &mut Vec<(String, String)>| {
        for v in e.as_array().into_iter().flatten().filter_map(Value::as_str) {
            out.push((v.to_string(), doc.to_string()));
        }
    };
    plain(&p["enum"], "", &mut out);
    for alt in p["oneOf"].as_array().into_iter().flatten() {
        let doc = text(&alt["description"]);
        if let Some(c) = alt["const"].as_str() {
            out.push((c.to_string(), doc));
        } else {
            plain(&alt["enum"], &doc, &mut out);
        }
    }
    out
}

/// The declared range: schemars' `minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum`,
/// less an unsigned integer type's own bounds (0, and 255 or 65535 for `u8` and `u16`).
fn bounds(p: &Value) -> Bounds {
    let get = |k: &str| p[k].as_f64();
    let format = p["format"].as_str().unwrap_or("");
    let own_max = match format {
        "uint8" => Some(255.0),
        "uint16" => Some(65_535.0),
        _ => None,
    };
    Bounds {
        min: get("minimum").filter(|&m| !(format.starts_with("uint") && m == 0.0)),
        max: get("maximum").filter(|&m| Some(m) != own_max),
        exclusive_min: get("exclusiveMinimum"),
        exclusive_max: get("exclusiveMaximum"),
    }
}

/// The unit a field's name ends in (the code's naming convention).
fn unit(name: &str) -> &'static str {
    const SUFFIXES: [(&str, &str); 10] = [
        ("_ns", "ns"),
        ("_us", "µs"),
        ("_ps", "ps"),
        ("_bytes", "bytes"),
        ("_gbps", "Gb/s"),
        ("_pct", "%"),
        ("_pkts", "packets"),
        ("_mss", "MSS"),
        ("_mtus", "MTUs"),
        ("_bdp", "BDPs"),
    ];
    SUFFIXES
        .iter()
        .find(|(s, _)| name.ends_with(s))
        .map_or("", |(_, u)| u)
}

/// A doc comment on one line.
fn text(v: &Value) -> String {
    let s = v.as_str().unwrap_or("");
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A number as the page writes it: 10^9 for large powers of ten, 2^24 for large powers of two.
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() >= 1e6 {
        let a = v.abs();
        let p10 = a.log10().round();
        if 10f64.powf(p10) == a {
            return format!("{}10^{p10}", if v < 0.0 { "−" } else { "" });
        }
        let p2 = a.log2().round();
        if 2f64.powf(p2) == a {
            return format!("{}2^{p2}", if v < 0.0 { "−" } else { "" });
        }
    }
    if v > 0.0 && v < 1e-3 {
        let p2 = v.log2().round();
        if 2f64.powf(p2) == v {
            return format!("2^{p2}");
        }
    }
    format!("{v}")
}

/// A default value as TOML.
fn toml_value(v: &Value) -> String {
    match v {
        Value::Null => "unset".into(),
        Value::String(s) => format!("{s:?}"),
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(toml_value).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(o) if o.is_empty() => "{}".into(),
        Value::Object(o) => {
            let items: Vec<String> = o
                .iter()
                .map(|(k, v)| format!("{k} = {}", toml_value(v)))
                .collect();
            format!("{{ {} }}", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// The id of a section's heading.
fn anchor(header: &str) -> String {
    header
        .trim_matches(['[', ']'])
        .replace('.', "-")
        .to_lowercase()
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The page: docs/guide/src/reference.md.
pub fn markdown() -> String {
    let sections = sections();
    let count: usize = sections.iter().map(|s| s.fields.len()).sum();
    let mut md = String::new();
    md.push_str(
        "<!-- Generated by `weft reference -o docs/guide/src/reference.md` from the scenario \
         structs (src/scenario/): do not edit here; change a field's doc comment instead. -->\n\n",
    );
    md.push_str("# Scenario reference\n\n");
    md.push_str(&format!(
        "Every field of a scenario file ({count} fields, in {} tables), generated from the \
         code: the meaning is the field's doc comment, the type and default are the struct's, \
         the unit is the one the field's name ends in (`_ns`, `_us`, `_bytes`, `_gbps`, \
         `_pct`, `_pkts`, ...). \"optional\" fields may be left unset; integers are never \
         negative. \"allowed\" gives an enum's values or the range `weft validate` refuses \
         values outside of (\"[a, b]\" includes its ends, \"(a, b]\" excludes a); checks that \
         depend on other fields are in the meaning. An unknown key is an error. How scenarios \
         are written, with examples: [Scenarios](scenarios.md).\n\n",
        sections.len()
    ));
    for s in &sections {
        match s.header.as_str() {
            "" => md.push_str("<a id=\"top-level\"></a>\n\n## Top level\n\n"),
            h => md.push_str(&format!("<a id=\"{}\"></a>\n\n## `{h}`\n\n", anchor(h))),
        }
        if !s.intro.is_empty() {
            md.push_str(&format!("{}\n\n", s.intro));
        }
        md.push_str("| field | type | default | unit | allowed | meaning |\n");
        md.push_str("|---|---|---|---|---|---|\n");
        for f in &s.fields {
            md.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} |\n",
                f.path,
                cell(&f.ty),
                cell(&f.default),
                f.unit,
                cell(&f.allowed),
                cell(&f.meaning)
            ));
        }
        md.push('\n');
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_has_a_meaning_and_nested_tables_have_sections() {
        let sections = sections();
        let headers: Vec<&str> = sections.iter().map(|s| s.header.as_str()).collect();
        for h in [
            "[topology.opera]",
            "[host.nscc]",
            "[[lb.mixed]]",
            "[topology.tiers.NAME]",
        ] {
            assert!(headers.contains(&h), "no section {h}: {headers:?}");
        }
        for f in sections.iter().flat_map(|s| &s.fields) {
            assert!(!f.meaning.is_empty(), "{}: no doc comment", f.path);
        }
    }

    #[test]
    fn types_defaults_units_and_values_come_from_the_structs() {
        let fields = fields();
        let get = |p: &str| {
            fields
                .iter()
                .find(|f| f.path == p)
                .unwrap_or_else(|| panic!("no field {p}"))
        };
        let f = get("host.nscc.accurate_base_rtt");
        assert_eq!((f.ty.as_str(), f.default.as_str()), ("bool", "`false`"));
        let f = get("lb.psp.thresholds_bytes");
        assert_eq!(f.ty, "optional array of integers");
        assert_eq!((f.default.as_str(), f.unit), ("unset", "bytes"));
        let f = get("switch.buffer_bytes");
        assert_eq!(f.ty, "integer or `\"unlimited\"`");
        assert_eq!(f.default, "`\"unlimited\"`");
        let f = get("lb.policy");
        assert!(f.allowed.contains("`\"mixed\"`") && !f.allowed.contains("uec"));
        assert_eq!(get("topology.link_latency_ns").unit, "ns");
        assert_eq!(get("topology.link_rates[].rate_gbps").default, "required");
        assert!(!fields.iter().any(|f| f.path == "base_dir"), "serde(skip)");
    }

    #[test]
    fn numbers_read_as_the_guide_writes_them() {
        assert_eq!(num(1e9), "10^9");
        assert_eq!(num(16_777_216.0), "2^24");
        assert_eq!(num(65_536.0), "65536");
        assert_eq!(num(0.5), "0.5");
        assert_eq!(num(1.0 / 65_536.0), "2^-16");
        assert_eq!(num(0.001), "0.001");
    }
}
