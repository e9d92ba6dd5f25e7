//! OCSP stapling: the DER response of `<crt>.ocsp` (beside a certificate, or given by
//! `set ssl ocsp-response` / `set ssl cert <crt>.ocsp`) is read here, served with the
//! certificate (rustls `CertifiedKey::ocsp`), and shown in OpenSSL's text form by
//! `show ssl ocsp-response` and `show ssl cert <crt>.ocsp`. A response is identified by
//! the DER of its single response's CertID ("Certificate ID key").
//! HAProxy counterpart: ssl_ocsp.c / ssl_sock.c (`ssl_sock_load_ocsp_response()`,
//! `ssl_ocsp_response_print()`).

use std::fmt::Write;
use std::sync::Arc;

use rustls::sign::CertifiedKey;

/// One DER element: its tag byte, its content, and the whole encoding.
#[derive(Debug, Clone, Copy)]
struct Tlv<'a> {
    tag: u8,
    body: &'a [u8],
    raw: &'a [u8],
}

/// Reads the DER element at the start of `input`; returns it and what follows.
fn tlv(input: &[u8]) -> Option<(Tlv<'_>, &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n].iter().fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    let header = input.len() - rest.len();
    Some((Tlv { tag, body: &rest[..len], raw: &input[..header + len] }, &rest[len..]))
}

/// The elements of a constructed element's content, in order.
fn children(body: &[u8]) -> Option<Vec<Tlv<'_>>> {
    let mut out = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let (t, r) = tlv(rest)?;
        out.push(t);
        rest = r;
    }
    Some(out)
}

/// What a certificate's status is in a single response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertStatus {
    Good,
    /// Revoked, at this time (GeneralizedTime text).
    Revoked(String),
    Unknown,
}

/// The single response of an OCSP response, and what `show ssl ocsp-response` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OcspInfo {
    /// The DER of the CertID: the "Certificate ID key" (in hex) the CLI names it by.
    pub cert_id: Vec<u8>,
    hash_alg: String,
    name_hash: Vec<u8>,
    key_hash: Vec<u8>,
    serial: Vec<u8>,
    responder: String,
    produced_at: String,
    pub status: CertStatus,
    this_update: String,
    next_update: Option<String>,
    signature_alg: String,
}

const OID_BASIC: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x01, 0x01];

/// Reads a DER OCSP response: it must be `successful`, basic, and hold a single
/// response (the one for the certificate). `Err` is the reason, for messages.
pub fn parse(der: &[u8]) -> Result<OcspInfo, &'static str> {
    let bad = "Error parsing OCSP response";
    let (top, _) = tlv(der).ok_or(bad)?;
    let top = children(top.body).ok_or(bad)?;
    let status = top.first().filter(|t| t.tag == 0x0a).ok_or(bad)?;
    if status.body != [0] {
        return Err("OCSP response status not successful");
    }
    let bytes = top.get(1).filter(|t| t.tag == 0xa0).ok_or(bad)?;
    let (bytes, _) = tlv(bytes.body).ok_or(bad)?;
    let bytes = children(bytes.body).ok_or(bad)?;
    if bytes.first().is_none_or(|t| t.tag != 0x06 || t.body != OID_BASIC) {
        return Err("Error parsing OCSP response: not a basic response");
    }
    let basic = bytes.get(1).filter(|t| t.tag == 0x04).ok_or(bad)?;
    let (basic, _) = tlv(basic.body).ok_or(bad)?;
    let basic = children(basic.body).ok_or(bad)?;
    let tbs = children(basic.first().ok_or(bad)?.body).ok_or(bad)?;
    let signature_alg = basic.get(1).and_then(|a| children(a.body)).and_then(|a| a.first().map(|o| oid_name(o.body)));
    // the optional version, then the responder, the production time and the responses
    let mut fields = tbs.iter().skip_while(|t| t.tag == 0xa0);
    let responder = responder(fields.next().ok_or(bad)?).ok_or(bad)?;
    let produced = fields.next().filter(|t| t.tag == 0x18).ok_or(bad)?;
    let responses = children(fields.next().filter(|t| t.tag == 0x30).ok_or(bad)?.body).ok_or(bad)?;
    let [single] = responses.as_slice() else {
        return Err("OCSP response must hold a single response");
    };
    let single = children(single.body).ok_or(bad)?;
    let id = single.first().filter(|t| t.tag == 0x30).ok_or(bad)?;
    let id_fields = children(id.body).ok_or(bad)?;
    let [alg, name_hash, key_hash, serial] = id_fields.as_slice() else { return Err(bad) };
    let hash_alg = children(alg.body).and_then(|a| a.first().map(|o| oid_name(o.body))).ok_or(bad)?;
    let status = match single.get(1).ok_or(bad)? {
        t if t.tag == 0x80 => CertStatus::Good,
        t if t.tag == 0xa1 => {
            let at = children(t.body).and_then(|c| c.first().map(|x| time(x.body))).ok_or(bad)?;
            CertStatus::Revoked(at)
        }
        _ => CertStatus::Unknown,
    };
    let this_update = single.get(2).filter(|t| t.tag == 0x18).ok_or(bad)?;
    let next_update = single.get(3).filter(|t| t.tag == 0xa0).and_then(|t| tlv(t.body)).map(|(t, _)| time(t.body));
    Ok(OcspInfo {
        cert_id: id.raw.to_vec(),
        hash_alg,
        name_hash: name_hash.body.to_vec(),
        key_hash: key_hash.body.to_vec(),
        serial: serial.body.to_vec(),
        responder,
        produced_at: time(produced.body),
        status,
        this_update: time(this_update.body),
        next_update,
        signature_alg: signature_alg.unwrap_or_default(),
    })
}

/// The responder: a name (`[1]`) in OpenSSL's one-line form, or a key hash (`[2]`).
fn responder(t: &Tlv<'_>) -> Option<String> {
    use x509_parser::prelude::FromDer;
    let (inner, _) = tlv(t.body)?;
    match t.tag {
        0xa1 => {
            let (_, name) = x509_parser::x509::X509Name::from_der(inner.raw).ok()?;
            let mut parts = Vec::new();
            for attr in name.iter_attributes() {
                let key = x509_parser::objects::oid2abbrev(attr.attr_type(), x509_parser::objects::oid_registry())
                    .map(str::to_string)
                    .unwrap_or_else(|_| attr.attr_type().to_id_string());
                parts.push(format!("{key} = {}", attr.as_str().unwrap_or("")));
            }
            Some(parts.join(", "))
        }
        0xa2 => Some(hex_upper(inner.body)),
        _ => None,
    }
}

/// A GeneralizedTime (`20210610085504Z`) as OpenSSL prints it: `Jun 10 08:55:04 2021 GMT`.
fn time(body: &[u8]) -> String {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let text = std::str::from_utf8(body).unwrap_or("");
    let num = |r: std::ops::Range<usize>| text.get(r).and_then(|s| s.parse::<usize>().ok());
    match (num(0..4), num(4..6), num(6..8), num(8..10), num(10..12), num(12..14)) {
        (Some(y), Some(m @ 1..=12), Some(d), Some(h), Some(mi), Some(s)) => {
            format!("{} {d:>2} {h:02}:{mi:02}:{s:02} {y} GMT", MONTHS[m - 1])
        }
        _ => text.to_string(),
    }
}

/// An algorithm OID by OpenSSL's short name (`sha1`, `sha256WithRSAEncryption`).
fn oid_name(body: &[u8]) -> String {
    const HASHES: [(&[u8], &str); 4] = [
        (&[0x2b, 0x0e, 0x03, 0x02, 0x1a], "sha1"),
        (&[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01], "sha256"),
        (&[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02], "sha384"),
        (&[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03], "sha512"),
    ];
    if let Some((_, n)) = HASHES.iter().find(|(o, _)| *o == body) {
        return (*n).to_string();
    }
    let oid = x509_parser::der_parser::oid::Oid::new(std::borrow::Cow::Borrowed(body));
    x509_parser::objects::oid2sn(&oid, x509_parser::objects::oid_registry())
        .map(str::to_string)
        .unwrap_or_else(|_| oid.to_id_string())
}

pub fn hex_upper(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

pub fn hex_lower(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl OcspInfo {
    /// The lines `show ssl ocsp-response` lists for this response (after its key).
    pub fn id_lines(&self) -> String {
        format!(
            " Certificate ID:\n   Issuer Name Hash: {}\n   Issuer Key Hash: {}\n   Serial Number: {}\n",
            hex_upper(&self.name_hash),
            hex_upper(&self.key_hash),
            hex_upper(&self.serial)
        )
    }

    /// The response in OpenSSL's text form (`OCSP_RESPONSE_print`).
    ///
    /// COMPAT: the response extensions, the signature bytes and the responder's
    /// certificates that OpenSSL also prints are left out.
    pub fn render(&self) -> String {
        let mut out = String::from(
            "OCSP Response Data:\n    OCSP Response Status: successful (0x0)\n    Response Type: Basic OCSP Response\n    \
             Version: 1 (0x0)\n",
        );
        let _ = writeln!(out, "    Responder Id: {}", self.responder);
        let _ = writeln!(out, "    Produced At: {}", self.produced_at);
        out.push_str("    Responses:\n    Certificate ID:\n");
        let _ = writeln!(out, "      Hash Algorithm: {}", self.hash_alg);
        let _ = writeln!(out, "      Issuer Name Hash: {}", hex_upper(&self.name_hash));
        let _ = writeln!(out, "      Issuer Key Hash: {}", hex_upper(&self.key_hash));
        let _ = writeln!(out, "      Serial Number: {}", hex_upper(&self.serial));
        match &self.status {
            CertStatus::Good => out.push_str("    Cert Status: good\n"),
            CertStatus::Revoked(at) => {
                let _ = writeln!(out, "    Cert Status: revoked\n    Revocation Time: {at}");
            }
            CertStatus::Unknown => out.push_str("    Cert Status: unknown\n"),
        }
        let _ = writeln!(out, "    This Update: {}", self.this_update);
        if let Some(n) = &self.next_update {
            let _ = writeln!(out, "    Next Update: {n}");
        }
        if !self.signature_alg.is_empty() {
            let _ = writeln!(out, "    Signature Algorithm: {}", self.signature_alg);
        }
        out
    }
}

/// A base64 payload (line breaks ignored) decoded and checked as an OCSP response.
pub fn decode_base64(payload: &str) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    let text: String = payload.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|_| "received invalid base64 encoded response.".to_string())?;
    parse(&der).map_err(str::to_string)?;
    Ok(der)
}

impl super::certs::Certs {
    /// The OCSP responses served, each once (by CertID), in configuration order, with
    /// the files and binds' certificates stapling them.
    fn ocsp_responses(&self) -> Vec<(OcspInfo, Vec<u8>)> {
        let mut out: Vec<(OcspInfo, Vec<u8>)> = Vec::new();
        for b in self.binds() {
            let store = b.store.load();
            for path in store.paths() {
                let Some(der) = store.get(path).and_then(|k| k.ocsp.clone()) else { continue };
                let Ok(info) = parse(&der) else { continue };
                if !out.iter().any(|(o, _)| o.cert_id == info.cert_id) {
                    out.push((info, der));
                }
            }
        }
        out
    }

    /// `show ssl ocsp-response [<id>]`: the Certificate IDs of the responses served, or
    /// one response in OpenSSL's text form.
    pub fn show_ocsp(&self, id: Option<&str>) -> String {
        let all = self.ocsp_responses();
        let Some(id) = id else {
            let mut out = String::from("# Certificate IDs\n");
            for (info, _) in &all {
                let _ = write!(out, "Certificate ID key : {}\n{}\n", hex_lower(&info.cert_id), info.id_lines());
            }
            return out;
        };
        match all.iter().find(|(info, _)| hex_lower(&info.cert_id).eq_ignore_ascii_case(id)) {
            Some((info, _)) => info.render(),
            None => "Certificate ID does not match any certificate.\n".to_owned(),
        }
    }

    /// `set ssl ocsp-response <base64>`: the response replaces the one served with the
    /// same Certificate ID, from the next handshake on.
    pub fn set_ocsp(&self, payload: Option<&str>) -> String {
        let Some(payload) = payload.filter(|p| !p.trim().is_empty()) else {
            return "'set ssl ocsp-response' expects response in base64 encoding.\n".to_owned();
        };
        let der = match decode_base64(payload) {
            Ok(d) => d,
            Err(e) if e.starts_with("received") => return format!("'set ssl ocsp-response' {e}\n"),
            Err(_) => return "Unable to parse OCSP response.\n".to_owned(),
        };
        let Ok(info) = parse(&der) else { return "Unable to parse OCSP response.\n".to_owned() };
        let mut updated = false;
        for b in self.binds() {
            let store = b.store.load();
            let mut next = None;
            for path in store.paths() {
                let current = next.as_ref().unwrap_or(&**store);
                let Some(key) = current.get(path) else { continue };
                let same = key.ocsp.as_deref().and_then(|d| parse(d).ok()).is_some_and(|o| o.cert_id == info.cert_id);
                if !same {
                    continue;
                }
                let new = Arc::new(CertifiedKey { ocsp: Some(der.clone()), ..(**key).clone() });
                let names = key.cert.first().map(|c| super::sni::cert_names(c)).unwrap_or_default();
                next = current.replaced(path, &new, &names);
            }
            if let Some(n) = next {
                b.store.store(Arc::new(n));
                updated = true;
            }
        }
        if updated {
            "OCSP Response updated!\n".to_owned()
        } else {
            "OCSP single response: Certificate ID does not match any certificate or issuer.\n".to_owned()
        }
    }
}

/// The `.ocsp` file beside certificate `path`, if there is one.
pub fn load_beside(path: &str) -> Option<Vec<u8>> {
    std::fs::read(format!("{path}.ocsp")).ok()
}

#[cfg(test)]
#[path = "ocsp_tests.rs"]
mod tests;
