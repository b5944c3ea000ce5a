//! Reading a controller's clock from its Prometheus endpoint (`--metrics`): one HTTP GET,
//! timed by the doctor's wall clock on both sides of the round trip.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::header::{ACCEPT, HOST};
use hyper::Request;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::clock::{node_time_from_scrape, ClockReading, MetricsEndpoint};
use super::gather::wall_ms;
use super::readings::{broker_states_from_scrape, disk_from_scrape};
use crate::server::disk_space::DiskSpace;

/// A scrape larger than this is refused rather than read (a Java broker-sized exporter output is
/// a few MB).
const MAX_SCRAPE_BYTES: usize = 64 << 20;

/// One reading of an endpoint: the node's clock, its metadata disk (kraftd's), and its broker
/// registration gauges.
pub struct Scraped {
    pub clock: ClockReading,
    pub disk: Option<DiskSpace>,
    pub brokers: Vec<(i32, i32)>,
}

/// One reading of `endpoint`, or why there is none.
pub async fn read_endpoint(
    endpoint: &MetricsEndpoint,
    timeout: Duration,
) -> Result<Scraped, String> {
    let url = endpoint.url();
    let text = tokio::time::timeout(timeout, get(endpoint))
        .await
        .map_err(|_| format!("{url}: no answer within {} ms", timeout.as_millis()))?
        .map_err(|e| format!("{url}: {e}"))?;
    let (sent_ms, received_ms, body) = text;
    let node_ms = node_time_from_scrape(&body).ok_or_else(|| {
        format!(
            "{url}: the scrape has no kafka_controller_kafkacontroller_lastappliedrecordtimestamp \
             and lastappliedrecordlagms (is it a controller's endpoint, with Strimzi-style JMX \
             exporter rules?)"
        )
    })?;
    let reading = ClockReading {
        node: endpoint.node,
        source: format!("its metrics at {url}"),
        sent_ms,
        received_ms,
        node_ms,
    };
    Ok(Scraped {
        clock: reading,
        disk: disk_from_scrape(&body),
        brokers: broker_states_from_scrape(&body),
    })
}

/// GET over a fresh connection, so the round trip holds no connection set-up: the request is
/// timed from when it is sent on an open connection.
async fn get(endpoint: &MetricsEndpoint) -> Result<(i64, i64, String), String> {
    let stream = TcpStream::connect(&endpoint.authority)
        .await
        .map_err(|e| format!("cannot connect: {e}"))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP handshake failed: {e}"))?;
    let driver = tokio::spawn(connection);
    let request = Request::get(endpoint.path.as_str())
        .header(HOST, endpoint.authority.as_str())
        .header(ACCEPT, "text/plain; version=0.0.4")
        .body(Empty::<Bytes>::new())
        .map_err(|e| format!("bad request: {e}"))?;
    let sent_ms = wall_ms();
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("request failed: {e}"))?;
    let status = response.status();
    let body = Limited::new(response.into_body(), MAX_SCRAPE_BYTES)
        .collect()
        .await
        .map_err(|e| format!("reading the answer failed: {e}"))?
        .to_bytes();
    let received_ms = wall_ms();
    driver.abort();
    if !status.is_success() {
        return Err(format!("answered HTTP {status}"));
    }
    Ok((
        sent_ms,
        received_ms,
        String::from_utf8_lossy(&body).into_owned(),
    ))
}
