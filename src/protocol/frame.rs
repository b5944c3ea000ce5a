//! Request and response framing: the header versions Kafka pairs with each API version, header
//! parsing of a received frame, and response frames ready to write. Sans-IO.

use super::codec::{ApiMessage, DecodeError, EncodeError, Message, Reader, Writer};
use super::messages::{ApiVersionsRequest, RequestHeader, ResponseHeader, SchemaKind, REGISTRY};

/// The fixed part every request header starts with, readable before the header version is known.
pub const MIN_REQUEST_HEADER_LEN: usize = 8;

/// Why a request frame could not be parsed far enough to answer it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderError {
    /// Fewer bytes than api key, api version and correlation id take.
    TooShort { len: usize },
    /// An API key kraftd has no schema for.
    UnknownApiKey {
        api_key: i16,
        api_version: i16,
        correlation_id: i32,
    },
    /// The header bytes do not decode at the header version the API implies.
    Malformed {
        api_key: i16,
        api_version: i16,
        correlation_id: i32,
        error: DecodeError,
    },
}

impl std::fmt::Display for HeaderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeaderError::TooShort { len } => write!(
                f,
                "request header is {len} bytes, shorter than the {MIN_REQUEST_HEADER_LEN}-byte minimum"
            ),
            HeaderError::UnknownApiKey { api_key, api_version, correlation_id } => {
                match kafka_api_name(*api_key) {
                    // Kafka knows it, kraftd has no codec for it: not a controller API.
                    Some(name) => write!(
                        f,
                        "api key {api_key} ({name}) version {api_version} (correlation id \
                         {correlation_id}) is not served on a controller listener"
                    ),
                    None => write!(
                        f,
                        "unknown api key {api_key} (version {api_version}, correlation id \
                         {correlation_id})"
                    ),
                }
            }
            HeaderError::Malformed { api_key, api_version, correlation_id, error } => write!(
                f,
                "malformed request header for api key {api_key} version {api_version} \
                 (correlation id {correlation_id}): {error}"
            ),
        }
    }
}

/// The request schema of an API key, from the generated registry.
fn request_schema(api_key: i16) -> Option<&'static super::messages::SchemaEntry> {
    REGISTRY
        .iter()
        .find(|e| e.kind == SchemaKind::Request && e.api_key == Some(api_key))
}

fn response_schema(api_key: i16) -> Option<&'static super::messages::SchemaEntry> {
    REGISTRY
        .iter()
        .find(|e| e.kind == SchemaKind::Response && e.api_key == Some(api_key))
}

fn is_flexible(entry: &super::messages::SchemaEntry, version: i16) -> bool {
    entry
        .first_flexible_version
        .is_some_and(|first| version >= first)
}

/// The request header version for an API version: 2 for flexible versions, else 1. Versions
/// beyond the schema's range keep the flexibility of the range's end, as Kafka does, so that
/// a newer client's header still parses.
pub fn request_header_version(api_key: i16, api_version: i16) -> Option<i16> {
    request_schema(api_key).map(|e| if is_flexible(e, api_version) { 2 } else { 1 })
}

/// The response header version: 1 for flexible versions, else 0; ApiVersions always uses 0 so
/// that a client that does not yet know the broker's versions can read it.
pub fn response_header_version(api_key: i16, api_version: i16) -> i16 {
    if api_key == ApiVersionsRequest::API_KEY {
        return 0;
    }
    match response_schema(api_key) {
        Some(e) if is_flexible(e, api_version) => 1,
        _ => 0,
    }
}

/// A parsed request header and where its body starts in the frame.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedRequest<'a> {
    pub header: RequestHeader,
    pub header_version: i16,
    pub body: &'a [u8],
}

impl ParsedRequest<'_> {
    pub fn api_key(&self) -> i16 {
        self.header.request_api_key
    }
    pub fn api_version(&self) -> i16 {
        self.header.request_api_version
    }
    pub fn correlation_id(&self) -> i32 {
        self.header.correlation_id
    }
}

/// Parses the header of one request frame (size prefix already removed).
pub fn parse_request(frame: &[u8]) -> Result<ParsedRequest<'_>, HeaderError> {
    if frame.len() < MIN_REQUEST_HEADER_LEN {
        return Err(HeaderError::TooShort { len: frame.len() });
    }
    let api_key = i16::from_be_bytes([frame[0], frame[1]]);
    let api_version = i16::from_be_bytes([frame[2], frame[3]]);
    let correlation_id = i32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
    let header_version =
        request_header_version(api_key, api_version).ok_or(HeaderError::UnknownApiKey {
            api_key,
            api_version,
            correlation_id,
        })?;
    let mut r = Reader::new(frame);
    let header =
        RequestHeader::decode(&mut r, header_version).map_err(|error| HeaderError::Malformed {
            api_key,
            api_version,
            correlation_id,
            error,
        })?;
    Ok(ParsedRequest {
        header,
        header_version,
        body: r.rest(),
    })
}

/// Encodes a complete response frame: size prefix, response header, body.
pub fn encode_response<M: Message>(
    api_key: i16,
    api_version: i16,
    correlation_id: i32,
    body: &M,
    body_version: i16,
) -> Result<Vec<u8>, EncodeError> {
    let mut w = Writer::new();
    w.i32(0); // size, patched below
    let header = ResponseHeader {
        correlation_id,
        ..Default::default()
    };
    header.encode(&mut w, response_header_version(api_key, api_version))?;
    body.encode(&mut w, body_version)?;
    let mut buf = w.into_inner();
    let size = (buf.len() - 4) as i32;
    buf[..4].copy_from_slice(&size.to_be_bytes());
    Ok(buf)
}

/// Encodes a complete request frame (used by kraftd's outbound client and by tests).
pub fn encode_request<M: Message>(
    api_key: i16,
    api_version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
    body: &M,
) -> Result<Vec<u8>, EncodeError> {
    let header_version =
        request_header_version(api_key, api_version).ok_or(EncodeError::UnsupportedVersion {
            what: "request header",
            version: api_version,
        })?;
    let mut w = Writer::new();
    w.i32(0);
    let header = RequestHeader {
        request_api_key: api_key,
        request_api_version: api_version,
        correlation_id,
        client_id: client_id.map(str::to_owned),
        ..Default::default()
    };
    header.encode(&mut w, header_version)?;
    body.encode(&mut w, api_version)?;
    let mut buf = w.into_inner();
    let size = (buf.len() - 4) as i32;
    buf[..4].copy_from_slice(&size.to_be_bytes());
    Ok(buf)
}

/// Whether kraftd has a request schema for this API key (it may still not serve it).
pub fn knows_api(api_key: i16) -> bool {
    request_schema(api_key).is_some()
}

/// Every API key Apache Kafka 4.4.0 defines (its `ApiKeys` enum), by name, for log lines.
const KAFKA_API_NAMES: &[(i16, &str)] = &[
    (0, "Produce"),
    (1, "Fetch"),
    (2, "ListOffsets"),
    (3, "Metadata"),
    (4, "LeaderAndIsr"),
    (5, "StopReplica"),
    (6, "UpdateMetadata"),
    (7, "ControlledShutdown"),
    (8, "OffsetCommit"),
    (9, "OffsetFetch"),
    (10, "FindCoordinator"),
    (11, "JoinGroup"),
    (12, "Heartbeat"),
    (13, "LeaveGroup"),
    (14, "SyncGroup"),
    (15, "DescribeGroups"),
    (16, "ListGroups"),
    (17, "SaslHandshake"),
    (18, "ApiVersions"),
    (19, "CreateTopics"),
    (20, "DeleteTopics"),
    (21, "DeleteRecords"),
    (22, "InitProducerId"),
    (23, "OffsetForLeaderEpoch"),
    (24, "AddPartitionsToTxn"),
    (25, "AddOffsetsToTxn"),
    (26, "EndTxn"),
    (27, "WriteTxnMarkers"),
    (28, "TxnOffsetCommit"),
    (29, "DescribeAcls"),
    (30, "CreateAcls"),
    (31, "DeleteAcls"),
    (32, "DescribeConfigs"),
    (33, "AlterConfigs"),
    (34, "AlterReplicaLogDirs"),
    (35, "DescribeLogDirs"),
    (36, "SaslAuthenticate"),
    (37, "CreatePartitions"),
    (38, "CreateDelegationToken"),
    (39, "RenewDelegationToken"),
    (40, "ExpireDelegationToken"),
    (41, "DescribeDelegationToken"),
    (42, "DeleteGroups"),
    (43, "ElectLeaders"),
    (44, "IncrementalAlterConfigs"),
    (45, "AlterPartitionReassignments"),
    (46, "ListPartitionReassignments"),
    (47, "OffsetDelete"),
    (48, "DescribeClientQuotas"),
    (49, "AlterClientQuotas"),
    (50, "DescribeUserScramCredentials"),
    (51, "AlterUserScramCredentials"),
    (52, "Vote"),
    (53, "BeginQuorumEpoch"),
    (54, "EndQuorumEpoch"),
    (55, "DescribeQuorum"),
    (56, "AlterPartition"),
    (57, "UpdateFeatures"),
    (58, "Envelope"),
    (59, "FetchSnapshot"),
    (60, "DescribeCluster"),
    (61, "DescribeProducers"),
    (62, "BrokerRegistration"),
    (63, "BrokerHeartbeat"),
    (64, "UnregisterBroker"),
    (65, "DescribeTransactions"),
    (66, "ListTransactions"),
    (67, "AllocateProducerIds"),
    (68, "ConsumerGroupHeartbeat"),
    (69, "ConsumerGroupDescribe"),
    (70, "ControllerRegistration"),
    (71, "GetTelemetrySubscriptions"),
    (72, "PushTelemetry"),
    (73, "AssignReplicasToDirs"),
    (74, "ListConfigResources"),
    (75, "DescribeTopicPartitions"),
    (76, "ShareGroupHeartbeat"),
    (77, "ShareGroupDescribe"),
    (78, "ShareFetch"),
    (79, "ShareAcknowledge"),
    (80, "AddRaftVoter"),
    (81, "RemoveRaftVoter"),
    (82, "UpdateRaftVoter"),
    (83, "InitializeShareGroupState"),
    (84, "ReadShareGroupState"),
    (85, "WriteShareGroupState"),
    (86, "DeleteShareGroupState"),
    (87, "ReadShareGroupStateSummary"),
    (88, "StreamsGroupHeartbeat"),
    (89, "StreamsGroupDescribe"),
    (90, "DescribeShareGroupOffsets"),
    (91, "AlterShareGroupOffsets"),
    (92, "DeleteShareGroupOffsets"),
    (93, "StreamsGroupTopologyDescriptionUpdate"),
    (94, "UnregisterController"),
];

/// Kafka's name for an API key, or None for a key Kafka does not define.
pub fn kafka_api_name(api_key: i16) -> Option<&'static str> {
    KAFKA_API_NAMES
        .iter()
        .find(|(k, _)| *k == api_key)
        .map(|(_, n)| *n)
}

/// Kafka's name for an API key, for log lines ("Unknown" for keys Kafka does not define).
pub fn api_name(api_key: i16) -> &'static str {
    kafka_api_name(api_key).unwrap_or("Unknown")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::ApiVersionsRequest;

    #[test]
    fn header_versions_follow_flexibility() {
        assert_eq!(request_header_version(18, 2), Some(1));
        assert_eq!(request_header_version(18, 3), Some(2));
        // A newer ApiVersions than the schema knows still parses with the flexible header.
        assert_eq!(request_header_version(18, 99), Some(2));
        assert_eq!(response_header_version(18, 4), 0);
        assert_eq!(response_header_version(60, 0), 1);
        assert_eq!(request_header_version(9999, 0), None);
    }

    #[test]
    fn a_request_frame_round_trips_through_the_parser() {
        let body = ApiVersionsRequest {
            client_software_name: "kraftd-test".into(),
            client_software_version: "1".into(),
            ..Default::default()
        };
        let frame = encode_request(18, 3, 7, Some("client"), &body).unwrap();
        let parsed = parse_request(&frame[4..]).unwrap();
        assert_eq!(parsed.api_key(), 18);
        assert_eq!(parsed.correlation_id(), 7);
        assert_eq!(parsed.header.client_id.as_deref(), Some("client"));
        assert_eq!(
            ApiVersionsRequest::decode_exact(parsed.body, 3).unwrap(),
            body
        );
    }

    #[test]
    fn short_and_unknown_headers_are_refused() {
        assert_eq!(
            parse_request(&[0, 18, 0]),
            Err(HeaderError::TooShort { len: 3 })
        );
        let frame = [0x7f, 0x00, 0, 0, 0, 0, 0, 1];
        assert!(matches!(
            parse_request(&frame),
            Err(HeaderError::UnknownApiKey { .. })
        ));
        // Client id length claims more bytes than present.
        let frame = [0, 18, 0, 0, 0, 0, 0, 1, 0x7f, 0x00];
        assert!(matches!(
            parse_request(&frame),
            Err(HeaderError::Malformed { .. })
        ));
    }
}
