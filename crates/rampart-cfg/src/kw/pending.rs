//! Features whose keywords rampart accepts without acting on them yet, because
//! refusing them would refuse nearly every real configuration. None is left: logs
//! are sent (issue 7) and health checks run (issue 9); the mechanism stays for the
//! next such feature. Each
//! feature prints one warning at startup (and with `-c`), at the first line using it,
//! naming what is not done. Any other keyword rampart does not act on is refused with
//! "'kw' is not supported yet".
//!
//! The keywords are named as in [`super::every_keyword`]; the daemon's test of runtime
//! readers accepts them as handled by this warning.

use crate::span::Span;

/// A feature that is parsed and kept, but does nothing yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pending {
    /// Logging: nothing is sent to a syslog server or a sink.
    Logs,
}

impl Pending {
    pub const ALL: [Pending; 1] = [Pending::Logs];

    /// The startup warning (the line of the first use is prefixed to it).
    pub fn warning(self) -> &'static str {
        match self {
            Pending::Logs => {
                "logs are not sent yet: 'log' lines and 'option httplog', 'tcplog' and 'dontlognull' are kept \
                 for when they are."
            }
        }
    }

    /// The keywords the feature covers, named as [`super::every_keyword`] names them.
    pub fn keywords(self) -> &'static [&'static str] {
        match self {
            // logs are sent since issue 7, health checks run since issue 9: no keyword is
            // pending any more
            Pending::Logs => &[],
        }
    }

    /// The feature a keyword (named as [`super::every_keyword`] names it) belongs to.
    pub fn of(keyword: &str) -> Option<Pending> {
        Pending::ALL.into_iter().find(|p| p.keywords().contains(&keyword))
    }
}

/// The first line using each pending feature, in a configuration being parsed.
#[derive(Debug, Default, Clone)]
pub struct PendingUses {
    first: [Option<Span>; 1],
}

impl PendingUses {
    /// Records that the line at `span` uses `keyword` (ignored unless it is pending).
    pub fn note(&mut self, keyword: &str, span: &Span) {
        if let Some(p) = Pending::of(keyword) {
            self.first[p as usize].get_or_insert_with(|| span.clone());
        }
    }

    /// Each used feature with its first line, in [`Pending::ALL`] order.
    pub fn used(&self) -> impl Iterator<Item = (Pending, &Span)> {
        Pending::ALL.into_iter().filter_map(|p| self.first[p as usize].as_ref().map(|s| (p, s)))
    }
}

#[cfg(test)]
mod tests {
    use super::Pending;
    use crate::diag::Level;
    use crate::parse::tests::{alerts, parse};

    /// The warnings about pending features, rendered, in order.
    fn pending_warnings(text: &str) -> Vec<String> {
        let (_, diags) = parse(text);
        let texts: Vec<&str> = Pending::ALL.iter().map(|p| p.warning()).collect();
        diags
            .list
            .iter()
            .filter(|d| d.level == Level::Warning && texts.contains(&d.message.as_str()))
            .map(|d| d.render(1))
            .collect()
    }

    const T: &str = "defaults\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n";

    #[test]
    fn one_warning_per_feature_at_its_first_line() {
        let text = format!(
            "global\n stats timeout 1m\n stats socket /tmp/x.sock mode 600 level admin\n log 127.0.0.1 local0\n\
             {T} option httplog\n timeout check 2s\n\
             frontend fe\n bind :80 name web\n bind :81 name web2\n default_backend be\n\
             backend be\n server s1 127.0.0.1:1 check inter 2s\n server s2 127.0.0.1:2 check\n log global\n"
        );
        assert_eq!(pending_warnings(&text), Vec::<String>::new(),);
    }

    #[test]
    fn no_warning_without_the_features() {
        let text = format!("{T}frontend fe\n bind :80\n default_backend be\nbackend be\n server s1 127.0.0.1:1\n");
        assert!(pending_warnings(&text).is_empty());
        // turning a feature off is no use of it
        let text =
            format!("{T} no option dontlognull\n no log\nfrontend fe\n bind :80\n default_backend be\nbackend be\n");
        assert!(pending_warnings(&text).is_empty());
    }

    #[test]
    fn each_option_and_keyword_counts() {
        // nothing is pending any more: these lines warn about nothing
        for line in [" option log-health-checks\n", " option tcplog\n", " default-server fall 2\n"] {
            let text = format!("{T}listen l\n bind :80\n{line}");
            assert_eq!(pending_warnings(&text), Vec::<String>::new(), "{line}");
        }
    }

    #[test]
    fn splicing_cannot_be_turned_off() {
        let a = alerts(&format!("{T}listen l\n bind :80\n no option splice-auto\n default option splice-response\n"));
        assert_eq!(
            a,
            ["'no option splice-auto' is not supported yet", "'default option splice-response' is not supported yet"]
        );
        assert!(alerts(&format!("{T}listen l\n bind :80\n option splice-auto\n no option http-no-delay\n")).is_empty());
    }

    #[test]
    fn master_worker_and_its_options_are_read() {
        let (cfg, diags) = parse("global\n master-worker\n master-worker no-exit-on-failure\n mworker-max-reloads 3\n");
        assert!(diags.list.is_empty(), "{:?}", diags.list);
        let g = &cfg.global;
        assert!(g.master_worker && g.mworker_no_exit_on_failure);
        assert_eq!(g.mworker_max_reloads, Some(3));
    }

    #[test]
    fn every_pending_keyword_exists_and_is_partial() {
        let all = crate::kw::every_keyword();
        for p in Pending::ALL {
            for k in p.keywords() {
                let found = all.iter().find(|(name, _)| name == k);
                assert!(
                    matches!(found, Some((_, crate::kw::Support::Partial(_)))),
                    "{k} ({p:?}) must be a keyword marked partial: {found:?}"
                );
            }
        }
    }
}
