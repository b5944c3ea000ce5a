//! DescribeConfigs: every controller, active or not, describes configs
//! from its own committed image (Kafka's `ConfigHelper` on the controller's metadata cache),
//! each resource checked for DESCRIBE_CONFIGS on itself or on the cluster.

use tracing::level_filters::LevelFilter;

use super::{ControllerReply, Decision, QuorumController};
use crate::controller::acls::{operation, resource, CLUSTER_NAME};
use crate::controller::configs::{GROUP_RESOURCE, TOPIC_RESOURCE};
use crate::controller::describe_configs::{describe_configs, DescribeContext};
use crate::controller::principal::RequestPrincipal;
use crate::protocol::messages::describe_configs_request::DescribeConfigsResource;
use crate::protocol::messages::DescribeConfigsRequest;

/// Log4j's name for the level kraftd logs at.
fn log_level_name(level: LevelFilter) -> String {
    level.to_string().to_ascii_uppercase()
}

impl QuorumController {
    pub(super) fn describe_configs(
        &self,
        request: DescribeConfigsRequest,
        who: &RequestPrincipal,
    ) -> Decision {
        let authorized = |r: &DescribeConfigsResource| {
            let (resource_type, name) = match r.resource_type {
                TOPIC_RESOURCE => (resource::TOPIC, r.resource_name.as_str()),
                GROUP_RESOURCE => (resource::GROUP, r.resource_name.as_str()),
                _ => (resource::CLUSTER, CLUSTER_NAME),
            };
            self.authorized(who, resource_type, name, operation::DESCRIBE_CONFIGS)
        };
        let (_, image) = self.machine.stable_image();
        let level = log_level_name(LevelFilter::current());
        let ctx = DescribeContext {
            node_id: self.settings.node_id,
            originals: &self.settings.topics.statics.originals,
            statics: &self.settings.topics.statics,
            image,
            root_log_level: &level,
        };
        let response = describe_configs(&ctx, &request, &authorized);
        Decision::Answer(ControllerReply::DescribeConfigs(response))
    }
}
