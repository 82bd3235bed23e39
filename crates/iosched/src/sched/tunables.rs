//! Declared tunables, like the sysfs tables of Linux elevators: each has a name, default, unit
//! and range, and values are validated against them.

use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Tunable {
    pub name: &'static str,
    /// The value must be a whole number (a count, a seed): 1.5 is an error, not truncated.
    pub integer: bool,
    pub default: f64,
    pub unit: &'static str,
    pub min: f64,
    pub max: f64,
    pub help: &'static str,
}

impl Tunable {
    /// The values it takes, in words with its unit: "a number from 0 to 60000 ms", "a whole
    /// number from 1 to 256 requests", "true or false (1 or 0)". Errors quote it.
    pub fn accepted(&self) -> String {
        if self.unit == "bool" {
            return "true or false (1 or 0)".to_string();
        }
        let kind = if self.integer { "a whole number" } else { "a number" };
        let unit = if self.unit.is_empty() { String::new() } else { format!(" {}", self.unit) };
        format!("{kind} from {} to {}{unit}", self.min, self.max)
    }

    /// `read_expire (ms)`: the name with its unit, as lists of tunables show it.
    pub fn with_unit(&self) -> String {
        if self.unit.is_empty() {
            self.name.to_string()
        } else {
            format!("{} ({})", self.name, self.unit)
        }
    }
}

/// Validated values for a scheduler's tunables (defaults filled in).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TunableValues {
    values: BTreeMap<&'static str, f64>,
}

impl TunableValues {
    /// Checks `given` against `declared`; the error names the tunable and the value.
    pub fn resolve(declared: &[Tunable], given: &BTreeMap<String, f64>) -> Result<Self, String> {
        for name in given.keys() {
            if !declared.iter().any(|t| t.name == name) {
                let known: Vec<_> = declared.iter().map(Tunable::with_unit).collect();
                return Err(if known.is_empty() {
                    format!("unknown tunable `{name}` (this scheduler has none)")
                } else {
                    format!("unknown tunable `{name}` (known: {})", known.join(", "))
                });
            }
        }
        let mut values = BTreeMap::new();
        for t in declared {
            let v = given.get(t.name).copied().unwrap_or(t.default);
            if !(v.is_finite() && v >= t.min && v <= t.max) {
                return Err(format!("tunable `{}` = {v} is out of range: it takes {}", t.name, t.accepted()));
            }
            if t.integer && v.fract() != 0.0 {
                return Err(format!("tunable `{}` = {v} is not a whole number: it takes {}", t.name, t.accepted()));
            }
            if t.unit == "bool" && v != 0.0 && v != 1.0 {
                return Err(format!("tunable `{}` = {v} is not true or false: it takes {}", t.name, t.accepted()));
            }
            values.insert(t.name, v);
        }
        Ok(TunableValues { values })
    }

    pub fn get(&self, name: &str) -> f64 {
        *self.values.get(name).unwrap_or_else(|| panic!("tunable `{name}` was not declared"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &[Tunable] = &[Tunable { name: "w", integer: false, default: 0.5, unit: "", min: 0.0, max: 1.0, help: "" }];

    #[test]
    fn defaults_and_errors() {
        let v = TunableValues::resolve(T, &BTreeMap::new()).unwrap();
        assert_eq!(v.get("w"), 0.5);
        let bad: BTreeMap<String, f64> = [("w".to_string(), 2.0)].into();
        assert!(TunableValues::resolve(T, &bad).unwrap_err().contains("out of range: it takes a number from 0 to 1"));
        let unknown: BTreeMap<String, f64> = [("x".to_string(), 2.0)].into();
        assert!(TunableValues::resolve(T, &unknown).unwrap_err().contains("unknown tunable `x`"));
    }

    #[test]
    fn integer_tunables_refuse_fractions() {
        const I: &[Tunable] = &[Tunable { name: "n", integer: true, default: 1.0, unit: "", min: 0.0, max: 10.0, help: "" }];
        let v: BTreeMap<String, f64> = [("n".to_string(), 1.5)].into();
        assert_eq!(
            TunableValues::resolve(I, &v).unwrap_err(),
            "tunable `n` = 1.5 is not a whole number: it takes a whole number from 0 to 10"
        );
        let v: BTreeMap<String, f64> = [("n".to_string(), 2.0)].into();
        assert_eq!(TunableValues::resolve(I, &v).unwrap().get("n"), 2.0);
    }
}
