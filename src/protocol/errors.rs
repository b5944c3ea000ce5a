//! Kafka's error codes (the `Errors` enum), by the names Kafka gives them.
//!
//! Only the codes kraftd sends or acts on are listed; the numbers are Kafka's wire values.

/// A Kafka error code as carried in responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub i16);

impl Default for ErrorCode {
    fn default() -> Self {
        ErrorCode::NONE
    }
}

macro_rules! error_codes {
    ($($name:ident = $code:expr;)*) => {
        impl ErrorCode {
            $(pub const $name: ErrorCode = ErrorCode($code);)*

            /// Kafka's name for the code, e.g. `UNSUPPORTED_VERSION`.
            pub fn name(self) -> &'static str {
                match self.0 {
                    $($code => stringify!($name),)*
                    _ => "UNKNOWN_ERROR_CODE",
                }
            }
        }
    };
}

error_codes! {
    UNKNOWN_SERVER_ERROR = -1;
    NONE = 0;
    CORRUPT_MESSAGE = 2;
    UNKNOWN_TOPIC_OR_PARTITION = 3;
    NOT_LEADER_OR_FOLLOWER = 6;
    REQUEST_TIMED_OUT = 7;
    BROKER_NOT_AVAILABLE = 8;
    INVALID_TOPIC_EXCEPTION = 17;
    TOPIC_AUTHORIZATION_FAILED = 29;
    GROUP_AUTHORIZATION_FAILED = 30;
    CLUSTER_AUTHORIZATION_FAILED = 31;
    UNSUPPORTED_SASL_MECHANISM = 33;
    ILLEGAL_SASL_STATE = 34;
    UNSUPPORTED_VERSION = 35;
    TOPIC_ALREADY_EXISTS = 36;
    INVALID_PARTITIONS = 37;
    INVALID_REPLICATION_FACTOR = 38;
    INVALID_REPLICA_ASSIGNMENT = 39;
    INVALID_CONFIG = 40;
    NOT_CONTROLLER = 41;
    INVALID_REQUEST = 42;
    POLICY_VIOLATION = 44;
    SECURITY_DISABLED = 54;
    SASL_AUTHENTICATION_FAILED = 58;
    PREFERRED_LEADER_NOT_AVAILABLE = 80;
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 83;
    ELECTION_NOT_NEEDED = 84;
    NO_REASSIGNMENT_IN_PROGRESS = 85;
    DELEGATION_TOKEN_AUTH_DISABLED = 61;
    DELEGATION_TOKEN_NOT_FOUND = 62;
    DELEGATION_TOKEN_OWNER_MISMATCH = 63;
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED = 64;
    DELEGATION_TOKEN_AUTHORIZATION_FAILED = 65;
    DELEGATION_TOKEN_EXPIRED = 66;
    INVALID_PRINCIPAL_TYPE = 67;
    TOPIC_DELETION_DISABLED = 73;
    FENCED_LEADER_EPOCH = 74;
    UNKNOWN_LEADER_EPOCH = 75;
    STALE_BROKER_EPOCH = 77;
    THROTTLING_QUOTA_EXCEEDED = 89;
    RESOURCE_NOT_FOUND = 91;
    DUPLICATE_RESOURCE = 92;
    UNACCEPTABLE_CREDENTIAL = 93;
    INCONSISTENT_VOTER_SET = 94;
    INVALID_UPDATE_VERSION = 95;
    FEATURE_UPDATE_FAILED = 96;
    PRINCIPAL_DESERIALIZATION_FAILURE = 97;
    SNAPSHOT_NOT_FOUND = 98;
    UNKNOWN_TOPIC_ID = 100;
    DUPLICATE_BROKER_REGISTRATION = 101;
    BROKER_ID_NOT_REGISTERED = 102;
    INCONSISTENT_CLUSTER_ID = 104;
    INELIGIBLE_REPLICA = 107;
    NEW_LEADER_ELECTED = 108;
    MISMATCHED_ENDPOINT_TYPE = 114;
    UNSUPPORTED_ENDPOINT_TYPE = 115;
    UNKNOWN_CONTROLLER_ID = 116;
    INVALID_REGISTRATION = 119;
    INVALID_VOTER_KEY = 125;
    DUPLICATE_VOTER = 126;
    VOTER_NOT_FOUND = 127;
    CONTROLLER_ID_NOT_REGISTERED = 136;
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name(), self.0)
    }
}
