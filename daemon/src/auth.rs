//! Bearer tokens: a TOML file of SHA-256 hashes, each granting a list of roots, optionally
//! until a date. A request's token comes from `Authorization: Bearer <token>` or from the
//! cookie Caterva2's clients send (`Cookie: c2subauth=<token>`). Tokens are hashed on arrival
//! and compared with every entry in constant time; neither tokens nor hashes are logged.
//!
//! ```toml
//! [[token]]
//! name = "analysis"                 # shown in logs
//! sha256 = "<64 hex digits>"        # `stratad hash-token` prints this line
//! roots = ["@public", "team"]
//! expires = "2027-06-30T00:00:00Z"  # optional
//! ```

use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::time::SystemTime;
use subtle::ConstantTimeEq;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TokensFile {
    #[serde(default)]
    token: Vec<TokenEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenEntry {
    name: String,
    sha256: String,
    roots: Vec<String>,
    expires: Option<String>,
}

/// One token's grant.
#[derive(Debug, Clone)]
pub struct Grant {
    /// Its name, for logs.
    pub name: String,
    hash: [u8; 32],
    /// The roots it may read.
    pub roots: Vec<String>,
    expires: Option<SystemTime>,
}

/// Who a request is.
#[derive(Debug, Clone)]
pub enum Caller {
    /// No token sent.
    Anonymous,
    /// A valid token.
    Token(Grant),
    /// A token that matches no entry.
    Unknown,
    /// A token whose entry has expired.
    Expired,
}

/// The tokens.
#[derive(Debug, Default)]
pub struct Tokens {
    grants: Vec<Grant>,
}

/// The SHA-256 of `token`, as hex.
#[must_use]
pub fn hash_hex(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn parse_hex32(s: &str) -> Option<[u8; 32]> {
    let s = s.trim();
    if s.len() != 64 || !s.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

impl Tokens {
    /// Reads the tokens file at `path`; `known_roots` are the roots served (a grant naming
    /// another is an error, so that a typo does not silently grant nothing).
    ///
    /// # Errors
    /// A message for an unreadable or invalid file (which never quotes a hash).
    pub fn load(path: &Path, known_roots: &[&str]) -> Result<Tokens, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file: TokensFile =
            toml::from_str(&text).map_err(|e| format!("{}: {}", path.display(), e.message()))?;
        let mut grants = Vec::new();
        for t in file.token {
            let hash = parse_hex32(&t.sha256).ok_or_else(|| {
                format!(
                    "{}: token {:?}: sha256 is not 64 hex digits",
                    path.display(),
                    t.name
                )
            })?;
            for r in &t.roots {
                if !known_roots.contains(&r.as_str()) {
                    return Err(format!(
                        "{}: token {:?} grants root {r:?}, which is not served",
                        path.display(),
                        t.name
                    ));
                }
            }
            let expires = match &t.expires {
                Some(s) => Some(humantime::parse_rfc3339_weak(s).map_err(|e| {
                    format!("{}: token {:?}: expires {s:?}: {e}", path.display(), t.name)
                })?),
                None => None,
            };
            grants.push(Grant {
                name: t.name,
                hash,
                roots: t.roots,
                expires,
            });
        }
        Ok(Tokens { grants })
    }

    /// Who presents `token` (`None`: no token), at time `now`. Every entry is compared, in
    /// constant time, whichever matches.
    #[must_use]
    pub fn caller(&self, token: Option<&str>, now: SystemTime) -> Caller {
        let Some(token) = token else {
            return Caller::Anonymous;
        };
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found: Option<&Grant> = None;
        for g in &self.grants {
            let eq: bool = g.hash.ct_eq(&digest).into();
            if eq && found.is_none() {
                found = Some(g);
            }
        }
        match found {
            None => Caller::Unknown,
            Some(g) if g.expires.is_some_and(|e| e <= now) => Caller::Expired,
            Some(g) => Caller::Token(g.clone()),
        }
    }
}

/// An `Authorization` header that is not a bearer token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotBearer;

/// The token a request carries: `Authorization: Bearer <t>`, else the `c2subauth` cookie.
///
/// # Errors
/// [`NotBearer`] for an `Authorization` header of another scheme or without a token.
pub fn token_of<'a>(
    authorization: Option<&'a str>,
    cookies: impl Iterator<Item = &'a str>,
) -> Result<Option<&'a str>, NotBearer> {
    if let Some(a) = authorization {
        let (scheme, rest) = a.trim().split_once(' ').ok_or(NotBearer)?;
        if !scheme.eq_ignore_ascii_case("bearer") || rest.trim().is_empty() {
            return Err(NotBearer);
        }
        return Ok(Some(rest.trim()));
    }
    for header in cookies {
        for pair in header.split(';') {
            if let Some((k, v)) = pair.trim().split_once('=') {
                let v = v.trim().trim_matches('"');
                if k.trim() == "c2subauth" && !v.is_empty() {
                    return Ok(Some(v));
                }
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn tokens_grant_roots_until_they_expire() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("tokens.toml");
        std::fs::write(
            &p,
            format!(
                "[[token]]\nname = \"a\"\nsha256 = \"{}\"\nroots = [\"team\"]\n\n[[token]]\nname = \"old\"\nsha256 = \"{}\"\nroots = [\"team\"]\nexpires = \"2020-01-01T00:00:00Z\"\n",
                hash_hex("s3cret"),
                hash_hex("old-one")
            ),
        )
        .unwrap();
        let t = Tokens::load(&p, &["team", "@public"]).unwrap();
        let now = SystemTime::now();
        assert!(matches!(t.caller(Some("s3cret"), now), Caller::Token(g) if g.roots == ["team"]));
        assert!(matches!(t.caller(Some("s3cret "), now), Caller::Unknown));
        assert!(matches!(t.caller(Some("old-one"), now), Caller::Expired));
        assert!(matches!(
            t.caller(
                Some("old-one"),
                SystemTime::UNIX_EPOCH + Duration::from_secs(1)
            ),
            Caller::Token(_)
        ));
        assert!(matches!(t.caller(None, now), Caller::Anonymous));
        assert!(Tokens::load(&p, &["@public"]).is_err());
        std::fs::write(&p, "[[token]]\nname = \"a\"\nsha256 = \"zz\"\nroots = []\n").unwrap();
        assert!(!Tokens::load(&p, &[]).unwrap_err().contains("zz"));
    }

    #[test]
    fn where_tokens_come_from() {
        assert_eq!(
            token_of(Some("Bearer abc"), std::iter::empty()),
            Ok(Some("abc"))
        );
        assert_eq!(
            token_of(Some("bearer  abc "), std::iter::empty()),
            Ok(Some("abc"))
        );
        assert_eq!(
            token_of(Some("Basic abc"), std::iter::empty()),
            Err(NotBearer)
        );
        assert_eq!(token_of(Some("Bearer"), std::iter::empty()), Err(NotBearer));
        assert_eq!(
            token_of(None, ["x=1; c2subauth=tok"].into_iter()),
            Ok(Some("tok"))
        );
        assert_eq!(token_of(None, ["x=1"].into_iter()), Ok(None));
        // found by fuzz/fuzz_targets/daemon_requests.rs: a quoted empty cookie is no token
        assert_eq!(token_of(None, ["c2subauth=\";q\""].into_iter()), Ok(None));
        assert_eq!(
            token_of(None, ["c2subauth=\"tok\""].into_iter()),
            Ok(Some("tok"))
        );
        assert_eq!(hash_hex("abc").len(), 64);
    }
}
