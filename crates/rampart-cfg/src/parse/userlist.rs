//! `userlist <name>` sections: `group <name> [users <user>,...]` and
//! `user <name> [password <hash>|insecure-password <pw>] [groups <group>,...]`, and the
//! cross-checks of users and groups once every file is read.
//!
//! HAProxy counterparts: `cfg_parse_users()` (src/cfgparse.c), `userlist_postinit()`
//! (src/auth.c).

use crate::diag::Diag;
use crate::model::{Group, Password, User, Userlist};
use crate::span::Span;

use super::value::invalid_char;
use super::{arg, too_many_args, Parser};

/// `userlist <name>`. Returns the index of the userlist the next lines fill: like HAProxy,
/// a duplicate name is ignored and its lines go to the last userlist created.
pub(super) fn open_userlist(p: &mut Parser, words: &[String], span: &Span) -> Option<usize> {
    let name = arg(words, 1);
    if name.is_empty() {
        p.alert(span, "'userlist' expects <name> as arguments.");
        return None;
    }
    if let Some(extra) = words.get(2) {
        p.alert(span, too_many_args("userlist", extra));
        return None;
    }
    if let Some(c) = invalid_char(name) {
        p.alert(span, format!("character '{c}' is not permitted in 'userlist' name '{name}'."));
        return None;
    }
    if p.userlists.iter().any(|u| u.name == name) {
        p.warning(span, format!("ignoring duplicated userlist '{name}'."));
        return p.userlists.len().checked_sub(1);
    }
    p.userlists.push(Userlist { name: name.to_owned(), groups: Vec::new(), users: Vec::new(), span: span.clone() });
    Some(p.userlists.len() - 1)
}

/// Splits a comma-separated list as `strtok()` does (empty items are skipped).
fn comma_list(text: &str) -> Vec<String> {
    text.split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// A line inside a `userlist` section.
pub(super) fn parse_userlist_line(p: &mut Parser, ul: usize, words: &[String], span: &Span) {
    match words[0].as_str() {
        "group" => parse_group(p, ul, words, span),
        "user" => parse_user(p, ul, words, span),
        other => p.alert(span, format!("unknown keyword '{other}' in 'users' section")),
    }
}

fn parse_group(p: &mut Parser, ul: usize, words: &[String], span: &Span) {
    let name = arg(words, 1);
    if name.is_empty() {
        return p.alert(span, "'group' expects <name> as arguments.");
    }
    if let Some(c) = invalid_char(name) {
        return p.alert(span, format!("character '{c}' is not permitted in 'group' name '{name}'."));
    }
    let list = &p.userlists[ul];
    if list.groups.iter().any(|g| g.name == name) {
        let msg = format!("ignoring duplicated group '{name}' in userlist '{}'.", list.name);
        return p.warning(span, msg);
    }
    let mut users = Vec::new();
    let mut i = 2;
    while !arg(words, i).is_empty() {
        if words[i] != "users" {
            return p.alert(span, "'group' only supports 'users' option.");
        }
        users = comma_list(arg(words, i + 1));
        i += 2;
    }
    p.userlists[ul].groups.push(Group { name: name.to_owned(), users, span: span.clone() });
}

fn parse_user(p: &mut Parser, ul: usize, words: &[String], span: &Span) {
    let name = arg(words, 1);
    if name.is_empty() {
        return p.alert(span, "'user' expects <name> as arguments.");
    }
    let list = &p.userlists[ul];
    if list.users.iter().any(|u| u.name == name) {
        let msg = format!("ignoring duplicated user '{name}' in userlist '{}'.", list.name);
        return p.warning(span, msg);
    }
    let mut user = User { name: name.to_owned(), password: None, groups: Vec::new(), span: span.clone() };
    let mut i = 2;
    while !arg(words, i).is_empty() {
        let value = arg(words, i + 1).to_owned();
        match words[i].as_str() {
            // COMPAT: HAProxy asks crypt(3) whether it knows the hash; with Debian's
            // libxcrypt it never refuses one, so neither does rampart.
            "password" => user.password = Some(Password::Crypt(value)),
            "insecure-password" => user.password = Some(Password::Insecure(value)),
            "groups" => user.groups = comma_list(&value),
            _ => return p.alert(span, "'user' only supports 'password', 'insecure-password' and 'groups' options."),
        }
        i += 2;
    }
    p.userlists[ul].users.push(user);
}

/// HAProxy's `userlist_postinit()`: every group a user names and every user a group names
/// must exist in the same section. Like HAProxy, stops at the first problem.
pub(super) fn check_userlists(lists: &[Userlist], out: &mut Vec<Diag>) {
    for ul in lists {
        for user in &ul.users {
            if let Some(g) = user.groups.iter().find(|g| !ul.groups.iter().any(|x| &x.name == *g)) {
                let msg = format!("userlist '{}': no such group '{g}' specified in user '{}'", ul.name, user.name);
                out.push(Diag::alert(Some(user.span.clone()), msg));
                return;
            }
        }
        for group in &ul.groups {
            if let Some(u) = group.users.iter().find(|u| !ul.users.iter().any(|x| &x.name == *u)) {
                let msg = format!("userlist '{}': no such user '{u}' specified in group '{}'", ul.name, group.name);
                out.push(Diag::alert(Some(group.span.clone()), msg));
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::Password;
    use crate::parse::tests::{alerts, parse, parse_ok, warnings};

    #[test]
    fn userlists() {
        let cfg = parse_ok(
            "userlist admins\n group ops users alice,,bob\n group dev\n\
             user alice password $6$salt$hash groups dev\n user bob insecure-password s3cret\n",
        );
        let ul = &cfg.userlists[0];
        assert_eq!(ul.name, "admins");
        assert_eq!(ul.groups[0].users, ["alice", "bob"]);
        assert_eq!(ul.users[0].password, Some(Password::Crypt("$6$salt$hash".into())));
        assert_eq!(ul.users[0].groups, ["dev"]);
        assert_eq!(ul.users[1].password, Some(Password::Insecure("s3cret".into())));
        assert_eq!(cfg.find_userlist("admins").map(|u| u.users.len()), Some(2));
    }

    #[test]
    fn userlist_messages() {
        assert_eq!(alerts("userlist\n"), ["'userlist' expects <name> as arguments."]);
        assert_eq!(alerts("userlist a b\n"), ["'userlist' cannot handle unexpected argument 'b'."]);
        assert_eq!(alerts("userlist a/b\n"), ["character '/' is not permitted in 'userlist' name 'a/b'."]);
        assert_eq!(alerts("userlist u\n group\n"), ["'group' expects <name> as arguments."]);
        assert_eq!(alerts("userlist u\n group g foo x\n"), ["'group' only supports 'users' option."]);
        assert_eq!(alerts("userlist u\n user\n"), ["'user' expects <name> as arguments."]);
        assert_eq!(
            alerts("userlist u\n user a pass x\n"),
            ["'user' only supports 'password', 'insecure-password' and 'groups' options."]
        );
        assert_eq!(alerts("userlist u\n foo\n"), ["unknown keyword 'foo' in 'users' section"]);
        assert_eq!(
            warnings("userlist u\n group g\n group g\n user a\n user a\nuserlist u\n"),
            [
                "ignoring duplicated group 'g' in userlist 'u'.",
                "ignoring duplicated user 'a' in userlist 'u'.",
                "ignoring duplicated userlist 'u'."
            ]
        );
        assert_eq!(alerts("userlist u\n user a groups x\n"), ["userlist 'u': no such group 'x' specified in user 'a'"]);
        assert_eq!(alerts("userlist u\n group g users z\n"), ["userlist 'u': no such user 'z' specified in group 'g'"]);
        let (cfg, _) = parse("userlist u\n user a\nuserlist u\n user b\n");
        assert_eq!(cfg.userlists.len(), 1);
        assert_eq!(cfg.userlists[0].users.len(), 2, "a duplicate's lines go to the last userlist");
    }
}
