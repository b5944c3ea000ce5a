//! ControllerConfig's network keys: listeners, controller listener names, protocols,
//! advertised listeners and the quorum addresses.

use super::*;

#[test]
fn listeners_and_names() {
    let two = "listeners=CONTROLLER://:9093,c2://[::1]:0\ncontroller.listener.names=C2,CONTROLLER";
    let c = with(two).unwrap();
    assert_eq!(
        c.listeners[1],
        Endpoint {
            listener_name: "C2".into(),
            host: "::1".into(),
            port: 0
        }
    );
    assert_eq!(c.default_listener_name(), "C2");
    assert!(err_with("listeners=CONTROLLER://h:70000").contains("expected NAME://host:port"));
    assert!(err_with("listeners=").starts_with("missing required configuration listeners"));
    assert!(err_with("listeners=CONTROLLER://:1,CONTROLLER://:2")
        .contains("names listener CONTROLLER twice"));
    assert!(
        err_with("listeners=CONTROLLER://:1,C2://:1\ncontroller.listener.names=CONTROLLER,C2")
            .contains("same port 1")
    );
    assert!(with(
        "listeners=CONTROLLER://127.0.0.1:1,C2://[::1]:1\ncontroller.listener.names=CONTROLLER,C2"
    )
    .is_ok());
    // Defaulted listeners are PLAINTEXT://:9092, which is no controller listener.
    let m = err(&without("listeners"));
    assert!(
        m.contains("listeners=PLAINTEXT://:9092") && m.contains("Kafka's default"),
        "{m}"
    );
    // ...which is fine if it is named as the controller listener (Kafka agrees).
    let text = without("listeners").replace(
        "controller.listener.names=CONTROLLER",
        "controller.listener.names=PLAINTEXT",
    );
    let c = ControllerConfig::parse(&text, &[]).unwrap();
    assert_eq!(c.listeners[0].to_string(), "PLAINTEXT://:9092");
    let m = err_with("listeners=CONTROLLER://:9093,PLAINTEXT://:9092");
    assert!(
        m.contains("a controller-only node has only controller listeners"),
        "{m}"
    );
}

#[test]
fn controller_listener_names() {
    let m = err(&without("controller.listener.names"));
    assert!(
        m.starts_with("missing required configuration controller.listener.names"),
        "{m}"
    );
    assert!(err_with("controller.listener.names=").starts_with("missing required"));
    let m = err_with("controller.listener.names=CONTROLLER,FOO");
    assert!(
        m.starts_with("controller.listener.names contains FOO, which is not a listener"),
        "{m}"
    );
    // Kafka compares these names case-sensitively with the upper-cased listener names.
    let m = err_with("controller.listener.names=controller");
    assert!(
        m.contains("Kafka upper-cases") && m.ends_with("write CONTROLLER here"),
        "{m}"
    );
}

#[test]
fn security_protocol_map() {
    let c = with("listener.security.protocol.map=controller:plaintext").unwrap();
    assert_eq!(
        c.listener_security_protocols.len(),
        1,
        "an explicit map replaces the default"
    );
    let m = err_with("listener.security.protocol.map=PLAINTEXT:PLAINTEXT");
    assert_eq!(m, "listener CONTROLLER has no security protocol: add CONTROLLER:PLAINTEXT to listener.security.protocol.map");
    let c = with("listener.security.protocol.map=CONTROLLER:SSL").unwrap();
    assert_eq!(c.tls["CONTROLLER"].listener, "CONTROLLER");
    // A SASL listener enables Kafka's default mechanism, GSSAPI, which kraftd has not.
    let m = err_with("listener.security.protocol.map=CONTROLLER:SASL_SSL");
    assert!(m.contains("GSSAPI") && m.contains("defaults"), "{m}");
    let jaas = "org.apache.kafka.common.security.plain.PlainLoginModule required \
                username=\"a\" password=\"p\" user_a=\"p\";";
    let c = with(&format!(
        "listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT\n\
         sasl.enabled.mechanisms=PLAIN\nsasl.mechanism.controller.protocol=PLAIN\n\
         listener.name.controller.plain.sasl.jaas.config={jaas}"
    ))
    .unwrap();
    assert_eq!(c.sasl["CONTROLLER"].mechanisms.len(), 1);
    assert_eq!(c.sasl_client.unwrap().username, "a");
    assert!(err_with("listener.security.protocol.map=CONTROLLER:BOGUS").contains("got 'BOGUS'"));
    // A listener literally named SSL is SSL under the default map.
    let c = with("listeners=SSL://:9093\ncontroller.listener.names=SSL").unwrap();
    assert_eq!(c.listener_security_protocols["SSL"], SecurityProtocol::Ssl);
    assert!(c.tls.contains_key("SSL"));
    // With an SSL/SASL name in play Kafka adds no PLAINTEXT mapping for controller names.
    let m = err_with(
        "listeners=CONTROLLER://:9093,SSL://:9094\ncontroller.listener.names=CONTROLLER,SSL",
    );
    assert!(
        m.starts_with("listener CONTROLLER has no security protocol"),
        "{m}"
    );
}

#[test]
fn advertised_listeners() {
    let c = with("advertised.listeners=CONTROLLER://ctrl-1.example.com:19093").unwrap();
    assert_eq!(
        c.advertised_controller_endpoints()[0].to_string(),
        "CONTROLLER://ctrl-1.example.com:19093"
    );
    let c = with("").unwrap();
    assert_eq!(
        c.advertised_controller_endpoints(),
        c.listeners,
        "falls back to listeners"
    );
    let m = err_with("advertised.listeners=CONTROLLER://0.0.0.0:9093");
    assert!(m.starts_with("invalid value 'CONTROLLER://0.0.0.0:9093' for advertised.listeners: expected a routable host"), "{m}");
    assert!(err_with("advertised.listeners=CONTROLLER://a:1,CONTROLLER://b:1").contains("twice"));
    assert!(err_with("advertised.listeners=FOO://a:1")
        .starts_with("listener FOO has no security protocol"));
    assert!(
        with("advertised.listeners=CONTROLLER://:9093").is_ok(),
        "empty host: filled in at runtime"
    );
}

#[test]
fn quorum_voters_and_bootstrap() {
    let voters = "controller.quorum.voters=1@127.0.0.1:9093, 2@h2:9093,3@[::1]:9093";
    let c = with(voters).unwrap();
    assert!(c.is_static_quorum());
    assert_eq!(c.quorum.voters.len(), 3);
    assert_eq!(c.quorum.voters[2].to_string(), "3@[::1]:9093");
    assert_eq!(
        c.quorum.bootstrap_servers.len(),
        1,
        "both may be set, as in Kafka"
    );
    let base = without("controller.quorum.bootstrap.servers");
    assert!(ControllerConfig::parse(&format!("{base}{voters}"), &[]).is_ok());
    let m = err(&base);
    assert!(
        m.contains("controller.quorum.bootstrap.servers=host:port")
            && m.contains("controller.quorum.voters=id@host:port"),
        "{m}"
    );
    assert!(err(&format!("{base}controller.quorum.voters=")).starts_with("missing required"));
    let m = err(&format!("{base}controller.quorum.voters=2@h:1,3@h:2"));
    assert!(
        m.starts_with("node.id=1 is not in controller.quorum.voters=2@h:1,3@h:2")
            && m.contains("add 1@host:port"),
        "{m}"
    );
    assert!(err_with("controller.quorum.voters=1@a:1,1@b:2").contains("lists voter 1 twice"));
    for bad in ["1@h", "x@h:1", "1@h:1,", "1@0.0.0.0:9093"] {
        let m = err_with(&format!("controller.quorum.voters={bad}"));
        assert!(m.starts_with("invalid value"), "{bad}: {m}");
    }
    let c = with("controller.quorum.bootstrap.servers=a:1,[::1]:2").unwrap();
    assert_eq!(
        c.quorum.bootstrap_servers[1],
        HostPort {
            host: "::1".into(),
            port: 2
        }
    );
    for bad in ["a", "a:", ":1", "a:0", "a:65536", "a:1,"] {
        assert!(
            err_with(&format!("controller.quorum.bootstrap.servers={bad}"))
                .starts_with("invalid value"),
            "{bad}"
        );
    }
}
