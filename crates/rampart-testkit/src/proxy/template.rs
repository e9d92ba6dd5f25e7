//! `${NAME}` placeholders in test configurations, substituted by the testkit before the
//! file is written, like VTest's macros (`${h1_fe1_sock}`, `${s1_addr}`).
//!
//! Only names the testkit defined are replaced; any other `${...}` is left untouched so
//! the configuration's own environment-variable syntax still reaches the binary.

/// Placeholder names and their values, in definition order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Vars(Vec<(String, String)>);

impl Vars {
    /// Defines (or redefines) `name`.
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let (name, value) = (name.into(), value.into());
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = value,
            None => self.0.push((name, value)),
        }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }
}

/// Replaces each `${NAME}` whose NAME is in `vars`; leaves the rest as written.
pub(crate) fn substitute(text: &str, vars: &Vars) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let value = after.find('}').and_then(|end| Some((end, vars.get(&after[..end])?)));
        match value {
            Some((end, value)) => {
                out.push_str(value);
                rest = &after[end + 1..];
            }
            None => {
                out.push_str("${");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutes_known_names_only() {
        let mut vars = Vars::default();
        vars.set("fe1", "7");
        vars.set("s1_port", "8080");
        let text = "bind fd@${fe1}\nserver s1 127.0.0.1:${s1_port}\nbind \"${HOME}\" ${unclosed";
        assert_eq!(substitute(text, &vars), "bind fd@7\nserver s1 127.0.0.1:8080\nbind \"${HOME}\" ${unclosed");
    }

    #[test]
    fn nested_looking_text_is_left_alone() {
        let mut vars = Vars::default();
        vars.set("a", "X");
        assert_eq!(substitute("${${a}}", &vars), "${X}");
        assert_eq!(substitute("$${a}$", &vars), "$X$");
    }
}
