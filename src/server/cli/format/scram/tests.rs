//! `--add-scram` transcripts: each argument, then the record it gives (Kafka's JSON of it) or
//! the message it is refused with. Every record and message below was first observed from
//! Kafka 4.4.0's `kafka-storage format --add-scram` (the compat test checks them again).

use super::*;

/// The draw a salt not given is made from: Java's `secureRandomString` of it is
/// "1omfro7zwmumr3umxudzyj6scf".
fn draw() -> [u8; 17] {
    [0xff; 17]
}

/// `> argument`, then `= record` or `! message`, for each argument on its own.
fn transcript(arguments: &[&str]) -> String {
    let mut out = String::new();
    for a in arguments {
        out.push_str(&format!("> {a}\n"));
        match scram_records(&[ScramArgument(a.to_string())], 33, &mut draw) {
            Ok(records) => {
                for r in records {
                    out.push_str(&format!("= {}\n", r.to_kafka_json(0)));
                }
            }
            Err(e) => out.push_str(&format!("! {e}\n")),
        }
    }
    out
}

#[test]
fn records_as_kafka_makes_them() {
    let got = transcript(&[
        "SCRAM-SHA-256=[name=alice,salt=c2FsdA==,saltedpassword=c2FsdGVk,iterations=8192]",
        r#"SCRAM-SHA-512=[name=bob,salt="MTIz",password="bob-secret"]"#,
        "  SCRAM-SHA-256=[name=,salt=,password=p=q,iterations=16384,]",
        "SCRAM-SHA-256=[name=a,name=carol,salt=YR==,saltedpassword=YWJj,iterations=+4097]",
        "SCRAM-SHA-256=[name=d,salt=YQ,password=p,saltedpassword=%,iterations=04096]",
        r#"SCRAM-SHA-256=[name=",salt=YQ,saltedpassword=YWJj]"#,
        "SCRAM-SHA-256=[name=e,password=e-secret]",
    ]);
    let want = r#"> SCRAM-SHA-256=[name=alice,salt=c2FsdA==,saltedpassword=c2FsdGVk,iterations=8192]
= {"name":"alice","mechanism":1,"salt":"c2FsdA==","storedKey":"pDJPdNW4lb6SBic4/4xXGF9rznEdITXt4LsBe5GOK4o=","serverKey":"/uCXMt5tVlIDe5JxsoFXiy4ecf7WZelzVsMSW2SZz1o=","iterations":8192}
> SCRAM-SHA-512=[name=bob,salt="MTIz",password="bob-secret"]
= {"name":"bob","mechanism":2,"salt":"MTIz","storedKey":"EKz0iw9fBlQ9+rFE8AW2UguoH4PMAT5UGnexJ0Rtm4p8r8gfXG26WjzTfvHkTd3PAKMxBqnpLCOVOoRBVFXzdQ==","serverKey":"EAKHZxEq7yWa5P5FDwa+ez0SOe6URkJsNtPAAUe68lvf2JF3dEwTIHWc8GMLe7iRjhzw/U93D+eOHqeHiR/9yg==","iterations":4096}
>   SCRAM-SHA-256=[name=,salt=,password=p=q,iterations=16384,]
= {"name":"","mechanism":1,"salt":"","storedKey":"7r3i5SzWH90+xoIQweqEwaf4+lYypfhS+6Crr9syolI=","serverKey":"AJJIVr7ioXMVrQIkJFbdRzOv1RUQW8dlZjAqSsMBxow=","iterations":16384}
"#;
    assert_eq!(&got[..want.len().min(got.len())], want, "\n{got}");
    // The rest: keys computed as above (no Java golden bytes), shown by their other fields.
    let rest: Vec<String> = got[want.len()..]
        .lines()
        .map(|l| match l.strip_prefix("= ") {
            Some(json) => {
                let v: serde_json::Value = serde_json::from_str(json).unwrap();
                format!(
                    "= name={} mechanism={} salt={} iterations={}",
                    v["name"], v["mechanism"], v["salt"], v["iterations"]
                )
            }
            None => l.to_string(),
        })
        .collect();
    assert_eq!(
        rest.join("\n"),
        r#"> SCRAM-SHA-256=[name=a,name=carol,salt=YR==,saltedpassword=YWJj,iterations=+4097]
= name="carol" mechanism=1 salt="YQ==" iterations=4097
> SCRAM-SHA-256=[name=d,salt=YQ,password=p,saltedpassword=%,iterations=04096]
= name="d" mechanism=1 salt="YQ==" iterations=4096
> SCRAM-SHA-256=[name=",salt=YQ,saltedpassword=YWJj]
= name="\"" mechanism=1 salt="YQ==" iterations=4096
> SCRAM-SHA-256=[name=e,password=e-secret]
= name="e" mechanism=1 salt="MW9tZnJvN3p3bXVtcjN1bXh1ZHp5ajZzY2Y=" iterations=4096"#
    );
}

#[test]
fn refusals_with_kafkas_messages() {
    let got = transcript(&[
        "SCRAM-SHA-256",
        "SCRAM-SHA-1=[name=a,password=b]",
        "scram-sha-256=[name=a,password=b]",
        "SCRAM-SHA-256 =[name=a,password=b]",
        "=[name=a,password=b]",
        "SCRAM-SHA-256=name=a,password=b]",
        "SCRAM-SHA-256=[name=a,password=b",
        "SCRAM-SHA-256=[",
        "SCRAM-SHA-256=[]",
        "SCRAM-SHA-256=[,]",
        "SCRAM-SHA-256=[,name=a,password=b]",
        "SCRAM-SHA-256=[name=a,nokey,password=b]",
        "SCRAM-SHA-256=[ name=a,password=b]",
        "SCRAM-SHA-256=[password=b]",
        "SCRAM-SHA-256=[name=a]",
        "SCRAM-SHA-256=[name=a,saltedpassword=YWJj]",
        "SCRAM-SHA-256=[name=a,password=b,iterations=x]",
        "SCRAM-SHA-256=[name=a,password=b,iterations= 4097]",
        "SCRAM-SHA-256=[name=a,password=b,iterations=99999999999]",
        "SCRAM-SHA-256=[name=a,password=b,iterations=4095]",
        "SCRAM-SHA-256=[name=a,password=b,iterations=-1]",
        "SCRAM-SHA-512=[name=a,password=b,iterations=16385]",
        "SCRAM-SHA-256=[name=a,foo=1,bar=2,password=b]",
        "SCRAM-SHA-256=[name=a,salt=%,saltedpassword=YWJj,iterations=x,foo=1]",
        "SCRAM-SHA-256=[name=a,password=]",
        "SCRAM-SHA-256=[name=a,salt=YWJj,saltedpassword=]",
    ]);
    assert_eq!(
        got,
        "> SCRAM-SHA-256
! Failed to find equals sign in SCRAM argument 'SCRAM-SHA-256'
> SCRAM-SHA-1=[name=a,password=b]
! The add-scram mechanism SCRAM-SHA-1 is not supported.
> scram-sha-256=[name=a,password=b]
! The add-scram mechanism scram-sha-256 is not supported.
> SCRAM-SHA-256 =[name=a,password=b]
! The add-scram mechanism SCRAM-SHA-256  is not supported.
> =[name=a,password=b]
! The add-scram mechanism  is not supported.
> SCRAM-SHA-256=name=a,password=b]
! Expected configuration string to start with [
> SCRAM-SHA-256=[name=a,password=b
! Expected configuration string to end with ]
> SCRAM-SHA-256=[
! Expected configuration string to end with ]
> SCRAM-SHA-256=[]
! No equals sign found in SCRAM component: 
> SCRAM-SHA-256=[,]
! You must supply 'name' to add-scram
> SCRAM-SHA-256=[,name=a,password=b]
! No equals sign found in SCRAM component: 
> SCRAM-SHA-256=[name=a,nokey,password=b]
! No equals sign found in SCRAM component: nokey
> SCRAM-SHA-256=[ name=a,password=b]
! You must supply 'name' to add-scram
> SCRAM-SHA-256=[password=b]
! You must supply 'name' to add-scram
> SCRAM-SHA-256=[name=a]
! You must supply one of 'password' or 'saltedpassword' to add-scram
> SCRAM-SHA-256=[name=a,saltedpassword=YWJj]
! You must supply 'salt' with 'saltedpassword' to add-scram
> SCRAM-SHA-256=[name=a,password=b,iterations=x]
! Failed to parse iterations count: x
> SCRAM-SHA-256=[name=a,password=b,iterations= 4097]
! Failed to parse iterations count:  4097
> SCRAM-SHA-256=[name=a,password=b,iterations=99999999999]
! Failed to parse iterations count: 99999999999
> SCRAM-SHA-256=[name=a,password=b,iterations=4095]
! The 'iterations' value must be >= 4096 for add-scram using SCRAM_SHA_256
> SCRAM-SHA-256=[name=a,password=b,iterations=-1]
! The 'iterations' value must be >= 4096 for add-scram using SCRAM_SHA_256
> SCRAM-SHA-512=[name=a,password=b,iterations=16385]
! The 'iterations' value must be <= 16384 for add-scram using SCRAM_SHA_512
> SCRAM-SHA-256=[name=a,foo=1,bar=2,password=b]
! Unknown SCRAM configurations: bar, foo
> SCRAM-SHA-256=[name=a,salt=%,saltedpassword=YWJj,iterations=x,foo=1]
! Failed to decode given salt: [hidden] (an illegal base64 character at position 0)
> SCRAM-SHA-256=[name=a,password=]
! Empty key: the password of add-scram user 'a' is empty
> SCRAM-SHA-256=[name=a,salt=YWJj,saltedpassword=]
! Empty key: the saltedpassword of add-scram user 'a' is empty
"
    );
}

/// Where Kafka's message would echo what may be a secret, the same message with `[hidden]`.
#[test]
fn refusals_hide_what_may_be_a_secret() {
    let got = transcript(&[
        "SCRAM-SHA-256=[name=a,password=b,nokey]",
        "SCRAM-SHA-256=[name=a,password=pa,ss,word]",
        "SCRAM-SHA-256=[name=a,password=pa,ss=word,iterations=8192,foo=1]",
        "SCRAM-SHA-256=[name=a,salt=YWJj,saltedpassword=YWJj=]",
        "SCRAM-SHA-256=[name=a,salt=Y,password=b]",
        "SCRAM-SHA-256:[name:a;password:b]",
        "SCRAM-SHA-256[name=a,password=b]",
    ]);
    assert_eq!(
        got,
        "> SCRAM-SHA-256=[name=a,password=b,nokey]
! No equals sign found in SCRAM component: [hidden]
> SCRAM-SHA-256=[name=a,password=pa,ss,word]
! No equals sign found in SCRAM component: [hidden]
> SCRAM-SHA-256=[name=a,password=pa,ss=word,iterations=8192,foo=1]
! Unknown SCRAM configurations: foo, [hidden]
> SCRAM-SHA-256=[name=a,salt=YWJj,saltedpassword=YWJj=]
! Failed to decode given saltedPassword: [hidden] (an incomplete padding at the end)
> SCRAM-SHA-256=[name=a,salt=Y,password=b]
! Failed to decode given salt: [hidden] (a lone last character)
> SCRAM-SHA-256:[name:a;password:b]
! Failed to find equals sign in SCRAM argument 'SCRAM-SHA-256:[hidden]'
> SCRAM-SHA-256[name=a,password=b]
! The add-scram mechanism SCRAM-SHA-256[hidden] is not supported.
"
    );
}

#[test]
fn the_metadata_version_gate_comes_first_and_each_argument_is_done_in_turn() {
    let args = |v: &[&str]| -> Vec<ScramArgument> {
        v.iter().map(|a| ScramArgument(a.to_string())).collect()
    };
    let run = |v: &[&str], mv| scram_records(&args(v), mv, &mut draw).map(|r| r.len());
    assert_eq!(run(&[], 7), Ok(0));
    // 3.5-IV1 is refused whatever the arguments; 3.5-IV2 accepted.
    assert_eq!(
        run(&["bogus"], 10),
        Err(AddScramError::MetadataVersionTooLow)
    );
    assert_eq!(
        AddScramError::MetadataVersionTooLow.to_string(),
        "SCRAM is only supported in metadata.version 3.5-IV2 or later."
    );
    assert_eq!(run(&["SCRAM-SHA-256=[name=a,password=b]"], 11), Ok(1));
    // The first argument's record (its iteration bounds) before the second is parsed.
    assert_eq!(
        run(
            &[
                "SCRAM-SHA-256=[name=a,password=p,iterations=1]",
                "SCRAM-SHA-256=[bogus]"
            ],
            33
        ),
        Err(AddScramError::TooFewIterations {
            mechanism: ScramMechanism::Sha256
        })
    );
    // Repeats are kept, in order; one draw per salt not given.
    let mut draws = 0;
    let records = scram_records(
        &args(&[
            "SCRAM-SHA-256=[name=a,password=x]",
            "SCRAM-SHA-512=[name=b,salt=YQ==,password=y]",
            "SCRAM-SHA-256=[name=a,password=y]",
        ]),
        33,
        &mut || {
            draws += 1;
            [draws; 17]
        },
    )
    .unwrap();
    let shown: Vec<_> = records
        .iter()
        .map(|r| (r.name.as_str(), r.mechanism, r.salt.clone()))
        .collect();
    assert_eq!(
        shown,
        vec![
            ("a", 1, java_nonce([1; 17]).into_bytes()),
            ("b", 2, b"a".to_vec()),
            ("a", 1, java_nonce([2; 17]).into_bytes()),
        ]
    );
}

#[test]
fn no_secret_in_debug_output() {
    let arg = ScramArgument("SCRAM-SHA-256=[name=a,salt=c2FsdA==,password=hunter2]".into());
    let entry = parse(&arg.0).unwrap();
    let shown = format!("{arg:?} {entry:?}");
    assert!(
        !shown.contains("hunter2") && !shown.contains("c2FsdA"),
        "{shown}"
    );
    assert_eq!(
        shown,
        "ScramArgument([hidden]) ScramEntry { mechanism: Sha256, name: \"a\", salt_given: true, iterations: None, .. }"
    );
}

#[test]
fn the_bootstrap_line_hides_salts_and_keys() {
    let record = parse("SCRAM-SHA-256=[name=a,salt=c2FsdA==,saltedpassword=c2FsdGVk]")
        .unwrap()
        .to_record(&mut draw)
        .unwrap();
    assert_eq!(
        shown_json(&MetadataRecordAndVersion::new(record, 0)).to_string(),
        r#"{"name":"a","mechanism":1,"salt":"[hidden]","storedKey":"[hidden]","serverKey":"[hidden]","iterations":4096}"#
    );
}
