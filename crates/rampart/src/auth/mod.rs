//! `userlist` sections at run time: users, their groups and password checks, for the
//! `http_auth(<userlist>)` and `http_auth_group(<userlist>)` fetches (and the ACLs
//! built on them) that guard `http-request auth`.
//!
//! HAProxy counterpart: src/auth.c (`check_user()`, `check_group()`,
//! `pat_match_auth()`), the userlist part of src/cfgparse.c.
//!
//! - `crypt`: crypt(3) hash schemes, which ones rampart verifies, the verification
//! - `cache`: the per-thread cache of verified credentials (HAProxy has none)
//!
//! A userlist is built once per configuration generation from the cfg model
//! ([`Userlists`], shared by the expressions that name it) and is immutable after;
//! [`diagnostics`] reports at startup the hashes rampart cannot verify.
//!
//! Not here: the `Authorization` header parsing (`sample::fetch::auth`) and the
//! `http-request auth` action (a 401 reply).

pub mod cache;
pub mod crypt;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use rampart_cfg::model::{Password, Userlist};
use rampart_cfg::{Config, Diag};
use subtle::ConstantTimeEq;

use crypt::{CryptHash, Parsed};

/// What a user's password is checked against.
#[derive(Clone)]
enum Secret {
    /// `insecure-password`: compared in constant time.
    Insecure(Box<[u8]>),
    /// `password` with a hash rampart verifies.
    Crypt(CryptHash),
    /// No password at all, a hash no password matches, or a scheme rampart does not
    /// verify (refused at startup by [`diagnostics`]): every check fails.
    Never,
}

impl std::fmt::Debug for Secret {
    /// Never prints the password or its hash.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Secret::Insecure(_) => f.write_str("Insecure(..)"),
            Secret::Crypt(h) => write!(f, "{h:?}"),
            Secret::Never => f.write_str("Never"),
        }
    }
}

/// A user of a userlist at run time.
#[derive(Debug, Clone)]
pub struct UserRt {
    pub name: Box<str>,
    secret: Secret,
    /// Indices into [`UserlistRt::groups`]: the groups the user line names and the
    /// groups whose `users` list names the user, each once.
    pub groups: Box<[u32]>,
}

/// A `userlist` section at run time.
#[derive(Debug)]
pub struct UserlistRt {
    pub name: Box<str>,
    /// Unique per build (hence per configuration generation): part of the
    /// [`cache`] keys, so a reload never reuses another generation's verifications.
    pub id: u64,
    pub groups: Box<[Box<str>]>,
    pub users: Box<[UserRt]>,
    by_name: HashMap<Box<[u8]>, u32>,
}

/// Hands out [`UserlistRt::id`]s.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl UserlistRt {
    /// Builds the runtime form of a checked `userlist` section (every group and user
    /// it names exists: the cfg parser refused the configuration otherwise).
    pub fn build(ul: &Userlist) -> UserlistRt {
        let groups: Box<[Box<str>]> = ul.groups.iter().map(|g| g.name.as_str().into()).collect();
        let gidx = |name: &str| groups.iter().position(|g| &**g == name).map(|i| i as u32);
        let users: Box<[UserRt]> = ul
            .users
            .iter()
            .map(|u| {
                let from_groups = ul.groups.iter().filter(|g| g.users.contains(&u.name)).map(|g| g.name.as_str());
                let mut idx: Vec<u32> =
                    u.groups.iter().map(String::as_str).chain(from_groups).filter_map(gidx).collect();
                idx.sort_unstable();
                idx.dedup();
                UserRt { name: u.name.as_str().into(), secret: secret(u.password.as_ref()), groups: idx.into() }
            })
            .collect();
        let by_name = users.iter().enumerate().map(|(i, u)| (u.name.as_bytes().into(), i as u32)).collect();
        UserlistRt {
            name: ul.name.as_str().into(),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            groups,
            users,
            by_name,
        }
    }

    /// The user named `name` (exact, case-sensitive as HAProxy's `strcmp`).
    pub fn user(&self, name: &[u8]) -> Option<&UserRt> {
        self.by_name.get(name).map(|&i| &self.users[i as usize])
    }

    /// The index of group `name`.
    pub fn group(&self, name: &str) -> Option<u32> {
        self.groups.iter().position(|g| &**g == name).map(|i| i as u32)
    }

    /// Whether `user` exists and `pass` is its password (HAProxy's `check_user()`).
    ///
    /// A crypt(3) verification that succeeded is remembered by this thread (see
    /// [`cache`]), so that the next request with the same credentials skips the hash.
    pub fn check(&self, user: &[u8], pass: &[u8]) -> bool {
        let Some(u) = self.user(user) else { return false };
        match &u.secret {
            Secret::Insecure(pw) => pw.ct_eq(pass).into(),
            Secret::Crypt(hash) => {
                let key = cache::key(self.id, user, pass);
                if cache::contains(&key) {
                    return true;
                }
                let ok = hash.verify(pass);
                if ok {
                    cache::insert(key);
                }
                ok
            }
            Secret::Never => false,
        }
    }
}

impl UserRt {
    /// The names of the user's groups.
    pub fn group_names<'a>(&'a self, ul: &'a UserlistRt) -> impl Iterator<Item = &'a str> + 'a {
        self.groups.iter().filter_map(|&g| ul.groups.get(g as usize)).map(|g| &**g)
    }
}

/// What a user line's password becomes.
fn secret(pw: Option<&Password>) -> Secret {
    match pw {
        Some(Password::Insecure(p)) => Secret::Insecure(p.as_bytes().into()),
        Some(Password::Crypt(h)) => match crypt::parse(h) {
            Parsed::Hash(h) => Secret::Crypt(h),
            Parsed::Unsupported(_) | Parsed::Never(_) => Secret::Never,
        },
        // COMPAT: HAProxy 2.6 crashes on the first login attempt for a user without a
        // password (it compares with a null pointer); rampart refuses the login.
        None => Secret::Never,
    }
}

/// The userlists of one configuration generation, built on first use and shared by
/// every expression that names one (give every proxy's `CompileCx` the same one).
#[derive(Debug, Default)]
pub struct Userlists {
    built: OnceLock<Vec<Arc<UserlistRt>>>,
}

impl Userlists {
    /// The userlist named `name` of `cfg` (built with all the others the first time).
    pub fn find(&self, cfg: &Config, name: &str) -> Option<Arc<UserlistRt>> {
        let lists = self.built.get_or_init(|| cfg.userlists.iter().map(|u| Arc::new(UserlistRt::build(u))).collect());
        lists.iter().find(|l| &*l.name == name).cloned()
    }
}

/// Startup diagnostics for the passwords of every userlist: an alert for a hash scheme
/// rampart cannot verify yet, a warning for a hash no password can match (HAProxy loads
/// it silently and then refuses every login).
pub fn diagnostics(cfg: &Config) -> Vec<Diag> {
    let mut out = Vec::new();
    for ul in &cfg.userlists {
        for u in &ul.users {
            let Some(Password::Crypt(text)) = &u.password else { continue };
            let at = Some(u.span.clone());
            match crypt::parse(text) {
                Parsed::Hash(_) => {}
                Parsed::Unsupported(scheme) => out.push(
                    Diag::alert(
                        at,
                        format!(
                            "user '{}' in userlist '{}': '{scheme}' password hashes are not supported yet.",
                            u.name, ul.name
                        ),
                    )
                    .with_hint(
                        "rampart verifies yescrypt, sha512crypt, sha256crypt, bcrypt and md5crypt hashes: \
                         regenerate it with 'mkpasswd -m yescrypt' or 'mkpasswd -m sha512crypt'.",
                    ),
                ),
                Parsed::Never(why) => out.push(Diag::warning(
                    at,
                    format!(
                        "user '{}' in userlist '{}': the password is not a usable crypt(3) hash ({why}); \
                         no password will match it.",
                        u.name, ul.name
                    ),
                )),
            }
        }
    }
    out
}
