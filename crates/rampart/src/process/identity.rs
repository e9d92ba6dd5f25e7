//! Who the process runs as once its sockets are bound: `chroot`, then `group`/`gid`
//! and `user`/`uid`. HAProxy counterparts: the `user`/`group` keywords in
//! src/cfgparse-global.c (names resolved when the configuration is read, so `-c`
//! reports an unknown user) and `set_identity()` plus the chroot of `main()` in
//! src/haproxy.c.
//!
//! As in HAProxy, `user` only sets the uid and `group` only the gid (no implicit
//! primary group), supplementary groups are dropped only when a gid is set, and a
//! zero id means "not set".

use std::path::Path;

use nix::unistd::{Gid, Group, Uid, User};

use rampart_cfg::model::Global;

/// The ids to switch to, resolved from the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Identity {
    pub uid: Option<Uid>,
    pub gid: Option<Gid>,
}

/// Resolves `user`/`uid` and `group`/`gid` of `global`. `Err` carries one message per
/// name that does not exist.
pub fn resolve(global: &Global) -> Result<Identity, Vec<String>> {
    let mut errors = Vec::new();
    let uid = match &global.user {
        Some(name) => lookup_user(name).map_err(|e| errors.push(e)).ok(),
        None => global.uid.map(Uid::from_raw),
    };
    let gid = match &global.group {
        Some(name) => lookup_group(name).map_err(|e| errors.push(e)).ok(),
        None => global.gid.map(Gid::from_raw),
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Identity { uid: uid.filter(|u| !u.is_root()), gid: gid.filter(|g| g.as_raw() != 0) })
}

fn lookup_user(name: &str) -> Result<Uid, String> {
    match User::from_name(name) {
        Ok(Some(user)) => Ok(user.uid),
        Ok(None) => Err(format!("cannot find user id for '{name}' (global 'user')")),
        Err(e) => Err(format!("cannot find user id for '{name}' ({}:{})", e as i32, e.desc())),
    }
}

fn lookup_group(name: &str) -> Result<Gid, String> {
    match Group::from_name(name) {
        Ok(Some(group)) => Ok(group.gid),
        Ok(None) => Err(format!("cannot find group id for '{name}' (global 'group')")),
        Err(e) => Err(format!("cannot find group id for '{name}' ({}:{})", e as i32, e.desc())),
    }
}

/// `chroot(dir)` then `chdir("/")`.
pub fn enter_chroot(dir: &Path) -> nix::Result<()> {
    nix::unistd::chroot(dir)?;
    nix::unistd::chdir("/")
}

/// What dropping privileges reported.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Dropped {
    /// Non-fatal problems (HAProxy warns about them).
    pub warnings: Vec<String>,
}

/// Switches to `id`: supplementary groups and gid first, then uid. `argv0` prefixes the
/// messages as in HAProxy (`[argv0.main()] Cannot set uid 99.`). `Err` is fatal.
pub fn drop_privileges(id: Identity, argv0: &str) -> Result<Dropped, String> {
    let mut dropped = Dropped::default();
    if let Some(gid) = id.gid {
        let has_groups = nix::unistd::getgroups().is_ok_and(|g| !g.is_empty());
        if has_groups && nix::unistd::setgroups(&[]).is_err() {
            dropped.warnings.push(format!(
                "[{argv0}.main()] Failed to drop supplementary groups. Using 'gid'/'group' without 'uid'/'user' is generally useless."
            ));
        }
        nix::unistd::setgid(gid).map_err(|_| format!("[{argv0}.main()] Cannot set gid {gid}."))?;
    }
    if let Some(uid) = id.uid {
        nix::unistd::setuid(uid).map_err(|_| format!("[{argv0}.main()] Cannot set uid {uid}."))?;
    }
    Ok(dropped)
}

/// `set-dumpable`, after the privilege drop as in HAProxy: no size limit on files and
/// core dumps (a failure is fatal with `strict_limits`, a warning otherwise), and the
/// dumpable flag the kernel cleared when the user or group changed (a warning). Returns
/// the warnings; `Err` is fatal.
pub fn make_dumpable(argv0: &str, strict_limits: bool) -> Result<Vec<String>, String> {
    use nix::sys::resource::{setrlimit, Resource, RLIM_INFINITY};
    let mut warnings = Vec::new();
    for (res, what) in [(Resource::RLIMIT_FSIZE, "maximum file size"), (Resource::RLIMIT_CORE, "core dump size")] {
        if setrlimit(res, RLIM_INFINITY, RLIM_INFINITY).is_err() {
            // COMPAT: HAProxy's wording, "set the raise" included.
            let msg = format!("[{argv0}.main()] Failed to set the raise the {what}.");
            if strict_limits {
                return Err(msg);
            }
            warnings.push(msg);
        }
    }
    if crate::sys::set_dumpable().is_err() {
        warnings.push(format!("[{argv0}.main()] Failed to set the dumpable flag, no core will be dumped."));
    }
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_ids_and_zero_means_unset() {
        let global = Global { uid: Some(99), gid: Some(0), ..Global::default() };
        assert_eq!(resolve(&global), Ok(Identity { uid: Some(Uid::from_raw(99)), gid: None }));
        assert_eq!(resolve(&Global::default()), Ok(Identity::default()));
    }

    #[test]
    fn names_are_resolved_through_the_system_databases() {
        // root exists on every Linux system.
        let global = Global { user: Some("root".into()), group: Some("root".into()), ..Global::default() };
        assert_eq!(resolve(&global), Ok(Identity::default()), "root is uid/gid 0, i.e. unchanged");
    }

    #[test]
    fn unknown_names_are_all_reported() {
        let global = Global {
            user: Some("no-such-user-r4mp".into()),
            group: Some("no-such-group-r4mp".into()),
            ..Global::default()
        };
        assert_eq!(
            resolve(&global),
            Err(vec![
                "cannot find user id for 'no-such-user-r4mp' (global 'user')".to_owned(),
                "cannot find group id for 'no-such-group-r4mp' (global 'group')".to_owned(),
            ])
        );
    }

    #[test]
    fn nothing_to_drop_is_a_no_op() {
        assert_eq!(drop_privileges(Identity::default(), "rampart"), Ok(Dropped::default()));
    }
}
