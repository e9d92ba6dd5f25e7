//! Converter chains through the expression compiler and evaluator, as a rule would
//! use them. Expected values and messages come from haproxy 2.6.12: the same
//! expression in `http-request return ... lf-string "%[<expr>]"` (values) or
//! `haproxy -c` (messages, after HAProxy's `failed to parse sample expression <...> :`
//! prefix).

use crate::sample::testutil::{compile_in, config, conn, runtime, CFG};
use crate::sample::{Sample, SampleCtx};

/// The value of `text` as lf-string would print it, `None` when absent.
fn val(text: &str) -> Option<String> {
    let cfg = config(CFG);
    let rt = runtime(&cfg);
    let c = conn();
    let e = compile_in(&cfg, 0, text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let ctx = SampleCtx::new(&rt, &c, 0);
    Some(match e.eval(&ctx)? {
        Sample::Str(b) | Sample::Bin(b) => String::from_utf8_lossy(&b).into_owned(),
        Sample::Sint(i) => i.to_string(),
        Sample::Bool(b) => u8::from(b).to_string(),
        Sample::Ipv4(a) => a.to_string(),
        Sample::Ipv6(a) => a.to_string(),
        Sample::Meth(_, b) => String::from_utf8_lossy(&b).into_owned(),
    })
}

fn err(text: &str) -> String {
    let cfg = config(CFG);
    compile_in(&cfg, 0, text).map(|_| ()).unwrap_err().to_string()
}

#[test]
fn string_chains() {
    assert_eq!(val("str(abc),upper").as_deref(), Some("ABC"));
    assert_eq!(val("str(AbC),lower,length").as_deref(), Some("3"));
    assert_eq!(val("str(f1_f2_f3__f5),field(-2,_,3)").as_deref(), Some("f2_f3_"));
    assert_eq!(val("str(f1_f2_f3__f5),field(6,_)"), None);
    assert_eq!(val("str(/f1/f2/f3/f4),word(1,/)").as_deref(), Some("f1"));
    assert_eq!(val("str(abcdef),bytes(2,3)").as_deref(), Some("cde"));
    assert_eq!(val("str(///a///b/c/),regsub('/+','/','g')").as_deref(), Some("/a/b/c/"));
    assert_eq!(val("str(abcABC),regsub(b,X,gi)").as_deref(), Some("aXcAXC"));
    assert_eq!(val("str(Host.COM:8080),host_only").as_deref(), Some("host.com"));
    assert_eq!(val("str(abc),concat(x,,y)").as_deref(), Some("abcxy"));
}

#[test]
fn casts_before_converters() {
    assert_eq!(val("str(12),add(1)").as_deref(), Some("13"));
    assert_eq!(val("str(abc),add(1)").as_deref(), Some("1"));
    assert_eq!(val("bool(1),add(1)").as_deref(), Some("2"));
    assert_eq!(val("str(10.1.2.3),ipmask(8)").as_deref(), Some("10.0.0.0"));
    assert_eq!(val("str(abc),ipmask(8)"), None);
    assert_eq!(val("int(5),iif(yes,no)").as_deref(), Some("yes"));
    assert_eq!(val("str(abc),iif(yes,no)").as_deref(), Some("no"));
    assert_eq!(val("int(1),htonl,hex").as_deref(), Some("00000001"));
}

#[test]
fn arithmetic_chains() {
    assert_eq!(val("int(9223372036854775807),add(1)").as_deref(), Some("9223372036854775807"));
    assert_eq!(val("int(5),div(0)").as_deref(), Some("9223372036854775807"));
    assert_eq!(val("int(12),and(10),bool").as_deref(), Some("1"));
    assert_eq!(val("int(5),add()").as_deref(), Some("5"));
    assert_eq!(val("int(5),add(txn.foo)"), None);
}

#[test]
fn hashes_and_encodings() {
    assert_eq!(val("str(abc),djb2").as_deref(), Some("193485963"));
    assert_eq!(val("str(abc),xxh64(1)").as_deref(), Some("-4708009277469325048"));
    assert_eq!(val("str(abc),sha1,hex").as_deref(), Some("A9993E364706816ABA3E25717850C26C9CD0D89D"));
    assert_eq!(
        val("str(abc),digest(SHA2-256),base64").as_deref(),
        Some("ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=")
    );
    assert_eq!(val("str(abc),base64,b64dec").as_deref(), Some("abc"));
    assert_eq!(val("bin(01020304050607),be2dec(:,2)").as_deref(), Some("258:772:1286:7"));
    assert_eq!(val("bin(0102030405060708),be2hex(,3,1)").as_deref(), Some("010203040506"));
    assert_eq!(val("str(a%20b+c),url_dec(1)").as_deref(), Some("a b c"));
    assert_eq!(val("str(a b),url_enc").as_deref(), Some("a%20b"));
    assert_eq!(val("bin(c3a9),json(utf8)").as_deref(), Some("\\u00e9"));
    assert_eq!(val("str(abc),json").as_deref(), Some("abc"));
}

#[test]
fn dates() {
    assert_eq!(val("int(1700000000),http_date").as_deref(), Some("Tue, 14 Nov 2023 22:13:20 GMT"));
    assert_eq!(val("int(1700000000123),http_date(0,ms)").as_deref(), Some("Tue, 14 Nov 2023 22:13:20.123 GMT"));
    assert_eq!(val("int(1700000000),utime(%Y%m%d%H%M%S)").as_deref(), Some("20231114221320"));
    assert_eq!(val("int(1700000000),utime(%Y%m%d%H%M%S,-86400)").as_deref(), Some("20231113221320"));
}

#[test]
fn haproxy_messages_for_converter_arguments() {
    let inv = |conv: &str, why: &str| format!("invalid args in converter '{conv}' : {why}");
    assert_eq!(err("str(a),field(0,_)"), inv("field", "Unexpected value 0 for index"));
    assert_eq!(err("str(a),field(1,)"), inv("field", "Empty separators list"));
    assert_eq!(err("str(a),sha2(123)"), inv("sha2", "Unsupported number of bits: '123'"));
    assert_eq!(err("str(a),digest(foo)"), inv("digest", "algorithm must be a valid OpenSSL message digest name."));
    assert_eq!(err("int(5),add(x)"), inv("add", "expects an integer or a variable name"));
    assert_eq!(
        err("str(a),json(foo)"),
        inv("json", "Unexpected input code type. Allowed value are 'ascii', 'utf8', 'utf8s', 'utf8p' and 'utf8ps'")
    );
    assert_eq!(err("str(a),url_enc(foo)"), inv("url_enc", "Unexpected encode type. Allowed value is 'query'"));
    assert_eq!(err("str(a),regsub(b,X,x)"), inv("regsub", "invalid regex flag 'x', only 'i' and 'g' are supported"));
    assert_eq!(err("str(a),concat(x,foo,y)"), inv("concat", "failed to register variable name 'foo'"));
    assert_eq!(err("str(a),strcmp()"), inv("strcmp", "missing variable name"));
    assert_eq!(err("str(a),add_item(-,,)"), inv("add_item", "one of the optional arguments has to be nonempty"));
    assert_eq!(err("bin(01),be2dec(:)"), inv("be2dec", "chunk_size out of [1..8] range (0)"));
    assert_eq!(err("bin(01),be2hex(:)"), inv("be2hex", "chunk_size needs to be positive (0)"));
    assert_eq!(err("int(1),http_date(0,m)"), inv("http_date", "expects 's', 'ms' or 'us', got 'm'"));
    assert_eq!(
        err("str(a),hmac(sha256,a2V)"),
        inv(
            "hmac",
            "failed to parse key : argument needs to be base64 encoded, and can either be a string or a variable"
        )
    );
}
