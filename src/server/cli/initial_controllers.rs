//! `--initial-controllers id@host:port:directoryId,...` of `kraftd format`, parsed with the
//! checks and messages of Kafka's `DynamicVoters.parse`.

use crate::protocol::codec::Uuid;

/// One entry of `--initial-controllers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitialController {
    pub id: i32,
    pub host: String,
    pub port: u16,
    pub directory_id: Uuid,
}

/// Why `--initial-controllers` cannot be used, in the words of Kafka's `DynamicVoters.parse`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InitialControllersError {
    #[error("Invalid --initial-controllers entry '{entry}': {problem}")]
    BadEntry {
        entry: String,
        problem: VoterProblem,
    },
    #[error("Node id {id} was specified more than once.")]
    DuplicateId { id: i32 },
    #[error("Directory id {directory_id} was specified more than once.")]
    DuplicateDirectoryId { directory_id: Uuid },
}

/// What is wrong with one `id@host:port:directoryId` entry (Kafka's messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VoterProblem {
    #[error("No @ found in dynamic voter string.")]
    NoAt,
    #[error("Invalid @ at beginning of dynamic voter string.")]
    AtFirst,
    #[error("Failed to parse node id in dynamic voter string.")]
    BadNodeId,
    #[error("Invalid negative node id {id} in dynamic voter string.")]
    NegativeNodeId { id: i32 },
    #[error("Hostname began with left bracket, but no right bracket was found.")]
    NoRightBracket,
    #[error("No colon following hostname could be found.")]
    NoColonAfterHost,
    #[error("Empty hostname in dynamic voter string.")]
    EmptyHost,
    #[error("No colon following port could be found.")]
    NoColonAfterPort,
    #[error("Failed to parse port in dynamic voter string.")]
    BadPort,
    #[error("Failed to parse directory ID in dynamic voter string.")]
    BadDirectoryId,
}

/// Parses `id@host:port:directoryId,...` (a host may be a bracketed IPv6 address), with the
/// checks of Kafka's `DynamicVoters.parse`.
pub fn parse_initial_controllers(
    text: &str,
) -> Result<Vec<InitialController>, InitialControllersError> {
    let mut out: Vec<InitialController> = Vec::new();
    for item in text.split(',') {
        let v = parse_one(item.trim()).map_err(|problem| InitialControllersError::BadEntry {
            entry: item.to_owned(),
            problem,
        })?;
        if out.iter().any(|o| o.id == v.id) {
            return Err(InitialControllersError::DuplicateId { id: v.id });
        }
        if out.iter().any(|o| o.directory_id == v.directory_id) {
            return Err(InitialControllersError::DuplicateDirectoryId {
                directory_id: v.directory_id,
            });
        }
        out.push(v);
    }
    Ok(out)
}

fn parse_one(s: &str) -> Result<InitialController, VoterProblem> {
    let (id, rest) = s.split_once('@').ok_or(VoterProblem::NoAt)?;
    if id.is_empty() {
        return Err(VoterProblem::AtFirst);
    }
    let id: i32 = id.parse().map_err(|_| VoterProblem::BadNodeId)?;
    if id < 0 {
        return Err(VoterProblem::NegativeNodeId { id });
    }
    let (host, rest) = if let Some(r) = rest.strip_prefix('[') {
        let (h, r) = r.split_once(']').ok_or(VoterProblem::NoRightBracket)?;
        let r = r.strip_prefix(':').ok_or(VoterProblem::NoColonAfterHost)?;
        (h, r)
    } else {
        rest.split_once(':').ok_or(VoterProblem::NoColonAfterHost)?
    };
    if host.is_empty() {
        return Err(VoterProblem::EmptyHost);
    }
    let (port, dir) = rest.split_once(':').ok_or(VoterProblem::NoColonAfterPort)?;
    let port: u16 = port.parse().map_err(|_| VoterProblem::BadPort)?;
    let directory_id = Uuid::parse(dir)
        .ok()
        .filter(|d| !crate::log::meta_properties::is_reserved_directory_id(d))
        .ok_or(VoterProblem::BadDirectoryId)?;
    Ok(InitialController {
        id,
        host: host.to_owned(),
        port,
        directory_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_initial_controllers() {
        let v = parse_initial_controllers(
            "1@localhost:9093:b4rSqt1RRQSY2JgRnG_2Bw,2@[::1]:9094:83kwQIjeUhpwXc0f3sCdkg",
        )
        .unwrap();
        assert_eq!(v[0].id, 1);
        assert_eq!(v[1].host, "::1");
        assert_eq!(v[1].port, 9094);
        for (bad, msg) in [
            ("2@h2:9094", "No colon following port"),
            ("h2:9094:x", "No @ found"),
            ("x@h:1:b4rSqt1RRQSY2JgRnG_2Bw", "node id"),
            ("1@h:99999:b4rSqt1RRQSY2JgRnG_2Bw", "port"),
            ("1@h:1:nope", "directory ID"),
            (
                "1@h:1:b4rSqt1RRQSY2JgRnG_2Bw,1@g:2:83kwQIjeUhpwXc0f3sCdkg",
                "more than once",
            ),
        ] {
            let e = parse_initial_controllers(bad).unwrap_err().to_string();
            assert!(e.contains(msg), "{bad}: {e}");
        }
    }
}
