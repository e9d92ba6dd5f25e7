//! haproxy.cfg lexer: text -> lines of words.
//!
//! Handles comments, quoting (`"..."` with backslash escapes and `${VAR}` /
//! `${VAR-default}` / `${VAR[*]}` expansion, `'...'` literal; split by `words`), the
//! conditional blocks `.if/.elif/.else/.endif` (conditions evaluated by [`crate::cond`]),
//! the `.diag/.notice/.warning/.alert` directives and `[scope]` lines. HAProxy counterpart:
//! `readcfgfile()` in src/cfgparse.c and `parse_line()` in src/tools.c. No sections or
//! keywords here: see `parse`.
//!
//! Behaviour worth knowing, all as in HAProxy 2.6 (checked against `haproxy -c`):
//! - `${VAR}` expands only inside double quotes; unquoted it stays literal.
//! - A line whose first word is empty (`"" foo`) is ignored.
//! - Lines inside a false branch are still split into words, so a quote error there is
//!   reported; directives and keywords there are not.
//! - The last line must end with a line feed, and a NUL byte stops the file.
//! - A `.if` error, `.alert`, a misplaced `.elif/.else/.endif` and too deep nesting stop
//!   the file and mark the load as aborted ([`Lexer::aborted`]): HAProxy then reads no
//!   further file.

pub use crate::cond::LexCtx;
pub use crate::words::{raw_bytes, RAW_BASE};

use std::sync::Arc;

use crate::cond;
use crate::diag::{Diag, Diags, Level};
use crate::span::Span;
use crate::words::{self, Place, SplitError, Words};

/// One logical configuration line, split into words (quotes and escapes resolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub span: Span,
    pub words: Vec<String>,
}

/// Splits `text` (the contents of `file`) into lines of words, evaluating conditional
/// blocks. Problems are pushed to `diags` with their line.
pub fn lex(file: &Arc<str>, text: &str, ctx: &LexCtx<'_>, diags: &mut Diags) -> Vec<Line> {
    let mut lexer = Lexer::new(file, text, ctx);
    let mut lines = Vec::new();
    while let Some(line) = lexer.next_line(diags) {
        lines.push(line);
    }
    lines
}

/// Most `.if` levels open at once, plus one (HAProxy's `MAXNESTEDCONDS`).
const MAX_NESTED_CONDS: usize = 100;

/// After this many fatal errors in a file the rest of it is not read.
const MAX_FATAL: u32 = 50;

/// The sections whose name `${.SECTION}` reports (HAProxy 2.6's registered sections).
const SECTIONS: &[&str] = &[
    "global",
    "defaults",
    "frontend",
    "backend",
    "listen",
    "userlist",
    "peers",
    "mailers",
    "resolvers",
    "cache",
    "http-errors",
    "ring",
    "log-forward",
    "program",
    "fcgi-app",
    "namespace_list",
];

/// State of one open `.if` block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    /// `.if` whose condition is true.
    IfTake,
    /// `.if` whose condition is false.
    IfDrop,
    /// `.if` inside a branch that is skipped (not evaluated).
    IfSkip,
    /// `.elif` taken after false conditions.
    ElifTake,
    /// `.elif` with a false condition after false ones.
    ElifDrop,
    /// `.elif` after a taken branch or inside a skipped one (not evaluated).
    ElifSkip,
    /// `.else` taken.
    ElseTake,
    /// `.else` after a taken branch or inside a skipped one.
    ElseDrop,
}

impl Block {
    fn is_taken(self) -> bool {
        matches!(self, Block::IfTake | Block::ElifTake | Block::ElseTake)
    }
    /// A branch was taken (or the block is skipped), so later branches are not evaluated.
    fn is_done(self) -> bool {
        matches!(self, Block::IfTake | Block::IfSkip | Block::ElifTake | Block::ElifSkip)
    }
    fn is_else(self) -> bool {
        matches!(self, Block::ElseTake | Block::ElseDrop)
    }
}

/// What to do after a line that produced no [`Line`].
enum Step {
    Next,
    /// Stop reading the file but run the end-of-file checks (HAProxy's `break`).
    Stop,
    /// Stop reading the file, skip the end-of-file checks and abort the load (`goto err`).
    Abort,
}

/// Reads one file line by line. [`lex`] collects every line; a parser may pull lines one by
/// one instead, so that its own diagnostics interleave with the lexer's in file order.
pub struct Lexer<'a> {
    file: Arc<str>,
    text: &'a [u8],
    ctx: &'a LexCtx<'a>,
    /// Offset of the next unread byte.
    pos: usize,
    line_no: u32,
    /// Open `.if` blocks with the line of their `.if`.
    blocks: Vec<(Block, u32)>,
    /// Name of the current section, for `${.SECTION}`.
    section: Option<String>,
    /// Inside a `global` section, where `setenv` and friends apply at once.
    in_global: bool,
    /// Set when the previous line did not end with a line feed (a NUL byte cut it, or it is
    /// the last one): where it stopped.
    missing_lf: Option<usize>,
    fatal: u32,
    aborted: bool,
    done: bool,
    /// The name of the last `[name]` line (SPOE files select their engine by it).
    scope_name: Option<String>,
    /// The words of the line being read (buffers kept from line to line).
    words: Words,
}

impl<'a> Lexer<'a> {
    pub fn new(file: &Arc<str>, text: &'a str, ctx: &'a LexCtx<'a>) -> Self {
        Lexer {
            file: file.clone(),
            text: text.as_bytes(),
            ctx,
            pos: 0,
            line_no: 0,
            blocks: Vec::new(),
            section: None,
            in_global: false,
            missing_lf: None,
            fatal: 0,
            aborted: false,
            done: false,
            scope_name: None,
            words: Words::default(),
        }
    }

    /// The next line of words in an active branch, or `None` at the end of the file (or
    /// when an error stopped it).
    pub fn next_line(&mut self, diags: &mut Diags) -> Option<Line> {
        while !self.done {
            let previous_cut = self.missing_lf.take();
            let Some((raw, cut)) = self.read_raw_line() else {
                self.missing_lf = previous_cut;
                self.finish(diags);
                break;
            };
            if let Some(at) = previous_cut {
                // The previous line did not end with its line feed: it held a NUL byte.
                self.alert(diags, format!("Stray NUL character at position {}.", at + 1));
                self.finish(diags);
                break;
            }
            self.missing_lf = cut;
            self.line_no += 1;
            if self.fatal >= MAX_FATAL {
                self.alert(diags, format!("too many fatal errors ({}), stopping now.", self.fatal));
                self.finish(diags);
                break;
            }
            match self.lex_line(raw, diags) {
                Ok(line) => return Some(line),
                Err(Step::Next) => {}
                Err(Step::Stop) => self.finish(diags),
                Err(Step::Abort) => {
                    self.aborted = true;
                    self.done = true;
                }
            }
        }
        None
    }

    /// The scope the last `[name]` line opened, if any.
    pub fn current_scope(&self) -> Option<&str> {
        self.scope_name.as_deref()
    }

    /// Whether an error requires HAProxy to stop loading altogether (no further file is
    /// read). Meaningful once [`Lexer::next_line`] returned `None`.
    pub fn aborted(&self) -> bool {
        self.aborted
    }

    /// Counts a fatal error found by the caller on a line of this file: past 50, the rest
    /// of the file is not read, as in HAProxy.
    pub fn count_fatal(&mut self) {
        self.fatal += 1;
    }

    /// The next physical line without its line feed, cut at a NUL byte; with the length
    /// kept when it does not end with a line feed (cut, or last line without one).
    fn read_raw_line(&mut self) -> Option<(&'a [u8], Option<usize>)> {
        let text: &'a [u8] = self.text;
        let rest = text.get(self.pos..).filter(|r| !r.is_empty())?;
        let (line, has_lf) = match rest.iter().position(|&b| b == b'\n') {
            Some(n) => (&rest[..n], true),
            None => (rest, false),
        };
        self.pos += line.len() + usize::from(has_lf);
        let len = line.iter().position(|&b| b == 0).unwrap_or(line.len());
        let missing_lf = (len < line.len() || !has_lf).then_some(len);
        Some((&line[..len], missing_lf))
    }

    /// End-of-file checks: a last line without line feed, unclosed `.if` blocks.
    fn finish(&mut self, diags: &mut Diags) {
        self.done = true;
        if let Some(at) = self.missing_lf.take() {
            let msg = format!("Missing LF on last line, file might have been truncated at position {}.", at + 1);
            self.alert(diags, msg);
        }
        if let Some(&(_, opened)) = self.blocks.last() {
            let hint = format!("the '.if' of line {opened} has no matching '.endif'");
            diags.push(Diag::alert(Some(self.span()), "non-terminated '.if' block.").with_hint(hint));
            self.aborted = true;
        }
    }

    fn span(&self) -> Span {
        Span::new(self.file.clone(), self.line_no)
    }

    fn alert(&self, diags: &mut Diags, msg: impl Into<String>) {
        diags.alert(&self.span(), msg);
    }

    fn is_masked(&self) -> bool {
        self.blocks.last().is_some_and(|&(b, _)| !b.is_taken())
    }

    /// One line: a [`Line`] to hand to the parser, or what to do next.
    fn lex_line(&mut self, raw: &[u8], diags: &mut Diags) -> Result<Line, Step> {
        // the word buffers are reused from line to line
        let mut words = std::mem::take(&mut self.words);
        let line = self.lex_words(raw, &mut words, diags);
        self.words = words;
        line
    }

    fn lex_words(&mut self, raw: &[u8], words: &mut Words, diags: &mut Diags) -> Result<Line, Step> {
        let lead = raw.iter().take_while(|&&b| words::is_space(b)).count();
        let line = &raw[lead..];
        if line.first() == Some(&b'[') {
            self.scope(line, diags);
            return Err(Step::Next);
        }
        self.split(lead, line, words, diags)?;
        let words = &*words;
        let first = words.arg(0);
        if first.is_empty() {
            return Err(Step::Next);
        }
        match first {
            b".if" => return Err(self.on_if(words, diags)),
            b".elif" => return Err(self.on_elif(words, diags)),
            b".else" => return Err(self.on_else(words, diags)),
            b".endif" => return Err(self.on_endif(words, diags)),
            _ => {}
        }
        if self.is_masked() {
            return Err(Step::Next);
        }
        if first.starts_with(b".") {
            return Err(self.directive(words, diags));
        }
        let words = words.to_strings();
        if SECTIONS.contains(&words[0].as_str()) {
            self.section = Some(words.get(1).filter(|w| !w.is_empty()).unwrap_or(&words[0]).clone());
            self.in_global = words[0] == "global";
        }
        if self.in_global && crate::envops::KEYWORDS.contains(&words[0].as_str()) {
            // The parser accepts the line; it is applied here so that what follows sees it.
            if let Err(msg) = crate::envops::apply(&words) {
                self.alert(diags, msg);
                self.fatal += 1;
            }
        }
        Ok(Line { span: self.span(), words })
    }

    /// Splits `line` (which followed `lead` blanks) into `words`, reporting errors.
    fn split(&mut self, lead: usize, line: &[u8], words: &mut Words, diags: &mut Diags) -> Result<(), Step> {
        let place = Place { line: self.line_no, file: Some(&*self.file), section: self.section.as_deref() };
        let err = match words::split_into(words, line, true, &place, self.ctx.env) {
            Ok(()) if !words.too_many => return Ok(()),
            Ok(()) => {
                let last = words::MAX_WORDS - 1;
                let word = String::from_utf8_lossy(words.arg(last));
                let msg = format!(
                    "too many words, truncating after word {}, position {}: <{word}>.",
                    words::MAX_WORDS,
                    words.offset(last) + 1
                );
                let hint = format!("a line holds at most {} words; quote text that contains spaces", words::MAX_WORDS);
                diags.push(Diag::alert(Some(self.span()), msg).with_hint(hint));
                self.fatal += 1;
                return Err(Step::Next);
            }
            Err(e) => e,
        };
        let (what, at, hint) = describe_split_error(err);
        // HAProxy prints the line as its parser left it: cut where it wrote a NUL.
        let mut shown = line.to_vec();
        for &cut in &words.cuts {
            if let Some(b) = shown.get_mut(cut) {
                *b = 0;
            }
        }
        let (text, caret) = words::sanitize_for_printing(&shown, at, 80);
        let msg = format!("{what} at position {}:\n  {text}\n  {:>w$}", lead + at + 1, "^", w = caret + 1);
        diags.push(Diag::alert(Some(self.span()), msg).with_hint(hint));
        self.fatal += 1;
        Err(Step::Next)
    }

    /// A `[name]` line, which names the scope of the following lines (used by SPOE files).
    fn scope(&mut self, line: &[u8], diags: &mut Diags) {
        let Some(close) = line.iter().position(|&b| b == b']').filter(|&c| c > 1) else {
            self.alert(diags, "empty scope name is forbidden.");
            return;
        };
        let is_name_byte = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b':' | b'_' | b'-');
        if let Some(&bad) = line[1..close].iter().find(|b| !is_name_byte(b)) {
            self.alert(diags, format!("character '{}' is not permitted in a scope name.", char::from(bad)));
            self.aborted = true;
            return;
        }
        let after = line[close + 1..].iter().find(|&&b| !words::is_space(b));
        if let Some(&c) = after.filter(|&&c| c != b'#') {
            self.alert(diags, format!("character '{}' is not permitted after scope declaration.", char::from(c)));
            self.aborted = true;
            return;
        }
        self.scope_name = Some(String::from_utf8_lossy(&line[1..close]).into_owned());
    }

    fn on_if(&mut self, words: &Words, diags: &mut Diags) -> Step {
        if self.blocks.len() + 1 >= MAX_NESTED_CONDS {
            self.alert(diags, format!("too many nested '.if', max is {MAX_NESTED_CONDS}."));
            return Step::Abort;
        }
        let block = if self.is_masked() {
            Block::IfSkip
        } else {
            match self.eval_condition(".if", words, diags) {
                Some(true) => Block::IfTake,
                Some(false) => Block::IfDrop,
                None => return Step::Abort,
            }
        };
        self.blocks.push((block, self.line_no));
        Step::Next
    }

    fn on_elif(&mut self, words: &Words, diags: &mut Diags) -> Step {
        let Some(&(current, _)) = self.blocks.last() else {
            self.alert(diags, "lone '.elif' with no matching '.if'.");
            return Step::Abort;
        };
        if current.is_else() {
            self.alert(diags, "'.elif' after '.else' is not permitted.");
            return Step::Abort;
        }
        let next = if current.is_done() {
            Block::ElifSkip
        } else {
            match self.eval_condition(".elif", words, diags) {
                Some(true) => Block::ElifTake,
                Some(false) => Block::ElifDrop,
                None => return Step::Abort,
            }
        };
        self.set_current(next);
        Step::Next
    }

    fn on_else(&mut self, words: &Words, diags: &mut Diags) -> Step {
        if let Some(step) = self.unexpected_argument(words, diags) {
            return step;
        }
        let Some(&(current, _)) = self.blocks.last() else {
            self.alert(diags, "lone '.else' with no matching '.if'.");
            return Step::Abort;
        };
        if current.is_else() {
            self.alert(diags, "'.else' after '.else' is not permitted.");
            return Step::Abort;
        }
        self.set_current(if current.is_done() { Block::ElseDrop } else { Block::ElseTake });
        Step::Next
    }

    fn on_endif(&mut self, words: &Words, diags: &mut Diags) -> Step {
        if let Some(step) = self.unexpected_argument(words, diags) {
            return step;
        }
        if self.blocks.pop().is_none() {
            self.alert(diags, "lone '.endif' with no matching '.if'.");
            self.aborted = true;
            return Step::Stop;
        }
        Step::Next
    }

    /// `.else` and `.endif` take no argument.
    fn unexpected_argument(&mut self, words: &Words, diags: &mut Diags) -> Option<Step> {
        if words.arg(1).is_empty() {
            return None;
        }
        let (arg, name) = (String::from_utf8_lossy(words.arg(1)), String::from_utf8_lossy(words.arg(0)));
        self.alert(diags, format!("Unexpected argument '{arg}' for '{name}'."));
        self.aborted = true;
        Some(Step::Stop)
    }

    fn set_current(&mut self, block: Block) {
        if let Some(top) = self.blocks.last_mut() {
            top.0 = block;
        }
    }

    /// Evaluates the condition of `.if`/`.elif` (the rest of the line, words joined by
    /// spaces). `None` after reporting an error.
    fn eval_condition(&mut self, keyword: &str, words: &Words, diags: &mut Diags) -> Option<bool> {
        let expr = words.joined_from(1);
        match cond::eval_expr(&expr, self.ctx) {
            Ok(value) => Some(value),
            Err(e) => {
                // HAProxy shortens the expression to fit the `  .if ` prefix in 80 columns.
                let (text, caret) = words::sanitize_for_printing(&expr, e.pos, 79 - keyword.len());
                let msg = format!(
                    "{} in '{keyword}' at position {}:\n  {keyword} {text}\n  {:>w$}",
                    e.message,
                    e.pos + 1,
                    "^",
                    w = caret + keyword.len() + 2
                );
                self.alert(diags, msg);
                None
            }
        }
    }

    /// `.alert`, `.warning`, `.notice`, `.diag` and unknown directives, in an active branch.
    fn directive(&mut self, words: &Words, diags: &mut Diags) -> Step {
        let name = String::from_utf8_lossy(words.arg(0)).into_owned();
        let level = match name.as_str() {
            ".alert" => Level::Alert,
            ".warning" => Level::Warning,
            ".notice" => Level::Notice,
            ".diag" => Level::Diag,
            _ => {
                let hint = "directives are .if, .elif, .else, .endif, .diag, .notice, .warning and .alert";
                diags.push(Diag::alert(Some(self.span()), format!("unknown directive '{name}'.")).with_hint(hint));
                self.fatal += 1;
                return Step::Stop;
            }
        };
        if !words.arg(2).is_empty() {
            let arg = String::from_utf8_lossy(words.arg(2));
            let msg =
                format!("Unexpected argument '{arg}' for '{name}'. Use quotes if the message should contain spaces.");
            self.alert(diags, msg);
            return Step::Next;
        }
        let message = String::from_utf8_lossy(words.arg(1)).into_owned();
        diags.push(Diag { level, span: Some(self.span()), message, hints: Vec::new(), directive: true });
        if level == Level::Alert {
            Step::Abort
        } else {
            Step::Next
        }
    }
}

/// HAProxy's description of a split error, where it points, and rampart's advice.
fn describe_split_error(err: SplitError) -> (&'static str, usize, &'static str) {
    match err {
        SplitError::Quote(at) => ("unmatched quote", at, "close the quote, or escape a literal quote as \\\" or \\'"),
        SplitError::Brace(at) => (
            "unmatched brace in environment variable name",
            at,
            "write \"${NAME}\" or \"${NAME-default}\", closing the brace on the same line",
        ),
        SplitError::VarName(at) => (
            "forbidden first char in environment variable name",
            at,
            "a variable name starts with a letter or '_'; write \\$ for a literal '$' inside double quotes",
        ),
        SplitError::PseudoVar(at) => (
            "forbidden first char in environment variable name",
            at,
            "the built-in variables are .FILE, .LINE and .SECTION",
        ),
        SplitError::Hex(at) => (
            "truncated or invalid hexadecimal sequence",
            at,
            "write \\x followed by two hexadecimal digits, as in \\x41",
        ),
        SplitError::Expand(at) => (
            "truncated or invalid word expansion sequence",
            at,
            "write \"${NAME[*]}\" to split a variable's value into several words",
        ),
    }
}
