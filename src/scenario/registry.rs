//! The registry of each extension kind's names: one line per switch LB policy, congestion
//! control, workload and fabric kind gives the variant, its scenario name and its doc, and
//! [`registry!`] derives from that one list the enum (with its serde name and schema, which the
//! generated scenario reference reads), `ALL` (every variant, in registry order: the tests that
//! loop over every policy, `--help` texts and validation messages use it), `name()` and
//! `FromStr` (the command line's options).
//!
//! Why a macro and not a hand-kept array: a variant left out of a hand-kept `ALL` silently
//! drops out of every test that loops over it; here adding the variant's line is the only way
//! to add the variant, and it is in `ALL` by construction.

/// `registry! { /// doc \n pub enum Name { /// doc \n Variant => "scenario_name", ... } }`
///
/// Derives `Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema`; further
/// attributes (another derive, `#[default]` on a variant) pass through.
macro_rules! registry {
    (
        $(#[$meta:meta])*
        $vis:vis enum $Name:ident {
            $( $(#[$vmeta:meta])* $Variant:ident => $key:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq,
            serde::Deserialize, serde::Serialize, schemars::JsonSchema,
        )]
        $vis enum $Name {
            $( $(#[$vmeta])* #[serde(rename = $key)] $Variant, )+
        }

        impl $Name {
            /// Every variant, in registry order (derived from the registry, never kept by hand).
            pub const ALL: [$Name; [$($key),+].len()] = [$($Name::$Variant),+];

            /// The scenario name (`lb.policy = "ofan"`, `host.cc = "nscc"`, ...).
            pub fn name(&self) -> &'static str {
                match self {
                    $($Name::$Variant => $key,)+
                }
            }
        }

        /// Parses a scenario name (command-line options take these); the error lists them.
        impl std::str::FromStr for $Name {
            type Err = String;
            fn from_str(s: &str) -> std::result::Result<$Name, String> {
                $Name::ALL.into_iter().find(|v| v.name() == s).ok_or_else(|| {
                    let names: Vec<&str> = $Name::ALL.iter().map(|v| v.name()).collect();
                    format!("\"{s}\" is not one of {}", names.join(", "))
                })
            }
        }
    };
}

pub(crate) use registry;

#[cfg(test)]
mod tests {
    use crate::scenario::{CcKind, Collective, LbPolicy, MoeDispatch, MoeImbalanceOf};
    use crate::scenario::{TopologyKind, WorkloadKind};
    use std::str::FromStr;

    /// The serde name (what a scenario file writes) and `name()` are the same string, and
    /// every name parses back to its variant, from a scenario file and from the command line.
    fn round_trips<T>(all: &[T], name: impl Fn(&T) -> &'static str)
    where
        T: serde::de::DeserializeOwned + serde::Serialize + PartialEq + std::fmt::Debug,
        T: FromStr<Err = String>,
    {
        let mut seen = std::collections::BTreeSet::new();
        for v in all {
            assert!(seen.insert(name(v)), "{} registered twice", name(v));
            let text = serde_json::to_string(v).unwrap();
            assert_eq!(text, format!("\"{}\"", name(v)));
            let back: T = serde_json::from_str(&text).unwrap();
            assert_eq!(&back, v);
            assert_eq!(&T::from_str(name(v)).unwrap(), v);
        }
        let err = T::from_str("no such name").unwrap_err();
        assert!(err.contains(name(&all[0])), "{err}");
    }

    #[test]
    fn every_registered_name_round_trips() {
        round_trips(&LbPolicy::ALL, LbPolicy::name);
        round_trips(&CcKind::ALL, CcKind::name);
        round_trips(&WorkloadKind::ALL, WorkloadKind::name);
        round_trips(&TopologyKind::ALL, TopologyKind::name);
        round_trips(&Collective::ALL, Collective::name);
        round_trips(&MoeDispatch::ALL, MoeDispatch::name);
        round_trips(&MoeImbalanceOf::ALL, MoeImbalanceOf::name);
        assert_eq!(LbPolicy::UecMixed.name(), "mixed");
    }
}
