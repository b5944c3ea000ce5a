//! The message grammar, escaping and nonces (the exchanges are in `transcript_tests`).

use super::messages::{
    escape_saslname, java_nonce, unescape_saslname, ClientFinal, ClientFirst, Malformed,
    ServerFinal, ServerFirst, B64,
};
use base64::Engine;

fn first(s: &str) -> ClientFirst {
    ClientFirst::parse(s.as_bytes()).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

#[test]
fn client_first_messages_java_accepts() {
    let m = first("n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
    assert_eq!((m.authzid.as_str(), m.saslname.as_str()), ("", "user"));
    assert_eq!(m.nonce, "rOprNGfwEbeRWgbNEkqO");
    assert_eq!(m.bare(), "n=user,r=rOprNGfwEbeRWgbNEkqO");
    assert!(!m.token_authenticated());

    let m = first("n,a=bob=2Cx,m=reserved,n=bob=2Cx=3D,r=%$),tokenauth=TRUE,x=a=b");
    assert_eq!(m.authzid, "bob=2Cx");
    assert_eq!(m.saslname, "bob=2Cx=3D");
    assert_eq!(m.nonce, "%$)");
    assert!(m.token_authenticated());
    // The reserved m= and the gs2 header are not part of the bare message Java rebuilds.
    assert_eq!(m.bare(), "n=bob=2Cx=3D,r=%$),tokenauth=TRUE,x=a=b");

    // A repeated extension keeps its last value, in its first place.
    let m = first("n,,n=u,r=n,a=1,b=2,a=3");
    assert_eq!(m.bare(), "n=u,r=n,a=3,b=2");
    assert!(!first("n,,n=u,r=n,tokenauth=yes").token_authenticated());
}

#[test]
fn client_first_messages_java_refuses() {
    for bad in [
        "",
        "n,,",
        "y,,n=user,r=abc",
        "p=tls-unique,,n=user,r=abc",
        "n,a=,n=user,r=abc",
        "n,a=x",
        "n,m=,n=user,r=abc",
        "n,,m=x",
        "n,,n=,r=abc",
        "n,,n=us=er,r=abc",
        "n,,n=us=2c,r=abc",
        "n,,n=user",
        "n,,n=user,r=",
        "n,,n=user,r=a b",
        "n,,n=user,r=abc,",
        "n,,n=user,r=abc,=x",
        "n,,n=user,r=abc,k=",
        "n,,n=user,r=abc,k1=v",
        "n,,n=user,r=abc,k",
        "n,,r=abc,n=user",
        "n,,n=us\u{e9}r,r=abc",
        "n,,n=us\0r,r=abc",
    ] {
        assert!(
            matches!(
                ClientFirst::parse(bad.as_bytes()),
                Err(Malformed::Grammar(_))
            ),
            "{bad:?} parsed"
        );
    }
    assert!(ClientFirst::parse(b"n,,n=user,r=\xff").is_err());
}

#[test]
fn server_first_messages() {
    let m = ServerFirst::parse(b"r=abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096").unwrap();
    assert_eq!((m.nonce.as_str(), m.iterations), ("abc", 4096));
    assert_eq!(m.to_message(), "r=abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");
    let m = ServerFirst::parse(b"m=x,r=abc,s=,i=0004096,ext=v=w").unwrap();
    assert_eq!((m.salt.len(), m.iterations), (0, 4096));
    assert_eq!(
        ServerFirst::parse(b"r=abc,s=,i=0"),
        Err(Malformed::IterationsNotPositive(0))
    );
    assert_eq!(
        ServerFirst::parse(b"r=abc,s=,i=2147483648"),
        Err(Malformed::IterationsOverflow)
    );
    for bad in [
        "r=abc,s=abc,i=1",
        "r=abc,s=ab=c,i=1",
        "r=abc,s=,i=",
        "r=abc,s=,i=-1",
        "r=abc,s=,i=+1",
        "r=abc,i=1,s=",
        "r=,s=,i=1",
        "m=,r=a,s=,i=1",
        "r=a,s=,i=1,",
        // Extensions are checked before the number.
        "r=a,s=,i=99999999999,9=x",
    ] {
        assert!(
            matches!(
                ServerFirst::parse(bad.as_bytes()),
                Err(Malformed::Grammar(_))
            ),
            "{bad:?}"
        );
    }
}

#[test]
fn client_final_messages() {
    let m = ClientFinal::parse(b"c=biws,r=abc,x=1,p=dGVzdA==").unwrap();
    assert_eq!(m.channel_binding, b"n,,");
    assert_eq!(m.proof, b"test");
    // Java rebuilds the part without the proof, dropping extensions.
    assert_eq!(m.without_proof(), "c=biws,r=abc");
    assert_eq!(m.to_message(), "c=biws,r=abc,p=dGVzdA==");
    // Empty base64 is base64; non-zero trailing bits are ignored, as by java.util.Base64.
    let m = ClientFinal::parse(b"c=,r=abc,p=").unwrap();
    assert!(m.channel_binding.is_empty() && m.proof.is_empty());
    let m = ClientFinal::parse(b"c=bh==,r=abc,p=Zm9=").unwrap();
    assert_eq!(
        (m.without_proof().as_str(), m.proof.as_slice()),
        ("c=bg==,r=abc", &b"fo"[..])
    );
    for bad in [
        "c=biws,r=abc",
        "c=biws,p=dGVzdA==",
        "r=abc,c=biws,p=",
        "c=biws,r=abc,p=dGVzdA==,x=1",
        "c=biws,r=abc,p=dGVzdA=",
        "c=biw,r=abc,p=",
        "c=biws,r=abc,1=x,p=",
    ] {
        assert!(ClientFinal::parse(bad.as_bytes()).is_err(), "{bad:?}");
    }
    let debug = format!("{:?}", ClientFinal::parse(b"c=,r=a,p=dGVzdA==").unwrap());
    assert!(
        debug.contains("[hidden]") && !debug.contains("116"),
        "{debug}"
    );
}

#[test]
fn server_final_messages() {
    assert_eq!(
        ServerFinal::parse(b"e=invalid-proof"),
        Ok(ServerFinal::Error("invalid-proof".into()))
    );
    assert_eq!(
        ServerFinal::parse(b"v=dGVzdA==,ext=1"),
        Ok(ServerFinal::Verifier(b"test".to_vec()))
    );
    for bad in ["e=", "e=a=b", "e=a,x=1", "v=dGVzdA", "x=1", "v=dGVzdA==,"] {
        assert!(ServerFinal::parse(bad.as_bytes()).is_err(), "{bad:?}");
    }
    assert_eq!(
        ServerFinal::Verifier(b"test".to_vec()).to_message(),
        "v=dGVzdA=="
    );
}

#[test]
fn saslnames_escape_and_unescape_as_java_does() {
    assert_eq!(escape_saslname("a=b,c"), "a=3Db=2Cc");
    assert_eq!(escape_saslname("=2C"), "=3D2C");
    for user in ["plain", "a=b,c", "=2C", "==,,", "=3D"] {
        assert_eq!(
            unescape_saslname(&escape_saslname(user)).as_deref(),
            Some(user)
        );
    }
    assert_eq!(unescape_saslname("a=2Cb=3Dc").as_deref(), Some("a,b=c"));
    assert_eq!(unescape_saslname("a=b"), None);
    assert_eq!(unescape_saslname("a=2"), None);
}

#[test]
fn java_nonces() {
    assert_eq!(java_nonce([0; 17]), "0");
    // The top six bits of the first byte are not among BigInteger(130, ...)'s.
    assert_eq!(java_nonce([0xff; 17]), "1omfro7zwmumr3umxudzyj6scf");
    let counting: [u8; 17] = std::array::from_fn(|i| i as u8 + 1);
    assert_eq!(java_nonce(counting), "f9war3lvskojybi3x7fo64j69");
}

#[test]
fn base64_as_java_encodes() {
    assert_eq!(B64.encode(b"n,,"), "biws");
    assert_eq!(B64.encode(b"f"), "Zg==");
}
